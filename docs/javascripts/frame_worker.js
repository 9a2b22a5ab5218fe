/* structsvm docs: search from a page opened from disk.
 *
 * Browsers refuse to start a Web Worker from a file: page, and the site's search
 * runs in a worker. On such a page, Worker is replaced by a class that runs the
 * worker's script in a hidden frame of the same page and passes the messages both
 * ways; elsewhere (a page served over http) nothing changes.
 */
(function () {
  "use strict";
  if (window.location.protocol !== "file:") {
    return;
  }

  class FrameWorker extends EventTarget {
    constructor(url) {
      super();
      this.pending = [];
      this.frame = document.createElement("iframe");
      this.frame.style.display = "none";
      // the worker's replies (its global postMessage) come back as message events
      this.frame.deliver = (data) => {
        this.dispatchEvent(new MessageEvent("message", { data: data }));
      };
      const script = new URL(url, document.baseURI).href;
      this.frame.srcdoc =
        "<!DOCTYPE html><meta charset='utf-8'><script>" +
        "window.postMessage = function (data) { window.frameElement.deliver(data); };" +
        "<\/script><script src='" + script + "'><\/script>";
      this.frame.addEventListener("load", () => {
        const queued = this.pending;
        this.pending = null;
        queued.forEach((data) => this.postMessage(data));
      });
      (document.body || document.documentElement).appendChild(this.frame);
    }

    postMessage(data) {
      if (this.pending !== null) {
        this.pending.push(data);
        return;
      }
      const target = this.frame.contentWindow;
      target.dispatchEvent(new target.MessageEvent("message", { data: data }));
    }

    terminate() {
      this.frame.remove();
    }
  }

  window.Worker = FrameWorker;
})();

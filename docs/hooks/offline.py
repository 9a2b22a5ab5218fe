"""mkdocs hook: a site that works when opened from disk, with no server.

Pages are written as files (``guide.html``, not ``guide/index.html``), so that links
lead to pages rather than to folder listings; the search index is also written as a
script, ``search/search_index.js``, which the theme loads on a page opened from disk
(it cannot fetch the JSON index there); ``docs/javascripts/frame_worker.js`` runs the
search in a frame where a browser refuses a worker. Nothing is fetched from the
network, at build time or when reading.
"""
import os


def on_config(config):
    """Pages as files: their links work from the file system."""
    config.use_directory_urls = False
    return config


def on_post_build(config):
    """``search/search_index.js``: the search index as a script (``var __index``)."""
    folder = os.path.join(config.site_dir, "search")
    index = os.path.join(folder, "search_index.json")
    if not os.path.isfile(index):
        raise ValueError("the search plugin wrote no search/search_index.json")
    with open(index, encoding="utf-8") as f:
        data = f.read()
    with open(os.path.join(folder, "search_index.js"), "w", encoding="utf-8") as f:
        f.write(f"var __index = {data};\n")

"""Compile a fit's loops in a helper process while the fit works (private).

A loop that numba has not compiled yet costs seconds on its first call, and a fit
needs several: the oracle's on the first round, the learner's right after, the
decoder's on the first ``predict``. A fit that starts :func:`start` launches one
helper process (``python -c`` without the package's ``__init__``) that compiles
the loops of a plan (the ``compiled_loops`` the learner and the feature map declare,
but the map's first, which the fit's first round compiles itself at once), in the
order the fit needs them, for the argument types in their modules' ``SIGNATURES``,
into numba's on-disk cache (``cache=True``). Meanwhile this process fits the map,
encodes the data, compiles the loop it needs first itself and runs it. When it
reaches a loop of the plan, :func:`wait` reads the helper's progress: a loop the
helper has compiled is loaded from the cache; one it is compiling is waited for
(quicker than compiling it twice); one it has not started yet is compiled here as
usual. The compiled code is the same either way (numba compiles the same source for
the same types), so nothing a fit computes depends on the helper.

With a filled cache the helper only loads the loops (about a second of the other
core). It starts only when a core looks idle: on a busy machine it would take CPU time
from the fit. Where the operating system counts CPU time (``/proc/stat``, Linux) the idle time
of the machine's cores is sampled over the last 0.1 to 5 seconds, and a
helper starts when other processes left at least 0.7 of a usable core besides this
process's own free; elsewhere the one-minute
load average must be below the usable cores minus one (this process). Usable cores
are those of the process's CPU affinity, capped by a cgroup CPU quota
(``/sys/fs/cgroup/cpu.max``) where one is set.
Setting ``STRUCTSVM_JIT_WARMUP=0`` turns it off; it is also off when the plan is
empty, the helper cannot start, or the system is not POSIX (Windows).

An argument type is written ``"f8:2"`` (float64, 2-D, C-contiguous array),
``"i4:1"`` (int32 array), ``"i8"`` / ``"f8"`` / ``"b1"`` (int64, float64, bool
scalars).
"""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time

from . import _table, has_compiled, signatures

__all__ = ["plan", "start", "wait", "usable_cores"]

# the helper's start: the packages of the plan's modules are registered as empty
# packages, so that importing a loop module runs no package __init__ (those import
# scikit-learn and scipy: seconds the helper would spend before compiling); the
# modules keep their names, hence their numba cache entries
_BOOT = """
import json, os, sys, types
root, plan = sys.argv[1], json.loads(sys.argv[2])
for name in sorted({m.rsplit(".", 1)[0] for m, _, _ in plan} | {"structsvm"}):
    if name.split(".")[0] == "structsvm":
        for k in range(1, name.count(".") + 2):
            pkg = ".".join(name.split(".")[:k])
            if pkg not in sys.modules:
                sys.modules[pkg] = types.ModuleType(pkg)
                sys.modules[pkg].__path__ = [os.path.join(root, *pkg.split(".")[1:])]
from structsvm._compiled.warmup import _compile
_compile(plan)
"""

_PATIENCE = 120.0  # seconds without news after which a fit stops waiting
_lock = threading.Lock()
_helper = None  # the running helper: [Popen, {loop: "start"|"done"|"failed"}, rest]
_started = set()     # loops this process has asked a helper for


def _key(module, function):
    return f"{module}:{function}"


_PROC_STAT = "/proc/stat"


def _cpu_times():
    """(idle, total) CPU time of all the machine's cores in clock ticks, from the first
    line of ``/proc/stat``; None where there is no such file."""
    try:
        with open(_PROC_STAT, "rb") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if len(fields) < 5 or fields[0] != b"cpu":
        return None
    ticks = [int(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
    return ticks[3] + ticks[4], sum(ticks)


_CPU_MAX = "/sys/fs/cgroup/cpu.max"


def usable_cores():
    """Cores this process may run on: its CPU affinity, capped by a cgroup (v2) CPU
    quota where one is set."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        with open(_CPU_MAX) as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, int(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return cores


# the first sample of the idle-time window: taken when a fit imports this module, so
# that the window usually spans the fit's preparations and costs no waiting
def _sample():
    return time.monotonic(), time.process_time(), _cpu_times()


_SAMPLE = _sample()
_MIN_WINDOW, _MAX_WINDOW = 0.1, 5.0  # seconds
_SPARE_NEEDED = 0.7  # cores


def _idle_core():
    """Whether a core is likely idle besides this process (see the module's text):
    the cores other processes kept busy during the window are subtracted from the
    usable cores, and so is one for this process."""
    cores = usable_cores()
    if cores < 2:
        return False
    first = _SAMPLE
    if first[2] is None:
        try:
            return os.getloadavg()[0] < cores - 1
        except (AttributeError, OSError):  # not on this platform: assume one is
            return True
    if time.monotonic() - first[0] > _MAX_WINDOW:  # stale: sample afresh
        first = _sample()
    rest = _MIN_WINDOW - (time.monotonic() - first[0])
    if rest > 0:
        time.sleep(rest)
    last = _sample()
    if last[2] is None or last[2][1] <= first[2][1]:
        return True
    ticks = last[2][1] - first[2][1]
    machine = os.cpu_count() or cores  # /proc/stat counts every core of the machine
    busy = machine * (1.0 - (last[2][0] - first[2][0]) / ticks)
    own = (last[1] - first[1]) / max(last[0] - first[0], 1e-9)
    others = max(0.0, busy - own)
    return cores - 1 - others >= _SPARE_NEEDED


def plan(learner, feature_map):
    """The loops a helper would compile for a fit of ``learner`` on ``feature_map``:
    the learner's ``compiled_loops`` and the map's but its first (the fit's first
    round calls that one at once), without those compiled ahead of time."""
    from ..protocols import capability

    keys = list(capability(learner, "compiled_loops"))
    keys += list(capability(feature_map, "compiled_loops"))[1:]
    return [k for k in dict.fromkeys(keys) if k in signatures() and not has_compiled(k)]


def start(keys):
    """Launch a helper compiling the loops ``keys`` (``"module:function"``; each once
    per process; nothing when turned off or every loop was asked for before).

    Parameters
    ----------
    keys : iterable of str
        Loops with a declared signature (:func:`structsvm._compiled.signatures`),
        in the order the fit needs them; others are ignored.
    """
    global _helper
    # the progress pipe is polled with select() and non-blocking reads: POSIX only
    if os.name != "posix" or os.environ.get("STRUCTSVM_JIT_WARMUP", "1") == "0":
        return
    todo = [k for k in keys if k in signatures() and k not in _started
            and not has_compiled(k)]
    if not todo or (_helper is not None and _helper[0].poll() is None) or \
            not _idle_core():
        return
    _started.update(todo)
    jobs = [(*_table.split_key(k), signatures()[k][0].split()) for k in todo]
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", _BOOT,
             os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
             json.dumps(jobs)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=dict(os.environ, STRUCTSVM_JIT_WARMUP="0"))
    except OSError:
        return
    os.set_blocking(proc.stdout.fileno(), False)
    if _helper is not None:  # a helper that has exited
        _helper[0].stdout.close()
    _helper = [proc, {}, b""]


def _read(block):
    """Take the helper's progress lines (first waiting for one when ``block``);
    False once it has exited."""
    proc, state, _ = _helper
    fd = proc.stdout.fileno()
    if block and not select.select([fd], [], [], _PATIENCE)[0]:
        return False  # a helper silent this long: stop following it
    alive = True
    while alive:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        alive = bool(chunk)
        *lines, _helper[2] = (_helper[2] + chunk).split(b"\n")
        for line in lines:
            what, _, key = line.decode().partition(" ")
            state[key] = what
    return alive


def wait(loop):
    """Before the first call of ``loop`` (a numba dispatcher): wait while the
    helper is compiling it, so that the call loads it from the cache."""
    global _helper
    if _helper is None:
        return
    py_func = getattr(loop, "py_func", None)
    if py_func is None:  # compiled ahead of time (a structsvm._compiled.CompiledLoop)
        return
    key = _key(py_func.__module__, py_func.__name__)
    with _lock:  # oracle threads may arrive together
        if _helper is None:
            return
        alive = _read(False)
        while alive and _helper[1].get(key) == "start":
            alive = _read(True)
        if not alive:  # exited, or silent for too long
            if _helper[0].poll() is None:
                _helper[0].kill()
            _helper[0].wait()
            _helper[0].stdout.close()
            _helper = None


def _compile(plan):
    """Helper side: compile (or load) every loop of ``plan``, reporting progress."""
    import importlib

    import numba
    import numpy as np

    def typ(spec):
        code, _, ndim = spec.partition(":")
        scalar = numba.from_dtype(np.dtype(code))
        return numba.types.Array(scalar, int(ndim), "C") if ndim else scalar

    for module, function, args in plan:
        key = _key(module, function)
        try:
            print("start", key, flush=True)
            loop = getattr(importlib.import_module(module), function)
            loop.compile(tuple(typ(a) for a in args))
            print("done", key, flush=True)
        except BrokenPipeError:  # the fit has ended
            return
        except Exception:  # noqa: BLE001 - the fit compiles it itself
            print("failed", key, flush=True)


if __name__ == "__main__":
    _compile(json.loads(sys.argv[1]))

"""The helper process that compiles a fit's numba kernels ahead of their first call."""
import subprocess
import sys

import numba
import numpy as np

from structsvm._compiled import warmup as _jit_warmup
from structsvm._compiled import _table as _kernel_table

SENTS = [["the", "dog", "runs"], ["a", "cat", "sleeps", "here"], ["dogs", "run"]] * 3
TAGS = [["D", "N", "V"], ["D", "N", "V", "R"], ["N", "V"]] * 3


def _types(args):
    out = []
    for spec in args:
        code, _, ndim = spec.partition(":")
        scalar = numba.from_dtype(np.dtype(code))
        out.append(numba.types.Array(scalar, int(ndim), "C") if ndim else scalar)
    return tuple(out)


_PLAN_CHECK = """
import importlib, sys
import numpy as np, scipy.sparse as sp
import structsvm
from structsvm._compiled import warmup as _jit_warmup
from structsvm._compiled import _table as _kernel_table
from structsvm.structures import SequenceFeatures
sys.path.insert(0, sys.argv[1])
from test_jit_warmup import SENTS, TAGS, _types
model = structsvm.fit(SENTS, TAGS, feature_map=SequenceFeatures(), C=1.0, max_iter=3,
                      random_state=0)
model.predict(SENTS[:2])
assert model.learner_.name == "dual_cd"
# the pool compacts only once it holds 100,000 dead entries: compact one here
from structsvm.learners._dual_cd_pool import RowPool
pool = RowPool(50)
pool.append(sp.random(300, 50, density=0.9, format="csr", random_state=0))
pool.append(sp.random(3000, 50, density=0.9, format="csr", random_state=1))
slot = np.array([[0, 1], [-1, 2]], dtype=np.int64)
pool.compact(slot)
assert pool.nrows == 3 and list(slot.ravel()) == [0, 1, -1, 2]
for name in ("learner:dual_cd", "structure:chain"):
    for key in _jit_warmup.PLANS[name]:
        module, function = _kernel_table.split_key(key)
        kernel = getattr(importlib.import_module(module), function)
        args = _types(_kernel_table.KERNELS[key][0].split())
        assert args in [tuple(s) for s in kernel.signatures], function
print("ok")
"""


def test_plans_name_the_types_a_fit_passes():
    """A stale plan would make the helper compile types no fit uses: every kernel of
    the sequence and dual_cd plans must be called by a fit and predict with exactly
    the types of the kernel table. (Plain multiclass fits have no plan: their one
    kernel, the sweep, is needed first.) Run with the compiled extension off, so
    that numba compiles what the calls pass."""
    import os
    out = subprocess.run(
        [sys.executable, "-c", _PLAN_CHECK, os.path.dirname(os.path.abspath(__file__))],
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, STRUCTSVM_AOT="0", STRUCTSVM_JIT_WARMUP="0"))
    assert out.stdout.split() == ["ok"], out.stderr[-3000:]


def test_helper_fills_the_cache_and_wait_follows_it(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(_jit_warmup, "_idle_core", lambda: True)
    monkeypatch.setattr(_jit_warmup, "_helper", None)
    monkeypatch.setattr(_jit_warmup, "_started", set())
    monkeypatch.setitem(_jit_warmup.PLANS, "test:plan", [
        "structsvm.structures.sequence._viterbi_jit:row_maxima", "structsvm.no_such_module:kernel"])
    monkeypatch.setitem(_kernel_table.KERNELS, "structsvm.structures.sequence._viterbi_jit:row_maxima",
                        ("f8:2", "f8:1"))
    monkeypatch.setitem(_kernel_table.KERNELS, "structsvm.no_such_module:kernel",
                        ("f8", "f8"))
    _jit_warmup.start(["test:plan", "test:unknown"])
    proc = _jit_warmup._helper[0]
    _jit_warmup.start(["test:plan"])  # asked for before: no second helper
    assert _jit_warmup._helper[0] is proc
    proc.wait(timeout=120)
    from structsvm.structures.sequence import _viterbi_jit
    _jit_warmup.wait(_viterbi_jit.row_maxima)  # reads the report, then the exit
    assert _jit_warmup._helper is None
    index = sorted(p.name for p in tmp_path.rglob("*.nbi"))
    assert any(n.startswith("_viterbi_jit.row_maxima-") for n in index), index


def test_helper_reports_each_kernel(tmp_path):
    import json
    import os
    plan = [["structsvm.structures.sequence._viterbi_jit", "row_maxima", ["f8:2"]],
            ["structsvm.structures.sequence._viterbi_jit", "nothing_here", ["f8"]]]
    out = subprocess.run([sys.executable, "-m", "structsvm._compiled.warmup", json.dumps(plan)],
                         capture_output=True, text=True, timeout=300, check=True,
                         env=dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))).stdout
    assert out.split("\n") == [
        "start structsvm.structures.sequence._viterbi_jit:row_maxima",
        "done structsvm.structures.sequence._viterbi_jit:row_maxima",
        "start structsvm.structures.sequence._viterbi_jit:nothing_here",
        "failed structsvm.structures.sequence._viterbi_jit:nothing_here", ""]


def test_turned_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("STRUCTSVM_JIT_WARMUP", "0")
    monkeypatch.setattr(_jit_warmup, "_helper", None)
    monkeypatch.setattr(_jit_warmup, "_started", set())
    _jit_warmup.start(["structure:chain"])
    assert _jit_warmup._helper is None and not _jit_warmup._started


def _fake_clock(monkeypatch, stat_lines, own_cpu):
    """/proc/stat giving ``stat_lines`` in turn, 0.2 s between samples, and this process
    using ``own_cpu`` cores meanwhile."""
    from itertools import chain, repeat
    lines = iter(stat_lines)
    clock = chain([10.0], repeat(10.2))  # the first sample, then 0.2 s later
    cpu = chain([1.0], repeat(1.0 + 0.2 * own_cpu))
    monkeypatch.setattr(_jit_warmup, "_cpu_times", lambda: next(lines))
    monkeypatch.setattr(_jit_warmup.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(_jit_warmup.time, "process_time", lambda: next(cpu))
    monkeypatch.setattr(_jit_warmup.time, "sleep", lambda s: None)
    monkeypatch.setattr(_jit_warmup.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_jit_warmup, "_usable_cores", lambda: 2)
    monkeypatch.setattr(_jit_warmup, "_SAMPLE", _jit_warmup._sample())


def test_idle_core_from_proc_stat(monkeypatch):
    """2 cores, 40 ticks in the window: idle ticks and this process's own CPU time
    decide whether another process holds the second core."""
    # this process busy (1 core), the other core idle: 20 of 40 ticks idle
    _fake_clock(monkeypatch, [(100, 1000), (120, 1040)], own_cpu=1.0)
    assert _jit_warmup._idle_core()
    # both cores busy while this process used one: another process holds the second
    _fake_clock(monkeypatch, [(100, 1000), (101, 1040)], own_cpu=1.0)
    assert not _jit_warmup._idle_core()
    # this process asleep, another busy: 20 idle ticks, but none spare besides this one
    _fake_clock(monkeypatch, [(100, 1000), (120, 1040)], own_cpu=0.0)
    assert not _jit_warmup._idle_core()
    # an idle machine, this process asleep
    _fake_clock(monkeypatch, [(100, 1000), (139, 1040)], own_cpu=0.0)
    assert _jit_warmup._idle_core()


def test_proc_stat_read(tmp_path, monkeypatch):
    stat = tmp_path / "stat"
    stat.write_text("cpu  10 2 3 400 5 6 7 8 0 0\ncpu0 5 1 1 200 2 3 3 4 0 0\n")
    monkeypatch.setattr(_jit_warmup, "_PROC_STAT", str(stat))
    assert _jit_warmup._cpu_times() == (405, 441)
    monkeypatch.setattr(_jit_warmup, "_PROC_STAT", str(tmp_path / "missing"))
    assert _jit_warmup._cpu_times() is None


def test_cgroup_quota_caps_the_cores(tmp_path, monkeypatch):
    monkeypatch.setattr(_jit_warmup.os, "sched_getaffinity", lambda pid: set(range(8)))
    quota = tmp_path / "cpu.max"
    monkeypatch.setattr(_jit_warmup, "_CPU_MAX", str(quota))
    quota.write_text("150000 100000\n")
    assert _jit_warmup._usable_cores() == 1
    quota.write_text("max 100000\n")
    assert _jit_warmup._usable_cores() == 8
    quota.unlink()
    assert _jit_warmup._usable_cores() == 8
    # one usable core: never a helper
    monkeypatch.setattr(_jit_warmup, "_usable_cores", lambda: 1)
    assert not _jit_warmup._idle_core()


def test_no_helper_on_a_busy_machine(monkeypatch):
    """Without /proc/stat the load average decides: below the cores minus one a helper
    may start."""
    monkeypatch.setattr(_jit_warmup, "_SAMPLE", (0.0, 0.0, None))
    monkeypatch.setattr(_jit_warmup, "_usable_cores", lambda: 2)
    monkeypatch.setattr(_jit_warmup.os, "getloadavg", lambda: (1.5, 0.0, 0.0))
    assert not _jit_warmup._idle_core()
    monkeypatch.setattr(_jit_warmup, "_helper", None)
    monkeypatch.setattr(_jit_warmup, "_started", set())
    _jit_warmup.start(["structure:chain"])
    assert _jit_warmup._helper is None and not _jit_warmup._started
    monkeypatch.setattr(_jit_warmup.os, "getloadavg", lambda: (0.6, 3.0, 3.0))
    assert _jit_warmup._idle_core()

"""The helper process that compiles a fit's numba loops ahead of their first call."""
import os
import subprocess
import sys

import numba
import numpy as np
import pytest

from structsvm import _compiled
from structsvm._compiled import warmup
from structsvm.learners import DualCD, MulticlassDualCD, OneSlackCuttingPlane
from structsvm.protocols import capability
from structsvm.registry import registered
from structsvm.structures import MulticlassFeatures, SequenceFeatures, TaxonomyFeatures

SENTS = [["the", "dog", "runs"], ["a", "cat", "sleeps", "here"], ["dogs", "run"]] * 3
TAGS = [["D", "N", "V"], ["D", "N", "V", "R"], ["N", "V"]] * 3

ROW_MAXIMA = "structsvm.structures.sequence._viterbi_jit:row_maxima"


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
from structsvm import _compiled
from structsvm._compiled import _table, warmup
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
plan = warmup.plan(model.learner_, model.feature_map_)
assert plan == (list(model.learner_.compiled_loops)
                + list(model.feature_map_.compiled_loops)[1:]), plan
for key in plan:
    module, function = _table.split_key(key)
    loop = getattr(importlib.import_module(module), function)
    args = _types(_compiled.signatures()[key][0].split())
    assert args in [tuple(s) for s in loop.signatures], function
print("ok")
"""


def test_plans_name_the_types_a_fit_passes():
    """A stale plan would make the helper compile types no fit uses: every loop of
    the plan of a sequence fit with dual_cd (the learner's loops and the map's but
    its first) must be called by a fit and predict with exactly the types its
    module's SIGNATURES declares. Run with the compiled extension off, so that the
    plan holds every loop and numba compiles what the calls pass."""
    out = subprocess.run(
        [sys.executable, "-c", _PLAN_CHECK, os.path.dirname(os.path.abspath(__file__))],
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, STRUCTSVM_AOT="0", STRUCTSVM_JIT_WARMUP="0"))
    assert out.stdout.split() == ["ok"], out.stderr[-3000:]


def test_plan_is_the_declared_loops_not_compiled_ahead(monkeypatch):
    """The plan of a fit: the learner's compiled_loops, then the map's but its first
    (the fit's first round needs that one at once), once each, declared loops only,
    none that the extension holds."""
    monkeypatch.setattr(warmup, "has_compiled", lambda key: False)
    assert warmup.plan(DualCD(), SequenceFeatures()) == [
        "structsvm.learners._dual_cd_jit:insert_rows",
        "structsvm.learners._dual_cd_jit:cached_pass",
        "structsvm.learners._dual_cd_jit:compact_pool",
        "structsvm.learners._dual_cd_jit:weights_from_alpha",
        "structsvm.structures.sequence._jit:shared_unaries",
        "structsvm.structures.sequence._viterbi_jit:viterbi_batch"]
    # plain multiclass fits: the sweep only (the map's first loop is left to the fit)
    assert warmup.plan(MulticlassDualCD(), MulticlassFeatures()) == [
        "structsvm.learners._multiclass_cd_jit:sweep",
        "structsvm.structures.multiclass._jit:attribute_differences",
        "structsvm.structures.multiclass._jit:dense_rows_to_csr"]
    assert warmup.plan(OneSlackCuttingPlane(), TaxonomyFeatures()) == [
        *OneSlackCuttingPlane.compiled_loops, *TaxonomyFeatures.compiled_loops[1:]]
    # every registered pair: declared loops only, each once, in the declared order
    for learner in registered("learner").values():
        for fm in registered("structure").values():
            keys = warmup.plan(learner, fm)
            assert len(set(keys)) == len(keys)
            assert set(keys) <= set(_compiled.signatures())
            order = [k for k in dict.fromkeys(
                [*capability(learner, "compiled_loops"),
                 *capability(fm, "compiled_loops")[1:]]) if k in _compiled.signatures()]
            assert keys == order
    # a loop the extension holds needs no helper
    monkeypatch.setattr(warmup, "has_compiled",
                        lambda key: key.endswith(":cached_pass"))
    assert "structsvm.learners._dual_cd_jit:cached_pass" not in \
        warmup.plan(DualCD(), SequenceFeatures())


def test_plan_is_empty_where_everything_is_compiled():
    """With the extension (required where STRUCTSVM_REQUIRE_AOT=1) the default fits
    start no helper."""
    if _compiled.extension() is None and os.environ.get("STRUCTSVM_REQUIRE_AOT") != "1":
        pytest.skip("the extension is not in use")
    for learner in (DualCD, MulticlassDualCD, OneSlackCuttingPlane):
        for fm in (SequenceFeatures, MulticlassFeatures, TaxonomyFeatures):
            assert warmup.plan(learner(), fm()) == []


def _declare(monkeypatch, table):
    """Let the helper know loops beyond the modules' SIGNATURES."""
    declared = dict(_compiled.signatures(), **table)
    monkeypatch.setattr(warmup, "signatures", lambda: declared)


def test_helper_fills_the_cache_and_wait_follows_it(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(warmup, "_idle_core", lambda: True)
    monkeypatch.setattr(warmup, "_helper", None)
    monkeypatch.setattr(warmup, "_started", set())
    _declare(monkeypatch, {ROW_MAXIMA: ("f8:2", "f8:1"),
                           "structsvm.no_such_module:loop": ("f8", "f8")})
    # an undeclared loop is ignored
    warmup.start([ROW_MAXIMA, "structsvm.no_such_module:loop",
                  "structsvm.undeclared_module:loop"])
    proc = warmup._helper[0]
    assert warmup._started == {ROW_MAXIMA, "structsvm.no_such_module:loop"}
    warmup.start([ROW_MAXIMA])  # asked for before: no second helper
    assert warmup._helper[0] is proc
    proc.wait(timeout=120)
    from structsvm.structures.sequence import _viterbi_jit
    warmup.wait(_viterbi_jit.row_maxima)  # reads the report, then the exit
    assert warmup._helper is None
    assert proc.stdout.closed  # no ResourceWarning when the Popen is collected
    index = sorted(p.name for p in tmp_path.rglob("*.nbi"))
    assert any(n.startswith("_viterbi_jit.row_maxima-") for n in index), index


def test_wait_passes_over_compiled_loops(monkeypatch):
    """A loop compiled ahead of time (no numba dispatcher) never waits for the
    helper."""
    class Helper:
        def poll(self):
            raise AssertionError("the helper was consulted")
    monkeypatch.setattr(warmup, "_helper", [Helper(), {}, b""])
    warmup.wait(_compiled.CompiledLoop(
        "structsvm.structures.sequence._viterbi_jit:viterbi_batch", None))
    assert warmup._helper[0].__class__ is Helper


def test_helper_reports_each_loop(tmp_path):
    import json
    plan = [["structsvm.structures.sequence._viterbi_jit", "row_maxima", ["f8:2"]],
            ["structsvm.structures.sequence._viterbi_jit", "nothing_here", ["f8"]]]
    out = subprocess.run([sys.executable, "-m", "structsvm._compiled.warmup",
                          json.dumps(plan)],
                         capture_output=True, text=True, timeout=300, check=True,
                         env=dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))).stdout
    assert out.split("\n") == [
        "start structsvm.structures.sequence._viterbi_jit:row_maxima",
        "done structsvm.structures.sequence._viterbi_jit:row_maxima",
        "start structsvm.structures.sequence._viterbi_jit:nothing_here",
        "failed structsvm.structures.sequence._viterbi_jit:nothing_here", ""]


def _no_extension(monkeypatch):
    """Every declared loop left to numba: only the condition under test stops a
    helper."""
    monkeypatch.setattr(warmup, "has_compiled", lambda key: False)
    monkeypatch.setattr(warmup, "_helper", None)
    monkeypatch.setattr(warmup, "_started", set())
    return warmup.plan(DualCD(), SequenceFeatures())


def test_turned_off_by_the_environment(monkeypatch):
    keys = _no_extension(monkeypatch)
    assert keys
    monkeypatch.setattr(warmup, "_idle_core", lambda: True)
    monkeypatch.setenv("STRUCTSVM_JIT_WARMUP", "0")
    warmup.start(keys)
    assert warmup._helper is None and not warmup._started


def test_no_helper_for_loops_compiled_ahead(monkeypatch):
    monkeypatch.setattr(warmup, "_idle_core", lambda: True)
    monkeypatch.setattr(warmup, "_helper", None)
    monkeypatch.setattr(warmup, "_started", set())
    monkeypatch.setattr(warmup, "has_compiled", lambda key: True)
    warmup.start(DualCD.compiled_loops)
    assert warmup._helper is None and not warmup._started


def _fake_clock(monkeypatch, stat_lines, own_cpu):
    """/proc/stat giving ``stat_lines`` in turn, 0.2 s between samples, and this process
    using ``own_cpu`` cores meanwhile."""
    from itertools import chain, repeat
    lines = iter(stat_lines)
    clock = chain([10.0], repeat(10.2))  # the first sample, then 0.2 s later
    cpu = chain([1.0], repeat(1.0 + 0.2 * own_cpu))
    monkeypatch.setattr(warmup, "_cpu_times", lambda: next(lines))
    monkeypatch.setattr(warmup.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(warmup.time, "process_time", lambda: next(cpu))
    monkeypatch.setattr(warmup.time, "sleep", lambda s: None)
    monkeypatch.setattr(warmup.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(warmup, "usable_cores", lambda: 2)
    monkeypatch.setattr(warmup, "_SAMPLE", warmup._sample())


def test_idle_core_from_proc_stat(monkeypatch):
    """2 cores, 40 ticks in the window: idle ticks and this process's own CPU time
    decide whether another process holds the second core."""
    # this process busy (1 core), the other core idle: 20 of 40 ticks idle
    _fake_clock(monkeypatch, [(100, 1000), (120, 1040)], own_cpu=1.0)
    assert warmup._idle_core()
    # both cores busy while this process used one: another process holds the second
    _fake_clock(monkeypatch, [(100, 1000), (101, 1040)], own_cpu=1.0)
    assert not warmup._idle_core()
    # this process asleep, another busy: 20 idle ticks, but none spare besides this one
    _fake_clock(monkeypatch, [(100, 1000), (120, 1040)], own_cpu=0.0)
    assert not warmup._idle_core()
    # an idle machine, this process asleep
    _fake_clock(monkeypatch, [(100, 1000), (139, 1040)], own_cpu=0.0)
    assert warmup._idle_core()


def test_proc_stat_read(tmp_path, monkeypatch):
    stat = tmp_path / "stat"
    stat.write_text("cpu  10 2 3 400 5 6 7 8 0 0\ncpu0 5 1 1 200 2 3 3 4 0 0\n")
    monkeypatch.setattr(warmup, "_PROC_STAT", str(stat))
    assert warmup._cpu_times() == (405, 441)
    monkeypatch.setattr(warmup, "_PROC_STAT", str(tmp_path / "missing"))
    assert warmup._cpu_times() is None


def test_cgroup_quota_caps_the_cores(tmp_path, monkeypatch):
    monkeypatch.setattr(warmup.os, "sched_getaffinity", lambda pid: set(range(8)))
    quota = tmp_path / "cpu.max"
    monkeypatch.setattr(warmup, "_CPU_MAX", str(quota))
    quota.write_text("150000 100000\n")
    assert warmup.usable_cores() == 1
    quota.write_text("max 100000\n")
    assert warmup.usable_cores() == 8
    quota.unlink()
    assert warmup.usable_cores() == 8
    # one usable core: never a helper
    monkeypatch.setattr(warmup, "usable_cores", lambda: 1)
    assert not warmup._idle_core()


def test_no_helper_on_a_busy_machine(monkeypatch):
    """Without /proc/stat the load average decides: below the cores minus one a helper
    may start."""
    monkeypatch.setattr(warmup, "_SAMPLE", (0.0, 0.0, None))
    monkeypatch.setattr(warmup, "usable_cores", lambda: 2)
    monkeypatch.setattr(warmup.os, "getloadavg", lambda: (1.5, 0.0, 0.0))
    assert not warmup._idle_core()
    keys = _no_extension(monkeypatch)
    assert keys
    warmup.start(keys)
    assert warmup._helper is None and not warmup._started
    monkeypatch.setattr(warmup.os, "getloadavg", lambda: (0.6, 3.0, 3.0))
    assert warmup._idle_core()

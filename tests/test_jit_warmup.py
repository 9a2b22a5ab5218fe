"""The helper process that compiles a fit's numba kernels ahead of their first call."""
import importlib
import subprocess
import sys

import numba
import numpy as np

import structsvm
from structsvm import _jit_warmup
from structsvm.features import SequenceFeatures

SENTS = [["the", "dog", "runs"], ["a", "cat", "sleeps", "here"], ["dogs", "run"]] * 3
TAGS = [["D", "N", "V"], ["D", "N", "V", "R"], ["N", "V"]] * 3


def _types(args):
    out = []
    for spec in args:
        code, _, ndim = spec.partition(":")
        scalar = numba.from_dtype(np.dtype(code))
        out.append(numba.types.Array(scalar, int(ndim), "C") if ndim else scalar)
    return tuple(out)


def test_plans_name_the_types_a_fit_passes():
    """A stale plan would make the helper compile types no fit uses: every kernel of
    the sequence and dual_cd plans must be called by a fit and predict with exactly
    the planned types."""
    model = structsvm.fit(SENTS, TAGS, feature_map=SequenceFeatures(), C=1.0,
                          max_iter=3, random_state=0)
    model.predict(SENTS[:2])
    assert model.learner_.name == "dual_cd"
    digits = structsvm.fit(np.random.default_rng(0).random((30, 5)), [0, 1, 2] * 10,
                           C=1.0)
    assert digits.learner_.name == "multiclass_cd"
    # the pool compacts only once it holds 100,000 dead entries: compact one here
    from structsvm.learners.dual_cd import _Pool
    import scipy.sparse as sp
    pool = _Pool(50)
    pool.append(sp.random(300, 50, density=0.9, format="csr", random_state=0))
    pool.append(sp.random(3000, 50, density=0.9, format="csr", random_state=1))
    slot = np.array([[0, 1], [-1, 2]], dtype=np.int64)
    pool.compact(slot)
    assert pool.nrows == 3 and list(slot.ravel()) == [0, 1, -1, 2]
    for name in ("learner:dual_cd", "learner:multiclass_cd", "structure:chain"):
        for module, function, args in _jit_warmup.PLANS[name]:
            kernel = getattr(importlib.import_module(module), function)
            assert _types(args) in [tuple(s) for s in kernel.signatures], function


def test_helper_fills_the_cache_and_wait_follows_it(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(_jit_warmup, "_idle_core", lambda: True)
    monkeypatch.setattr(_jit_warmup, "_helper", None)
    monkeypatch.setattr(_jit_warmup, "_started", set())
    monkeypatch.setitem(_jit_warmup.PLANS, "test:plan", [
        ("structsvm.inference._viterbi_jit", "row_maxima", ["f8:2"]),
        ("structsvm.no_such_module", "kernel", ["f8"]),
    ])
    _jit_warmup.start(["test:plan", "test:unknown"])
    proc = _jit_warmup._helper[0]
    _jit_warmup.start(["test:plan"])  # asked for before: no second helper
    assert _jit_warmup._helper[0] is proc
    proc.wait(timeout=120)
    from structsvm.inference import _viterbi_jit
    _jit_warmup.wait(_viterbi_jit.row_maxima)  # reads the report, then the exit
    assert _jit_warmup._helper is None
    index = sorted(p.name for p in tmp_path.rglob("*.nbi"))
    assert any(n.startswith("_viterbi_jit.row_maxima-") for n in index), index


def test_helper_reports_each_kernel(tmp_path):
    import json
    import os
    plan = [["structsvm.inference._viterbi_jit", "row_maxima", ["f8:2"]],
            ["structsvm.inference._viterbi_jit", "nothing_here", ["f8"]]]
    out = subprocess.run([sys.executable, "-m", "structsvm._jit_warmup", json.dumps(plan)],
                         capture_output=True, text=True, timeout=300, check=True,
                         env=dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))).stdout
    assert out.split("\n") == [
        "start structsvm.inference._viterbi_jit:row_maxima",
        "done structsvm.inference._viterbi_jit:row_maxima",
        "start structsvm.inference._viterbi_jit:nothing_here",
        "failed structsvm.inference._viterbi_jit:nothing_here", ""]


def test_turned_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("STRUCTSVM_JIT_WARMUP", "0")
    monkeypatch.setattr(_jit_warmup, "_helper", None)
    monkeypatch.setattr(_jit_warmup, "_started", set())
    _jit_warmup.start(["structure:chain"])
    assert _jit_warmup._helper is None and not _jit_warmup._started


def test_no_helper_on_a_busy_machine(monkeypatch):
    """The load average decides: below the cores minus one a helper may start."""
    monkeypatch.setattr(_jit_warmup.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(_jit_warmup.os, "getloadavg", lambda: (1.5, 0.0, 0.0))
    assert not _jit_warmup._idle_core()
    monkeypatch.setattr(_jit_warmup, "_helper", None)
    monkeypatch.setattr(_jit_warmup, "_started", set())
    _jit_warmup.start(["structure:chain"])
    assert _jit_warmup._helper is None and not _jit_warmup._started
    monkeypatch.setattr(_jit_warmup.os, "getloadavg", lambda: (0.6, 3.0, 3.0))
    assert _jit_warmup._idle_core()

"""Mutation testing for structsvm: a developer tool, not part of the package or of CI.

Each mutant is one small change to one module (a flipped comparison, ``+`` for ``-``,
``0`` for ``1``, ``and`` for ``or``, a return value replaced by ``None``, a deleted
statement, an off-by-one in a slice or a ``range``), or one of the curated mutants in
``CURATED`` (errors of the kinds that once slipped past the tests). A mutant is
*killed* when the tests that cover its module fail, *survives* when they pass, and
*times out* when they run past the module's time limit (counted as killed: the mutant
changed behaviour).

The mutants are applied one at a time to a temporary copy of the repository, never to
the working tree: an interrupted run leaves the checkout untouched. The numba kernels
(``_*_jit.py``) are mutated like any other module and run compiled, as in use: the
kernel cache of the copy is restored after each mutant, and the caches of the kernels
that call into a mutated kernel module are dropped before the run, so that no stale
compiled code hides a mutant.

Usage (from the repository root)::

    python dev/mutation.py list [--module structsvm/io/__init__.py]
    python dev/mutation.py run [--module structsvm/io/__init__.py] [--results FILE]
    python dev/mutation.py run --survivors [--module ...]
    python dev/mutation.py report [--docs]

``run`` appends one JSON line per mutant to the results file (default
``dev/mutation_results.jsonl``) and skips mutants already recorded there, so that a run
can be resumed; ``--fresh`` starts over; ``--survivors`` runs again the mutants that
survived (after tests were added). ``report`` prints the per-module table and the
survivors, with the triage notes of ``dev/mutation_triage.json`` (mutant id -> why it
is equivalent); ``--docs`` writes them into docs/testing.md. See docs/testing.md.
"""
from __future__ import annotations

import argparse
import ast
import copy
import functools
import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "dev" / "mutation_results.jsonl"
TRIAGE = ROOT / "dev" / "mutation_triage.json"
SEED = 20240601

# module -> (test runs, number of sampled mutants). A test run is the argument string of
# one pytest call (test files, optionally ``-k``); the runs of a module go in order, the
# first failing one kills the mutant. The module itself is added to the first run for
# its doctests. The selections keep a mutant's run to seconds: the slowest
# parametrisations (Pegasos to 1 %, every learner on every map) are left to the suite.
QP_MATRIX = "tests/test_learner_qp_matrix.py -k "
LEARN = "tests/test_learners.py -k "
WARM = "tests/test_warm_start.py tests/test_resume_state.py"
DECODERS = "tests/test_decoders_enum.py"
TARGETS = {
    "structsvm/learners/__init__.py": (["tests/test_default_learner.py", WARM], 3),
    "structsvm/learners/_cache.py": (["tests/test_cutting_plane_cache.py -k "
                                      "'not rankings_run_without'", "tests/test_qp.py",
                                      WARM], 3),
    "structsvm/learners/_cache_jit.py": (["tests/test_cutting_plane_cache.py -k "
                                          "'not rankings_run_without'"], 3),
    "structsvm/learners/_dual_cd_jit.py": (["tests/test_dual_cd.py"], 5),
    "structsvm/learners/_multiclass_cd_jit.py": (["tests/test_multiclass_cd.py"], 3),
    "structsvm/learners/_primal_qp.py": (["tests/test_constraints.py",
                                          QP_MATRIX + "'n_slack and C0.1'"], 3),
    "structsvm/learners/_qp.py": (["tests/test_qp.py", QP_MATRIX + "'slack and C0.1 and "
                                   "not pegasos and not dual_cd and not frank'"], 4),
    "structsvm/learners/_smo_jit.py": (["tests/test_qp.py"], 3),
    "structsvm/learners/_sparse_jit.py": (["tests/test_sparse_loops.py",
                                           LEARN + "'not pegasos_gets and not frank'"], 3),
    "structsvm/learners/cutting_plane.py": (
        [LEARN + "'not pegasos and not frank'", WARM,
         "tests/test_cutting_plane_cache.py -k 'not rankings_run_without and not kernels'",
         QP_MATRIX + "'n_slack or one_slack'", "tests/test_constraints.py"], 6),
    "structsvm/learners/dual_cd.py": (["tests/test_dual_cd.py", WARM], 6),
    "structsvm/learners/frank_wolfe.py": ([LEARN + "'frank or agree'", WARM], 3),
    "structsvm/learners/multiclass_cd.py": (["tests/test_multiclass_cd.py", WARM], 4),
    "structsvm/learners/pegasos.py": ([LEARN + "'pegasos or agree'", WARM,
                                       QP_MATRIX + "'pegasos-sequence-hamming-margin'"], 4),
    "structsvm/learners/perceptron.py": ([LEARN + "'perceptron or agree'", WARM], 4),
    "structsvm/structures/decoders.py": ([DECODERS, "tests/test_viterbi.py"], 2),
    "structsvm/registry.py": (["tests/test_plugin_contract.py", DECODERS,
                               "tests/test_loss_augmented_decoder.py"], 4),
    "structsvm/structures/grammar/_cky_jit.py": (["tests/test_cky.py"], 4),
    "structsvm/structures/graph/_max_product_jit.py": (["tests/test_max_product.py",
                                                 "tests/test_lp_decoder.py"], 3),
    "structsvm/structures/ranking/_sort_jit.py": ([DECODERS, "tests/test_ranking.py",
                                          "tests/test_rank_oracle.py"], 3),
    "structsvm/structures/sequence/_viterbi_jit.py": (["tests/test_viterbi.py", DECODERS,
                                             "tests/test_chain_oracle.py"], 4),
    "structsvm/structures/multiclass/argmax.py": ([DECODERS, "tests/test_multiclass.py"], 6),
    "structsvm/structures/grammar/cky.py": (["tests/test_cky.py"], 4),
    "structsvm/structures/exhaustive.py": ([DECODERS, "tests/test_enumerable.py"], 3),
    "structsvm/structures/graph/lp.py": (["tests/test_lp_decoder.py"], 3),
    "structsvm/structures/graph/max_product.py": (["tests/test_max_product.py",
                                            "tests/test_lp_decoder.py"], 3),
    "structsvm/structures/ranking/sort.py": ([DECODERS, "tests/test_ranking.py",
                                     "tests/test_rank_oracle.py"], 3),
    "structsvm/structures/taxonomy/decoder.py": ([DECODERS, "tests/test_taxonomy.py"], 3),
    "structsvm/structures/sequence/viterbi.py": (["tests/test_viterbi.py", DECODERS,
                                        "tests/test_loss_augmented_decoder.py -k "
                                        "'not registered_decoder_trains'"], 4),
    "structsvm/io/__init__.py": (["tests/test_io_hostile.py", "tests/test_save_load_all_maps.py",
                         "tests/test_estimator.py -k save_load"], 12),
    "structsvm/io/_format.py": (["tests/test_io_hostile.py",
                                    "tests/test_save_load_all_maps.py"], 10),
    "structsvm/learners/_parallel.py": (["tests/test_oracle.py", "tests/test_parallel.py -k "
                                "'not bench_scaling_smoke'",
                                LEARN + "parallel"], 8),
}

# Curated mutants: (module, exact source text, replacement, what it plants). Each text
# must occur exactly once in its module; a curated mutant whose text is gone is
# reported as stale.
CURATED: list[tuple[str, str, str, str]] = [
    # warm start and resume
    ("structsvm/learners/dual_cd.py", "self._offer(problem, st, problem.oracle(w0), w, 0)",
     "pass", "warm start ignores w0"),
    ("structsvm/learners/dual_cd.py",
     "st = _State.restored(state, n, int(self.cache_size) + 1, D, fp, C)", "st = None",
     "resume starts from zero instead of the saved dual point"),
    ("structsvm/learners/multiclass_cd.py", "beta = _start(state, Y, C, K)",
     "beta = _start(None, Y, C, K)", "resume starts from zero instead of the saved beta"),
    ("structsvm/learners/cutting_plane.py", "w = np.array(w0, dtype=float)",
     "w = np.zeros_like(np.asarray(w0, dtype=float))", "warm start ignores w0"),
    # dual_cd's pool compaction
    ("structsvm/learners/_dual_cd_jit.py", "            new_start[nr] = pos\n",
     "            new_start[nr] = pos - ln * (nr > 0)\n",
     "compaction misplaces the rows it keeps"),
    ("structsvm/learners/_dual_cd_jit.py", "            slot[i, s] = nr\n", "",
     "compaction keeps the old row numbers"),
    # CKY beam pruning and its guard
    ("structsvm/structures/grammar/cky.py", "0 if exact else int(beam), out, node_off, best)",
     "0, out, node_off, best)", "the beam is ignored (always exact)"),
    ("structsvm/structures/grammar/cky.py", "if cands is not None and not exact:",
     "if False:", "pruned loss-augmented search may report a negative violation"),
    # the model-file reader's guards
    ("structsvm/io/_format.py", "if len(infos) > _MAX_MEMBERS:", "if False:",
     "no member-count limit"),
    ("structsvm/io/_format.py", "if total > max_bytes + 4096 * len(infos):",
     "if False:", "no total-size limit"),
    ("structsvm/io/_format.py", "if len(set(names)) != len(names):", "if False:",
     "duplicate members accepted"),
    ("structsvm/io/_format.py", 'or "\\0" in name or ".." in name):', "):",
     "odd member names accepted"),
    ("structsvm/io/_format.py", "elif version in ((2, 0), (3, 0)):", "elif True:",
     "any .npy version accepted"),
    ("structsvm/io/_format.py", "if extra or missing:", "if missing:",
     "members the header does not list are inflated"),
    ("structsvm/io/_format.py", "if not nbytes + 10 <= info.file_size <= nbytes + 4096:",
     "if False:", "a member's declared size is not checked against the header"),
    ("structsvm/io/__init__.py",
     "meta, files = read_archive(path, max_bytes, lambda h: _check_header(path, h))",
     "meta, files = read_archive(path, MAX_BYTES, lambda h: _check_header(path, h))",
     "load(max_bytes=) is ignored"),
    # the parallel oracle's data paths
    ("structsvm/learners/_parallel.py", "handle = _Handle(self.token, self._payload())",
     "handle = _Handle(self.token)", "the priming tasks ship no data"),
    ("structsvm/learners/_parallel.py",
     "payload = None if not any(not m.weights for m in missing) else self._payload()",
     "payload = None", "workers without the data never get it"),
    ("structsvm/learners/_parallel.py", "for attempt in range(3):", "for attempt in range(0):",
     "every chunk computed in the training process"),
]

TIME_FACTOR, TIME_SLACK = 3.0, 30.0   # time limit per mutant: factor * baseline + slack


@dataclass
class Mutant:
    id: str
    module: str
    line: int
    op: str
    before: str
    after: str
    start: int = 0      # byte offsets of the replaced text in the module's source
    end: int = 0
    text: str = ""      # the replacement text


# ------------------------------------------------------------------ generation

CMP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
       ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
       ast.In: ast.NotIn, ast.NotIn: ast.In}
BIN = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
       ast.FloorDiv: ast.Mult}
DELETABLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.If, ast.Raise,
             ast.For, ast.While, ast.With, ast.Return, ast.Continue, ast.Break)


class _Source:
    """A module's source with (line, column) -> byte offset."""

    def __init__(self, text: str):
        self.text = text
        self.data = text.encode("utf-8")
        self.starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def span(self, node) -> tuple[int, int]:
        return (self.starts[node.lineno - 1] + node.col_offset,
                self.starts[node.end_lineno - 1] + node.end_col_offset)

    def segment(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8")


def _skipped_nodes(tree) -> set[int]:
    """ids of nodes never mutated: docstrings, f-strings, annotations, error messages,
    ``__all__``, ``TYPE_CHECKING`` blocks and everything inside them."""
    skip = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            skip.append(body[0])
        if isinstance(node, ast.JoinedStr):
            skip.append(node)
        if isinstance(node, (ast.arg, ast.AnnAssign)) and node.annotation is not None:
            skip.append(node.annotation)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.returns is not None:
                skip.append(node.returns)
            skip.extend(node.decorator_list)
        if isinstance(node, ast.Raise) and node.exc is not None:
            skip.append(node.exc)        # the exception and its message
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            skip.append(node)
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Name)
                and node.test.id == "TYPE_CHECKING"):
            skip.append(node)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            skip.append(node)
    out = set()
    for node in skip:
        out.update(id(n) for n in ast.walk(node))
    return out


def _replace_expr(node, **change) -> str:
    new = copy.deepcopy(node)
    for k, v in change.items():
        setattr(new, k, v)
    return "(" + ast.unparse(new) + ")"


def _candidates(src: _Source, tree):
    """Yield (node, op, replacement text) for every mutation point of a module."""
    skip = _skipped_nodes(tree)
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in ast.walk(tree):
        if id(node) in skip or not hasattr(node, "lineno"):
            continue
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in CMP:
                    ops = list(node.ops)
                    ops[i] = CMP[type(op)]()
                    yield node, f"cmp {type(op).__name__}->{CMP[type(op)].__name__}", \
                        _replace_expr(node, ops=ops)
        elif isinstance(node, ast.BinOp) and type(node.op) in BIN:
            new = BIN[type(node.op)]
            yield node, f"binop {type(node.op).__name__}->{new.__name__}", \
                _replace_expr(node, op=new())
        elif isinstance(node, ast.AugAssign) and type(node.op) in (ast.Add, ast.Sub):
            new = BIN[type(node.op)]
            yield node, f"augassign {type(node.op).__name__}->{new.__name__}", \
                ast.unparse(ast.AugAssign(target=node.target, op=new(), value=node.value))
        elif isinstance(node, ast.BoolOp):
            new = ast.Or if isinstance(node.op, ast.And) else ast.And
            yield node, f"boolop ->{new.__name__}", _replace_expr(node, op=new())
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield node, "not removed", "(" + ast.unparse(node.operand) + ")"
        elif (isinstance(node, ast.Constant) and type(node.value) in (int, float)
              and not isinstance(parents.get(id(node)), ast.UnaryOp)):
            v = node.value
            new = {0: 1, 1: 0}.get(v, v + 1) if isinstance(v, int) else \
                {0.0: 1.0, 1.0: 0.0}.get(v, None)
            if new is not None:
                yield node, f"const {v!r}->{new!r}", repr(new)
        elif isinstance(node, ast.Slice):
            for part, deltas in (("lower", ("+ 1",)), ("upper", ("- 1", "+ 1"))):
                sub = getattr(node, part)
                if sub is not None and id(sub) not in skip:
                    for d in deltas:
                        yield sub, f"slice {part} {d}", f"({ast.unparse(sub)} {d})"
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("range", "prange") and node.args):
            stop = node.args[1] if len(node.args) >= 2 else node.args[0]
            for d in ("- 1", "+ 1"):
                yield stop, f"range stop {d}", f"({ast.unparse(stop)} {d})"
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            yield node, "return None", "return None"
        if isinstance(node, DELETABLE) and not isinstance(node, ast.Return):
            if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Call):
                continue
            parent = parents.get(id(node))
            if (isinstance(node, ast.If) and isinstance(parent, ast.If)
                    and parent.orelse == [node]):
                continue                 # an elif: its text starts at "elif"
            yield node, f"delete {type(node).__name__}", "pass"


def _make(module: str, src: _Source, tree_dump: str, node, op: str,
          text: str) -> Mutant | None:
    start, end = src.span(node)
    before = src.segment(start, end)
    if text.strip() == before.strip():
        return None
    new_data = src.data[:start] + text.encode() + src.data[end:]
    try:
        new_tree = ast.parse(new_data)
    except SyntaxError:
        return None
    if ast.dump(new_tree) == tree_dump:
        return None
    first = before.splitlines()[0] if before else ""
    short = first + (" ..." if "\n" in before else "")
    key = f"{module}:{node.lineno}:{node.col_offset}:{op}"
    mid = f"{Path(module).stem}-{zlib.crc32(key.encode()):08x}"
    return Mutant(mid, module, node.lineno, op, short, text.splitlines()[0],
                  start, end, text)


@functools.lru_cache(maxsize=None)
def generate(module: str) -> list[Mutant]:
    """Every generated mutant of ``module`` (deterministic order)."""
    text = (ROOT / module).read_text(encoding="utf-8")
    src, tree = _Source(text), ast.parse(text)
    dump = ast.dump(tree)
    seen, out = set(), []
    for node, op, repl in _candidates(src, tree):
        m = _make(module, src, dump, node, op, repl)
        if m is not None and m.id not in seen:
            seen.add(m.id)
            out.append(m)
    return out


def curated(module: str) -> list[Mutant]:
    text = (ROOT / module).read_text(encoding="utf-8")
    src = _Source(text)
    out = []
    for mod, before, after, what in CURATED:
        if mod != module:
            continue
        b = before.encode()
        if src.data.count(b) != 1:
            print(f"stale curated mutant in {module}: {before!r}", file=sys.stderr)
            continue
        start = src.data.index(b)
        ast.parse(src.data[:start] + after.encode() + src.data[start + len(b):])
        line = src.data[:start].count(b"\n") + 1
        mid = f"{Path(module).stem}-c{zlib.crc32((module + before).encode()):08x}"
        out.append(Mutant(mid, module, line, f"curated: {what}",
                          before.strip().splitlines()[0], after.strip().splitlines()[0]
                          if after.strip() else "", start, start + len(b), after))
    return out


def sample(module: str, budget: int | None = None, seed: int = SEED) -> list[Mutant]:
    """The module's mutants to run: a seeded sample of the generated ones (the
    same on every run while the module is unchanged), then the curated ones."""
    every = generate(module)
    n = TARGETS[module][1] if budget is None else budget
    rng = random.Random(seed + zlib.crc32(module.encode()))
    order = list(every)
    rng.shuffle(order)          # a larger budget only adds mutants to a smaller one's
    picked = order[:n]
    picked.sort(key=lambda m: (m.line, m.op))
    return picked + curated(module)


# ------------------------------------------------------------------ running

def _copy_tree(dest: Path):
    """The repository's files (tracked and untracked, not ignored), and the compiled
    kernel caches: valid in the copy too, as the sources keep their mtimes."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\n")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    for src in (ROOT / "structsvm").rglob("*.nb[ic]"):
        rel = src.relative_to(ROOT)
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel)


def _jit_dependents(tree_root: Path) -> dict[str, list[str]]:
    """kernel module path -> the kernel modules that import it (their compiled
    caches embed its code)."""
    pkg = tree_root / "structsvm"
    out: dict[str, list[str]] = {}
    for path in pkg.rglob("_*_jit.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.split(".")[-1].endswith("_jit"):
                name = node.module.split(".")[-1]
                for dep in pkg.rglob(name + ".py"):
                    rel = str(dep.relative_to(tree_root))
                    out.setdefault(rel, []).append(str(path.relative_to(tree_root)))
    return out


class Runner:
    def __init__(self, workdir: Path, verbose: bool = False):
        self.work = workdir
        self.verbose = verbose
        self.env = dict(os.environ, PYTHONPATH=str(workdir), PYTHONDONTWRITEBYTECODE="1")
        self.env.pop("STRUCTSVM_REQUIRE_DATA", None)
        self.snapshot: dict[Path, tuple[bytes, float]] = {}
        self.dependents = _jit_dependents(workdir)
        self.stamp = time.time()

    def pytest(self, runs: list[str], timeout: float | None):
        """Run the test runs in order, up to the first failing one: (exit code or
        "timeout", seconds, output)."""
        t0 = time.monotonic()
        code, out = 0, ""
        for run in runs:
            left = None if timeout is None else timeout - (time.monotonic() - t0)
            if left is not None and left <= 0:
                return "timeout", time.monotonic() - t0, out
            code, _, out = self._pytest(shlex.split(run), left)
            if code != 0:
                break
        return code, time.monotonic() - t0, out

    def _pytest(self, targets: list[str], timeout: float | None):
        """One pytest call in a forked child of this process (which has imported the
        heavy dependencies once, but never structsvm): (exit code, seconds, output)."""
        args = ["-x", "-q", "-p", "no:cacheprovider", "--no-header", *targets]
        t0 = time.monotonic()
        with tempfile.TemporaryFile() as log:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:  # the child: never returns
                code = 4
                try:
                    signal.signal(signal.SIGINT, signal.SIG_DFL)
                    signal.signal(signal.SIGTERM, signal.SIG_DFL)
                    os.setsid()
                    os.dup2(log.fileno(), 1)
                    os.dup2(log.fileno(), 2)
                    os.chdir(self.work)
                    os.environ.clear()
                    os.environ.update(self.env)
                    sys.path.insert(0, str(self.work))
                    sys.dont_write_bytecode = True
                    import pytest

                    code = int(pytest.main(args))
                except BaseException:  # noqa: BLE001 - report anything, then exit
                    import traceback

                    traceback.print_exc()
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(code)
            try:
                while True:
                    done, status = os.waitpid(pid, os.WNOHANG)
                    if done:
                        break
                    if timeout is not None and time.monotonic() - t0 > timeout:
                        raise TimeoutError
                    time.sleep(0.05)
            except BaseException as exc:   # the time limit, or Ctrl-C: end the child
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                os.waitpid(pid, 0)
                if isinstance(exc, TimeoutError):
                    return "timeout", time.monotonic() - t0, ""
                raise
            log.seek(0)
            out = log.read().decode("utf-8", "replace")
        return os.waitstatus_to_exitcode(status), time.monotonic() - t0, out

    def take_snapshot(self):
        self.snapshot = {p: (p.read_bytes(), p.stat().st_mtime)
                         for p in (self.work / "structsvm").rglob("*.nb[ic]")}

    def restore_caches(self):
        for p in (self.work / "structsvm").rglob("*.nb[ic]"):
            if p not in self.snapshot:
                p.unlink()
        for p, (data, mtime) in self.snapshot.items():
            if not p.exists() or p.stat().st_mtime != mtime:
                p.write_bytes(data)
                os.utime(p, (mtime, mtime))

    def drop_caches_of(self, modules: list[str]):
        for mod in modules:
            path = self.work / mod
            for p in (path.parent / "__pycache__").glob(path.stem + ".*.nb[ic]"):
                p.unlink()

    def run_mutant(self, m: Mutant, targets: list[str], timeout: float) -> dict:
        path = self.work / m.module
        original = path.read_bytes()
        if original[m.start:m.end] != (ROOT / m.module).read_bytes()[m.start:m.end]:
            return None                  # the copy's module differs here (--copy)
        stat = path.stat()
        data = original[:m.start] + m.text.encode() + original[m.end:]
        try:
            path.write_bytes(data)
            self.stamp += 10.0   # a distinct mtime: no bytecode or kernel cache reuse
            os.utime(path, (self.stamp, self.stamp))
            self.drop_caches_of(self.dependents.get(m.module, []))
            code, secs, out = self.pytest(targets, timeout)
        finally:
            path.write_bytes(original)
            os.utime(path, (stat.st_atime, stat.st_mtime))
            self.restore_caches()
        if code == "timeout":
            status = "timeout"
        elif code == 0:
            status = "survived"
        elif code == 1:
            status = "killed"
        else:   # 2-4: a collection, internal or usage error (an import error in a
            # conftest is a usage error): the unmutated code passed the same run;
            # a negative code is a crash (a kernel reading out of bounds)
            crash = -code in (signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT,
                              signal.SIGFPE, signal.SIGILL)
            status = "killed" if code in (2, 3, 4) or crash else f"error {code}"
        failed = ""
        for line in out.splitlines():
            if line.startswith(("FAILED", "ERROR")):
                failed = line
                break
        if self.verbose and status != "killed":
            print(out[-2000:])
        return dict(asdict(m), status=status, seconds=round(secs, 1), failed=failed)


def _load(results: Path) -> list[dict]:
    if not results.exists():
        return []
    return [json.loads(line) for line in results.read_text().splitlines() if line.strip()]


def _recorded_survivors(module: str, rows: list[dict],
                        timeouts: bool = False) -> list[Mutant]:
    """The module's mutants whose last run survived and that the triage file does not
    call equivalent, rebuilt from their records (while the source still matches)."""
    triage = json.loads(TRIAGE.read_text()) if TRIAGE.exists() else {}
    latest = {r["id"]: r for r in rows if r["module"] == module}
    data = (ROOT / module).read_bytes()
    out = []
    for mid, r in latest.items():
        if (_killed(r["status"]) and not (timeouts and r["status"] == "timeout")) \
                or mid in triage:
            continue
        now = data[r["start"]:r["end"]].decode("utf-8", "replace").splitlines() or [""]
        if now[0] != r["before"].removesuffix(" ...").splitlines()[0]:
            print(f"  stale: {mid} (the source changed)", flush=True)
            continue
        out.append(Mutant(**{k: r[k] for k in Mutant.__dataclass_fields__}))
    return out


def cmd_run(args):
    modules = args.module or list(TARGETS)
    results = Path(args.results)
    if args.fresh and results.exists():
        results.unlink()
    # imported once here, inherited by every forked test run (structsvm is not)
    import cvxpy, hypothesis, joblib, networkx, numba, pytest, scipy, sklearn  # noqa
    # Ctrl-C or a kill ends the run cleanly: the running child is ended and the copy
    # removed (some of the imports above install their own SIGINT handlers)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with tempfile.TemporaryDirectory(prefix="structsvm-mutants-") as tmp:
        work = Path(tmp)
        _copy_tree(work)
        for extra in args.copy or []:   # files of another checkout, at their place
            parts = Path(extra).resolve().parts
            at = max(i for i, p in enumerate(parts) if p in ("tests", "structsvm"))
            shutil.copy2(extra, work.joinpath(*parts[at:]))
        runner = Runner(work, args.verbose)
        probe = subprocess.run([sys.executable, "-c", "import structsvm; print(structsvm.__file__)"],
                               cwd=work, env=runner.env, capture_output=True, text=True)
        if not probe.stdout.startswith(str(work)):
            sys.exit(f"the copy is not the package imported: {probe.stdout}{probe.stderr}")
        for module in modules:
            runs, _ = TARGETS[module]
            own = ROOT / "tests" / f"test_mutants_{Path(module).stem.strip('_')}.py"
            targets = ([str(own.relative_to(ROOT))] if own.exists() else []) + list(runs)
            if args.extra_run:
                targets = list(args.extra_run) + targets
            plain = [i for i, r in enumerate(runs) if " -k " not in r]
            if plain:        # the module's doctests, if any, go with a run without -k
                targets[plain[0]] += " " + module
            latest = {r["id"]: r["status"] for r in _load(results)}  # may be shared
            if args.survivors:    # re-run the survivors (after adding tests)
                todo = _recorded_survivors(module, _load(results), args.timeouts)
            else:
                todo = [m for m in sample(module, args.budget) if m.id not in latest]
            if not todo:
                continue
            runner.restore_caches() if runner.snapshot else None
            seen = [r["baseline"] for r in _load(results)
                    if r["module"] == module and "baseline" in r]
            kernel = Path(module).stem.endswith("_jit")
            if args.survivors and seen and not kernel:   # the recorded baseline
                base = max(seen)
            else:
                if kernel:   # a mutant recompiles its kernels: so does the baseline
                    runner.drop_caches_of([module] + runner.dependents.get(module, []))
                code, base, out = runner.pytest(targets, None)
                if code != 0:
                    sys.exit(f"{module}: the tests fail on the unmutated code:\n"
                             f"{out[-3000:]}")
            runner.take_snapshot()
            timeout = TIME_FACTOR * base + TIME_SLACK
            print(f"{module}: {len(todo)} mutants, baseline {base:.1f} s", flush=True)
            for m in todo:
                r = runner.run_mutant(m, targets, timeout)
                if r is None:
                    print(f"  skipped  {m.id}: the module differs in the copy", flush=True)
                    continue
                r["baseline"] = round(base, 1)
                with results.open("a") as fh:
                    fh.write(json.dumps(r) + "\n")
                print(f"  {r['status']:8s} {r['seconds']:6.1f}s  {m.id}  line {m.line}: "
                      f"{m.op}: {m.before!r} -> {m.after!r}", flush=True)


def cmd_list(args):
    for module in args.module or list(TARGETS):
        ms = sample(module, args.budget)
        print(f"{module}: {len(generate(module))} generated, {len(ms)} sampled")
        for m in ms:
            print(f"  {m.id}  line {m.line}: {m.op}: {m.before!r} -> {m.after!r}")


def _killed(status: str) -> bool:
    # exit code 4 is also an import error in a conftest (older result files)
    return status in ("killed", "timeout", "error 4", "error -11")


def cmd_report(args):
    """Print the report; with ``--docs``, write it into docs/testing.md between the
    markers ``<!-- mutation report -->`` and ``<!-- end of mutation report -->``."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        _report(args)
    text = buf.getvalue()
    if not args.docs:
        print(text, end="")
        return
    page = ROOT / "docs" / "testing.md"
    doc = page.read_text(encoding="utf-8")
    a, b = "<!-- mutation report -->\n", "<!-- end of mutation report -->"
    start, end = doc.index(a) + len(a), doc.index(b)
    page.write_text(doc[:start] + text + doc[end:], encoding="utf-8")


def _report(args):
    """The per-module table (first run: killed / survived; the survivors: killed by a
    test added since, or equivalent per the triage file, or unexplained), then one
    line per survivor."""
    rows = _load(Path(args.results))
    triage = json.loads(TRIAGE.read_text()) if TRIAGE.exists() else {}
    first, latest = {}, {}
    for r in rows:
        first.setdefault(r["id"], r)
        latest[r["id"]] = r
    print("| module | mutants | killed | survived | killed by a new test | equivalent "
          "| unexplained |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    tot = [0] * 6
    for module in TARGETS:
        ids = [i for i, r in first.items() if r["module"] == module]
        if not ids:
            continue
        surv = [i for i in ids if not _killed(first[i]["status"])]
        later = [i for i in surv if _killed(latest[i]["status"])]
        equiv = [i for i in surv if i not in later and i in triage]
        row = (len(ids), len(ids) - len(surv), len(surv), len(later), len(equiv),
               len(surv) - len(later) - len(equiv))
        tot = [t + v for t, v in zip(tot, row)]
        name = module.removeprefix("structsvm/")
        print(f"| `{name}` | " + " | ".join(map(str, row)) + " |")
    print("| total | " + " | ".join(map(str, tot)) + " |")
    print()
    secs = sum(r["seconds"] for r in rows)
    print(f"{len(rows)} mutant runs (first runs and re-runs), {secs / 60:.0f} minutes of "
          "test runs in all (wall time, 2 cores shared with other work).")
    print()
    for i, r in first.items():
        if _killed(r["status"]):
            continue
        now = latest[i]
        if _killed(now["status"]):
            test = now["failed"].split(" - ")[0].removeprefix("FAILED ")
            note = f"killed by `{test}`"
        else:
            note = "equivalent: " + triage[i] if i in triage else "UNEXPLAINED"
        print(f"- `{i}` `{r['module'].removeprefix('structsvm/')}:{r['line']}` "
              f"{r['op']}: `{r['before']}` → `{r['after']}`: {note}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("list", "run", "report"):
        p = sub.add_parser(name)
        p.add_argument("--module", action="append", choices=list(TARGETS))
        p.add_argument("--budget", type=int, default=None,
                       help="mutants per module (default: the module's own budget)")
        p.add_argument("--results", default=str(RESULTS))
        p.add_argument("--fresh", action="store_true")
        p.add_argument("--copy", action="append", metavar="FILE",
                       help="a file of another checkout (under tests/ or structsvm/) "
                            "copied over its place in the copy")
        p.add_argument("--extra-run", action="append", metavar="ARGS",
                       help="a pytest call run first for every module")
        p.add_argument("--timeouts", action="store_true",
                       help="with --survivors: also the mutants that timed out")
        p.add_argument("--survivors", action="store_true",
                       help="run only the mutants that survived their last run")
        p.add_argument("--verbose", action="store_true")
        p.add_argument("--docs", action="store_true",
                       help="report: write the table into docs/testing.md")
    args = ap.parse_args(argv)
    {"list": cmd_list, "run": cmd_run, "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    main()

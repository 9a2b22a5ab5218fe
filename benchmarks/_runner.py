"""Shared plumbing of the benchmark scripts: run systems in order, optionally each in a
fresh Python process (so its time includes numba's start-up and its peak memory is
its own), report peak resident memory, and write the results the documentation
shows.

Every figure on a documentation page comes from a results file a script wrote with
``--write``: ``benchmarks/results/<name>.md``, a Markdown table followed by one line
saying when, on which machine and with which command it was measured
(:func:`write_results`). The pages include these files when the site is built, so a
figure cannot be copied by hand and drift from its measurement.

A script defines ``SYSTEMS = {name: function(data) -> dict}`` and calls
:func:`run_systems`. With ``isolate=True`` every system runs as
``python <script> --only <name> --json ...`` (same arguments otherwise) and prints one
JSON line; without it they run in this process, one after the other, and the peak
memory column is the process's peak so far (monotone).
"""
import datetime
import importlib.util
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]  # the checkout
#: Where ``--write`` puts results files.
RESULTS_DIR = _ROOT / "benchmarks" / "results"


def peak_rss_mb():
    """Peak resident set size of this process in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_systems(script, systems, names, load, argv, isolate):
    """Rows (dicts) of the systems ``names``, in order."""
    rows = []
    data = None
    for name in names:
        if isolate:
            cmd = [sys.executable, script, "--only", name, "--json"] + list(argv)
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            row = json.loads(out.strip().splitlines()[-1])
        else:
            data = load() if data is None else data
            row = systems[name](data)
            row["peak_mb"] = peak_rss_mb()
        rows.append(row)
        print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()},
              flush=True)
    return rows


def run_one(systems, name, load):
    """Child side of ``isolate``: run one system and print its row as JSON."""
    row = systems[name](load())
    row["peak_mb"] = peak_rss_mb()
    print(json.dumps(row))
    return row


def load_example(name):
    """The module ``examples/<name>.py``, loaded from its file (the examples are
    scripts, not a package): benchmarks that time an example call its ``main``."""
    spec = importlib.util.spec_from_file_location(name, _ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def add_output_options(parser, name):
    """``--markdown`` (print the Markdown table) and ``--write [NAME]`` (also write it
    to ``benchmarks/results/NAME.md``, ``name`` by default) on a script's parser."""
    parser.add_argument("--markdown", action="store_true",
                        help="print the results as a Markdown table")
    parser.add_argument("--write", nargs="?", const=name, default=None, metavar="NAME",
                        help=f"write the table to benchmarks/results/NAME.md for the "
                             f"documentation (default NAME: {name}); implies --markdown")


def machine():
    """One line naming the machine and software a result was measured with."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
        memory = f", {mem:.0f} GiB"
    except (ValueError, OSError, AttributeError):
        memory = ""
    versions = []
    for dist in ("numpy", "scipy", "numba", "scikit-learn", "cvxpy"):
        try:
            versions.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            pass
    load = ""
    if hasattr(os, "getloadavg"):
        load = f"; load {os.getloadavg()[0]:.1f} at the end"
    return (f"{os.cpu_count()} CPUs ({cpu}){memory}, {platform.system()}; Python "
            f"{platform.python_version()}, {', '.join(versions)}{load}")


def command_line(script, argv=None):
    """The command that reproduces this run, as a user types it."""
    argv = sys.argv[1:] if argv is None else list(argv)
    rel = os.path.relpath(os.path.abspath(script), _ROOT)
    return "python " + " ".join(shlex.quote(a) for a in [rel, *argv])


def write_results(name, markdown, script, argv=None, notes=""):
    """Write ``benchmarks/results/<name>.md``: the table, then its provenance.

    Parameters
    ----------
    name : str
        File name without ``.md``.
    markdown : str
        The results (a Markdown table, possibly with a caption).
    script : str
        The benchmark script's path (``__file__``).
    argv : list of str, optional
        The script's arguments (default ``sys.argv[1:]``).
    notes : str
        A sentence printed after the machine line (what the figures mean).

    Returns
    -------
    Path
    """
    RESULTS_DIR.mkdir(exist_ok=True)
    when = datetime.datetime.now(datetime.timezone.utc)
    meta = {"command": command_line(script, argv), "measured": when.strftime(
        "%Y-%m-%d %H:%M UTC"), "machine": machine()}
    text = (f"<!-- results {json.dumps(meta)} -->\n\n{markdown.strip()}\n\n"
            f"<small>Measured {meta['measured']} on {meta['machine']}, with "
            f"`{meta['command']}`.{(' ' + notes.strip()) if notes else ''}</small>\n")
    path = RESULTS_DIR / f"{name}.md"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    print(f"wrote {path}", file=sys.stderr)
    return path


def read_results(path):
    """The provenance dict of a results file (``command``, ``measured``, ``machine``)."""
    first = Path(path).read_text(encoding="utf-8").split("\n", 1)[0]
    if not (first.startswith("<!-- results ") and first.endswith(" -->")):
        raise ValueError(f"{path} is not a results file written by write_results")
    return json.loads(first[len("<!-- results "):-len(" -->")])

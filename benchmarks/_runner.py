"""Shared plumbing of the benchmark scripts: run systems in order, optionally each in a
fresh Python process (so its time includes numba's start-up and its peak memory is
its own), and report peak resident memory.

A script defines ``SYSTEMS = {name: function(data) -> dict}`` and calls
:func:`run_systems`. With ``isolate=True`` every system runs as
``python <script> --only <name> --json ...`` (same arguments otherwise) and prints one
JSON line; without it they run in this process, one after the other, and the peak
memory column is the process's peak so far (monotone).
"""
import json
import resource
import subprocess
import sys


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

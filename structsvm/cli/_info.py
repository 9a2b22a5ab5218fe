"""``structsvm info``: what a bug report or an installation question needs to know."""
from __future__ import annotations

import os
import platform
import sys
from importlib import metadata

__all__ = ["info_lines"]

#: Distributions whose versions matter to structsvm's results and speed.
_DISTRIBUTIONS = ("numpy", "scipy", "scikit-learn", "numba", "llvmlite", "cvxpy",
                  "clarabel", "networkx", "nltk", "joblib")


def _version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def info_lines():
    """The lines ``structsvm info`` prints: versions, the compiled loops' status,
    numba's cache folder, the memory budget and where corpora are searched."""
    from .. import __version__, _compiled
    from ..corpora import corpora_dir, nltk_search_path
    from ..limits import format_bytes, memory_limit

    in_use, reason = _compiled.extension_status()
    limit = memory_limit()
    lines = [f"structsvm {__version__} ({os.path.dirname(os.path.dirname(__file__))})",
             f"python {platform.python_version()} ({sys.executable})",
             f"platform {platform.platform()}, {os.cpu_count()} CPUs"]
    width = max(map(len, _DISTRIBUTIONS))
    lines += [f"  {name:<{width}}  {_version(name)}" for name in _DISTRIBUTIONS]
    lines += [f"compiled loops: {'in use' if in_use else 'not in use'}: {reason}",
              "numba cache: " + (os.environ.get("NUMBA_CACHE_DIR")
                                 or "beside each loop module (__pycache__)"),
              "memory limit per array: " + ("none" if limit is None
                                            else format_bytes(limit)),
              f"STRUCTSVM_DATA: {os.environ.get('STRUCTSVM_DATA') or 'not set'}",
              f"corpora folder: {corpora_dir() or 'none'}",
              "NLTK data path: " + (os.pathsep.join(str(p) for _, p in nltk_search_path())
                                    or "empty")]
    return lines

"""Where glmcompat's cache and matrix files are, with ``os`` alone: the warm start-up path
(:mod:`glmcompat.cli.fastpath`) finds them before it imports pathlib; :mod:`glmcompat.matrix.store` wraps the
same answers for everyone else."""

from __future__ import annotations

import os
import sys

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")  # the shipped matrix


def matrix_file_names(paths: list[str]) -> list[str] | str:
    """Each path as given, or a directory's ``*.toml`` files (sorted); the first directory holding none
    is returned alone, as a string, for the caller to report."""
    out: list[str] = []
    for p in paths or [DATA]:
        if os.path.isdir(p):
            found = sorted(os.path.join(p, n) for n in os.listdir(p) if n.endswith(".toml"))
            if not found:
                return p
            out.extend(found)
        else:
            out.append(p)
    return out


def cache_dir_name() -> str | None:
    """glmcompat's user cache directory (``GLMCOMPAT_CACHE_DIR`` overrides; else the XDG one on Linux), or
    None where only platformdirs knows it (macOS, Windows)."""
    env = os.environ.get("GLMCOMPAT_CACHE_DIR")
    if env:
        return env
    if os.name == "posix" and not sys.platform.startswith("darwin"):
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return os.path.join(base, "glmcompat")
    return None


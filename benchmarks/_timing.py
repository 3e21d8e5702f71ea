"""Whole-process timing helpers for the benchmarks: alternate A and B, report medians and A/B ratios."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

Run = tuple[Sequence[str], str | None, dict[str, str] | None]  # (command, cwd, environment overlay)


def wall(cmd: Sequence[str], cwd: str | None = None, env: dict[str, str] | None = None) -> tuple[float, int]:
    t0 = time.perf_counter()
    p = subprocess.run(list(cmd), cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True)
    return time.perf_counter() - t0, p.returncode


def _summary(ta: list[float], tb: list[float], codes: set[int]) -> dict[str, Any]:
    ratios = [x / y for x, y in zip(ta, tb, strict=True)]
    return {"a_median_s": statistics.median(ta), "b_median_s": statistics.median(tb),
            "ratio_median": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios),
            "runs": len(ta), "exit_codes": sorted(codes)}


def paired(a: Sequence[str], b: Sequence[str], *, runs: int = 7, warmup: int = 1, cwd: str | None = None,
           env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run A and B in turn (A B A B ...) after ``warmup`` rounds; medians of each and of A/B pair ratios."""
    for _ in range(warmup):
        wall(a, cwd, env)
        wall(b, cwd, env)
    ta, tb, codes = [], [], set()
    for _ in range(runs):
        x, ca = wall(a, cwd, env)
        y, cb = wall(b, cwd, env)
        ta.append(x)
        tb.append(y)
        codes |= {ca, cb}
    return _summary(ta, tb, codes)


def paired_fresh(make_a: Callable[[str], Run], make_b: Callable[[str], Run], *, runs: int = 7) -> dict[str, Any]:
    """Like :func:`paired`, but each run gets a fresh scratch directory (``make_x(scratch)`` builds its command,
    working directory and environment there: fresh caches for cold runs), and the order within a pair
    alternates (A B, B A, ...) so neither side always runs on the other's leftovers."""
    ta, tb, codes = [], [], set()
    for i in range(runs):
        times: dict[str, float] = {}
        for side in ("ab" if i % 2 == 0 else "ba"):
            with tempfile.TemporaryDirectory(prefix=f"bench-{side}-") as scratch:
                cmd, cwd, env = (make_a if side == "a" else make_b)(scratch)
                times[side], rc = wall(cmd, cwd, env)
                codes.add(rc)
        ta.append(times["a"])
        tb.append(times["b"])
    return _summary(ta, tb, codes)


def tool(name: str) -> str:
    """The console script ``name`` beside this interpreter (the venv's), else on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), name)
    return here if os.path.exists(here) else shutil.which(name) or name

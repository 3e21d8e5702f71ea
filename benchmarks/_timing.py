"""Whole-process timing helpers for the benchmarks: alternate A and B, report medians and A/B ratios."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence


def wall(cmd: Sequence[str], cwd: str | None = None, env: dict[str, str] | None = None) -> tuple[float, int]:
    t0 = time.perf_counter()
    p = subprocess.run(list(cmd), cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True)
    return time.perf_counter() - t0, p.returncode


def paired(a: Sequence[str], b: Sequence[str], *, runs: int = 7, warmup: int = 1, cwd: str | None = None,
           env: dict[str, str] | None = None) -> dict[str, float]:
    """Run A and B in turn (A B A B ...) after ``warmup`` rounds; medians of each and of A/B pair ratios."""
    for _ in range(warmup):
        wall(a, cwd, env)
        wall(b, cwd, env)
    ta, tb, ratios, codes = [], [], [], set()
    for _ in range(runs):
        x, ca = wall(a, cwd, env)
        y, cb = wall(b, cwd, env)
        ta.append(x)
        tb.append(y)
        ratios.append(x / y)
        codes |= {ca, cb}
    return {"a_median_s": statistics.median(ta), "b_median_s": statistics.median(tb),
            "ratio_median": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios),
            "runs": runs, "exit_codes": sorted(codes)}


def tool(name: str) -> str:
    """The console script ``name`` beside this interpreter (the venv's), else on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), name)
    return here if os.path.exists(here) else shutil.which(name) or name

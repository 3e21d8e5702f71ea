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
    t, rc, _ = measured(cmd, cwd, env)
    return t, rc


def measured(cmd: Sequence[str], cwd: str | None = None, env: dict[str, str] | None = None) -> tuple[float, int, float]:
    """Wall seconds, exit code and peak resident memory (MiB, the process's own ``ru_maxrss`` from ``wait4``) of
    one run; its output is read and discarded."""
    t0 = time.perf_counter()
    p = subprocess.Popen(list(cmd), cwd=cwd, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert p.stdout is not None
    while p.stdout.read(1 << 16):
        pass
    _, status, usage = os.wait4(p.pid, 0)
    elapsed = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    p.stdout.close()
    return elapsed, p.returncode, usage.ru_maxrss / 1024


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


INSTALLERS = ("pip", "uv")


def install_fresh(installer: str, where: str, root: str) -> str:
    """Install the checkout at ``root`` (not editable, with its dependencies) into a new virtual environment at
    ``where`` the way a user does, with the current release of ``installer`` ("pip": a venv seeded with the index's
    newest pip, then ``pip install``; "uv": ``uv pip install --compile-bytecode``), and return the console script
    that installer wrote. The launcher is the installer's: pip before 25.0 (pypa/pip#13166) and uv before 0.5.19
    (astral-sh/uv#10627) wrote one that imports ``re`` (about 8 ms) before glmcompat starts."""
    base = getattr(sys, "_base_executable", sys.executable)
    uv = tool("uv")
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    env.pop("PYTHONPYCACHEPREFIX", None)  # bytecode goes where an install puts it
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    seed = ["--seed"] if installer == "pip" else []
    subprocess.run([uv, "venv", "-q", *seed, "--python", base, where], check=True, env=env)
    py = os.path.join(where, "bin", "python")
    if installer == "pip":
        subprocess.run([py, "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True, env=env)
        subprocess.run([py, "-m", "pip", "install", "-q", root], check=True, env=env)
    else:
        subprocess.run([uv, "pip", "install", "-q", "--compile-bytecode", "--python", py, root], check=True, env=env)
    return os.path.join(where, "bin", "glmcompat")


def launcher_imports_re(script: str) -> bool:
    """Whether a console script's launcher imports ``re`` before the entry point runs."""
    with open(script, encoding="utf-8") as f:
        return any(line.strip() == "import re" for line in f)


def installer_version(script: str) -> str:
    """The installer that wrote ``script``'s environment, as its INSTALLER file and version say (best effort)."""
    py = os.path.join(os.path.dirname(script), "python")
    code = ("import importlib.metadata as m\n"
            "d = m.distribution('glmcompat'); who = (d.read_text('INSTALLER') or '?').strip()\n"
            "v = ''\n"
            "if who == 'pip':\n"
            "    v = ' ' + m.version('pip')\n"
            "print(who + v)")
    p = subprocess.run([py, "-c", code], capture_output=True, text=True)
    return p.stdout.strip() or "unknown"

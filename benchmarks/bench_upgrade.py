"""Benchmark (issue 10): warm `glmcompat upgrade --target sm120` (budget 1 s), with a warm `uv lock` of the
generated glm5 project as the anchor measured in the same run.

Both run as fresh processes with warm private caches (glmcompat's and uv's, filled by one cold run each,
which needs the package index), alternating A B A B; `uv lock` gets UV_PYTHON set to this interpreter,
as glmcompat's own lock does. Python writes bytecode to a private prefix, as an installed package has it.
Reports medians of wall time and of CPU time (user + sys: on a shared machine, wall time includes
waiting for a core), and the wall-time ratio.

    python benchmarks/bench_upgrade.py [--runs 7] [--target sm120] [--exclude-newer 2026-11-29]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import tool  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 1.0


def timed(cmd: list[str], cwd: str | None, env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of the child, exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--target", default="sm120")
    ap.add_argument("--exclude-newer", default="2026-11-29")
    a = ap.parse_args()
    runs = max(a.runs, 7)
    glm, uv = tool("glmcompat"), tool("uv")
    with tempfile.TemporaryDirectory() as d:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update({"GLMCOMPAT_CACHE_DIR": str(Path(d) / "gcache"), "UV_CACHE_DIR": str(Path(d) / "uvcache"),
                    "UV_PYTHON_DOWNLOADS": "never", "UV_PYTHON": sys.executable, "PYTHONPYCACHEPREFIX": str(Path(d) / "pyc")})
        up = [glm, "upgrade", "--target", a.target, "--exclude-newer", a.exclude_newer, "-q"]
        plain = Path(d) / "glm5"
        plain.mkdir()
        shutil.copy(ROOT / "locks" / "glm5-sglang-0.5.9" / a.target / "pyproject.toml", plain / "pyproject.toml")
        ul = [uv, "lock", "-q"]
        cold_up, _, rc = timed(up, None, env)
        assert rc == 0, "glmcompat upgrade failed"
        cold_uv, _, rc = timed(ul, str(plain), env)
        assert rc == 0, "uv lock failed"
        timed(up, None, env)  # warm-up round
        timed(ul, str(plain), env)
        wa, ca, wb, cb, ratios = [], [], [], [], []
        for _ in range(runs):
            w1, c1, r1 = timed(up, None, env)
            w2, c2, r2 = timed(ul, str(plain), env)
            assert r1 == 0 and r2 == 0
            wa.append(w1), ca.append(c1), wb.append(w2), cb.append(c2), ratios.append(w1 / w2)
    med = statistics.median
    r = {"a": f"glmcompat upgrade --target {a.target} --exclude-newer {a.exclude_newer} (warm)",
         "b": "uv lock of the generated glm5 project (warm, UV_PYTHON set)", "runs": runs,
         "a_wall_median_s": med(wa), "a_cpu_median_s": med(ca), "b_wall_median_s": med(wb), "b_cpu_median_s": med(cb),
         "ratio_wall_median": med(ratios), "cold_upgrade_s": cold_up, "cold_uv_lock_s": cold_uv,
         "a_wall_s": wa, "b_wall_s": wb}
    print(json.dumps(r, indent=2))
    print(f"warm: glmcompat upgrade {med(wa):.3f} s wall ({med(ca):.3f} s CPU) vs uv lock {med(wb):.3f} s wall "
          f"({med(cb):.3f} s CPU): ratio {med(ratios):.2f}; budget {BUDGET_S:.1f} s")
    print(f"cold: glmcompat upgrade {cold_up:.2f} s | uv lock {cold_uv:.2f} s")
    return 0 if med(wa) <= BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())

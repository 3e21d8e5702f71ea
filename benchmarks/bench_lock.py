"""Benchmark (issue 5): `glmcompat lock --target sm120` vs a plain `uv lock` of the same generated pyproject.

Cold: each with an empty private cache (glmcompat's and uv's), side by side. Warm: both caches warm,
glmcompat re-locking its output directory vs `uv lock` in a copy of it (same pyproject.toml and uv.lock),
alternating in the same run; the ratio must be at most 1.15. Needs the package index for the cold runs.

    python benchmarks/bench_lock.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import paired, tool, wall  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    uv, glm = tool("uv"), tool("glmcompat")
    with tempfile.TemporaryDirectory() as d:
        out, plain = Path(d) / "out", Path(d) / "plain"
        env = {"UV_PYTHON_DOWNLOADS": "never", "GLMCOMPAT_CACHE_DIR": str(Path(d) / "gcache"),
               "UV_CACHE_DIR": str(Path(d) / "uvcache-a")}
        cold_glm, rc = wall([glm, "lock", "--target", "sm120", "--out", str(out), "-q"], env=env)
        assert rc == 0, "glmcompat lock failed"
        plain.mkdir()
        shutil.copy(out / "pyproject.toml", plain / "pyproject.toml")
        cold_uv, rc = wall([uv, "lock", "-q"], cwd=str(plain), env={**env, "UV_CACHE_DIR": str(Path(d) / "uvcache-b")})
        assert rc == 0, "uv lock failed"
        r = paired([glm, "lock", "--target", "sm120", "--out", str(out), "-q"], [uv, "lock", "-q"], runs=a.runs,
                   cwd=str(plain), env={**env, "UV_CACHE_DIR": str(Path(d) / "uvcache-a")})
    r.update({"cold_glmcompat_s": cold_glm, "cold_uv_s": cold_uv,
              "a": "glmcompat lock --target sm120 (warm)", "b": "uv lock (warm, same generated pyproject.toml)"})
    print(json.dumps(r, indent=2))
    print(f"cold: glmcompat lock {cold_glm:.2f} s | uv lock {cold_uv:.2f} s")
    print(f"warm: glmcompat lock {r['a_median_s']:.3f} s vs uv lock {r['b_median_s']:.3f} s: "
          f"ratio {r['ratio_median']:.2f} (target <= 1.15)")
    return 0 if r["ratio_median"] <= 1.15 else 1


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark (issue 3): warm `glmcompat check --target sm120` vs `uv lock --check` on the same project.

The project is the 179-package lock of `sglang==0.5.9` + override `transformers==5.2.0` (Linux x86_64,
Python >=3.11,<3.13): the pyproject.toml under tests/fixtures/locks/glm5-sglang-0.5.9, locked afresh by
the real uv in a temporary directory (needs the package index once). Both commands then run warm,
alternating, in the same run; the ratio glmcompat/uv must be at most 1.0.

    python benchmarks/bench_check.py [--runs 9]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import paired, tool  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    a = ap.parse_args()
    uv, glm = tool("uv"), tool("glmcompat")
    env = {"UV_PYTHON_DOWNLOADS": "never"}
    with tempfile.TemporaryDirectory() as d:
        shutil.copy(ROOT / "tests" / "fixtures" / "locks" / "glm5-sglang-0.5.9" / "pyproject.toml", Path(d) / "pyproject.toml")
        subprocess.run([uv, "lock", "-q"], cwd=d, env={**os.environ, **env}, check=True)
        n = (Path(d) / "uv.lock").read_text().count("[[package]]")
        r = paired([glm, "check", "uv.lock", "--target", "sm120"], [uv, "lock", "--check", "-q"], runs=a.runs, cwd=d, env=env)
    r.update({"packages": n, "a": "glmcompat check uv.lock --target sm120", "b": "uv lock --check"})
    print(json.dumps(r, indent=2))
    print(f"glmcompat check {r['a_median_s']:.3f} s vs uv lock --check {r['b_median_s']:.3f} s "
          f"({n} packages): ratio {r['ratio_median']:.2f} (target <= 1.0)")
    return 0 if r["ratio_median"] <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())

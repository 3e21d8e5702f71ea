"""Benchmark (issues 9 and 14): warm `glmcompat check` against warm `uv lock --check`, measured fairly.

uv gets the interpreter the way glmcompat has it (`UV_PYTHON` = this Python, `UV_PYTHON_DOWNLOADS=never`),
so neither pays for interpreter discovery; both run as whole processes, alternating, after a warm-up,
medians of at least 7 pairs (ratio per pair, then the median). The anchor is `uv lock --check` of the
179-package glm5 project (`sglang==0.5.9` + override `transformers==5.2.0`, locked afresh by the real uv
in a temporary directory; needs the package index once). Two glmcompat cases:

* the same glm5 uv.lock (target: ratio <= 1.0, issue 14);
* NeMo-RL's 877 KB uv.lock with 20 extras and groups and their conflicts (tests/fixtures/realworld/01;
  target: ratio <= 1.5 against the glm5 anchor, issue 9).

glmcompat's bytecode is compiled first, as a pip install does. A second line measures uv as a user without `UV_PYTHON` runs it (interpreter discovery included), for
reference only; the targets are on the fair line.

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
NEMO = ROOT / "tests" / "fixtures" / "realworld" / "01" / "uv.lock"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    a = ap.parse_args()
    uv, glm = tool("uv"), tool("glmcompat")
    # An installed glmcompat has bytecode (pip compiles at install); an editable checkout run with
    # PYTHONDONTWRITEBYTECODE would recompile every module on every run. Compile it, as an install does.
    import glmcompat

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(glmcompat.__file__).parent)], check=True)
    fair = {"UV_PYTHON_DOWNLOADS": "never", "UV_PYTHON": sys.executable}
    out: dict[str, object] = {}
    ok = True
    with tempfile.TemporaryDirectory() as d:
        shutil.copy(ROOT / "tests" / "fixtures" / "locks" / "glm5-sglang-0.5.9" / "pyproject.toml", Path(d) / "pyproject.toml")
        subprocess.run([uv, "lock", "-q"], cwd=d, env={**os.environ, **fair}, check=True)
        n = (Path(d) / "uv.lock").read_text().count("[[package]]")
        nemo = Path(d) / "nemo"
        nemo.mkdir()
        shutil.copy(NEMO, nemo / "uv.lock")
        glm5 = paired([glm, "check", "uv.lock", "--target", "sm120"], [uv, "lock", "--check", "-q"],
                      runs=a.runs, cwd=d, env=fair)
        big = paired([glm, "check", str(nemo / "uv.lock"), "--target", "sm90", "--allow-unknown"],
                     [uv, "lock", "--check", "-q"], runs=a.runs, cwd=d, env=fair)
        viam = paired([sys.executable, "-m", "glmcompat", "check", "uv.lock", "--target", "sm120"],
                      [uv, "lock", "--check", "-q"], runs=a.runs, cwd=d, env=fair)
        shim_env = {k: v for k, v in os.environ.items() if k != "UV_PYTHON"}
        shim_env["UV_PYTHON_DOWNLOADS"] = "never"
        shim = paired([glm, "check", "uv.lock", "--target", "sm120"], [uv, "lock", "--check", "-q"],
                      runs=a.runs, cwd=d, env=shim_env)
    out["glm5"] = {**glm5, "packages": n, "a": "glmcompat check uv.lock --target sm120",
                   "b": "uv lock --check (UV_PYTHON set)", "target": 1.0}
    out["nemo-rl"] = {**big, "a": "glmcompat check <NeMo-RL uv.lock, 877 KB> --target sm90 --allow-unknown",
                      "b": "uv lock --check of the glm5 project (UV_PYTHON set)", "target": 1.5}
    out["glm5-python-m"] = {**viam, "a": "python -m glmcompat check uv.lock --target sm120 (no console-script launcher: "
                                          "pip's launcher imports re, ~8 ms)", "b": "uv lock --check (UV_PYTHON set)"}
    out["glm5-uv-discovers-python"] = {**shim, "b": "uv lock --check without UV_PYTHON (reference only)"}
    print(json.dumps(out, indent=2))
    for key in ("glm5", "nemo-rl"):
        r = out[key]
        assert isinstance(r, dict)
        print(f"{key}: glmcompat {r['a_median_s']:.3f} s vs uv {r['b_median_s']:.3f} s: ratio {r['ratio_median']:.2f} "
              f"(target <= {r['target']})")
        ok &= r["ratio_median"] <= r["target"]
    print(f"glm5 via python -m glmcompat: {viam['a_median_s']:.3f} s (ratio {viam['ratio_median']:.2f})")
    print(f"reference: uv discovering its interpreter {shim['b_median_s']:.3f} s (ratio {shim['ratio_median']:.2f})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

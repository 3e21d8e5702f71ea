"""Benchmark (issues 5 and 11): `glmcompat lock` vs a plain `uv lock` of the same generated pyproject, for the
SGLang lock (`--target sm120`) and the vLLM lock (`--target sm120 --engine vllm`).

Cold: each with an empty private cache (glmcompat's and uv's), side by side. Warm: both caches warm,
glmcompat re-locking its output directory vs `uv lock` in a copy of it (same pyproject.toml and uv.lock),
alternating A B A B in the same run (>= 7 pairs, medians). The plain `uv lock` runs with UV_PYTHON set to this
interpreter, as glmcompat's own uv does, so both skip interpreter discovery alike (`--uv-discovery` lets the
plain uv discover it, as the issue-5 figure was measured). The goal: the vLLM ratio the same as the SGLang one.
Needs the package index for the cold runs.

    python benchmarks/bench_lock.py [--runs 7] [--engine sglang|vllm|both] [--uv-discovery]
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

LIMIT = 1.15
CASES = {"sglang": ["--target", "sm120"], "vllm": ["--target", "sm120", "--engine", "vllm"]}


def case(engine: str, runs: int, uv: str, glm: str, discovery: bool = False) -> dict[str, object]:
    args = CASES[engine]
    with tempfile.TemporaryDirectory() as d:
        out, plain = Path(d) / "out", Path(d) / "plain"
        env = {"UV_PYTHON_DOWNLOADS": "never", "GLMCOMPAT_CACHE_DIR": str(Path(d) / "gcache"),
               "UV_CACHE_DIR": str(Path(d) / "uvcache-a")}
        cold_glm, rc = wall([glm, "lock", *args, "--out", str(out), "-q"], env=env)
        assert rc == 0, f"glmcompat lock {' '.join(args)} failed"
        plain.mkdir()
        shutil.copy(out / "pyproject.toml", plain / "pyproject.toml")
        uv_env = env if discovery else {**env, "UV_PYTHON": sys.executable}
        cold_uv, rc = wall([uv, "lock", "-q"], cwd=str(plain), env={**uv_env, "UV_CACHE_DIR": str(Path(d) / "uvcache-b")})
        assert rc == 0, "uv lock failed"
        r: dict[str, object] = dict(paired([glm, "lock", *args, "--out", str(out), "-q"], [uv, "lock", "-q"], runs=runs,
                                           cwd=str(plain), env=uv_env))
    r.update({"cold_glmcompat_s": cold_glm, "cold_uv_s": cold_uv,
              "a": f"glmcompat lock {' '.join(args)} (warm)",
              "b": "uv lock (warm, same generated pyproject.toml" + (")" if discovery else ", UV_PYTHON)")})
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--engine", choices=["sglang", "vllm", "both"], default="both")
    ap.add_argument("--uv-discovery", action="store_true", help="the plain uv lock runs without UV_PYTHON")
    a = ap.parse_args()
    uv, glm = tool("uv"), tool("glmcompat")
    engines = ["sglang", "vllm"] if a.engine == "both" else [a.engine]
    results = {e: case(e, max(a.runs, 7), uv, glm, a.uv_discovery) for e in engines}
    print(json.dumps(results, indent=2))
    for e, r in results.items():
        print(f"{e}: cold: glmcompat lock {r['cold_glmcompat_s']:.2f} s | uv lock {r['cold_uv_s']:.2f} s")
        print(f"{e}: warm: glmcompat lock {r['a_median_s']:.3f} s vs uv lock {r['b_median_s']:.3f} s: "
              f"ratio {r['ratio_median']:.2f}")
    if len(results) == 2:
        print(f"vllm ratio / sglang ratio: {results['vllm']['ratio_median'] / results['sglang']['ratio_median']:.2f}")  # type: ignore[operator]
    if len(results) == 2:  # the goal: vLLM within the SGLang lock's ratio (10% noise allowed)
        return 0 if results["vllm"]["ratio_median"] <= 1.1 * results["sglang"]["ratio_median"] else 1  # type: ignore[operator]
    return 0 if not a.uv_discovery or all(r["ratio_median"] <= LIMIT for r in results.values()) else 1  # type: ignore[operator]


if __name__ == "__main__":
    sys.exit(main())

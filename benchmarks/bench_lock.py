"""Benchmark (issues 5, 11 and 14): `glmcompat lock` vs a plain `uv lock` of the same generated pyproject.toml, for
the SGLang lock (`--target sm120`) and the vLLM lock (`--target sm120 --engine vllm`), cold and warm, in one run.

Both sides get the interpreter the same way: the plain `uv lock` runs with UV_PYTHON set to this interpreter, as
glmcompat's own uv does (`--uv-discovery` lets the plain uv discover it instead). Every figure is the median of
>= 7 pairs, A and B alternating (A B, then B A, ...), printed with its anchor and the ratio.

* cold, fresh checkout: glmcompat with empty private caches (GLMCOMPAT_CACHE_DIR, UV_CACHE_DIR: fresh temporary
  directories each run) on an --out holding what a checkout holds (the committed pyproject.toml and
  requirements.txt), vs `uv lock` with an empty UV_CACHE_DIR on that pyproject.toml alone;
* cold, empty --out: the same with nothing in --out (uv's speculative start then waits for the matrix);
* warm no-op: both caches warm, glmcompat re-locking its output directory (the start-up path answers) vs `uv lock`
  in a copy of it (same pyproject.toml and uv.lock).

glmcompat is measured as users run it: installed from this checkout (not editable, bytecode compiled, the wheel's
matrix snapshot included) into a fresh virtual environment by the current pip (a venv seeded with the index's
newest pip; the cold cases and a warm line) and by uv (`uv pip install`; a second warm line), through the console
script each installer wrote. The plain uv runs with that environment's Python as UV_PYTHON and the settings
glmcompat's own uv runs with (UV_NO_BUILD=1, UV_PYTHON_DOWNLOADS=never), and both sides get the same index
(UV_DEFAULT_INDEX: the one this environment is configured for). Needs the package index.

    python benchmarks/bench_lock.py [--runs 7] [--engine sglang|vllm|both] [--uv-discovery] [--no-cold]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import INSTALLERS, Run, install_fresh, installer_version, launcher_imports_re, paired, paired_fresh, tool, wall  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CASES = {"sglang": (["--target", "sm120"], ROOT / "locks" / "glm5-sglang-0.5.9" / "sm120"),
         "vllm": (["--target", "sm120", "--engine", "vllm"], ROOT / "locks" / "glm5-vllm-0.33.0" / "sm120")}
CHECKOUT = ("pyproject.toml", "requirements.txt")  # what a fresh checkout holds in a lock's directory


def case(engine: str, runs: int, uv: str, glms: dict[str, str], discovery: bool, cold: bool) -> dict[str, object]:
    args, committed = CASES[engine]
    glm = glms["pip"]
    py = str(Path(glm).parent / "python")
    uv_py: dict[str, str] = {} if discovery else {"UV_PYTHON": py}
    r: dict[str, object] = {"glmcompat": f"glmcompat lock {' '.join(args)}",
                            "uv": "uv lock (same generated pyproject.toml" + (")" if discovery else ", UV_PYTHON)")}

    def glm_cold(checkout: bool) -> Callable[[str], Run]:
        def make(scratch: str) -> Run:
            out = Path(scratch) / "out"
            out.mkdir()
            if checkout:
                for n in CHECKOUT:
                    shutil.copy(committed / n, out / n)
            env = {"GLMCOMPAT_CACHE_DIR": f"{scratch}/g", "UV_CACHE_DIR": f"{scratch}/uv"}
            return [glm, "lock", *args, "--out", str(out), "-q"], None, env
        return make

    def uv_cold(scratch: str) -> Run:
        plain = Path(scratch) / "plain"
        plain.mkdir()
        shutil.copy(committed / "pyproject.toml", plain / "pyproject.toml")
        return [uv, "lock", "-q"], str(plain), {"UV_CACHE_DIR": f"{scratch}/uv", **uv_py}

    if cold:
        r["cold_checkout"] = paired_fresh(glm_cold(True), uv_cold, runs=runs)
        r["cold_empty_out"] = paired_fresh(glm_cold(False), uv_cold, runs=runs)
    for who, script in glms.items():
        with tempfile.TemporaryDirectory() as d:
            out, plain = Path(d) / "out", Path(d) / "plain"
            env = {"GLMCOMPAT_CACHE_DIR": f"{d}/g", "UV_CACHE_DIR": f"{d}/uv"}
            _, rc = wall([script, "lock", *args, "--out", str(out), "-q"], env=env)
            assert rc == 0, f"glmcompat lock {' '.join(args)} failed"
            for n in CHECKOUT:  # the committed lock is what glmcompat writes
                assert (out / n).read_bytes() == (committed / n).read_bytes(), f"{n} differs from {committed / n}"
            plain.mkdir()
            for n in ("pyproject.toml", "uv.lock"):
                shutil.copy(out / n, plain / n)
            wall([script, "lock", *args, "--out", str(out), "-q"], env=env)  # a no-op: records the answer
            here = {} if discovery else {"UV_PYTHON": str(Path(script).parent / "python")}
            r[f"warm_noop_{who}"] = {
                **paired([script, "lock", *args, "--out", str(out), "-q"], [uv, "lock", "-q"], runs=runs, cwd=str(plain),
                         env={**env, **here}),
                "installer": installer_version(script), "launcher_imports_re": launcher_imports_re(script)}
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--engine", choices=["sglang", "vllm", "both"], default="both")
    ap.add_argument("--uv-discovery", action="store_true", help="the plain uv lock runs without UV_PYTHON")
    ap.add_argument("--no-cold", action="store_true", help="only the warm no-op pairs")
    a = ap.parse_args()
    uv = tool("uv")
    for var in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"):
        os.environ.pop(var, None)  # an installed glmcompat runs from the bytecode its installer compiled
    sys.path.insert(0, str(ROOT))
    from glmcompat.edges.index import default_index_url

    engines = ["sglang", "vllm"] if a.engine == "both" else [a.engine]
    with tempfile.TemporaryDirectory(prefix="bench-venvs-") as venvs:
        glms = {who: install_fresh(who, f"{venvs}/{who}", str(ROOT)) for who in INSTALLERS}
        # then the same settings on both sides: the index, no interpreter downloads, no source builds (glmcompat's
        # uv runs so)
        os.environ["UV_DEFAULT_INDEX"] = default_index_url()
        os.environ.setdefault("UV_PYTHON_DOWNLOADS", "never")
        os.environ.setdefault("UV_NO_BUILD", "1")
        results: dict[str, object] = {e: case(e, max(a.runs, 7), uv, glms, a.uv_discovery, not a.no_cold) for e in engines}
    results["uv"] = subprocess.run([uv, "--version"], capture_output=True, text=True).stdout.strip()
    print(json.dumps(results, indent=2))
    for e in engines:
        r = results[e]
        assert isinstance(r, dict)
        for what in ("cold_checkout", "cold_empty_out", *(f"warm_noop_{w}" for w in INSTALLERS)):
            if what in r:
                f: dict[str, float] = r[what]
                how = f" [{f['installer']}; launcher imports re: {f['launcher_imports_re']}]" if "installer" in f else ""
                print(f"{e}: {what.replace('_', ' ')}: glmcompat lock {f['a_median_s']:.3f} s vs uv lock {f['b_median_s']:.3f} s: "
                      f"ratio {f['ratio_median']:.2f} (pairs {f['ratio_min']:.2f} .. {f['ratio_max']:.2f}, n={f['runs']:.0f}){how}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

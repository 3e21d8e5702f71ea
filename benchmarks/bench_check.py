"""Benchmark (issues 9 and 14): warm `glmcompat check` against warm `uv lock --check`, measured fairly.

glmcompat is measured as users run it: installed from this checkout (not editable, bytecode compiled) into a
fresh virtual environment by the current release of each installer, pip (a venv seeded with the index's newest
pip) and uv (`uv pip install`), through the console script that installer wrote. uv gets the interpreter the way
glmcompat has it (`UV_PYTHON` = that environment's Python, `UV_PYTHON_DOWNLOADS=never`), so neither pays for
interpreter discovery; both run as whole processes, alternating, after a warm-up, medians of at least 7 pairs
(ratio per pair, then the median). The anchor is `uv lock --check` of the 179-package glm5 project
(`sglang==0.5.9` + override `transformers==5.2.0`, locked afresh by the real uv in a temporary directory).
Needs the package index (the installs and that lock).

* glm5: the same glm5 uv.lock, once per installer (target: ratio <= 1.0, issue 14);
* nemo-rl: NeMo-RL's 877 KB uv.lock with 20 extras and groups and their conflicts
  (tests/fixtures/realworld/01; target: ratio <= 1.5 against the glm5 anchor, issue 9);
* memory: peak RSS of the warm glm5 check against bare start-up of the same Python (`python -c pass`;
  target: ratio <= 1.5, issue 14).

Reference lines, no target: this environment's own `glmcompat` script (whatever launcher its installer
wrote: pip before 25.0 wrote one that imports `re`, about 8 ms, before glmcompat starts), `python -m
glmcompat`, and uv as a user without `UV_PYTHON` runs it (interpreter discovery included).

    python benchmarks/bench_check.py [--runs 11]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import INSTALLERS, install_fresh, installer_version, launcher_imports_re, measured, paired, tool  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NEMO = ROOT / "tests" / "fixtures" / "realworld" / "01" / "uv.lock"
GLM5 = ["check", "uv.lock", "--target", "sm120"]


def peak_mib(cmd: list[str], cwd: str, env: dict[str, str], runs: int) -> float:
    return statistics.median(measured(cmd, cwd, env)[2] for _ in range(runs))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=11)
    a = ap.parse_args()
    runs = max(a.runs, 7)
    uv = tool("uv")
    for var in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"):
        os.environ.pop(var, None)  # an installed glmcompat runs from the bytecode its installer compiled
    out: dict[str, object] = {}
    ok = True
    with tempfile.TemporaryDirectory() as d:
        shutil.copy(ROOT / "tests" / "fixtures" / "locks" / "glm5-sglang-0.5.9" / "pyproject.toml", Path(d) / "pyproject.toml")
        base = {"UV_PYTHON_DOWNLOADS": "never", "GLMCOMPAT_CACHE_DIR": f"{d}/cache"}
        subprocess.run([uv, "lock", "-q"], cwd=d, env={**os.environ, **base, "UV_PYTHON": sys.executable}, check=True)
        n = (Path(d) / "uv.lock").read_text().count("[[package]]")
        nemo = Path(d) / "nemo"
        nemo.mkdir()
        shutil.copy(NEMO, nemo / "uv.lock")
        scripts = {who: install_fresh(who, f"{d}/venv-{who}", str(ROOT)) for who in INSTALLERS}
        for who, glm in scripts.items():
            py = str(Path(glm).parent / "python")
            fair = {**base, "UV_PYTHON": py}
            out[f"glm5-{who}"] = {**paired([glm, *GLM5], [uv, "lock", "--check", "-q"], runs=runs, cwd=d, env=fair),
                                  "packages": n, "installer": installer_version(glm),
                                  "launcher_imports_re": launcher_imports_re(glm),
                                  "a": f"glmcompat {' '.join(GLM5)} (installed by {who})",
                                  "b": "uv lock --check (UV_PYTHON set)", "target": 1.0}
        glm = scripts["pip"]
        py = str(Path(glm).parent / "python")
        fair = {**base, "UV_PYTHON": py}
        out["nemo-rl"] = {**paired([glm, "check", str(nemo / "uv.lock"), "--target", "sm90", "--allow-unknown"],
                                   [uv, "lock", "--check", "-q"], runs=runs, cwd=d, env=fair),
                          "a": "glmcompat check <NeMo-RL uv.lock, 877 KB> --target sm90 --allow-unknown (installed by pip)",
                          "b": "uv lock --check of the glm5 project (UV_PYTHON set)", "target": 1.5}
        check_mib = peak_mib([glm, *GLM5], d, fair, runs)
        bare_mib = peak_mib([py, "-c", "pass"], d, fair, runs)
        out["memory"] = {"a": "peak RSS of the warm glm5 check (installed by pip)", "b": "python -c pass",
                         "a_median_mib": check_mib, "b_median_mib": bare_mib, "ratio_median": check_mib / bare_mib,
                         "target": 1.5}
        here = tool("glmcompat")
        here_env = {**base, "UV_PYTHON": sys.executable}
        subprocess.run([here, *GLM5], cwd=d, env={**os.environ, **here_env}, capture_output=True)  # records its verdict
        out["glm5-this-environment"] = {
            **paired([here, *GLM5], [uv, "lock", "--check", "-q"], runs=runs, cwd=d, env=here_env),
            "launcher_imports_re": launcher_imports_re(here), "installer": installer_version(here),
            "a": f"{here} {' '.join(GLM5)} (reference)", "b": "uv lock --check (UV_PYTHON set)"}
        out["glm5-python-m"] = {**paired([py, "-m", "glmcompat", *GLM5], [uv, "lock", "--check", "-q"], runs=runs,
                                         cwd=d, env=fair),
                                "a": "python -m glmcompat check uv.lock --target sm120 (reference)",
                                "b": "uv lock --check (UV_PYTHON set)"}
        shim_env = {k: v for k, v in os.environ.items() if k != "UV_PYTHON"}
        shim = paired([glm, *GLM5], [uv, "lock", "--check", "-q"], runs=runs, cwd=d, env={**shim_env, **base})
        out["glm5-uv-discovers-python"] = {**shim, "b": "uv lock --check without UV_PYTHON (reference only)"}
    out["uv"] = subprocess.run([uv, "--version"], capture_output=True, text=True).stdout.strip()
    print(json.dumps(out, indent=2))
    for key in (*(f"glm5-{w}" for w in INSTALLERS), "nemo-rl"):
        r = out[key]
        assert isinstance(r, dict)
        how = f" [{r['installer']}; launcher imports re: {r['launcher_imports_re']}]" if "installer" in r else ""
        print(f"{key}: glmcompat {r['a_median_s']:.3f} s vs uv {r['b_median_s']:.3f} s: ratio {r['ratio_median']:.2f} "
              f"(pairs {r['ratio_min']:.2f} .. {r['ratio_max']:.2f}; target <= {r['target']}){how}")
        ok &= r["ratio_median"] <= r["target"]
    m = out["memory"]
    assert isinstance(m, dict)
    print(f"memory: warm check peak RSS {m['a_median_mib']:.1f} MiB vs bare python {m['b_median_mib']:.1f} MiB: "
          f"ratio {m['ratio_median']:.2f} (target <= {m['target']})")
    ok &= m["ratio_median"] <= m["target"]
    for key in ("glm5-this-environment", "glm5-python-m", "glm5-uv-discovers-python"):
        r = out[key]
        assert isinstance(r, dict)
        extra = f" [{r['installer']}; launcher imports re: {r['launcher_imports_re']}]" if "installer" in r else ""
        print(f"reference {key}: glmcompat {r['a_median_s']:.3f} s vs uv {r['b_median_s']:.3f} s: "
              f"ratio {r['ratio_median']:.2f}{extra}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

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
  target: ratio <= 1.5, issue 14);
* glm5-changed (issue 28, the pre-commit hook's real case): the glm5 lock gets new bytes before every run of
  either side (a comment appended, as a hand edit or a merge leaves one), so no verdict of those exact bytes is
  stored: `glmcompat check` against `uv lock --check` of the same lock (target: ratio <= 1.5);
* nemo-rl-changed: the same on NeMo-RL's lock (target: ratio <= 1.5 against the glm5 anchor: NeMo-RL's project
  cannot be locked here, it needs Python 3.13 and its workspace members, so `uv lock --check` of its own lock is
  not a run that can succeed);
* reference glm5-untracked-bump: each round raises the version (and the wheels' hashes) of a package no rule
  reads -- an edit uv would relock for, so no uv anchor of its own: against the glm5 anchor.

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
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import INSTALLERS, _summary, install_fresh, installer_version, launcher_imports_re, measured, paired, tool, wall  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NEMO = ROOT / "tests" / "fixtures" / "realworld" / "01" / "uv.lock"
GLM5 = ["check", "uv.lock", "--target", "sm120"]


def peak_mib(cmd: list[str], cwd: str, env: dict[str, str], runs: int) -> float:
    return statistics.median(measured(cmd, cwd, env)[2] for _ in range(runs))


def paired_changing(a: list[str], b: list[str], change_a: Callable[[int], None], change_b: Callable[[int], None], *,
                    runs: int, cwd: str, env: dict[str, str]) -> dict[str, object]:
    """Like :func:`_timing.paired`, but ``change_x(i)`` gives the lock new bytes before each run of side x (round i),
    and the order within a pair alternates (A B, B A, ...)."""
    ta, tb, codes = [], [], set()
    for i in range(runs):
        times: dict[str, float] = {}
        for side in ("ab" if i % 2 == 0 else "ba"):
            (change_a if side == "a" else change_b)(i)
            times[side], rc = wall(a if side == "a" else b, cwd, env)
            codes.add(rc)
        ta.append(times["a"])
        tb.append(times["b"])
    return _summary(ta, tb, codes)


def appender(lock: Path, tag: str) -> Callable[[int], None]:
    def change(i: int) -> None:
        with lock.open("a") as f:
            f.write(f"# {tag} round {i} {time.time_ns()}\n")
    return change


def untracked_bumper(lock: Path) -> Callable[[int], None]:
    """Each call rewrites the lock as it was first seen with one package no rule reads raised to a new version (its
    first wheel's or sdist's hash changed too), a different package or version each round."""
    original = lock.read_text()
    names = ["idna", "requests", "charset-normalizer", "urllib3", "tqdm", "filelock", "packaging", "psutil"]

    def change(i: int) -> None:
        name = names[i % len(names)]
        head = f'[[package]]\nname = "{name}"\nversion = "'
        at = original.find(head)
        if at < 0:
            raise SystemExit(f"{name} is not in {lock}")
        at += len(head)
        end = original.index('"', at)
        version = original[at:end]
        if not version.replace(".", "").isdigit():
            raise SystemExit(f"{name} {version} is not a plain version")
        stop = original.find("\n\n", end)
        rest = original[end:stop].replace('hash = "sha256:', f'hash = "sha256:{i % 10}', 1)
        lock.write_text(original[:at] + f"{version}.{i + 1}" + rest + original[stop:])
    return change


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
        changed = Path(d) / "changed"
        changed.mkdir()
        shutil.copy(Path(d) / "pyproject.toml", changed / "pyproject.toml")
        shutil.copy(Path(d) / "uv.lock", changed / "uv.lock")
        lock = changed / "uv.lock"
        subprocess.run([glm, *GLM5], cwd=changed, env={**os.environ, **fair}, capture_output=True)  # the old bytes' verdict
        out["glm5-changed"] = {**paired_changing([glm, *GLM5], [uv, "lock", "--check", "-q"], appender(lock, "a"),
                                                 appender(lock, "b"), runs=runs, cwd=str(changed), env=fair),
                               "a": "glmcompat check uv.lock --target sm120 on a lock with new bytes (installed by pip)",
                               "b": "uv lock --check of the same lock, new bytes too (UV_PYTHON set)", "target": 1.5}
        nemo_argv = [glm, "check", str(nemo / "uv.lock"), "--target", "sm90", "--allow-unknown"]
        subprocess.run(nemo_argv, cwd=d, env={**os.environ, **fair}, capture_output=True)
        out["nemo-rl-changed"] = {**paired_changing(nemo_argv, [uv, "lock", "--check", "-q"], appender(nemo / "uv.lock", "a"),
                                                    appender(Path(d) / "uv.lock", "b"), runs=runs, cwd=d, env=fair),
                                  "a": "glmcompat check <NeMo-RL uv.lock, new bytes> --target sm90 --allow-unknown",
                                  "b": "uv lock --check of the glm5 project, new bytes (UV_PYTHON set)", "target": 1.5}
        out["glm5-untracked-bump"] = {**paired_changing([glm, *GLM5], [uv, "lock", "--check", "-q"], untracked_bumper(lock),
                                                        appender(Path(d) / "uv.lock", "c"), runs=runs, cwd=str(changed),
                                                        env=fair),
                                      "a": "glmcompat check uv.lock --target sm120, an untracked package bumped each round",
                                      "b": "uv lock --check of the glm5 project, new bytes (UV_PYTHON set)"}
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
    for key in (*(f"glm5-{w}" for w in INSTALLERS), "nemo-rl", "glm5-changed", "nemo-rl-changed"):
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
    for key in ("glm5-untracked-bump", "glm5-this-environment", "glm5-python-m", "glm5-uv-discovers-python"):
        r = out[key]
        assert isinstance(r, dict)
        extra = f" [{r['installer']}; launcher imports re: {r['launcher_imports_re']}]" if "installer" in r else ""
        print(f"reference {key}: glmcompat {r['a_median_s']:.3f} s vs uv {r['b_median_s']:.3f} s: "
              f"ratio {r['ratio_median']:.2f}{extra}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

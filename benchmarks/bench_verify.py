"""Benchmark: ``glmcompat verify`` whole-process wall time against two floors measured in the same run (issue 39).

* floor (a), ``bare``: ``python -c "import torch; torch.cuda.init()"``: importing torch and creating a CUDA
  context once, the least any GPU check costs;
* floor (b), ``imports``: one fresh interpreter importing everything verify imports -- torch, each probe group's
  package that is installed (torchvision, torchaudio, sgl_kernel, flashinfer, triton, transformers, sglang,
  torchao, vllm) and every extension module of the other distributions (``extension:`` probes, the modules
  :func:`glmcompat.ops.verify.extensions.scan` finds) -- then initialising CUDA. verify does all that and more
  (kernels, smoke tests, the static checks), in parallel processes; the goal is verify <= 1.0x floor (b).

Each floor is also timed with verify's bytecode cache (``PYTHONPYCACHEPREFIX``), like for like where the image
ships no ``.pyc`` files and sets ``PYTHONDONTWRITEBYTECODE=1`` (verify's probe processes then compile into
glmcompat's cache, docs/verify.md "How it stays fast"). Commands run alternately after one warm-up each; the
medians are compared.

    python benchmarks/bench_verify.py [--runs 5] [-- VERIFY ARGS...]

Prints one JSON object: every run, the median of each command, the ratios, verify's exit codes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)

from glmcompat.matrix.store import cache_dir  # noqa: E402
from glmcompat.ops.verify.core import FORKED, _findable  # noqa: E402
from glmcompat.ops.verify.extensions import scan  # noqa: E402
from glmcompat.ops.verify.records import GROUP_MODULE  # noqa: E402

BARE = "import torch; torch.cuda.init()"


def imported_modules(paths: list[str]) -> list[str]:
    """What verify imports here: torch, the installed group packages, every other extension module."""
    search = [os.path.abspath(p) for p in paths] + sys.path
    groups = [GROUP_MODULE[g] for g in FORKED if g in GROUP_MODULE]
    mods = ["torch", *(m for m in dict.fromkeys(groups) if m != "torch" and _findable(m, search))]
    for d in scan(search):
        mods.extend(d.modules)
    return mods


def imports_floor(mods: list[str]) -> str:
    return ("import importlib, torch\n"
            f"for m in {mods!r}:\n"
            "    try:\n        importlib.import_module(m)\n"
            "    except BaseException:\n        pass\n"  # a module verify reports as failing still costs its attempt
            "torch.cuda.init()\n")


def wall(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0, r.returncode


def main() -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("verify_args", nargs="*", help="extra arguments for glmcompat verify (after --)")
    args = p.parse_args()
    paths = [args.verify_args[i + 1] for i, a in enumerate(args.verify_args[:-1]) if a == "--path"]
    mods = imported_modules(paths)
    env = dict(os.environ)
    if paths:
        env["PYTHONPATH"] = os.pathsep.join([*map(os.path.abspath, paths), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    verify = [sys.executable, "-m", "glmcompat", "verify", "--json", *args.verify_args]
    cache = str(cache_dir() / "pycache")
    bc_env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    bc_env["PYTHONPYCACHEPREFIX"] = cache
    cmds = {
        "verify": (verify, None),
        "bare": ([sys.executable, "-c", BARE], env),
        "imports": ([sys.executable, "-c", imports_floor(mods)], env),
        "bare_bytecode": ([sys.executable, "-c", BARE], bc_env),
        "imports_bytecode": ([sys.executable, "-c", imports_floor(mods)], bc_env),
    }
    for cmd, e in cmds.values():  # warm-up; verify's first, so that its bytecode cache is warm
        wall(cmd, e)
    times: dict[str, list[float]] = {k: [] for k in cmds}
    codes: list[int] = []
    for _ in range(args.runs):
        for name, (cmd, e) in cmds.items():
            t, rc = wall(cmd, e)
            times[name].append(t)
            if name == "verify":
                codes.append(rc)
    med = {k: statistics.median(v) for k, v in times.items()}
    v = med["verify"]
    # like for like: with PYTHONDONTWRITEBYTECODE the floors compile from source and verify does not
    floor_b = min(med["imports"], med["imports_bytecode"])
    out = {
        "verify_cmd": "glmcompat verify --json " + " ".join(args.verify_args),
        "floor_a_cmd": f"python -c {BARE!r}",
        "floor_b_imports": len(mods),
        "floor_b_modules_head": mods[:12],
        "runs": args.runs,
        "python_dont_write_bytecode": os.environ.get("PYTHONDONTWRITEBYTECODE", ""),
        "verify_exit_codes": codes,
        **{f"{k}_s": [round(x, 3) for x in xs] for k, xs in times.items()},
        **{f"{k}_median_s": round(m, 3) for k, m in med.items()},
        "ratio_to_floor_a": round(v / min(med["bare"], med["bare_bytecode"]), 3),
        "ratio_to_floor_b": round(v / floor_b, 3),
        "goal_ratio_to_floor_b": 1.0,
        "within_goal": v / floor_b <= 1.0,
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

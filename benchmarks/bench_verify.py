"""Benchmark: ``glmcompat verify`` whole-process wall time against the floor of merely starting torch on a GPU.

The floor is ``python -c "import torch; torch.cuda.init()"``: importing torch and creating a CUDA
context once. The target is a ratio of at most 1.5 (issue #6). All commands run alternately in the
same session, after one warm-up run of each (page cache, Triton's and glmcompat's caches), and the
medians are compared.

Two more references, because the floor and verify need not compile the same Python: an image that
ships no ``.pyc`` files and sets ``PYTHONDONTWRITEBYTECODE=1`` compiles torch from source on every
import, which the floor pays every time, while verify's probe processes keep their bytecode in
glmcompat's cache (docs/verify.md, "How it stays fast"). So the same commands are also timed with
that same bytecode (``PYTHONPYCACHEPREFIX`` = verify's cache):

* ``bytecode_floor``: the floor, like for like with verify;
* ``torchvision_floor``: ``import torch, torchvision; torch.cuda.init()``, like for like: verify
  must import torchvision after torch in one process and run its nms on the GPU (probe c, g), so
  no design of verify can beat this chain.

    python benchmarks/bench_verify.py [--runs 5] [-- VERIFY ARGS...]

Prints one JSON object: every run and the median of each command, the ratios, whether verify passed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

FLOOR = [sys.executable, "-c", "import torch; torch.cuda.init()"]
TORCHVISION_FLOOR = [sys.executable, "-c", "import torch, torchvision; torch.cuda.init()"]
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pycache_dir() -> str:
    """verify's bytecode cache (glmcompat.ops.verify.core._speed_opts)."""
    sys.path.insert(0, HERE)
    from glmcompat.matrix.store import cache_dir

    return str(cache_dir() / "pycache")


def wall(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0, r.returncode


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("verify_args", nargs="*", help="extra arguments for glmcompat verify (after --)")
    args = p.parse_args()
    verify = [sys.executable, "-m", "glmcompat", "verify", "--json", *args.verify_args]
    cache = pycache_dir()
    bc_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    bc_env["PYTHONPYCACHEPREFIX"] = cache
    cmds = {
        "floor": (FLOOR, None),
        "verify": (verify, None),
        "bytecode_floor": (FLOOR, bc_env),
        "torchvision_floor": (TORCHVISION_FLOOR, bc_env),
    }
    for cmd, env in cmds.values():  # warm-up; verify's first, so that its bytecode cache is warm
        wall(cmd, env)
    times: dict[str, list[float]] = {k: [] for k in cmds}
    codes: list[int] = []
    for _ in range(args.runs):
        for name, (cmd, env) in cmds.items():
            t, rc = wall(cmd, env)
            times[name].append(t)
            if name == "verify":
                codes.append(rc)
    med = {k: statistics.median(v) for k, v in times.items()}
    f, v = med["floor"], med["verify"]
    out = {
        "floor_cmd": " ".join(FLOOR[1:]),
        "verify_cmd": "glmcompat verify --json " + " ".join(args.verify_args),
        "runs": args.runs,
        "python_dont_write_bytecode": os.environ.get("PYTHONDONTWRITEBYTECODE", ""),
        "floor_s": [round(x, 3) for x in times["floor"]],
        "verify_s": [round(x, 3) for x in times["verify"]],
        "floor_median_s": round(f, 3),
        "verify_median_s": round(v, 3),
        "ratio": round(v / f, 3),
        "target_ratio": 1.5,
        "within_target": v / f <= 1.5,
        "verify_exit_codes": codes,
        "bytecode_env": f"PYTHONPYCACHEPREFIX={cache}, PYTHONDONTWRITEBYTECODE unset",
        "bytecode_floor_s": [round(x, 3) for x in times["bytecode_floor"]],
        "bytecode_floor_median_s": round(med["bytecode_floor"], 3),
        "ratio_to_bytecode_floor": round(v / med["bytecode_floor"], 3),
        "torchvision_floor_cmd": " ".join(TORCHVISION_FLOOR[1:]) + " (with the bytecode cache)",
        "torchvision_floor_s": [round(x, 3) for x in times["torchvision_floor"]],
        "torchvision_floor_median_s": round(med["torchvision_floor"], 3),
        "ratio_to_torchvision_floor": round(v / med["torchvision_floor"], 3),
        "torchvision_floor_to_bytecode_floor": round(med["torchvision_floor"] / med["bytecode_floor"], 3),
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

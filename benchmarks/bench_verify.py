"""Benchmark: ``glmcompat verify`` whole-process wall time against the floor of merely starting torch on a GPU.

The floor is ``python -c "import torch; torch.cuda.init()"``: no health check can be faster than
importing torch and creating a CUDA context once. ``verify`` runs many probe processes in parallel,
each importing what it probes, so its wall time should stay close to that floor; the target is a
ratio of at most 1.5 (issue #6). Both commands are run alternately in the same session, after one
warm-up run of each (page cache, Triton cache), and the medians are compared.

    python benchmarks/bench_verify.py [--runs 5] [-- VERIFY ARGS...]

Prints one JSON object: the floor's and verify's wall times (every run and the median), the ratio,
and whether verify passed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

FLOOR = [sys.executable, "-c", "import torch; torch.cuda.init()"]
# A second reference: what importing the installed extensions costs by itself. verify must import
# each of them (probe c), so it cannot beat this; the gap to it is verify's own overhead.
EXTS = ("torchvision", "torchaudio", "sgl_kernel", "flashinfer", "triton", "transformers", "torchao")


def imports_floor() -> list[str]:
    import importlib.util

    mods = [m for m in EXTS if importlib.util.find_spec(m) is not None]
    return [sys.executable, "-c", f"import torch; {'; '.join(f'import {m}' for m in mods) or 'pass'}; torch.cuda.init()"]


def wall(cmd: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0, r.returncode


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("verify_args", nargs="*", help="extra arguments for glmcompat verify (after --)")
    args = p.parse_args()
    verify = [sys.executable, "-m", "glmcompat", "verify", "--json", *args.verify_args]
    floor2 = imports_floor()
    wall(FLOOR)
    wall(floor2)
    wall(verify)
    floor: list[float] = []
    ext: list[float] = []
    ver: list[float] = []
    codes: list[int] = []
    for _ in range(args.runs):
        floor.append(wall(FLOOR)[0])
        ext.append(wall(floor2)[0])
        t, rc = wall(verify)
        ver.append(t)
        codes.append(rc)
    f, v, e = statistics.median(floor), statistics.median(ver), statistics.median(ext)
    out = {
        "floor_cmd": " ".join(FLOOR[1:]),
        "verify_cmd": "glmcompat verify --json " + " ".join(args.verify_args),
        "runs": args.runs,
        "floor_s": [round(x, 3) for x in floor],
        "verify_s": [round(x, 3) for x in ver],
        "floor_median_s": round(f, 3),
        "verify_median_s": round(v, 3),
        "ratio": round(v / f, 3),
        "imports_floor_cmd": " ".join(floor2[1:]),
        "imports_floor_s": [round(x, 3) for x in ext],
        "imports_floor_median_s": round(e, 3),
        "ratio_to_imports_floor": round(v / e, 3),
        "target_ratio": 1.5,
        "within_target": v / f <= 1.5,
        "verify_exit_codes": codes,
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

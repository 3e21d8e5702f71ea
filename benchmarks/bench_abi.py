"""Benchmark: cold and warm ``glmcompat abi sgl-kernel==0.3.21 --torch 2.10.0`` against the real index.

Targets (issue 4): the cold run fetches at most 5% of the two wheels' bytes (about 1.45 GB), and a warm
repeat takes at most 0.3 s wall time (a fresh process, as a user runs it).

    python benchmarks/bench_abi.py [--ext sgl-kernel==0.3.21] [--torch 2.10.0] [--repeat 5]

The cold run uses an empty, private cache directory (``GLMCOMPAT_CACHE_DIR``); the warm runs reuse it.
Warm runs are separate processes with bytecode caching allowed, so they measure what an installed tool
costs (the first warm run writes the ``.pyc`` files and is not counted).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "glmcompat", *args], capture_output=True, text=True, env=env,
                       timeout=900)
    return time.perf_counter() - t0, p


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ext", default="sgl-kernel==0.3.21")
    ap.add_argument("--torch", default="2.10.0")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--max-fraction", type=float, default=0.05)
    ap.add_argument("--max-warm", type=float, default=0.3)
    a = ap.parse_args()
    cmd = ["abi", a.ext, "--torch", a.torch, "--json"]
    with tempfile.TemporaryDirectory(prefix="glmcompat-bench-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["GLMCOMPAT_CACHE_DIR"] = cache
        cold_s, p = run(cmd, env)
        if p.returncode not in (0, 1):
            sys.stderr.write(p.stderr)
            return 2
        cold = json.loads(p.stdout)
        run(cmd, env)  # writes .pyc files; not counted
        warm = []
        for _ in range(a.repeat):
            s, p = run(cmd, env)
            if json.loads(p.stdout)["bytes_fetched"] != 0:
                sys.stderr.write("warm run fetched bytes\n")
                return 2
            warm.append(s)
    frac = cold["bytes_fetched"] / cold["bytes_total"]
    med = statistics.median(warm)
    print(f"glmcompat abi {a.ext} --torch {a.torch}: verdict {'compatible' if cold['ok'] else 'INCOMPATIBLE'}, "
          f"{len(cold['missing'])} missing")
    print(f"cold: fetched {cold['bytes_fetched'] / 1e6:.1f} MB of {cold['bytes_total'] / 1e6:.1f} MB "
          f"({100 * frac:.2f}%, limit {100 * a.max_fraction:.0f}%), {cold_s:.2f} s wall")
    print(f"warm: median {med:.3f} s, min {min(warm):.3f} s, max {max(warm):.3f} s over {len(warm)} runs "
          f"(limit {a.max_warm} s)")
    ok = frac <= a.max_fraction and med <= a.max_warm
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark (issue 13, item 4): the warm ``load_facts()`` (a cache hit: the validated matrix read back from its
JSON entry and turned into typed rows), and the same plus one ``evaluate`` of the default stack's pins (what a
warm lock's check costs on top of the load).

Each figure is the median (and the minimum: the least disturbed, on a shared machine) of ``--runs`` calls in one
process after one cold call that writes the cache entry (a private cache directory); over ``--rounds`` processes,
the median of those. ``--before DIR`` times a second copy of the package (DIR holds a ``glmcompat``
directory, e.g. an export of the previous commit) in the same run, alternating the two processes.

    python benchmarks/bench_facts.py [--runs 31] [--rounds 3] [--before DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, statistics, sys, time
from glmcompat.matrix.load import load_facts
from glmcompat.decide.rules import evaluate

runs = int(sys.argv[1])
load_facts()  # cold: validates and writes the cache entry
facts = load_facts()
pins = dict(facts.stack("glm5-sglang-0.5.9")["pins"] if isinstance(facts.stack("glm5-sglang-0.5.9"), dict)
            else facts.stack("glm5-sglang-0.5.9").pins)
load, both = [], []
for _ in range(runs):
    t0 = time.perf_counter()
    f = load_facts()
    t1 = time.perf_counter()
    evaluate(pins, target="sm120", matrix=f)
    t2 = time.perf_counter()
    load.append(t1 - t0)
    both.append(t2 - t0)
print(json.dumps({"load_ms": statistics.median(load) * 1e3, "load_evaluate_ms": statistics.median(both) * 1e3,
                  "load_min_ms": min(load) * 1e3, "load_evaluate_min_ms": min(both) * 1e3}))
"""


def measure(tree: str, runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as d:
        env = {**os.environ, "PYTHONPATH": tree, "GLMCOMPAT_CACHE_DIR": d}
        p = subprocess.run([sys.executable, "-c", CHILD, str(runs)], env=env, capture_output=True, text=True,
                           cwd=d, check=True)
        result: dict[str, float] = json.loads(p.stdout)
        return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=31)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--before", help="a directory holding another copy of the glmcompat package")
    args = ap.parse_args()
    here = str(Path(__file__).resolve().parent.parent)
    trees = {"after": here} | ({"before": args.before} if args.before else {})
    got: dict[str, list[dict[str, float]]] = {k: [] for k in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            got[name].append(measure(tree, args.runs))
    report: dict[str, object] = {name: {k: round(statistics.median(r[k] for r in rs), 3) for k in rs[0]}
                                  for name, rs in got.items()}
    if args.before:  # per round, after / before (the two processes ran back to back): the median ratio
        report["ratio_after_before"] = {k: round(statistics.median(a[k] / b[k] for a, b in zip(got["after"], got["before"],
                                                                                               strict=True)), 3)
                                        for k in got["after"][0]}
    print(json.dumps({"runs": args.runs, "rounds": args.rounds, **report}, indent=2))


if __name__ == "__main__":
    main()

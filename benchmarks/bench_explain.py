"""Benchmark (issue 39): the explain matcher's prefilter, on every line of the fixture logs and raise-site messages.

Each line is read by ``_Matcher._found`` (one line's reading, no memo of lines) with the prefilter (each signature
searched only on a line that meets its whole literal condition, :func:`glmcompat.model.signatures.literal_sets`)
against the anchor, the same matcher without it (``prefilter=False``: every signature whose literal the line holds
searched), a fresh matcher of each kind each round, alternating (A B, B A, ...), CPU seconds of this process; medians
of the pair ratios. The two read every line alike (tests/model/test_matcher_prefilter.py checks it); the benchmark
asserts it on the first round.

    python benchmarks/bench_explain.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import _summary  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from glmcompat.matrix.load import load_facts  # noqa: E402
from glmcompat.model import signatures as S  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"


def lines() -> list[str]:
    out: dict[str, None] = {}
    for log in sorted((FIXTURES / "explain").rglob("*.log")):
        with log.open("rb") as f:
            out.update((line[:S.MAX_LINE], None) for _, line in S.numbered_lines(f))
    for table in sorted((FIXTURES / "raise_sites").glob("*.toml")):
        for row in tomllib.loads(table.read_text(encoding="utf-8")).get("message", []):
            out.update((line, None) for line in str(row.get("text", "")).splitlines() if line.strip())
    return list(out)


def read_all(matcher: S._Matcher, texts: list[str]) -> tuple[float, list[list[tuple[str, tuple[int, int]]]]]:
    t = time.process_time()
    got = [[(sig.id, m.span()) for m, sig in matcher._found(x)] for x in texts]
    return time.process_time() - t, got


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    runs = ap.parse_args().runs
    sigs = load_facts().rows("signature")
    texts = lines()
    read_all(S._Matcher(sigs), texts)  # warm-up: every pattern compiled (memoized per process, for both kinds)
    ta: list[float] = []
    tb: list[float] = []
    for i in range(runs):
        times: dict[str, float] = {}
        answers = {}
        for side in ("ab" if i % 2 == 0 else "ba"):
            times[side], answers[side] = read_all(S._Matcher(sigs, prefilter=side == "a"), texts)
        if i == 0:
            assert answers["a"] == answers["b"], "the prefilter changed a reading"
        ta.append(times["a"])
        tb.append(times["b"])
    print(json.dumps({"lines": len(texts), "prefilter_vs_none (cpu s)": _summary(ta, tb, {0})}, indent=2))


if __name__ == "__main__":
    main()

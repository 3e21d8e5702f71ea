"""How many of a library family's harvested raise sites ``glmcompat explain`` names a cause for, per library (issue 38's
sweep of raise sites). Reads a table of messages (tests/fixtures/raise_sites/*.toml: each message as the library prints
it, its source, the signature it should get, "" for one that must stay unclaimed), runs ``glmcompat explain`` on each
(in-process, offline) and prints, per library: in-remit messages named by any signature / by the expected one, and the
out-of-remit ones claimed. Run: ``python scripts/raise_site_coverage.py [TABLE ...]`` (``--misses`` lists each miss)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile
import tomllib
from collections import defaultdict
from pathlib import Path

from glmcompat.cli import main as cli

HERE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "raise_sites"
_HIT = re.compile(r"^line \d+: (?P<id>[a-z0-9-]+)")


def named(text: str) -> list[str]:
    """The signature ids ``glmcompat explain`` names for a log of ``text``."""
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "x.log"
        log.write_text(text + "\n", encoding="utf-8")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            cli(["explain", "--color", "never", str(log)])
    return [m.group("id") for line in out.getvalue().splitlines() if (m := _HIT.match(line))]


def main(argv: list[str]) -> int:
    os.environ.setdefault("GLMCOMPAT_OFFLINE", "1")
    os.environ.setdefault("GLMCOMPAT_NO_ARTIFACTS", "1")
    misses = "--misses" in argv
    tables = [Path(a) for a in argv if not a.startswith("--")] or sorted(HERE.glob("*.toml"))
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])  # in remit, named, expected, out, claimed
    for t in tables:
        for m in tomllib.loads(t.read_text(encoding="utf-8"))["message"]:
            got = named(m["text"])
            c = counts[m["library"]]
            if m["expect"]:
                c[0] += 1
                c[1] += bool(got)
                c[2] += m["expect"] in got
                if misses and m["expect"] not in got:
                    print(f"MISS {m['library']}: {m['text'][:110]!r} -> {got} (want {m['expect']})")
            else:
                c[3] += 1
                c[4] += bool(got)
                if misses and got:
                    print(f"CLAIMED {m['library']}: {m['text'][:110]!r} -> {got}")
    print(f"{'library':14} {'in remit':>8} {'named':>6} {'as expected':>11} {'out of remit':>12} {'claimed':>7}")
    total = [0] * 5
    for lib, c in sorted(counts.items()):
        print(f"{lib:14} {c[0]:8} {c[1]:6} {c[2]:11} {c[3]:12} {c[4]:7}")
        total = [a + b for a, b in zip(total, c, strict=True)]
    print(f"{'all':14} {total[0]:8} {total[1]:6} {total[2]:11} {total[3]:12} {total[4]:7}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

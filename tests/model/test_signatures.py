"""Signature patterns stay linear in the log (issue 41, items 1 and 7).

Python's ``re`` backtracks: ``(?:a|a){0,1000}b`` took 2 s on a line of 24 ``a`` and 21 s on 28 before the
validator learned to refuse a repeat of ambiguous alternatives. Every known exponential shape is refused by
:func:`linear_time_problem` and by the matrix loader (``matrix validate``); every accepted one is timed on the
adversarial line that would make it blow up. Blank lines cost nothing per line: 50 MB of bare newlines read in
96 s before :func:`numbered_lines` counted runs of them instead of splitting them.
"""

from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path

import pytest

from tests.conftest import GROWTH, LINEAR, growth

from glmcompat.matrix.load import load_facts
from glmcompat.matrix.schema import load_file
from glmcompat.model.signatures import LogContext
from glmcompat.model.errors import MatrixError
from glmcompat.model.signatures import (
    MAX_LINE,
    linear_time_problem,
    log_lines,
    numbered_lines,
    scan_log,
    scan_numbered,
)

EXPONENTIAL = [
    r"(?:a|a){0,1000}b", r"(a+)+b", r"(a|aa)*c", r"(a|a)*b", r"(?:a?){0,1000}b", r"(?:x|xy){0,500}z",
    r"(?:a{0,1}){0,999}b", r"(\w+\s?)*x", r"(?:a|ab|abc){0,300}d", r"(?:\d|\w){0,900}!x(?:1|1){0,500}y",
    r"(?:(?:a|a)b?){0,50}c", r"(.{0,10}){0,100}z",
]


@pytest.mark.parametrize("pattern", EXPONENTIAL)
def test_exponential_shapes_are_refused(pattern: str, tmp_path: Path) -> None:
    assert linear_time_problem(pattern), pattern
    m = tmp_path / "sig.toml"
    m.write_text('schema = 1\n[[signature]]\nid = "x"\npattern = ' + json.dumps(pattern) +
                 '\ncause = "c"\nremedy = "r"\nevidence = "inferred"\nsource = "s"\n')
    with pytest.raises(MatrixError, match="not linear-time"):
        load_file(m)


@pytest.mark.parametrize("pattern", ["", "x?", r"\s{0,9}", r"(?:a|b)*", r"^\s{0,5}$", r" {3}"])
def test_patterns_matching_a_blank_line_are_refused(pattern: str) -> None:
    """Blank lines are skipped unmatched (the fast path below), so no signature may match one."""
    assert "blank line" in (linear_time_problem(pattern) or ""), pattern


@pytest.mark.parametrize("pattern", [r"(?:a|b){0,1000}c", r"(?:ab|ac){0,10}d", r"(?:\w|\d){0,900}!", r"a.{0,40}a.{0,40}x",
                                     r"undefined symbol: (?P<symbol>\S+)"])
def test_accepted_shapes_are_fast_on_their_worst_line(pattern: str) -> None:
    assert linear_time_problem(pattern) is None
    pat = re.compile(pattern)

    def one(n: int) -> None:
        for unit in ("a", "ab", "x", "1", "a "):
            pat.search((unit * n)[:n])

    # enough passes that the smaller size takes ~20 ms of CPU (a pattern that is slow on its worst line needs one pass,
    # a fast one up to 20): a ratio of times that short is all noise
    t = time.process_time()
    one(MAX_LINE // GROWTH)
    passes = max(1, min(20, round(0.02 / max(time.process_time() - t, 1e-6))))

    def run(n: int) -> None:
        for _ in range(passes):
            one(n)

    # linear in the line's length (4 when linear, 16 when quadratic; a backtracking blow-up is far beyond)
    assert growth(run, MAX_LINE // GROWTH) < LINEAR


def test_every_shipped_signature_passes_and_is_fast_on_hostile_lines() -> None:
    sigs = load_facts().rows("signature")
    for s in sigs:
        assert linear_time_problem(s.pattern) is None, s.id
    # each signature's own literal text repeated over a whole line: the line a backtracking pattern chokes on
    lits = [re.sub(r"\\.|[()?*+{}\[\]|^$]", "", s.pattern)[:40] or "x" for s in sigs]

    def run(n: int) -> None:  # each signature on the line worst for it (the others' gates pass over it in linear time)
        for lit, s in zip(lits, sigs, strict=True):
            scan_log([(lit * (n // len(lit) + 1))[:n]], [s])

    # the scan is linear in the lines' length on the lines that are worst for each pattern
    assert growth(run, MAX_LINE // GROWTH) < LINEAR


def test_numbered_lines_agrees_with_log_lines_on_every_split() -> None:
    """Line numbers and contents match the plain splitter's, whatever the chunk boundaries and encodings."""
    import random

    rnd = random.Random(38)
    alphabet = ["\n", "\r\n", " ", "\t", "a", "b", "x" * 10, "\n\n\n", "é", "y" * (MAX_LINE + 800), "\r", " \n"]
    for _ in range(40):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 40)))
        data = text.encode(rnd.choice(["utf-8", "utf-16"]))
        for chunk in (3, 7, 1 << 20):
            want = [(i, x) for i, x in enumerate(log_lines(io.BytesIO(data), chunk=chunk), 1) if x and not x.isspace()]
            assert list(numbered_lines(io.BytesIO(data), chunk=chunk)) == want


def test_blank_lines_cost_no_per_line_work() -> None:
    """50 MB of bare newlines took 96 s (2 s/MB) on main 8ef83ff: a cost per blank line. Here a blank line costs no
    more than its bytes do in long lines of text (CPU time of the same number of bytes, measured in this test: about
    0.4-0.7 here; a cost per line is a hundred times that), and the line numbers after them stay right."""
    sigs = load_facts().rows("signature")
    size = 200_000  # 200,000 blank lines: a cost per line would be a hundred times the text's

    def cost(data: bytes) -> float:
        best = float("inf")
        for _ in range(3):
            t = time.process_time()
            scan_numbered(numbered_lines(io.BytesIO(data)), sigs)
            best = min(best, time.process_time() - t)
        return max(best, 1e-6)

    text = b"x" * (MAX_LINE - 1) + b"\n"
    per_text = cost(text * (size // len(text)))
    for blank in (b"\n", b"\r\n", b" \n", b"\t\r\n"):
        n = size // len(blank)
        data = blank * n + b"RuntimeError: operator torchvision::nms does not exist\n"
        scan = scan_numbered(numbered_lines(io.BytesIO(data)), sigs)
        assert [(h.id, h.line) for h in scan.hits] == [("torchvision-nms-missing", n + 1)]
        ratio = cost(blank * n) / per_text
        assert ratio < 3.0, f"{blank!r}: {ratio:.1f}x the cost of the same bytes in lines of text"


@pytest.mark.parametrize(("line", "name", "installed"), [
    # pip's legacy and resolvelib resolvers print the requirement as the parent asked for it, then the installed version
    ("Requirement already satisfied: huggingface-hub<1.0,>=0.19 in /usr/lib/python3.10/site-packages (from "
     "transformers) (0.25.2)", "huggingface-hub", "0.25.2"),
    ("Requirement already satisfied: torch>=2.1 in /x/lib/python3.11/site-packages (from -r requirements.txt (line 1)) "
     "(2.4.0+cu121)", "torch", "2.4.0+cu121"),
    ("Requirement already satisfied: numpy in /usr/local/lib/python3.10/dist-packages (from xformers==0.0.19) (1.22.4)",
     "numpy", "1.22.4"),
])
def test_pips_already_satisfied_line_gives_the_installed_version_not_the_bound(line: str, name: str,
                                                                              installed: str) -> None:
    ctx = LogContext()
    ctx.take(line)
    assert ctx.version(name) == installed

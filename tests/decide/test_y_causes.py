"""The causes set Y's first run showed explain did not name in general (issue 38), from their raise sites
(tests/fixtures/raise_sites/y-causes.toml): every message is named with the words its cause holds, every near miss
is left unclaimed."""

from __future__ import annotations

import re
import tomllib

import pytest

from glmcompat.matrix.load import load_facts
from tests.decide.explaining import RAISE_SITES, diagnoses, message_id, table, unclaimed

MESSAGES = table("y-causes.toml")


@pytest.mark.parametrize("m", [m for m in MESSAGES if m["expect"]], ids=message_id)
def test_each_message_is_named_with_its_words(m, tmp_path, capsys):
    out = diagnoses(str(m["text"]), str(m["expect"]), list(m["words"]), tmp_path, capsys)  # type: ignore[call-overload]
    assert not [w for w in m.get("absent", []) if w in out], out  # type: ignore[attr-defined]


@pytest.mark.parametrize("m", [m for m in MESSAGES if not m["expect"]], ids=message_id)
def test_a_near_miss_is_not_claimed(m, tmp_path, capsys):
    unclaimed(str(m["text"]), tmp_path, capsys)


LOADER = [m for m in tomllib.loads((RAISE_SITES / "y-causes.toml").read_text(encoding="utf-8"))["loader"]]
# the loader's message from "cannot open" on, cut after each word ("cannot open", "cannot open shared", ...)
_TAIL = "cannot open shared object file: No such file or directory"
CUTS = [(m, _TAIL[:end]) for m in LOADER for end in [w.end() for w in re.finditer(r"\S+", _TAIL)][1:]]


def test_every_row_that_reads_the_loader_line_is_cut_tested():
    rows = {s.id for s in load_facts().rows("signature") if ": cannot open shared object file" in s.pattern}
    assert rows - {"vllm-nccl-load-failed"} <= {str(m["expect"]) for m in LOADER}, rows


@pytest.mark.parametrize(("m", "kept"), CUTS, ids=[f"{m['expect']}:{kept[-12:]}" for m, kept in CUTS])
@pytest.mark.parametrize("end", ["", " "])
def test_the_loader_line_cut_after_each_word_is_still_read(m, kept, end, tmp_path, capsys):
    text = str(m["text"])
    cut = text[:text.index(_TAIL)] + kept + end
    diagnoses(cut, str(m["expect"]), list(m["words"]), tmp_path, capsys)  # type: ignore[call-overload]

"""Causes outside packaging and compatibility that a log shows by itself (glmcompat/matrix/data/other-causes.toml,
glmcompat/decide/othercauses.py): the compiler killed or out of memory, an index pip ignored, a requirement's variable
left unexpanded, a misspelled LD_LIBRARY_PATH, WSL 1, a caught message the run went on past. explain names no signature
for the failure such a cause explains, and says in one line what the log shows and the usual remedy; each raise site is
tabled in tests/fixtures/raise_sites/fixk-signatures.toml with its near misses (read there as every table is, by
tests/decide/test_raise_site_tables.py: here, what each row says of its other cause)."""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.cli import main
from glmcompat.matrix.load import load_facts
from glmcompat.matrix.schema import load_matrix
from glmcompat.model.errors import MatrixError
from tests.cli.test_schemas import validate
from tests.decide.explaining import each_row, explain, message_id, table

TABLE = table("fixk-signatures.toml")


def test_the_table_shows_every_other_cause_and_a_near_miss_of_each() -> None:
    ids = {r.id for r in load_facts().rows("other_cause")}
    assert {str(m["shows"]) for m in TABLE if "shows" in m} == ids
    assert {str(s) for m in TABLE for s in m.get("not_shows", ())} == ids  # type: ignore[attr-defined]


def test_each_row_says_what_the_log_shows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A row's other cause is named in one line with its words (exit 0 where no signature stands beside it); a near miss
    names none of its ``not_shows``."""
    def check(m: dict[str, object]) -> None:
        code, out = explain(str(m["text"]), tmp_path, capsys)
        lines = [line for line in out.splitlines() if "not a packaging failure (" in line]
        if "shows" in m:
            said = [line for line in lines if f"not a packaging failure ({m['shows']}): " in line]
            assert len(said) == 1 and "; hint: " in said[0], out
            assert not [w for w in m.get("shown", ()) if w not in said[0]], out  # type: ignore[attr-defined]
            assert code == (1 if m["expect"] else 0), out
        assert not [s for s in m.get("not_shows", ()) if f"({s})" in "\n".join(lines)], out  # type: ignore[attr-defined]

    each_row([(message_id(m), m) for m in TABLE], check)


def test_the_json_document_lists_the_other_causes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "x.log"
    log.write_text("[3/9] c++ -c a.cpp -o a.o\nFAILED: a.o\nc++: fatal error: Killed signal terminated program cc1plus\n"
                   "ninja: build stopped: subcommand failed.\n", encoding="utf-8")
    assert main(["explain", "--json", str(log)]) == 0
    doc = validate("explain", capsys.readouterr().out)  # as explain.schema.json describes it
    assert doc["found"] is False and doc["signatures"] == []
    [other] = doc["others"]
    assert other["id"] == "compiler-killed" and other["line"] == 3 and "cc1plus" in other["shows"]
    assert other["match"] == "fatal error: Killed signal terminated program cc1plus" and "MAX_JOBS=1" in other["remedy"]
    # a log that shows none keeps the document it had: no "others" key
    log.write_text("ninja: build stopped: subcommand failed.\n", encoding="utf-8")
    assert main(["explain", "--json", str(log)]) == 1
    assert "others" not in validate("explain", capsys.readouterr().out)


def test_the_other_cause_is_said_after_a_signature_that_stands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = explain("nvcc fatal   : Unsupported gpu architecture 'compute_120'\n"
                        "nvcc error   : 'cicc' died due to signal 9 (Kill signal)", tmp_path, capsys)
    assert code == 1 and out.index(": nvcc-unsupported-arch") < out.index("not a packaging failure (compiler-killed)"), out


def _matrix(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "other.toml"
    p.write_text("schema = 1\n" + text, encoding="utf-8")
    return p


ROW = 'evidence = "metadata"\nsource = "a raise site"\n'
SIG = '[[signature]]\nid = "some-one"\npattern = "boom"\ncause = "c"\nremedy = "r"\n' + ROW


@pytest.mark.parametrize(("text", "why"), [
    ('[[other_cause]]\nid = "x"\npattern = "killed (?P<prog>\\\\w+)"\nshows = "{program} killed"\nremedy = "r"\n' + ROW,
     "names no group of the pattern"),
    ('[[other_cause]]\nid = "x"\npattern = "killed"\nshows = "s"\nremedy = "r"\nwithholds = ["no-such-one"]\n' + ROW + SIG,
     "other_cause 'x' withholds unknown signature 'no-such-one'"),
    ('[[other_cause]]\nid = "some-one"\npattern = "killed"\nshows = "s"\nremedy = "r"\n' + ROW + SIG,
     "other_cause 'some-one' is a signature's id"),
    ('[[other_cause]]\nid = "x"\npattern = "a.*b"\nshows = "s"\nremedy = "r"\n' + ROW, "not linear-time"),
])
def test_a_row_that_names_what_it_cannot_is_rejected(tmp_path: Path, text: str, why: str) -> None:
    with pytest.raises(MatrixError, match=why):
        load_matrix([_matrix(tmp_path, text)])

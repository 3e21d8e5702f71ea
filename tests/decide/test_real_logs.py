"""``glmcompat explain`` on real failure logs posted in public GitHub threads (tests/fixtures/explain/: each log with
its thread in cases.toml), scored strictly: the expected words (signature, package, cause, remedy) must be in what
glmcompat prints about the log, not in the log line it echoes; a log out of remit gets no signature."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from glmcompat.cli import main

HERE = Path(__file__).parent.parent / "fixtures" / "explain"
CASES = tomllib.loads((HERE / "cases.toml").read_text())["case"]


def said(text: str) -> str:
    """What glmcompat says, without the log lines it echoes."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("matched:"))


@pytest.mark.parametrize("case", CASES, ids=[c["log"] for c in CASES])
def test_real_log(case: dict[str, object], capsys: pytest.CaptureFixture[str]) -> None:
    assert "#" in str(case["thread"]), "every log names its thread (owner/repo#number)"
    code = main(["explain", "--color", "never", str(HERE / "logs" / str(case["log"]))])
    out = said(capsys.readouterr().out)
    if case.get("found", True) is False:
        assert code == 0 and "no known failure signature" in out, out
        return
    assert code == 1, out
    assert f": {case['id']}" in out, out
    missing = [w for w in case["expect"] if w not in out]  # type: ignore[attr-defined]
    assert not missing, f"{missing} not in:\n{out}"
    wrong = [w for w in case.get("absent", ()) if w in out]  # type: ignore[attr-defined]
    assert not wrong, f"{wrong} in:\n{out}"


def test_every_fixture_log_is_a_case() -> None:
    assert sorted(p.name for p in (HERE / "logs").glob("*.log")) == sorted(str(c["log"]) for c in CASES)

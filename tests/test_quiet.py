"""``-qq`` is silent through an explicit stream (``Output.out``), never by swapping ``sys.stdout``: what a command
writes under it goes nowhere, and the process's stdout is the same object throughout."""

from __future__ import annotations

import io
import sys

import pytest


def test_qq_writes_nowhere_and_leaves_stdout_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from glmcompat import cli

    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    seen: list[object] = []
    dispatch = cli._dispatch

    def spy(*args: object) -> int:
        seen.append(sys.stdout)
        return dispatch(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(cli, "_dispatch", spy)
    for argv in (["-qq", "targets"], ["targets", "--json", "-q", "-q"], ["matrix", "validate", "--quiet", "--quiet"]):
        assert cli.main(argv) == 0
    with pytest.raises(SystemExit) as e:  # a usage error: its line on stderr, its --json document nowhere
        cli.main(["-qq", "targets", "--target-typo", "--json"])
    assert e.value.code == 2
    assert seen == [stream] * 4 and stream.getvalue() == ""
    assert cli.main(["-q", "targets"]) == 0 and stream.getvalue().startswith("target ")  # -q still answers

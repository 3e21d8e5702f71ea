"""`glmcompat --help`, `glmcompat help check` and docs/cli.md agree: the commands and their one-line help, check's
options, the environment variables; and the README's library snippet names only documented API."""

from __future__ import annotations

import re

import pytest

from glmcompat.cli import COMMANDS, ENV_OPTIONS, HELP, main

from tests.conftest import ROOT

DOC = (ROOT / "docs" / "cli.md").read_text()


def _out(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    try:
        main(list(argv))
    except SystemExit:
        pass
    return capsys.readouterr().out


def test_the_commands_table_is_the_usage(capsys: pytest.CaptureFixture[str]) -> None:
    usage = _out(capsys, "--help")
    listed = dict(re.findall(r"^  (\S+) +(.+)$", usage.split("commands:")[1].split("\n\n")[0], re.M))
    table = dict(re.findall(r"^\| `([a-z]+)` \| (.+) \|$", DOC.split("## ")[0], re.M))
    assert listed == table == {**{n: h for n, (_, h) in COMMANDS.items()}, "help": HELP}


def test_check_options_are_documented_as_help_check_prints_them(capsys: pytest.CaptureFixture[str]) -> None:
    helped = _out(capsys, "help", "check")
    assert helped == _out(capsys, "check", "--help")
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+|-[qvh])\b", helped.split("options:")[1]))
    section = DOC.split("## `glmcompat check`")[1].split("\n## ")[0]
    documented = set(re.findall(r"`(--[a-z][a-z-]+|-[qv])[ `]", section))
    assert options - {"-h", "--help"} == documented
    for var in ("GLMCOMPAT_TARGET", "GLMCOMPAT_MODEL", "GLMCOMPAT_PLATFORM"):
        assert var in helped and var in section


def test_the_environment_variables_are_in_the_usage_and_the_docs(capsys: pytest.CaptureFixture[str]) -> None:
    usage = _out(capsys, "--help")
    settings = DOC.split("## Settings")[1].split("\n## ")[0]
    for var, (flag, commands) in ENV_OPTIONS.items():
        assert re.search(rf"^  {var} +{flag}", usage, re.M) and f"`{var}`" in settings
        for command in commands:
            assert f"`{command}`" in settings, (var, command)


def test_the_readme_snippet_uses_the_documented_api() -> None:
    import glmcompat

    readme = (ROOT / "README.md").read_text()
    snippet = readme.split("Library (")[1].split("```python")[1].split("```")[0]
    used = set(re.findall(r"glmcompat\.(\w+)", snippet))
    assert used and used <= set(glmcompat.__all__)
    assert "from glmcompat." not in snippet

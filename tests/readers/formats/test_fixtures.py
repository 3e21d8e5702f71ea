"""The format fixtures' provenance: each is recorded by scripts/record_format_fixtures.py, copied from a named upstream
commit, or hand-written with the reason no real tool records it; the script's rewriting leaves no index host and no
machine path."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

ROOT = FIXTURES.parent.parent
FORMATS = FIXTURES / "formats"
_spec = importlib.util.spec_from_file_location("record_format_fixtures", ROOT / "scripts" / "record_format_fixtures.py")
assert _spec is not None and _spec.loader is not None
recorder = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = recorder  # dataclasses resolve the module's annotations through sys.modules
_spec.loader.exec_module(recorder)

RECORDED = "recorded by scripts/record_format_fixtures.py: "
CASES = sorted(p.parent.name for p in FORMATS.glob("*/SOURCE"))


@pytest.mark.parametrize("case", CASES)
def test_every_fixture_says_where_it_comes_from(case: str) -> None:
    lines = (FORMATS / case / "SOURCE").read_text().splitlines()
    if lines[0].startswith(RECORDED):  # the tool and its version, then the manifest it was given
        assert case in recorder.RECORDERS
        assert re.search(r"\d+\.\d+", lines[0].removeprefix(RECORDED).split(" locked ")[0].split(" froze ")[0])
        assert lines[1] == "" and len(lines) > 2
    elif lines[0].startswith(("hand-written", "glmcompat shared/realworld/")):
        assert any(line.startswith("not recorded: ") for line in lines[1:])
    else:  # an upstream file: owner/repo@commit (or its commits) and the path
        assert re.match(r"[\w.-]+/[\w.-]+[@ ]", lines[0])


def test_every_case_of_the_script_is_recorded() -> None:
    for case, how in recorder.RECORDERS.items():
        source = (FORMATS / case / "SOURCE").read_text()
        assert source.startswith(RECORDED) and how.manifest in source.splitlines()[0]
        assert [p.name for p in (FORMATS / case).iterdir() if p.name != "SOURCE"]


@pytest.mark.parametrize("case", sorted(recorder.RECORDERS))
def test_recorded_files_hold_no_machine_path(case: str) -> None:
    for p in (FORMATS / case).iterdir():
        text = p.read_text()
        assert "glmcompat-formats-" not in text and "/tmp/" not in text, p


def test_scrub_rewrites_index_hosts_and_the_temporary_directory(tmp_path: Path) -> None:
    text = (f"url = \"https://mirror.example.com:8443/simple\"\nfile:///{tmp_path.as_posix().lstrip('/')}/flash-attention"
            "\n-e git+https://github.com/sgl-project/sglang.git@0#egg=sglang\nhttps://files.example.org/packages/x.whl")
    assert recorder._scrub(text, tmp_path).splitlines() == [
        'url = "https://index.invalid/simple"', "file:///src/flash-attention",
        "-e git+https://github.com/sgl-project/sglang.git@0#egg=sglang", "https://index.invalid/packages/x.whl"]

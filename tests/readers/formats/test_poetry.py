"""poetry.lock (glmcompat.readers.formats.poetry): real locks poetry wrote, poetry 2's markers, extras."""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.readers.formats.common import Entry
from glmcompat.readers.formats.poetry import poetry_python

from tests.readers.formats.helpers import E, bad_input, entries_among, fixture, kind_python_and_meta, load


# --- whole files: every entry, or the ones that matter plus the count --------------------------------------------

WHOLE = [
    ("poetry-sources/poetry.lock", [
        E("deep-gemm", "1.0.0", None, "editable", line=3),
        E("einops", "0.8.0", line=16),
        E("flash-attn", "2.5.8", None, "git", line=24),
        E("glm-tools", "0.2.0", None, "path", line=43),
        E("pytest", "8.2.0", line=55),
        E("torch", "2.3.0+cu121", line=63),
        E("xformers", "0.0.26.post1", None, "wheel", line=76)]),
]


@pytest.mark.parametrize("rel, entries", WHOLE, ids=[w[0] for w in WHOLE])
def test_whole_file(rel: str, entries: list[Entry]) -> None:
    assert list(load(fixture(rel)).entries) == entries


SOME = [  # (file, entry count, entries that must be among them)
    ("mistral-poetry/poetry.lock", 66, [
        E("torch", "2.3.0", line=1804), E("xformers", "0.0.26.post1", line=1926),
        E("colorama", "0.4.6", 'sys_platform == "win32"', line=149)]),
    # real locks (scripts/record_format_fixtures.py): torch from a second named source, torchvision, xformers under a
    # marker, an extra with a git project and a wheel URL, a local path project, a dev group
    ("poetry/poetry.lock", 37, [
        E("colorama", "0.4.6", 'sys_platform == "win32"', line=3),
        E("einops", "0.8.0", 'extra == "flash"', "wheel", line=16),
        E("flash-attn", "2.7.4.post1", 'extra == "flash"', "git", line=63),
        E("glm-tools", "0.1.0", None, "editable", line=124),
        E("nvidia-nccl-cu12", "2.21.5", 'platform_system == "Linux" and platform_machine == "x86_64"', line=571),
        E("torch", "2.5.1", line=879),
        # poetry 2.5 writes markers = {dev = 'python_version == "3.10"'}: main needs it everywhere, so no marker
        E("typing-extensions", "4.16.0", line=996),
        E("xformers", "0.0.28.post3", 'sys_platform == "linux"', line=1009)]),
]


@pytest.mark.parametrize("rel, count, some", SOME, ids=[s[0] for s in SOME])
def test_entries_among(rel: str, count: int, some: list[Entry]) -> None:
    entries_among(rel, count, some)


META = [  # (file, kind, requires_python, meta keys and values that must be there)
    ("mistral-poetry/poetry.lock", "poetry.lock", ">=3.9.10,<4", {"extras": {}, "optional": []}),
    ("poetry-sources/poetry.lock", "poetry.lock", ">=3.10,<3.12", {
        "extras": {"flash": ["flash-attn", "einops"]}, "optional": ["einops", "flash-attn"]}),
    ("poetry/poetry.lock", "poetry.lock", ">=3.10,<3.13", {
        "extras": {"flash": ["einops", "flash-attn"]}, "optional": ["einops", "flash-attn"]}),
]


@pytest.mark.parametrize("rel, kind, python, meta", META, ids=[m[0] for m in META])
def test_kind_python_and_meta(rel: str, kind: str, python: str | None, meta: dict[str, object]) -> None:
    kind_python_and_meta(rel, kind, python, meta)


GROUPS = [  # (file, package -> the groups that must be its groups)
    ("poetry/poetry.lock", {"torch": ["main"], "pytest": ["dev"], "typing-extensions": ["main", "dev"],
                            "flash-attn": ["main"]}),
]


@pytest.mark.parametrize("rel, groups", GROUPS, ids=[g[0] for g in GROUPS])
def test_groups_of_real_locks(rel: str, groups: dict[str, list[str]]) -> None:
    got = load(fixture(rel)).meta["groups"]
    assert {name: got[name] for name in groups} == groups


# --- bad input: one line, exit 2, naming the file, the line and the value ---------------------------------------

ERRORS = [  # (files, file to read, where the message must point, what it must say)
    # poetry.lock
    ({"poetry.lock": '[[package]]\nname = "torch"\nversion = "2.3.0"\n\n[metadata]\nlock-version = "3.0"\n'},
     "poetry.lock", "poetry.lock:6", ["lock-version '3.0' is not supported (known: 1.x, 2.x)"]),
    ({"poetry.lock": '[[package]]\nname = "torch"\nversion = "2.3.0"\n'}, "poetry.lock", "poetry.lock",
     ["lock-version None is not supported"]),
    ({"poetry.lock": '[[package]]\nname = "torch"\nversion = "2.3.0"\n[package.source]\ntype = "hg"\nurl = "x"\n'
                     '[metadata]\nlock-version = "2.1"\n'}, "poetry.lock", "poetry.lock:1",
     ["unknown source type 'hg'"]),
    ({"poetry.lock": '[metadata]\nlock-version = "2.1"\n\n[[package]]\nname = "torch"\nversion = "latest"\n'},
     "poetry.lock", "poetry.lock:4", ["package 'torch': invalid version 'latest'"]),
    ({"poetry.lock": '[metadata]\nlock-version = "2.1"\n[[package]]\nname = "torch"\nversion = "2.3.0"\n'
                     'markers = "python_version >> \'3\'"\n'}, "poetry.lock", "poetry.lock:3",
     ["invalid marker"]),
    ({"poetry.lock": '[metadata]\nlock-version = "2.1"\n[[package]]\nname = "torch"\nversion = "2.3.0"\n'
                     'optional = "no"\n'}, "poetry.lock", "poetry.lock:3", ["'optional' must be true or false"]),
    ({"poetry.lock": '[metadata]\nlock-version = "2.1"\n[[package]\n'}, "poetry.lock", "poetry.lock:3",
     ["invalid TOML"]),
]


@pytest.mark.parametrize("files, top, where, needles", ERRORS)
def test_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], top: str, where: str,
                   needles: list[str]) -> None:
    bad_input(tmp_path, monkeypatch, files, top, where, needles)


def test_poetry_groups_and_deterministic_output() -> None:
    p = fixture("poetry-sources/poetry.lock")
    first = load(p)
    assert first.meta["groups"]["pytest"] == ["dev"] and first.meta["groups"]["torch"] == ["main"]
    assert load(p) == first


POETRY2 = '''# This file is automatically @generated by Poetry 2.1.1 and should not be changed by hand.

[[package]]
name = "triton"
version = "3.1.0"
description = "A language and compiler for custom Deep Learning operations"
optional = true
python-versions = "*"
groups = ["main", "gpu"]
markers = {main = "platform_system == \\"Linux\\" and extra == \\"gpu\\"", gpu = "platform_system == \\"Linux\\""}
files = []

[extras]
gpu = ["triton (>=3.0)"]

[metadata]
lock-version = "2.1"
python-versions = ">=3.10,<3.14"
content-hash = "0000"
'''


def test_poetry2_markers_by_group_and_extras(tmp_path: Path) -> None:
    p = tmp_path / "poetry.lock"
    p.write_text(POETRY2)
    lock = load(p)
    assert lock.entries == (E("triton", "3.1.0", '(platform_system == "Linux") or '
                                                 '(platform_system == "Linux" and extra == "gpu")', line=3),)
    assert lock.meta == {"extras": {"gpu": ["triton"]}, "optional": ["triton"], "groups": {"triton": ["main", "gpu"]}}
    assert lock.requires_python == ">=3.10,<3.14"


@pytest.mark.parametrize("constraint, spec", [
    ("^3.9.10", ">=3.9.10,<4"), ("^3.10", ">=3.10,<4"), ("~3.10", ">=3.10,<3.11"), ("~3.10.2", ">=3.10.2,<3.11"),
    (">=3.10,<4.0", ">=3.10,<4.0"), (">=3.8 <3.13", ">=3.8,<3.13"), ("3.11.*", "==3.11.*"), ("^0.2", ">=0.2,<0.3"),
    ("*", None), ("^3.9 || ^4.0", None), ("", None), (None, None), ("python3", None), ("^3.x", None),
])
def test_poetry_python(constraint: str | None, spec: str | None) -> None:
    assert poetry_python(constraint) == spec

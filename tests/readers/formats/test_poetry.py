"""poetry.lock (glmcompat.readers.formats.poetry): real locks poetry wrote, poetry 2's markers, extras."""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.readers.formats.common import Entry
from glmcompat.readers.formats.poetry import extras_environments, parse_poetry_lock, poetry_python

from tests.readers.formats.helpers import E, bad_input, entries_among, fixture, kind_python_and_meta, load


# --- whole files: every entry, or the ones that matter plus the count --------------------------------------------

WHOLE = [
    # a real lock-version 1.1 lock (poetry 1.2.2, scripts/record_format_fixtures.py): a directory project (develop),
    # an optional registry package and git project under an extra, a local sdist, a dev group, torch and torchvision
    # from a second (secondary legacy) source, a wheel URL; every source kind poetry 1.x writes
    ("poetry-sources/poetry.lock", [
        E("colorama", "0.4.6", line=1), E("deep-gemm", "1.0.0", None, "editable", line=14),
        E("einops", "0.8.0", line=27), E("exceptiongroup", "1.3.2", line=40), E("filelock", "4.3.1", line=53),
        E("flash-attn", "2.5.8", None, "git", line=66), E("fsspec", "2026.9.0", line=85),
        E("glm-tools", "0.2.0", None, "path", line=98), E("iniconfig", "2.3.1", line=110),
        E("jinja2", "3.1.6", line=123), E("mpmath", "1.3.0", line=136), E("networkx", "3.7", line=155),
        E("numpy", "2.5.5", line=168), E("nvidia-cublas-cu12", "12.4.5.8", line=181),
        E("nvidia-cuda-cupti-cu12", "12.4.127", line=194), E("nvidia-cuda-nvrtc-cu12", "12.4.127", line=207),
        E("nvidia-cuda-runtime-cu12", "12.4.127", line=220), E("nvidia-cudnn-cu12", "9.1.0.70", line=233),
        E("nvidia-cufft-cu12", "11.2.1.3", line=249), E("nvidia-curand-cu12", "10.3.5.147", line=262),
        E("nvidia-cusolver-cu12", "11.6.1.9", line=275), E("nvidia-cusparse-cu12", "12.3.1.170", line=293),
        E("nvidia-nccl-cu12", "2.21.5", line=309), E("nvidia-nvjitlink-cu12", "12.4.127", line=322),
        E("nvidia-nvtx-cu12", "12.4.127", line=335), E("packaging", "26.4", line=348),
        E("pillow", "13.0.0", line=361), E("pluggy", "1.7.0", line=382), E("pytest", "8.3.3", line=395),
        E("sympy", "1.13.1", line=419), E("tomli", "2.5.0", line=438), E("torch", "2.5.1", line=451),
        E("torchvision", "0.20.1", line=489), E("triton", "3.1.0", line=511),
        E("typing-extensions", "4.16.0", line=532), E("xformers", "0.0.28.post3", None, "wheel", line=545)]),
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
    # the same project locked by poetry 1.8.5 (lock-version 2.0): no category, no groups and no package markers yet
    # (a marker lives only on the dependency that asks for the package, and the root's are not in the lock), so
    # xformers and the extra's packages read as unconditional
    ("poetry-1.8/poetry.lock", 37, [
        E("colorama", "0.4.6", line=3),
        E("einops", "0.8.0", None, "wheel", line=14),
        E("flash-attn", "2.7.4.post1", None, "git", line=56),
        E("glm-tools", "0.1.0", None, "editable", line=114),
        E("nvidia-nccl-cu12", "2.21.5", line=536),
        E("torch", "2.5.1", line=829),
        E("typing-extensions", "4.16.0", line=942),
        E("xformers", "0.0.28.post3", line=953)]),
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
    ("poetry-1.8/poetry.lock", "poetry.lock", ">=3.10,<3.13", {
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


def test_lock_version_2_0_has_no_groups() -> None:
    """poetry 1.5-1.8 wrote neither poetry 1's category nor poetry 2's groups: the lock says no groups."""
    assert "groups" not in load(fixture("poetry-1.8/poetry.lock")).meta
    assert load(fixture("poetry-sources/poetry.lock")).meta["groups"]["pytest"] == ["dev"]


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


def test_torch_only_through_an_extra_is_in_that_extras_environment() -> None:
    """Issue 36: poetry 2.5.1's lock (recorded) of a project whose torch arrives only through the extra ``vision``'s
    optional torchvision: ``[extras]`` names torchvision alone, torch and its nvidia-* wheels are optional too and
    carry ``extra == "vision"`` markers. The extra's environment installs them all (and judges them); the base one
    none of them."""
    path = fixture("poetry-extra-torch/poetry.lock")
    lock = parse_poetry_lock(path, path.read_text())
    assert lock.meta["extras"]["vision"][0] == "torchvision"
    assert {"torch", "triton", "nvidia-cublas-cu12"} <= set(lock.meta["extras"]["vision"])
    envs = extras_environments(lock)
    base = [e for e in envs if e.name.startswith("base")]
    vision = [e for e in envs if e.name.startswith("extra vision") and e.platform == "x86_64"]
    assert base and vision
    assert all("torch" not in e.packages and "torchvision" not in e.packages for e in base)
    for e in vision:
        assert (e.packages["torch"], e.packages["torchvision"], e.packages["triton"]) == ("2.5.1", "0.20.1", "3.1.0")
        assert "nvidia-cublas-cu12" in e.packages  # its marker names Linux x86_64 beside the extra
    assert all("nvidia-cublas-cu12" not in e.packages for e in envs if e.platform == "aarch64")

"""Pipfile.lock (glmcompat.readers.formats.pipfile): a real lock pipenv wrote, odd but valid input, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.readers.formats.common import Entry

from tests.readers.formats.helpers import E, bad_input, entries_among, fixture, kind_python_and_meta, load


SOME = [  # (file, entry count, entries that must be among them)
    ("pipenv/Pipfile.lock", 33, [
        E("einops", "0.8.0", None, "wheel", line=24),
        E("flash-attn", None, None, "git", line=39),  # pipenv locks a git project's commit, never its version
        E("glm-tools", None, None, "editable", line=51),
        # pipenv writes a package's Requires-Python as its marker and drops torch's platform marker for it
        E("nvidia-nccl-cu12", "2.21.5", 'python_version >= "3"', line=393),
        E("torch", "2.5.1", 'python_full_version >= "3.8.0"', line=515),
        E("xformers", "0.0.28.post3", 'sys_platform == "linux"', line=581),
        E("pytest", "8.3.3", 'python_version >= "3.8"', line=618)]),
]


@pytest.mark.parametrize("rel, count, some", SOME, ids=[s[0] for s in SOME])
def test_entries_among(rel: str, count: int, some: list[Entry]) -> None:
    entries_among(rel, count, some)


META = [  # (file, kind, requires_python, meta keys and values that must be there)
    ("pipenv/Pipfile.lock", "Pipfile.lock", "==3.11.*", {}),
]


@pytest.mark.parametrize("rel, kind, python, meta", META, ids=[m[0] for m in META])
def test_kind_python_and_meta(rel: str, kind: str, python: str | None, meta: dict[str, object]) -> None:
    kind_python_and_meta(rel, kind, python, meta)


GROUPS = [  # (file, package -> the groups that must be its groups)
    ("pipenv/Pipfile.lock", {"torch": ["default"], "flash-attn": ["default"], "glm-tools": ["default"],
                             "einops": ["default"], "pytest": ["develop"]}),
]


@pytest.mark.parametrize("rel, groups", GROUPS, ids=[g[0] for g in GROUPS])
def test_groups_of_real_locks(rel: str, groups: dict[str, list[str]]) -> None:
    got = load(fixture(rel)).meta["groups"]
    assert {name: got[name] for name in groups} == groups


# --- bad input: one line, exit 2, naming the file, the line and the value ---------------------------------------

ERRORS = [  # (files, file to read, where the message must point, what it must say)
    # Pipfile.lock
    ({"Pipfile.lock": '{"_meta": {"pipfile-spec": 7}, "default": {}}'}, "Pipfile.lock", "Pipfile.lock:1",
     ["_meta.pipfile-spec 7 is not supported (known: 6)"]),
    ({"Pipfile.lock": '{"_meta": {"pipfile-spec": "6"}}'}, "Pipfile.lock", "Pipfile.lock:1",
     ["_meta.pipfile-spec '6' is not supported"]),
    ({"Pipfile.lock": '{"_meta": {"pipfile-spec": 6},\n "default": {"torch": {"version": "2.4.1"}}}'},
     "Pipfile.lock", "Pipfile.lock:2", ["package 'torch': invalid version '2.4.1'"]),
    ({"Pipfile.lock": '{"_meta": {"pipfile-spec": 6},\n "default": {"torch": {"version": "==2.4.1",\n'},
     "Pipfile.lock", "Pipfile.lock:3", ["invalid JSON"]),
    ({"Pipfile.lock": '[1, 2]'}, "Pipfile.lock", "Pipfile.lock:1", ["no '_meta' object"]),
]


@pytest.mark.parametrize("files, top, where, needles", ERRORS)
def test_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], top: str, where: str,
                   needles: list[str]) -> None:
    bad_input(tmp_path, monkeypatch, files, top, where, needles)


# What no tool here writes but a hand-edited or older lock holds: a range for a version, a package in both sections
# (pipenv before 2024 repeated them), a name not in canonical form. The real locks above cover the rest.
# What no tool here writes but a hand-edited or older lock holds: a range for a version, a package in both sections
# (pipenv before 2024 repeated them), a name not in canonical form. The real lock above covers the rest.
PIPFILE_ODD = """{
    "_meta": {"pipfile-spec": 6, "requires": {"python_version": "3.11"}, "sources": []},
    "default": {
        "filelock": {"version": "==3.16.1", "markers": "python_version >= '3.8'"},
        "torch": {"version": "==2.4.1+cu121", "index": "pytorch"},
        "transformers": {"version": ">=4.45"}
    },
    "develop": {
        "filelock": {"version": "==3.16.1", "markers": "python_version >= '3.8'"}
    }
}
"""


def test_odd_but_valid_pipenv_lock(tmp_path: Path) -> None:
    p = tmp_path / "Pipfile.lock"
    p.write_text(PIPFILE_ODD)
    lock = load(p)
    assert lock.entries == (E("filelock", "3.16.1", 'python_version >= "3.8"', line=4), E("torch", "2.4.1+cu121", line=5),
                            E("transformers", None, spec=">=4.45", line=6),
                            E("filelock", "3.16.1", 'python_version >= "3.8"', line=9))
    assert lock.meta["groups"] == {"filelock": ["default", "develop"], "torch": ["default"], "transformers": ["default"]}

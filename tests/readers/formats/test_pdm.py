"""pdm.lock (glmcompat.readers.formats.pdm): a real lock pdm wrote, odd but valid input, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.readers.formats.common import Entry

from tests.readers.formats.helpers import E, bad_input, entries_among, fixture, kind_python_and_meta, load


PDM_GROUPS = {"torch": ["default", "flash"], "flash-attn": ["flash"], "einops": ["flash"], "glm-tools": ["default"],
              "glm-devtools": ["dev"], "pytest": ["dev"], "uvicorn": ["default"]}

SOME = [  # (file, entry count, entries that must be among them)
    ("pdm/pdm.lock", 49, [
        E("einops", "0.8.0", None, "wheel", line=52),
        E("flash-attn", "2.7.4.post1", None, "git", line=89),
        E("glm-devtools", "0.1.0", None, "editable", line=114),
        E("glm-tools", "0.1.0", None, "directory", line=123),
        E("nvidia-nccl-cu12", "2.21.5", 'platform_system == "Linux" and platform_machine == "x86_64"', line=478),
        E("pytest", "8.3.3", line=579),
        E("torch", "2.5.1", line=704),
        E("uvicorn", "0.32.0", line=800),  # once, though pdm lists it again for its [standard] extra (line 816)
        E("xformers", "0.0.28.post3", 'sys_platform == "linux"', line=965)]),
]


@pytest.mark.parametrize("rel, count, some", SOME, ids=[s[0] for s in SOME])
def test_entries_among(rel: str, count: int, some: list[Entry]) -> None:
    entries_among(rel, count, some)


META = [  # (file, kind, requires_python, meta keys and values that must be there)
    ("pdm/pdm.lock", "pdm.lock", ">=3.10,<3.13", {}),
]


@pytest.mark.parametrize("rel, kind, python, meta", META, ids=[m[0] for m in META])
def test_kind_python_and_meta(rel: str, kind: str, python: str | None, meta: dict[str, object]) -> None:
    kind_python_and_meta(rel, kind, python, meta)


GROUPS = [  # (file, package -> the groups that must be its groups)
    ("pdm/pdm.lock", PDM_GROUPS),
]


@pytest.mark.parametrize("rel, groups", GROUPS, ids=[g[0] for g in GROUPS])
def test_groups_of_real_locks(rel: str, groups: dict[str, list[str]]) -> None:
    got = load(fixture(rel)).meta["groups"]
    assert {name: got[name] for name in groups} == groups


# --- bad input: one line, exit 2, naming the file, the line and the value ---------------------------------------

ERRORS = [  # (files, file to read, where the message must point, what it must say)
    # pdm.lock
    ({"pdm.lock": '[metadata]\nlock_version = "5.0.0"\n[[package]]\nname = "torch"\nversion = "2.5.1"\n'},
     "pdm.lock", "pdm.lock:2", ["pdm.lock lock_version '5.0.0' is not supported (known: 4.x)"]),
    ({"pdm.lock": '[metadata]\nlock_version = 4\n'}, "pdm.lock", "pdm.lock:2", ["lock_version 4 is not supported"]),
    ({"pdm.lock": '[metadata]\nlock_version = "4.5.0"\nrequires_python = ">=3.10 <4"\n'}, "pdm.lock", "pdm.lock:3",
     ["invalid requires_python '>=3.10 <4'"]),
]


@pytest.mark.parametrize("files, top, where, needles", ERRORS)
def test_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], top: str, where: str,
                   needles: list[str]) -> None:
    bad_input(tmp_path, monkeypatch, files, top, where, needles)


PDM_ODD = '[metadata]\ngroups = ["default"]\nlock_version = "4.5.0"\n\n[[package]]\nname = "Torch"\nversion = "2.5.1"\n' \
          'groups = ["default"]\n'


def test_odd_but_valid_pdm_lock(tmp_path: Path) -> None:
    p = tmp_path / "pdm.lock"
    p.write_text(PDM_ODD)
    assert load(p).entries == (E("torch", "2.5.1", line=5),)


def test_compiled_wheels_a_pdm_lock_records_are_kept_for_the_artifact_reader(tmp_path: Path) -> None:
    """The real lock's ``files`` tables (file name and sha256; the index has the URL), compiled Linux wheels only, as
    poetry.lock's: what glmcompat.ops.artifacts reads a pdm.lock's compiled packages from."""
    got = load(fixture("pdm/pdm.lock")).meta["lock_wheels"]
    x = got["xformers==0.0.28.post3"]
    assert "xformers-0.0.28.post3-cp310-cp310-manylinux_2_28_x86_64.whl#sha256=648483325366fb3c6a42246f99646101d3cfd" \
           "678725b3ffc50a4708a222ae973" in x and all("linux" in w and "#sha256=" in w for w in x)
    assert "pytest==8.3.3" not in got and "einops==0.8.0" not in got  # pure wheels; a wheel URL entry is not the index's
    # lock_version 4.0-4.3 kept them in [metadata.files], keyed "name version", with the URL
    p = tmp_path / "pdm.lock"
    p.write_text('[metadata]\ngroups = ["default"]\nlock_version = "4.2"\n\n[[package]]\nname = "numexpr"\n'
                 'version = "2.8.8"\ngroups = ["default"]\n\n[metadata.files]\n"numexpr 2.8.8" = [\n'
                 '    {url = "https://files.index.invalid/packages/numexpr-2.8.8-cp311-cp311-manylinux_2_17_x86_64.'
                 'manylinux2014_x86_64.whl", hash = "sha256:' + "ab" * 32 + '"},\n'
                 '    {url = "https://files.index.invalid/packages/numexpr-2.8.8.tar.gz", hash = "sha256:' + "cd" * 32
                 + '"},\n]\n')
    assert load(p).meta["lock_wheels"] == {"numexpr==2.8.8": [
        "https://files.index.invalid/packages/numexpr-2.8.8-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
        "#sha256=" + "ab" * 32]}

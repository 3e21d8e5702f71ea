"""pylock.toml (glmcompat.readers.formats.pylock): PEP 751 locks read and validated by packaging.pylock; the source
kind of each package, the lock-version, and packaging's validation errors as one line naming the package's line.
(Locks that uv exports: tests/readers/formats/test_uvlock.py and tests/cli/commands/test_check.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.model.errors import LockFormatError
from glmcompat.readers.formats.common import Entry
from glmcompat.readers.formats.pylock import parse_pylock

WHEEL = "https://index.invalid/packages/torch-2.9.1%2Bcu128-cp311-cp311-manylinux_2_28_x86_64.whl"
SHA = 'hashes = { sha256 = "0000000000000000000000000000000000000000000000000000000000000000" }'
LOCK = f'''lock-version = "1.0"
created-by = "hand"
requires-python = ">=3.11"

[[packages]]
name = "torch"
version = "2.9.1+cu128"
wheels = [{{ url = "{WHEEL}", {SHA} }}]

[[packages]]
name = "flash-attn"
version = "2.7.4"
marker = "sys_platform == 'linux'"
vcs = {{ type = "git", url = "https://index.invalid/flash-attention.git", commit-id = "0123456789abcdef0123456789abcdef01234567" }}

[[packages]]
name = "glm-tools"
version = "0.1.0"
directory = {{ path = "tools", editable = true }}

[[packages]]
name = "glm-data"
version = "0.2.0"
directory = {{ path = "data" }}

[[packages]]
name = "xformers"
version = "0.0.28"
archive = {{ url = "https://index.invalid/x/xformers-0.0.28-cp311-cp311-manylinux_2_28_x86_64.whl", {SHA} }}

[[packages]]
name = "einops"
version = "0.8.0"
archive = {{ path = "vendor/einops-0.8.0.tar.gz", {SHA} }}
'''


def test_entries_and_their_source_kinds(tmp_path: Path) -> None:
    lock = parse_pylock(tmp_path / "pylock.toml", LOCK)
    assert (lock.kind, lock.requires_python, lock.meta) == ("pylock.toml", ">=3.11", {})
    assert lock.entries == (
        Entry("torch", "2.9.1+cu128"), Entry("flash-attn", "2.7.4", "sys_platform == 'linux'", "git"),
        Entry("glm-tools", "0.1.0", source="editable"), Entry("glm-data", "0.2.0", source="directory"),
        Entry("xformers", "0.0.28", source="wheel"), Entry("einops", "0.8.0", source="path"))


def test_a_newer_minor_lock_version_is_read_as_1_0_with_a_note(tmp_path: Path) -> None:
    lock = parse_pylock(tmp_path / "pylock.toml", LOCK.replace('"1.0"', '"1.3"', 1))
    assert lock.meta["notes"] == ["pylock lock-version 1.3 is newer than the 1.0 glmcompat knows: read as 1.0"]
    assert len(lock.entries) == 6


@pytest.mark.parametrize("text, line, needle", [
    (LOCK.replace('"1.0"', '"2.0"', 1), 1, "pylock lock-version '2.0' is not supported (known: 1.x)"),
    (LOCK.replace('directory = { path = "data" }\n', ""), 21, "package 'glm-data': Exactly one of vcs"),
    (LOCK.replace('created-by = "hand"\n', ""), None, "Missing required value in 'created-by'"),
    (LOCK.replace('version = "2.9.1+cu128"', 'version = "2.9.2"'), 8, "package 'torch': Version in 'torch-2.9.1+cu128-"),
])
def test_invalid_locks_are_one_line_naming_the_package_line(tmp_path: Path, text: str, line: int | None,
                                                           needle: str) -> None:
    p = tmp_path / "pylock.toml"
    with pytest.raises(LockFormatError) as err:
        parse_pylock(p, text)
    assert (err.value.path, err.value.line) == (str(p), line) and needle in str(err.value), str(err.value)
    assert "\n" not in str(err.value)

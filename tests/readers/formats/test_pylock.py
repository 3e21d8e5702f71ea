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
    assert (lock.kind, lock.requires_python) == ("pylock.toml", ">=3.11")
    # the compiled wheel of a registry package is kept for reading its bytes (glmcompat.ops.artifacts)
    assert lock.meta == {"lock_wheels": {"torch==2.9.1+cu128": [
        "https://index.invalid/packages/torch-2.9.1%2Bcu128-cp311-cp311-manylinux_2_28_x86_64.whl#sha256=" + "0" * 64]},
        # and, since it lists no sdist, the wheels that alone can install it (where none fits, nothing installs it)
        "wheels_only": {"torch==2.9.1+cu128": ["torch-2.9.1+cu128-cp311-cp311-manylinux_2_28_x86_64.whl"]}}
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


# -- PEP 825 variant wheels (issue 36) ---------------------------------------------------------------------------------

VARIANTS = Path(__file__).parents[2] / "fixtures" / "formats" / "pylock-variants" / "pylock.toml"


def test_a_variant_pylock_is_read_and_its_variants_named() -> None:
    """The variant wheels' labels are taken off for packaging's validation; each package is an entry judged by
    name and version, and the variants it offers (labels, properties) are named in meta and a note."""
    lock = parse_pylock(VARIANTS, VARIANTS.read_text())
    assert [(e.name, e.version, e.source) for e in lock.entries] == [("torch", "2.9.1", "registry"),
                                                                     ("torchvision", "0.24.1", "registry")]
    v = lock.meta["variants"]["torch"]
    assert v[0].startswith("cu128: nvidia :: cuda_version_lower_bound :: 12.8, nvidia :: sm_arch :: 90_real")
    assert v[2] == "null: no properties (the null variant)" and list(lock.meta["variants"]) == ["torch"]
    assert lock.meta["notes"] == ["torch 2.9.1: PEP 825 variant wheels cu128, cu130, null; judged as torch 2.9.1, "
                                  "whichever variant an installer picks"]


def _variant_lock(wheel_label: str, variants_json: str) -> str:
    return (f'lock-version = "1.0"\ncreated-by = "hand"\n\n[[packages]]\nname = "torch"\nversion = "2.9.1"\n'
            f'wheels = [{{ url = "https://index.invalid/torch-2.9.1-cp312-cp312-manylinux_2_28_x86_64{wheel_label}.whl",'
            f' {SHA} }}]\n\n[packages.variants-json]\n{variants_json}\n')


def test_a_variants_json_locked_by_reference() -> None:
    text = _variant_lock("-cu128", f'url = "https://index.invalid/torch-2.9.1-variants.json"\n{SHA}')
    lock = parse_pylock(Path("pylock.toml"), text)
    assert lock.meta["variants"] == {"torch": ["cu128: properties not inlined"]}
    assert "locked by reference" in lock.meta["notes"][0]


@pytest.mark.parametrize(("label", "table", "needle"), [
    ("-cu129", 'variants = { cu128 = { nvidia = { sm_arch = ["90_real"] } } }',
     "has the variant label 'cu129', which its [packages.variants-json] does not list"),
    ("-cu128", 'variants = { cu128 = { nvidia = { sm_arch = ["90 real"] } } }', "nvidia :: sm_arch must be"),
    ("-cu128", 'variants = { CU128 = {} }', "variant label 'CU128' is not"),
    ("-null", 'variants = { null = { nvidia = { sm_arch = ["90_real"] } } }', "the 'null' variant has properties"),
    ("-cu128", '"$schema" = "x"', "neither the inlined 'variants' table nor a 'url' or 'path'"),
])
def test_a_bad_variant_table_is_one_line_naming_its_line(label: str, table: str, needle: str) -> None:
    with pytest.raises(LockFormatError) as err:
        parse_pylock(Path("pylock.toml"), _variant_lock(label, table))
    assert needle in str(err.value) and "package 'torch'" in str(err.value) and err.value.line == 9

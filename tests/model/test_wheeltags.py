"""Wheel file names read once a piece (issue 39): :func:`glmcompat.model.wheeltags.wheel_file_tags` answers as
:func:`packaging.utils.parse_wheel_filename` does for every name, valid or not."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from glmcompat.model.wheeltags import wheel_file_tags

ROOT = Path(__file__).resolve().parents[2]


def packagings(filename: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """What wheel_file_tags answered before it read a name by its pieces: packaging's parse of the whole name."""
    try:
        tags = parse_wheel_filename(filename)[3]
    except InvalidWheelFilename:
        return None
    return tuple(str(t) for t in tags), tuple(t.platform for t in tags)


def lock_wheel_names() -> list[str]:
    names: set[str] = set()
    for lock in ROOT.glob("tests/fixtures/**/uv.lock"):
        names.update(re.findall(r'/([^/"#?]+\.whl)', lock.read_text(encoding="utf-8", errors="replace")))
    return sorted(names)


def test_every_wheel_of_the_fixture_locks() -> None:
    names = lock_wheel_names()
    assert len(names) > 1000, len(names)  # the locks' own: compiled and pure, build tags, compressed tag sets
    assert [wheel_file_tags(n) for n in names] == [packagings(n) for n in names]
    # and names packaging refuses (a local label's '+' as a URL writes it, %2B) among them
    assert 0 < sum(wheel_file_tags(n) is None for n in names) < len(names) / 4


ODD = [
    "torch-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl",
    "torch-2.9.1-1-cp311-cp311-manylinux_2_28_x86_64.whl",  # a build tag
    "torch-2.9.1-x1-cp311-cp311-manylinux_2_28_x86_64.whl",  # a build tag not starting with a digit
    "torch-2.9.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",  # a compressed tag set
    "torch-2.9.1-cp311.cp312-cp311-linux_x86_64.whl",
    "torch-notaversion-cp311-cp311-linux_x86_64.whl",
    "torch__x-2.9.1-cp311-cp311-linux_x86_64.whl",  # a name packaging refuses
    "-2.9.1-cp311-cp311-linux_x86_64.whl",
    "torch-2.9.1-cp311-cp311-.whl",  # an empty platform
    "torch-2.9.1-cp311--linux_x86_64.whl",
    "torch-2.9.1--cp311-linux_x86_64.whl",
    "torch-2.9.1-cp311-cp311-linux_x86_64.zip",
    "torch-2.9.1-cp311-linux_x86_64.whl",  # too few parts
    "a-b-c-d-e-f-g.whl",  # too many
    "torch-2.9.1-py3-none-any.whl",
    "torch-2.9.1-1-3-py3-none-any.whl",
    ".whl",
]


def test_odd_names() -> None:
    assert [wheel_file_tags(n) for n in ODD] == [packagings(n) for n in ODD]
    assert wheel_file_tags(ODD[0]) is not None and wheel_file_tags(ODD[5]) is None


_PIECE = st.text(alphabet="ab1._+!-x_", max_size=8)


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(_PIECE | st.sampled_from(["cp311", "none", "any", "py3", "manylinux_2_28_x86_64", "1.0",
                                                 "1", "torch", "2.9.1+cu128"]), min_size=3, max_size=7),
       suffix=st.sampled_from([".whl", ".whl", ".tar.gz", ""]))
def test_any_name_reads_as_packaging_reads_it(pieces: list[str], suffix: str) -> None:
    name = "-".join(pieces) + suffix
    assert wheel_file_tags(name) == packagings(name)

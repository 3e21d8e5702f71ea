"""A project page's files are parsed piecewise (issue 39: a thousand wheels a page, most of a cold lock's parsing CPU):
each wheel filename's name, version, build tag and tag set judged by packaging once per page, and each absolute file
URL kept without urljoin's two parses. Both must give exactly what packaging's ``parse_wheel_filename`` and
``urljoin`` give, on the real pages recorded here and on generated text built to hit every branch."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion

from glmcompat.edges.index import _WheelMemo, join_url

from tests.conftest import json_dicts

FIXTURES = Path(__file__).parents[1] / "fixtures"
BASES = ("https://index.invalid/simple/torch/", "http://index.invalid/simple/torch", "https://index.invalid/")


def _pages(x: object) -> Iterator[list[dict[str, Any]]]:
    for d in json_dicts(x):
        files = d.get("files")
        if isinstance(files, list) and files and isinstance(files[0], dict) and "filename" in files[0]:
            yield files


# every file of every project page recorded under tests/fixtures (index, resolver, refresh): real index answers
FILES = [f for p in sorted(FIXTURES.rglob("*.json")) if b'"filename"' in p.read_bytes()
         for files in _pages(json.loads(p.read_bytes())) for f in files]
def packaging_says(filename: str) -> tuple[str, frozenset[str]] | None:
    try:
        _, version, _, tags = parse_wheel_filename(filename)
    except (InvalidWheelFilename, InvalidVersion):
        return None
    return str(version), frozenset(str(t) for t in tags)


def memo_says(memo: _WheelMemo, filename: str) -> tuple[str, frozenset[str]] | None:
    try:
        return memo.parse(filename)
    except (InvalidWheelFilename, InvalidVersion):
        return None


def test_the_recorded_pages_parse_as_packaging_parses_them() -> None:
    wheels = [str(f["filename"]) for f in FILES if str(f["filename"]).endswith(".whl")]
    assert len(wheels) > 1000, "the recorded pages hold wheels"
    memo = _WheelMemo()
    for name in wheels:
        assert memo_says(memo, name) == packaging_says(name), name
    # the memo did share pieces: fewer tag sets and versions than wheels
    assert len(memo.tagsets) < len(wheels) and len(memo.versions) < len(wheels)


_PIECE = st.sampled_from(["torch", "sgl_kernel", "a__b", "x.y", "bad!", "", "2.9.1", "2.9.1+cu128", "1.0rc1", "v1",
                          "1_x", "1x", "x1", "cp311", "cp311.cp312", "abi3", "none", "manylinux_2_28_x86_64", "any",
                          "py3", "py2.py3"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECE, min_size=1, max_size=7))
def test_generated_filenames_parse_as_packaging_parses_them(pieces: list[str]) -> None:
    memo = _WheelMemo()
    name = "-".join(pieces) + ".whl"
    assert memo_says(memo, name) == packaging_says(name)
    assert memo_says(memo, name) == packaging_says(name), "a second time, from the memo"


def test_every_recorded_url_joins_as_urljoin_joins_it() -> None:
    urls = [str(f.get("url", f["filename"])) for f in FILES]
    assert len(urls) > 1000
    for base in BASES:
        for url in urls:
            assert join_url(base, url) == urljoin(base, url), url


_URL = st.lists(st.sampled_from(list("htps:/ax.1?#;[]% \t\nH@-_") + ["https://", "http://", "//", "../"]),
                max_size=12).map("".join)


@settings(max_examples=1000, deadline=None)
@given(st.sampled_from(BASES), _URL)
def test_generated_urls_join_as_urljoin_joins_them(base: str, url: str) -> None:
    try:
        want: str | None = urljoin(base, url)
    except ValueError:  # urlsplit refuses a malformed bracketed host
        want = None
    try:
        got: str | None = join_url(base, url)
    except ValueError:
        got = None
    assert got == want

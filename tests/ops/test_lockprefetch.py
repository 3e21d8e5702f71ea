"""What a cold project lock reads while uv resolves (issue 39, :mod:`glmcompat.ops.lockprefetch`): exactly the
releases the judge of the lock would read from their own bytes (probe_lock's candidates), each once; nothing for a
pure wheel, an sdist, torch's own family and the packages the matrix has rows for."""

from __future__ import annotations

from typing import Any

import pytest

from glmcompat.edges.index import IndexOptions, client_for
from glmcompat.matrix.load import load_facts
from glmcompat.ops import lockprefetch
from glmcompat.ops.artifacts import PROBE_ENV


class Recorded(lockprefetch.Prefetch):
    """The real routing; what it would read is recorded instead of read (no index here)."""

    def __init__(self, *a: Any) -> None:
        super().__init__(*a)
        self.read: list[tuple[str, str]] = []

    def _start(self, name: str, version: str) -> None:
        self.read.append((name, version))


@pytest.fixture(scope="module", name="facts")
def _facts() -> Any:
    return load_facts()


def test_only_what_the_judge_reads_is_read(facts):
    ahead = Recorded(facts, "cp311", "x86_64", IndexOptions(), client_for)
    for got in [
        ("Pillow", "12.0.0", "pillow-12.0.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"),
        ("pillow", "12.0.0", "pillow-12.0.0-cp312-cp312-macosx_11_0_arm64.whl"),  # the same release: once
        ("fastapi", "0.118.0", "fastapi-0.118.0-py3-none-any.whl"),  # pure
        ("sglang", "0.5.9", "sglang-0.5.9.tar.gz"),  # an sdist: nothing compiled to read
        ("torch", "2.9.1", "torch-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl"),  # torch: from the matrix
        ("nvidia-cudnn-cu12", "9.10.2.21", "nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl"),
        ("triton", "3.5.1", "triton-3.5.1-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"),
        ("numpy", "2.2.6", "numpy-2.2.6-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
        ("sgl-kernel", "0.3.21", "sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl"),  # a kernel row
        ("bench", "0.1.0", "virtual"),
    ]:
        ahead.selected(*got)
    assert ahead.read == [("pillow", "12.0.0")]
    ahead.drain()
    ahead.selected("markupsafe", "3.0.3", "markupsafe-3.0.3-cp311-cp311-manylinux_2_17_x86_64.whl")
    assert ahead.read == [("pillow", "12.0.0")]  # drained: nothing more is started
    ahead.close()


def test_the_first_release_of_a_few_packages_is_read(facts):
    """The first release uv selects of each package, and no more than MAX_AHEAD packages: the judge reads the rest."""
    ahead = Recorded(facts, "cp311", "x86_64", IndexOptions(), client_for)
    ahead.selected("pillow", "12.0.0", "pillow-12.0.0-cp311-cp311-manylinux_2_28_x86_64.whl")
    ahead.selected("pillow", "11.3.0", "pillow-11.3.0-cp311-cp311-manylinux_2_28_x86_64.whl")  # uv went back: not read
    for i in range(2 * lockprefetch.MAX_AHEAD):
        ahead.selected(f"ext{i}", "1.0", f"ext{i}-1.0-cp311-cp311-manylinux_2_28_x86_64.whl")
    assert ahead.read[0] == ("pillow", "12.0.0") and len(ahead.read) == lockprefetch.MAX_AHEAD
    ahead.close()


class Told:
    """A uv run as :meth:`lockprefetch.Prefetch.follow` hears it: its listeners, told each selection."""

    def __init__(self) -> None:
        self.listeners: list[Any] = []

    def on_select(self, fn: Any) -> None:
        self.listeners.append(fn)

    def select(self, name: str, version: str) -> None:
        for fn in self.listeners:
            fn(name, version, f"{name}-{version}-cp311-cp311-manylinux_2_28_x86_64.whl")


def test_a_run_followed_later_takes_the_place_of_the_first(facts):
    """The run on the project as written is followed first (where nothing is predicted); once settle starts a run on
    the new pyproject.toml (the first one's lock in doubt) and it is followed, only that run's selections are read,
    with a budget of its own, and a package read already is not read again."""
    ahead = Recorded(facts, "cp311", "x86_64", IndexOptions(), client_for)
    first, second = Told(), Told()
    ahead.follow(first)
    for i in range(2 * lockprefetch.MAX_AHEAD):
        first.select(f"ext{i}", "1.0")
    assert len(ahead.read) == lockprefetch.MAX_AHEAD
    ahead.follow(second)
    first.select("late", "1.0")  # the first run's, now in doubt: not read
    second.select("ext0", "1.0")  # read already
    second.select("ext0", "2.0")
    for i in range(2 * lockprefetch.MAX_AHEAD):
        second.select(f"new{i}", "1.0")
    assert ahead.read[lockprefetch.MAX_AHEAD:] == [(f"new{i}", "1.0") for i in range(lockprefetch.MAX_AHEAD)]
    ahead.close()


def test_a_release_whose_rows_are_shipped_is_not_read(facts, monkeypatch):
    """markupsafe 3.0.4's wheels are in the shipped file (glmcompat/ops/evidence): the judge finds them there, so
    nothing is read ahead for it; markupsafe 3.0.3's are not, and another machine's are not, nor any with shipping off."""
    from glmcompat.ops import shipped

    monkeypatch.delenv(shipped.OFF_ENV, raising=False)
    ahead = Recorded(facts, "cp311", "x86_64", IndexOptions(), client_for)
    ahead.selected("markupsafe", "3.0.4", "markupsafe-3.0.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")
    assert ahead.read == []
    ahead.selected("markupsafe", "3.0.3", "markupsafe-3.0.3-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")
    assert ahead.read == [("markupsafe", "3.0.3")]
    ahead.close()
    assert not shipped.covers("markupsafe-3.0.4-cp311-cp311-manylinux_2_17_x86_64.whl", "3.11", "ppc64le")
    assert shipped.covers("markupsafe-3.0.4-cp311-cp311-manylinux_2_17_x86_64.whl", "3.11", "x86_64")
    monkeypatch.setenv(shipped.OFF_ENV, "1")
    assert not shipped.covers("markupsafe-3.0.4-cp311-cp311-manylinux_2_17_x86_64.whl", "3.11", "x86_64")


def test_nothing_is_read_where_reading_is_off_or_the_index_recorded(facts, monkeypatch):
    assert lockprefetch.start(facts, "cp311", "x86_64", IndexOptions(), None) is None
    monkeypatch.setenv(PROBE_ENV, "1")
    assert lockprefetch.start(facts, "cp311", "x86_64", IndexOptions(), client_for) is None

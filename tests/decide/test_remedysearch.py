"""The nearest-safe-set search (glmcompat/decide/remedysearch.py) on a recorded index: it keeps what it can, moves
the fewest pins by the smallest steps, honours an engine, and says which pin blocks when no set keeps it."""

from __future__ import annotations

import pytest

from glmcompat.decide.remedysearch import Blocked, Found, Search
from glmcompat.decide.rules import evaluate
from glmcompat.edges.sources import RecordedSource
from glmcompat.matrix.load import load_facts
from tests.conftest import FIXTURES

SRC = FIXTURES / "remedy" / "index-x86_64.json"


@pytest.fixture(scope="module")
def facts():
    return load_facts()


def _accept(facts, target):
    def accept(new):
        pkgs = {k: v for k, v in new.items() if v is not None}
        return not any(f.severity == "error" for f in evaluate(pkgs, target=target, matrix=facts))
    return accept


def test_a_safe_set_moves_nothing(facts):
    s = Search(facts, RecordedSource(SRC), "sm120", None, {"torch": "2.9.1", "sgl-kernel": "0.3.21"},
               _accept(facts, "sm120"))
    got = s.run()
    assert isinstance(got, Found) and got.moved == () and s.tries == 1


def test_one_pin_moves_where_one_is_enough_and_by_the_smallest_step(facts):
    """torch 2.10.0 next to sgl-kernel 0.3.21 and torchvision 0.24.1: torch alone moves, to 2.9.1 (the build torch),
    never the kernel or torchvision."""
    s = Search(facts, RecordedSource(SRC), "sm120", None,
               {"torch": "2.10.0", "sgl-kernel": "0.3.21", "torchvision": "0.24.1"}, _accept(facts, "sm120"))
    got = s.run()
    assert isinstance(got, Found) and got.moved == ("torch",) and got.pins["torch"] == "2.9.1"


def test_an_engine_kept_is_an_engine_honoured(facts):
    """sglang 0.5.10 stays; flashinfer moves to sglang's own pins, python and cubin together."""
    pkgs = {"sglang": "0.5.10", "torch": "2.9.1", "torchvision": "0.24.1", "torchaudio": "2.9.1",
            "sglang-kernel": "0.4.1", "flashinfer-python": "0.6.3", "flashinfer-cubin": "0.6.3", "transformers": "5.3.0"}
    got = Search(facts, RecordedSource(SRC), "sm120", None, pkgs, _accept(facts, "sm120")).run()
    assert isinstance(got, Found) and sorted(got.moved) == ["flashinfer-cubin", "flashinfer-python"]
    assert got.pins["sglang"] == "0.5.10" and got.pins["flashinfer-python"] == "0.6.7.post2"


def test_a_proof_that_refuses_everything_gives_no_remedy_in_bounded_time(facts):
    """Nothing is printed that the proof did not accept, and the search stops within its budget."""
    from glmcompat.decide.remedysearch import MAX_TRIES

    pkgs = {"torch": "2.10.0", "sgl-kernel": "0.3.21", "torchvision": "0.24.1"}
    s = Search(facts, RecordedSource(SRC), "sm120", None, pkgs, lambda new: False)
    assert s.run() is None and 1 < s.tries <= MAX_TRIES + 1


def test_blocked_names_the_pin_and_its_least_change(facts):
    """A set that needs more moves than the search allows (here none): the pin that blocks is named, with the version
    the nearest set gives it."""
    from glmcompat.decide import remedysearch

    pkgs = {"torch": "2.10.0", "sgl-kernel": "0.3.21", "torchvision": "0.24.1"}
    s = Search(facts, RecordedSource(SRC), "sm120", None, pkgs, _accept(facts, "sm120"))
    old = remedysearch.MAX_MOVED
    remedysearch.MAX_MOVED = 0  # nothing may move: the search must say what blocks
    try:
        got = s.run()
    finally:
        remedysearch.MAX_MOVED = old
    assert isinstance(got, Blocked) and (got.package, got.version, got.least) == ("torch", "2.10.0", "2.9.1")

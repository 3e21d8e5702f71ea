"""Hints as typed data and their one formatter (glmcompat/model/hints.py)."""

from __future__ import annotations

import pytest

from glmcompat.model.hints import Hint, Remedy, render_hint, render_remedy


def test_one_formatter_for_every_hint_kind():
    r = Remedy({"torch": "2.9.1", "sgl-kernel": None, "sglang-kernel": "0.4.1"},
               (Hint("pin", "torch", "2.10.0", "2.9.1", reason="built against"),
                Hint("replace", "sgl-kernel", "0.3.21", "0.4.1", replaced_by="sglang-kernel", reason="r"),
                Hint("override", "transformers", to="5.2.0", reason="sglang 0.5.9 pins transformers==4.57.1")))
    lines = list(render_remedy(r, target="sm120"))
    assert lines[0] == "the nearest safe set for sm120: torch==2.9.1 sglang-kernel==0.4.1 (remove sgl-kernel)"
    assert lines[2] == "  - sgl-kernel 0.3.21 -> sglang-kernel 0.4.1: r"
    assert "overrides an engine's pin: sglang 0.5.9 pins" in lines[3]
    assert render_hint(Hint("blocked", "torch", "2.11.0", "2.10.0", reason="x")) == \
        "your pin torch==2.11.0 blocks every safe set: x; its least change: torch==2.10.0"
    with pytest.raises(ValueError):
        Hint("nonsense", "torch")



def test_a_remedy_with_nothing_to_change_prints_nothing():
    assert list(render_remedy(Remedy({"torch": "2.9.1"}, ()))) == []


def test_a_refusal_reads_as_one():
    h = Hint("refused", "torch 2.9.1 -> 2.11.0", reason="uv's plan would break the core: x")
    assert render_hint(h) == "refused: torch 2.9.1 -> 2.11.0: uv's plan would break the core: x"
    assert h.to_json()["kind"] == "refused" and h.to_json()["to"] is None

"""Kernels' CUDA floors, TGI's kernel checks, CMake's CUDA checks, flash-attn's GPU guards and a model library's
required package (issue 38, fix38-build3): each message as its source formats it
(tests/fixtures/raise_sites/build3-signatures.toml) is named by its signature with the words it gives, and each
lookalike stays unclaimed."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.decide.explaining import diagnoses, unclaimed

TABLE = Path(__file__).resolve().parents[1] / "fixtures" / "raise_sites" / "build3-signatures.toml"
MESSAGES = tomllib.loads(TABLE.read_text(encoding="utf-8"))["message"]


def _id(m: dict[str, str]) -> str:
    return f"{m['library']}:{m['text'][:50]}"


def test_every_row_cites_its_source():
    assert all(m["source"] and m["text"] and (m["expect"] or m.get("why")) for m in MESSAGES)


@pytest.mark.parametrize("m", [m for m in MESSAGES if m["expect"]], ids=_id)
def test_each_message_is_named(m, tmp_path, capsys):
    diagnoses(m["text"], m["expect"], m.get("words", []), tmp_path, capsys)


@pytest.mark.parametrize("m", [m for m in MESSAGES if not m["expect"]], ids=_id)
def test_a_lookalike_is_not_claimed(m, tmp_path, capsys):
    unclaimed(m["text"], tmp_path, capsys)

"""Builds and installers' raise sites (issue 38, fix38-build2 and fix38-build3): each message torch's cpp_extension and
headers, nvcc, CMake, the shell, pip's legacy resolver, poetry, TGI's and flash-attn's kernel checks and the kernels' CUDA
floors print for a packaging failure, as formatted (tests/fixtures/raise_sites/build-installers-signatures.toml and
build3-signatures.toml), is named by its signature with the words it gives; each lookalike stays unclaimed."""
from __future__ import annotations


import pytest

from tests.decide.explaining import message_id, table, diagnoses, unclaimed

MESSAGES = table("build-installers-signatures.toml", "build3-signatures.toml")



def test_every_row_cites_its_source():
    assert all(m["source"] and m["text"] and (m["expect"] or m.get("why")) for m in MESSAGES)


@pytest.mark.parametrize("m", [m for m in MESSAGES if m["expect"]], ids=message_id)
def test_each_message_is_named(m, tmp_path, capsys):
    diagnoses(m["text"], m["expect"], m.get("words", []), tmp_path, capsys)


@pytest.mark.parametrize("m", [m for m in MESSAGES if not m["expect"]], ids=message_id)
def test_a_lookalike_is_not_claimed(m, tmp_path, capsys):
    unclaimed(m["text"], tmp_path, capsys)

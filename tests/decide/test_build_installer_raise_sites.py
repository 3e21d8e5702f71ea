"""Builds and installers' raise sites (issue 38, fix38-build2 and fix38-build3): each message torch's cpp_extension and
headers, nvcc, CMake, the shell, pip's legacy resolver, poetry, TGI's and flash-attn's kernel checks and the kernels' CUDA
floors print for a packaging failure, as formatted (tests/fixtures/raise_sites/build-installers-signatures.toml and
build3-signatures.toml), is named by its signature with the words it gives; each lookalike stays unclaimed."""
from __future__ import annotations



from tests.decide.explaining import each_row, message_id, table, diagnoses, unclaimed

MESSAGES = table("build-installers-signatures.toml", "build3-signatures.toml")



def test_every_row_cites_its_source():
    assert all(m["source"] and m["text"] and (m["expect"] or m.get("why")) for m in MESSAGES)


def test_each_message_is_named(tmp_path, capsys):
    def check(m):
        diagnoses(m["text"], m["expect"], m.get("words", []), tmp_path, capsys)

    each_row([(message_id(m), m) for m in [m for m in MESSAGES if m["expect"]]], check)


def test_a_lookalike_is_not_claimed(tmp_path, capsys):
    def check(m):
        unclaimed(m["text"], tmp_path, capsys)

    each_row([(message_id(m), m) for m in [m for m in MESSAGES if not m["expect"]]], check)

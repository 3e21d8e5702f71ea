"""fix-system (issue 38): Fabric Manager out of step with the NVIDIA driver, and the CUDA error strings as users paste
them. The raise-site tables tests/fixtures/raise_sites/fabricmanager-signatures.toml and cudastrings-signatures.toml are
read as their rows say (named with their words, near misses unclaimed); then every word-boundary cut of each CUDA string
explain names, taken from libcudart's own table (system-family.toml): named where the words before the cut are a head
no string of another cause starts with, never named by that string's signature where they are a shared head."""

from __future__ import annotations

import tomllib

import pytest

from tests.decide.explaining import RAISE_SITES, diagnoses, explain, message_id, read_as_tabled, table

MESSAGES = table("fabricmanager-signatures.toml", "cudastrings-signatures.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m, 60) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)


def test_the_tables_hold_each_family_and_its_near_misses():
    fm = table("fabricmanager-signatures.toml")
    assert sum(1 for m in fm if m["expect"]) >= 5 and sum(1 for m in fm if not m["expect"]) >= 3
    cuda = table("cudastrings-signatures.toml")
    named = {m["expect"] for m in cuda if m["expect"]}
    assert {"no-kernel-image", "driver-insufficient", "cuda-system-not-ready", "driver-library-mismatch",
            "cuda-forward-compat-unsupported", "ptx-unsupported-toolchain", "ptx-jit-failed"} <= named
    assert {"torch", "c", "cuda-samples", "numba", "tensorflow", "cupy", "pycuda", "user"} <= {m["library"] for m in cuda}
    assert sum(1 for m in cuda if not m["expect"]) >= 10


# libcudart's own strings (nvidia-cuda-runtime-cu12 12.9.79, cudaGetErrorString of every code), as torch prints them
STRINGS = {m["text"].removeprefix("RuntimeError: CUDA error: "): m["expect"]
           for m in tomllib.loads((RAISE_SITES / "system-family.toml").read_text(encoding="utf-8"))["message"]
           if m["library"] == "cuda-runtime" and m["text"].startswith("RuntimeError: CUDA error: ")}
EXPLAINED = {s: e for s, e in STRINGS.items() if e in {
    "no-kernel-image", "driver-insufficient", "cuda-system-not-ready", "driver-library-mismatch",
    "cuda-forward-compat-unsupported", "ptx-unsupported-toolchain", "ptx-jit-failed"}}


def _cuts() -> list[tuple[str, str, bool]]:
    """(the string cut after its k-th word, its signature, whether the k words tell it), k from 2 to all but the last."""
    out = []
    for s, e in sorted(EXPLAINED.items()):
        words = s.split(" ")
        for k in range(2, len(words)):
            head = words[:k]
            telling = not any(o.split(" ")[:k] == head for o, oe in STRINGS.items() if oe != e)
            out.append((" ".join(head), e, telling))
    return out


CUTS = _cuts()


def test_the_cut_sweep_holds_telling_and_shared_heads():
    assert len(STRINGS) >= 100 and len(EXPLAINED) >= 8
    assert sum(t for _, _, t in CUTS) >= 30 and sum(not t for _, _, t in CUTS) >= 4


@pytest.mark.parametrize("prefix", ["RuntimeError: CUDA error: ", "torch.AcceleratorError: CUDA error: ", "CUDA error : ",
                                    "Error 803: ", "pycuda._driver.LogicError: cuInit failed: "])
@pytest.mark.parametrize("head, sid, telling", CUTS, ids=[f"{'tells' if t else 'shared'}:{h}" for h, _, t in CUTS])
def test_a_string_cut_after_a_word_is_named_where_its_words_tell_it(prefix, head, sid, telling, tmp_path, capsys):
    text = prefix + head
    if telling:
        diagnoses(text, sid, [], tmp_path, capsys)
    else:
        _, out = explain(text, tmp_path, capsys)
        assert f": {sid}" not in out, out


@pytest.mark.parametrize("head", sorted({h for h, _, t in CUTS if t}))
def test_a_telling_head_without_a_printer_before_it_is_not_claimed(head, tmp_path, capsys):
    """The words alone, with no CUDA printer's prefix before them, may be prose: the cut reading needs the prefix."""
    _, out = explain(f"I read that {head}", tmp_path, capsys)
    assert not any(f": {e}" in out for e in EXPLAINED.values()), out

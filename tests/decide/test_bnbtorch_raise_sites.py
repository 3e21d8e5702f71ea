"""bitsandbytes' load and setup messages across its releases (0.35-0.42 cuda_setup/main.py, 0.43-0.50 cextension.py and
cuda_specs.py) and torch's device messages (torch/serialization.py's deserializing checks, torch/cuda/__init__.py's
_lazy_init and capability warnings): each message (tests/fixtures/raise_sites/bnbtorch-signatures.toml, from their
sources) is named by the signature it should get, with the CUDA, library or build it names; notices, user errors and
another backend's lines stay unclaimed."""

from __future__ import annotations


from tests.decide.explaining import each_row, message_id, read_as_tabled, table

MESSAGES = table("bnbtorch-signatures.toml")


def test_the_table_covers_both_libraries_and_their_near_misses():
    assert {"bitsandbytes", "torch"} <= {m["library"] for m in MESSAGES}
    assert all(m["source"] and m["text"] for m in MESSAGES)
    assert sum(not m["expect"] for m in MESSAGES) >= 8
    assert {"driver-not-found", "bitsandbytes-cuda-setup", "torch-cpu-only"} <= {m["expect"] for m in MESSAGES}


def test_each_message_is_read_as_tabled(tmp_path, capsys):
    def check(m):
        read_as_tabled({**m, "text": str(m["text"]).replace("\\n", "\n")}, tmp_path, capsys)

    each_row([(message_id(m, 60), m) for m in MESSAGES], check)

"""The messages of tests/fixtures/raise_sites/system3-signatures.toml (issue 38, branch fix38-system3): NVML not
loadable, a torch without CUDA (a CPU, DirectML or ROCm build), cuDNN 8's sub-library lines, NumPy's dtype-size check
cut short, flash-attn's aliased module, ggml's and ollama's words for a GPU the build lacks: each named with its
words, and each line that alone is no failure left unclaimed."""

from __future__ import annotations



from tests.decide.explaining import each_row, table, diagnoses, unclaimed

MESSAGES = table("system3-signatures.toml")


def test_each_message(tmp_path, capsys):
    def check(m):
        assert m["source"]
        if m["expect"]:
            diagnoses(m["text"], m["expect"], m.get("words", []), tmp_path, capsys)
        else:
            unclaimed(m["text"], tmp_path, capsys)

    each_row([(f"{m['library']}:{m['text'][-60:]}", m) for m in MESSAGES], check)

"""The messages of tests/fixtures/raise_sites/iso-signatures.toml (issue 38, branch fix-iso): each compiled package's own
words where its setup.py finds no torch (auto-gptq, auto-round, DeepSpeed, kaolin, nvdiffrast, exllamav2, GPTQModel),
pip's metadata step and setuptools' backend frames ending in No module named 'torch', and a companion's API mismatch read
in the direction the harvested wheels tell (cumm) or in none (mmcv): each named with its words, each near miss left
unclaimed."""

from __future__ import annotations

from tests.decide.explaining import explain, table

MESSAGES = table("iso-signatures.toml")



def test_no_harvest_no_direction(tmp_path, capsys):
    """Where no wheels were read of the package imported from, the diagnosis names both packages and their versions and
    says the installed release is not the one the importer was written against, with the remedy that works either way."""
    text = ("mmdet 3.3.0\nmmcv 2.2.0\n"
            "  File \"/opt/conda/lib/python3.10/site-packages/mmdet/models/layers/transformer.py\", line 12, in <module>\n"
            "    from mmcv.ops import MultiScaleDeformableAttention\n"
            "ImportError: cannot import name 'MultiScaleDeformableAttention' from 'mmcv.ops' "
            "(/opt/conda/lib/python3.10/site-packages/mmcv/ops/__init__.py)")
    code, out = explain(text, tmp_path, capsys)
    assert code == 1, out
    assert "mmcv" in out and "mmdet" in out and "not the release" in out and "pip show mmdet" in out, out
    assert "newer than the one that code was written against" not in out, out

"""companion-too-old and companion-api-removed read when a companion's top-level name first appeared (and went), from
glmcompat/matrix/data/exports.toml (harvested from the real wheels' __init__.py by scripts/harvest_exports.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.matrix.load import load_facts
from tests.decide.explaining import diagnoses, explain, message_id, read_as_tabled, table, unclaimed

VLLM_FRAME = ('  File "/venv/lib/python3.12/site-packages/vllm/transformers_utils/config.py", line 18, in <module>\n'
              "    from transformers import {name}, PretrainedConfig\n")
ERROR = "ImportError: cannot import name '{name}' from 'transformers' (/venv/lib/python3.12/site-packages/transformers/__init__.py)"


def test_the_harvested_releases() -> None:
    facts = load_facts()
    gc = facts.export("transformers", "GenerationConfig")
    assert gc is not None and gc.since == "4.25.0" and gc.until is None and "transformers-4.25.0" in gc.source
    cd = facts.export("huggingface_hub", "cached_download")
    assert cd is not None and cd.until == "0.26.0"
    assert facts.export("transformers", "NoSuchNameAnywhere") is None


def test_a_name_every_release_the_importer_admits_has_is_not_claimed(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # every vllm release the matrix has requires transformers >= 4.40.0; GenerationConfig is in 4.25.0 on: the import
    # fails for another reason (vllm-project/vllm#40331: a race of parallel imports)
    unclaimed(VLLM_FRAME.format(name="GenerationConfig") + ERROR.format(name="GenerationConfig"), tmp_path, capsys)


@pytest.mark.parametrize(("shown", "claimed"), [("4.24.0", True), ("4.30.2", False)])
def test_the_installed_release_decides(shown: str, claimed: bool, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    text = f"transformers=={shown}\n" + ERROR.format(name="GenerationConfig")
    code, out = explain(text, tmp_path, capsys)
    assert (": companion-too-old" in out) is claimed, out
    if claimed:
        assert "GenerationConfig is in transformers >= 4.25.0" in out and "transformers>=4.25.0" in out, out
    else:
        assert code == 0, out


def test_a_name_newer_than_what_the_importer_admits_names_its_first_release(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    # EncoderDecoderCache is in transformers 4.43.0 on; peft has no release rows in the matrix: nothing admits it
    diagnoses('  File "/env/lib/python3.10/site-packages/peft/peft_model.py", line 37, in <module>\n'
              "    from transformers import Cache, DynamicCache, EncoderDecoderCache, PreTrainedModel\n"
              + ERROR.format(name="EncoderDecoderCache"), "companion-too-old",
              ["EncoderDecoderCache is in transformers >= 4.43.0", "transformers>=4.43.0"], tmp_path, capsys)


def test_an_unharvested_name_keeps_the_plain_claim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(ERROR.format(name="GlmMoeDsaConfig"), "companion-too-old", ["transformers", "GlmMoeDsaConfig"],
              tmp_path, capsys)


def test_a_removed_name_names_the_release_that_removed_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses("ImportError: cannot import name 'cached_download' from 'huggingface_hub' "
              "(/env/lib/site-packages/huggingface_hub/__init__.py)", "companion-api-removed",
              ["huggingface-hub 0.26.0 removed cached_download", "huggingface-hub<0.26.0"], tmp_path, capsys)


def test_a_name_the_installed_release_no_longer_has(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # TFPreTrainedModel: in transformers 4.x's __init__.py, gone from 5.0.0's: the companion newer than the code, the
    # removal's own id (companion-api-removed's cause: "a release newer than the one the importing code was written
    # against removed or moved it"), for a tracked companion too (fix-m; diagnose's SUPERSEDED drops the other direction)
    out = diagnoses("transformers==5.0.0\n" + ERROR.format(name="TFPreTrainedModel"), "companion-api-removed",
                    ["transformers 5.0.0 removed TFPreTrainedModel", "transformers<5.0.0"], tmp_path, capsys)
    assert ": companion-too-old" not in out, out


EXPORT_MESSAGES = table("exports-signatures.toml")


@pytest.mark.parametrize("m", EXPORT_MESSAGES, ids=[message_id(m, 70) for m in EXPORT_MESSAGES])
def test_each_export_message(m: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """tests/fixtures/raise_sites/exports-signatures.toml: a name a later release added is companion-too-old with that
    release as the floor (for huggingface-hub too, which the matrix tracks only by its exports), never the other
    direction; a removed name is companion-api-removed; a name the installed release has is not claimed."""
    read_as_tabled(m, tmp_path, capsys)


def test_the_harvest_reads_huggingface_hubs_lazy_table() -> None:
    """huggingface_hub exports through its __init__'s _SUBMOD_ATTRS (a dict literal of submodule -> names), not __all__
    alone: the harvester reads it, so a name first exported by a submodule's entry has its first release."""
    import importlib.util  # lazy: the harvester is a script, loaded only here

    path = Path(__file__).resolve().parents[2] / "scripts" / "harvest_exports.py"
    spec = importlib.util.spec_from_file_location("harvest_exports", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    source = (b"_SUBMOD_ATTRS = {\n    \"hf_api\": [\"HfApi\"],\n    \"serialization\": [\n"
              b"        \"split_torch_state_dict_into_shards\",\n    ],\n}\n"
              b"_SUBMOD_ATTRS[\"x\"] = [\"late_name\"]\n")
    names, _ = module.exports(source)
    assert names == {"HfApi": "hf_api", "split_torch_state_dict_into_shards": "serialization", "late_name": "x"}
    row = load_facts().export("huggingface_hub", "split_torch_state_dict_into_shards")
    assert row is not None and row.since == "0.21.0" and row.until is None

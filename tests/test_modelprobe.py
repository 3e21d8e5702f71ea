"""The model probe (glmcompat.ops.modelprobe) on real excerpts of the files it reads, and the [[model]] rows it wrote.

The excerpts are recorded from the published wheels by scripts/record_modelprobe_fixtures.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from glmcompat.decide.rules import evaluate
from glmcompat.matrix.load import load_facts
from glmcompat.ops import modelprobe as mp

EXCERPTS = {(c["package"], c["version"], c["member"]): c["text"] for c in
            json.loads((Path(__file__).parent / "fixtures" / "modelprobe" / "excerpts.json").read_text())}
SERVED = ("deepseek_v2 deepseek_v3 deepseek_v32 qwen2 qwen2_moe qwen3 qwen3_moe qwen3_next qwen3_vl_moe qwen3_5_moe "
          "glm4_moe glm_moe_dsa gpt_oss llama llama4 mistral3 mixtral gemma3 minimax_m2 kimi_linear").split()


def _text(package, version, member):
    return EXCERPTS[(package, version, member)]


def test_transformers_config_mapping_both_layouts():
    new = mp.transformers_model_types([_text("transformers", "5.2.0", "transformers/models/auto/configuration_auto.py")])
    old = mp.transformers_model_types([_text("transformers", "5.1.0", "transformers/models/auto/configuration_auto.py")])
    gen = mp.transformers_model_types([_text("transformers", "5.19.0", "transformers/models/auto/auto_mappings.py")])
    assert new == {"glm4_moe", "glm_moe_dsa", "llama"}  # ("llama", "LLaMA") of MODEL_NAMES_MAPPING is no config
    assert old == {"glm4_moe", "llama"}
    assert gen == {"glm_moe_dsa", "kimi_linear", "qwen3_moe"}


def test_engine_registries():
    assert mp.sglang_entry_classes(_text("sglang", "0.5.9", "sglang/srt/models/glm4_moe.py")) == {
        "Glm4MoeForCausalLM", "GlmMoeDsaForCausalLM"}
    assert mp.sglang_entry_classes("EntryClass = LlamaForCausalLM\nEntryClass += (mod.Phi3ForCausalLM,)\n") == {
        "LlamaForCausalLM", "Phi3ForCausalLM"}
    runner = mp.sglang_runner_architectures(_text("sglang", "0.1.9", "sglang/srt/managers/router/model_runner.py"))
    assert {"LlamaForCausalLM", "MixtralForCausalLM", "QWenLMHeadModel"} <= runner
    reg = mp.vllm_architectures(_text("vllm", "0.16.0", "vllm/model_executor/models/registry.py"))
    assert {"GlmMoeDsaForCausalLM", "AquilaForCausalLM", "LlamaForCausalLM"} <= reg
    old = mp.vllm_architectures(_text("vllm", "0.2.5", "vllm/model_executor/models/__init__.py"))
    assert {"LlamaForCausalLM", "MixtralForCausalLM"} <= old and "_MODELS" not in old


def test_engine_config_registries():
    cfg = mp.config_registry(_text("vllm", "0.11.1", "vllm/transformers_utils/config.py"))
    assert {"kimi_linear", "chatglm", "RefinedWeb"} <= cfg
    assert mp.config_registry('_CONFIG_REGISTRY: Dict = {\n    ChatGLMConfig.model_type: ChatGLMConfig,\n}\n'
                              '_CONFIG_REGISTRY["deepseek_v32"] = Alias\n') == {"deepseek_v32"}
    assert mp.declared_model_types(_text("sglang", "0.5.4.post2", "sglang/srt/configs/kimi_linear.py")) == {"kimi_linear"}


def _known(v, names):
    return mp.Known("vllm", v, f"vllm-{v}.whl", None, frozenset(names), (mp.VLLM_REGISTRY,), 10)


def test_first_knowing_bisects_and_reads_the_one_before():
    vs = [f"0.{i}.0" for i in range(1, 21)]
    reads = []

    def read(v):
        reads.append(v)
        return _known(v, {"A"} if int(v.split(".")[1]) >= 13 else set())

    pr = mp.Prober("vllm", vs, read)
    f = pr.first_knowing(["A"])
    assert f.first is not None and f.first.version == "0.13.0" and f.before is not None and f.before.version == "0.12.0"
    assert len(reads) == len(set(reads)) <= 7  # each release read once, log2(20) + the newest + the one before
    assert pr.first_knowing(["B"]).first is None
    assert pr.first_knowing(["B", "A"]).first.version == "0.13.0"  # any of the architectures


def test_model_row_cites_each_package():
    t = mp.First("transformers", "x", mp.Known("transformers", "5.2.0", "transformers-5.2.0-py3-none-any.whl", None,
                                               frozenset({"x"}), ("f.py",), 1),
                 mp.Known("transformers", "5.1.0", "t.whl", None, frozenset(), ("f.py",), 1),
                 mp.Known("transformers", "5.3.0", "t.whl", None, frozenset({"x"}), ("f.py",), 1))
    v = mp.First("vllm", "X", None, None, _known("0.2.0", set()))
    row = mp.model_row("x", ["X"], {"transformers": t, "vllm": v}, {"failure": "KeyError: 'x'"})
    assert row is not None and row["transformers"] == ">=5.2.0" and "vllm" not in row
    assert "transformers-5.2.0-py3-none-any.whl f.py names x (transformers 5.1.0 does not)" in row["source"]
    assert "no X (newest release read)" in row["source"] and row["failure"] == "KeyError: 'x'"


@pytest.fixture(scope="module")
def facts():
    return load_facts()


@pytest.mark.parametrize("model", SERVED)
def test_check_judges_each_served_model(facts, model):
    row = facts.model(model)
    assert row.architectures and row.source.count(".whl") >= 3 and "FACTS" not in row.source
    first = SpecifierSet(row.transformers)
    old = next(v for v in ("4.27.0", "4.35.0", "4.49.0", "4.50.0", "4.53.0", "4.56.0", "4.57.0", "5.1.0", "5.16.0")
               if not first.contains(v))  # a transformers before the row's bound
    found = evaluate({"transformers": old}, target="sm90", model=model, matrix=facts, allow_unknown=True)
    assert [f.rule for f in found if f.rule == "model"] == ["model"], found
    new = evaluate({"transformers": "5.24.0"}, target="sm90", model=model, matrix=facts, allow_unknown=True)
    assert not [f for f in new if f.rule == "model"]

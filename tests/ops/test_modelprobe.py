"""The model probe (glmcompat.ops.modelprobe) on real excerpts of the files it reads, and the [[model]] rows it wrote.

The excerpts are recorded from the published wheels by scripts/record_modelprobe_fixtures.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from glmcompat.decide.rules import evaluate
from glmcompat.edges.cache import Cache
from glmcompat.edges.index import IndexClient
from glmcompat.matrix.curate import plain_row, render_row
from glmcompat.matrix.load import load_facts
from glmcompat.matrix.rows import ModelSupport
from glmcompat.matrix.schema import load_matrix
from glmcompat.model.errors import MatrixError
from glmcompat.ops import modelprobe as mp
from glmcompat.ops import refresh as rf
from tests.abifakes import BASE, Transport, wheel

FIXTURES = Path(__file__).parents[1] / "fixtures" / "modelprobe"
EXCERPTS = {(c["package"], c["version"], c["member"]): c["text"] for c in
            json.loads((FIXTURES / "excerpts.json").read_text())}
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
    old = ModelSupport(evidence="metadata", source="s", model_type="x", transformers="<0", failure="KeyError: 'x'")
    row = mp.model_row("x", ["X"], {"transformers": t, "vllm": v}, old)
    assert row is not None and row.transformers == ">=5.2.0" and row.vllm is None
    assert "transformers-5.2.0-py3-none-any.whl f.py names x (transformers 5.1.0 does not)" in row.source
    assert "no X (newest release read)" in row.source and row.failure == "KeyError: 'x'"
    assert row.architectures == ("X",) and row.evidence == "metadata"


def test_a_row_the_schema_rejects_is_never_made() -> None:
    """A derived row is checked as a matrix row (curate.check_row): a model type the schema refuses raises, naming
    the field, instead of reaching a file."""
    k = mp.Known("transformers", "5.2.0", "t.whl", None, frozenset({"Not A Type"}), ("f.py",), 1)
    t = mp.First("transformers", "Not A Type", k, None, k)
    with pytest.raises(MatrixError, match="model_type"):
        mp.model_row("Not A Type", ["X"], {"transformers": t})


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


# -- matrix refresh updates the [[model]] rows in place, from wheels holding the recorded excerpts -----------------

GLM_SOURCE = ("transformers-5.2.0-py3-none-any.whl transformers/models/auto/configuration_auto.py names glm_moe_dsa "
              "(transformers 5.1.0 does not); sglang-0.1.9-py3-none-any.whl sglang/srt/managers/router/model_runner.py: "
              "no GlmMoeDsaForCausalLM (newest release read); vllm-0.2.5-cp311-cp311-manylinux1_x86_64.whl "
              "vllm/model_executor/models/__init__.py: no GlmMoeDsaForCausalLM (newest release read) "
              "(`python scripts/model_support.py glm_moe_dsa`)")
MODELS_TOML = f"""schema = 1

[[model]]
model_type = "glm_moe_dsa"
architectures = ["GlmMoeDsaForCausalLM"]
transformers = ">=5.2.0"
evidence = "metadata"
source = "{GLM_SOURCE}"
failure = "KeyError: 'glm_moe_dsa'"

# the oldest releases serve llama
[[model]]
model_type = "llama"
architectures = ["LlamaForCausalLM"]
transformers = ">=5.1.0"
sglang = ">=0.1.9"
vllm = ">=0.2.5"
evidence = "metadata"
source = "s"
"""


def _served(releases: dict[str, list[str]]) -> dict[str, bytes]:
    """{wheel: bytes} of ``releases`` ({package: [version]}): each wheel holds the recorded excerpts of its release."""
    out: dict[str, bytes] = {}
    for c in json.loads((FIXTURES / "excerpts.json").read_text()):
        if c["version"] in releases.get(c["package"], []):
            out[c["wheel"]] = wheel({c["member"]: c["text"].encode()}, c["package"], c["version"])
    return out


def test_refresh_updates_model_rows_when_a_release_serves_the_model(tmp_path: Path) -> None:
    """Index with the old releases: nothing changes. sglang 0.5.4.post2 and 0.5.9, vLLM 0.11.1 and 0.16.0 arrive:
    the glm_moe_dsa row gains the first release of each that serves it (read from the excerpts of their
    wheels, the release before cited as not serving it), in place; the llama row and the file's other lines stay; a
    second run reads no wheel (cached by sha256) and changes nothing."""
    d = tmp_path / "matrix"
    d.mkdir()
    path = d / "models.toml"
    path.write_text(MODELS_TOML)
    cache = Cache(tmp_path / "cache")
    old = {"transformers": ["5.1.0", "5.2.0"], "sglang": ["0.1.9"], "vllm": ["0.2.5"]}
    with IndexClient(BASE, client=Transport(_served(old)).client(), cache=cache) as ic:
        updates, _ = rf.refresh_models(ic, cache, [path], rf.MODEL_PACKAGES)
    assert updates == [] and path.read_text() == MODELS_TOML

    new = {**old, "sglang": ["0.1.9", "0.5.4.post2", "0.5.9"], "vllm": ["0.2.5", "0.11.1", "0.16.0"]}
    transport = Transport(_served(new))
    with IndexClient(BASE, client=transport.client(), cache=Cache(tmp_path / "cache2")) as ic:
        updates, fetched = rf.refresh_models(ic, Cache(tmp_path / "cache2"), [path], rf.MODEL_PACKAGES)
    assert [(u.model_type, u.changed) for u in updates] == [
        ("glm_moe_dsa", {"sglang": (None, ">=0.5.9"), "vllm": (None, ">=0.16.0")})]
    assert fetched > 0
    row = load_matrix([path]).plain()["model"][0]
    assert (row["transformers"], row["sglang"], row["vllm"], row["failure"]) == (">=5.2.0", ">=0.5.9", ">=0.16.0",
                                                                               "KeyError: 'glm_moe_dsa'")
    assert row["source"] == (
        "transformers-5.2.0-py3-none-any.whl transformers/models/auto/configuration_auto.py names glm_moe_dsa "
        "(transformers 5.1.0 does not); sglang-0.5.9-py3-none-any.whl sglang/srt/models/glm4_moe.py names "
        "GlmMoeDsaForCausalLM (sglang 0.5.4.post2 does not); vllm-0.16.0-cp38-abi3-manylinux_2_31_x86_64.whl "
        "vllm/model_executor/models/registry.py names GlmMoeDsaForCausalLM (vllm 0.11.1 does not) "
        "(`python scripts/model_support.py glm_moe_dsa`)")
    after = path.read_text()
    assert after.endswith(MODELS_TOML[MODELS_TOML.index("\n# the oldest"):])  # the rest of the file as it was
    assert "transformers-5.1.0" not in " ".join(transport.calls)  # a bound the row has costs no read

    transport.calls.clear()
    with IndexClient(BASE, client=transport.client(), cache=Cache(tmp_path / "cache2")) as ic:
        again, fetched = rf.refresh_models(ic, Cache(tmp_path / "cache2"), [path], rf.MODEL_PACKAGES)
    assert again == [] and fetched == 0 and path.read_text() == after
    assert not any(c.endswith(".whl") for c in transport.calls)


def test_refresh_reports_model_updates_and_an_index_failure(tmp_path: Path) -> None:
    """refresh() runs the model update for the packages it covers (only transformers here: no per-release rows) and
    says so in its report; a wheel the index cannot serve leaves the rows as they were and says why."""
    d = tmp_path / "matrix"
    d.mkdir()
    (d / "models.toml").write_text(MODELS_TOML.replace('transformers = ">=5.2.0"', 'transformers = "<0"'))
    cache = Cache(tmp_path / "cache")
    with IndexClient(BASE, client=Transport(_served({"transformers": ["5.1.0", "5.2.0"]})).client(),
                     cache=cache) as ic:
        report = rf.refresh(index=ic, cache=cache, matrix=d, packages=["transformers"], progress=False)
    assert [(u.model_type, u.changed) for u in report.models] == [("glm_moe_dsa", {"transformers": ("<0", ">=5.2.0")})]
    assert report.to_json()["models"][0]["changed"] == {"transformers": {"before": "<0", "after": ">=5.2.0"}}
    assert 'transformers = ">=5.2.0"' in (d / "models.toml").read_text()
    gone = Transport(_served({"transformers": ["5.1.0", "5.2.0", "5.19.0"]}))
    gone.files.clear()  # the pages list the wheels; the wheels cannot be read
    (d / "models.toml").write_text(MODELS_TOML.replace('transformers = ">=5.2.0"', 'transformers = "<0"'))
    with IndexClient(BASE, client=gone.client(), cache=Cache(tmp_path / "c2")) as ic:
        report = rf.refresh(index=ic, cache=Cache(tmp_path / "c2"), matrix=d, packages=["transformers"],
                            progress=False)
    assert report.models == [] and report.models_failed and "transformers-5.19.0" in report.models_failed, report
    assert 'transformers = "<0"' in (d / "models.toml").read_text()


# -- the bytes a [[model]] update writes: those the dict-based code (main at 3ac2c76) wrote on the same inputs -------

RELEASES = {  # engines: the newest sglang and vLLM serve glm_moe_dsa; configs: the newest carry kimi_linear's config
    "engines": {"transformers": ["5.1.0", "5.2.0", "5.19.0"], "sglang": ["0.1.9", "0.5.4.post2", "0.5.9"],
                "vllm": ["0.2.5", "0.11.1", "0.16.0"]},
    "configs": {"transformers": ["5.1.0", "5.2.0", "5.19.0"], "sglang": ["0.1.9", "0.5.4.post2"],
                "vllm": ["0.2.5", "0.11.1"]},
}


@pytest.mark.parametrize("releases", sorted(RELEASES))
def test_refresh_writes_the_bytes_the_plain_rows_wrote(tmp_path: Path, releases: str) -> None:
    """refresh_before.toml refreshed against wheels holding the recorded excerpts is byte for byte
    refresh_after_<releases>.toml, the file the dict-based refresh wrote from the same wheels: bounds, config bounds,
    a transformers "<0" bound, a row without an architectures key, a row written in another key order, the
    comments and the untouched row."""
    path = tmp_path / "models.toml"
    path.write_bytes((FIXTURES / "refresh_before.toml").read_bytes())
    cache = Cache(tmp_path / "cache")
    with IndexClient(BASE, client=Transport(_served(RELEASES[releases])).client(), cache=cache) as ic:
        updates, _ = rf.refresh_models(ic, cache, [path], rf.MODEL_PACKAGES)
    assert len(updates) >= 2
    assert path.read_bytes() == (FIXTURES / f"refresh_after_{releases}.toml").read_bytes()


@pytest.mark.parametrize("releases", sorted(RELEASES))
def test_derived_rows_render_the_bytes_the_plain_rows_rendered(tmp_path: Path, releases: str) -> None:
    """The rows scripts/model_support.py derives (derive_rows), rendered as it prints them, are byte for byte
    derived_<releases>.toml, what the dict-based derivation printed from the same wheels (the glm_moe_dsa row keeps
    the matrix row's failure; llama and nope: no row)."""
    wanted = {"glm_moe_dsa": ("GlmMoeDsaForCausalLM",), "kimi_linear": ("KimiLinearForCausalLM",),
              "llama": ("LlamaForCausalLM", "MixtralForCausalLM"), "nope": ("NopeForCausalLM",)}
    old = {"glm_moe_dsa": ModelSupport(evidence="metadata", source="s", model_type="glm_moe_dsa",
                                       transformers=">=5.2.0", failure="KeyError: 'glm_moe_dsa'")}
    with IndexClient(BASE, client=Transport(_served(RELEASES[releases])).client(), cache=Cache(tmp_path)) as ic:
        rows, fetched = mp.derive_rows(ic, wanted, old, jobs=1)
    assert fetched > 0
    text = "".join(f"# {mt}: none\n" if r is None else render_row("model", plain_row(r)) for mt, r in rows.items())
    assert text == (FIXTURES / f"derived_{releases}.toml").read_text()

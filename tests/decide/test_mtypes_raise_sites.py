"""The messages of tests/fixtures/raise_sites/mtypes-signatures.toml (issue 38, branch fix-mtypes): transformers' unknown
model type named with the first release that knows it (the [[model_types]] row, harvested from every minor release's
CONFIG_MAPPING_NAMES), a removed one bounded from above, and a type no release knows (a checkpoint's own remote-code
type, a typo) left unclaimed; plus the row itself: loaded, checked, and in agreement with the [[model]] rows."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from glmcompat.matrix.load import load_facts
from glmcompat.matrix.schema import load_file
from glmcompat.model.errors import MatrixError
from tests.decide.explaining import table

MESSAGES = table("mtypes-signatures.toml")
ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "glmcompat" / "matrix" / "data" / "transformers-model-types.toml"



@pytest.mark.parametrize(("model_type", "first", "removed"), [
    ("bert", "4.0.0", ""),            # in 4.0.0's CONFIG_MAPPING (class objects, not names)
    ("mpnet", "4.1.0", ""),
    ("megatron_bert", "4.6.0", "4.9.0"),  # renamed megatron-bert at 4.9.0
    ("megatron-bert", "4.9.0", ""),
    ("qwen2_5_omni", "4.52.1", ""),   # 4.52.0 has no wheel: the minor's first release is 4.52.1
    ("transfo-xl", "4.0.0", "5.0.0"),  # removed in 5.0
    ("glm_moe_dsa", "5.2.0", ""),
    ("qwen3_5_vision", "5.6.0", ""),  # 5.6's generated auto_mappings.py
    ("mlcd", "4.52.1", ""),           # 5.6 on: added by configuration_auto.py's CONFIG_MAPPING_NAMES.update
    ("openvla", "", ""),              # a checkpoint's own type: in no release
])
def test_model_type_known(model_type, first, removed):
    facts = load_facts()
    got = facts.model_type_known(model_type)
    assert got is not None and got[:2] == (first, removed)
    assert got[2] == facts.rows("model_types")[0].newest


def test_model_rows_agree_with_the_harvest():
    """Each [[model]] row's transformers floor (bisected over every final release by scripts/model_support.py) is the
    first release of the harvest that knows its model type: two readings of the same files agree."""
    facts = load_facts()
    for row in facts.rows("model"):
        known = facts.model_type_known(row.model_type)
        assert known is not None and row.transformers == f">={known[0]}", (row.model_type, row.transformers, known)


def test_the_row_is_checked(tmp_path):
    """The row's own checks: newest is the last harvested release, each release named is harvested, a type is first
    known once."""
    text = DATA.read_text(encoding="utf-8")
    good = tmp_path / "good.toml"
    good.write_text(text, encoding="utf-8")
    load_file(good)
    for i, bad in enumerate((text.replace('newest = "', 'newest = "9', 1),
                             text.replace('[model_types.first]\n"4.0.0"', '[model_types.first]\n"4.0.7"', 1),
                             text.replace('"4.1.0" = ["mpnet"', '"4.1.0" = ["bert", "mpnet"', 1))):
        assert bad != text
        f = tmp_path / f"bad{i}.toml"
        f.write_text(bad, encoding="utf-8")
        with pytest.raises(MatrixError):
            load_file(f)


def _harvester():
    spec = importlib.util.spec_from_file_location("harvest_mtypes", ROOT / "scripts" / "harvest_transformers_model_types.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_harvest_reads_every_shape():
    """The harvester's parse of the three shapes transformers' file took: 4.0's CONFIG_MAPPING of (type, class) pairs,
    4.12's CONFIG_MAPPING_NAMES of (type, "Class") pairs, 5.x's CONFIG_MAPPING_NAMES.update({...}) and dict wrapping;
    a type named elsewhere (a comment, another table) is not read."""
    h = _harvester()
    v4_0 = ('CONFIG_MAPPING = OrderedDict(\n    [\n        ("retribert", RetriBertConfig),\n        ("t5", T5Config),\n'
            '    ]\n)\nMODEL_NAMES_MAPPING = OrderedDict([("notatype", "X")])\n')
    assert h.table_keys(v4_0) == {"retribert", "t5"}
    v4_12 = ('CONFIG_MAPPING_NAMES = OrderedDict(\n    [\n        # Add configs here\n        ("fnet", "FNetConfig"),\n'
             '    ]\n)\nCONFIG_ARCHIVE_MAP_MAPPING_NAMES = OrderedDict([("other", "X")])\n'
             'CONFIG_MAPPING = _LazyConfigMapping(CONFIG_MAPPING_NAMES)\n')
    assert h.table_keys(v4_12) == {"fnet"}
    v5 = ('from .auto_mappings import CONFIG_MAPPING_NAMES\nCONFIG_MAPPING_NAMES.update(\n    {\n        "mlcd": '
          '"MLCDVisionConfig",\n    }\n)\nCONFIG_MAPPING_NAMES = OrderedDict(**{"gpt-sw3": "GPT2Config"}, '
          '**CONFIG_MAPPING_NAMES)\nSPECIAL_MODEL_TYPE_TO_MODULE_NAME.update({"x": "y"})\n')
    assert h.table_keys(v5) == {"mlcd", "gpt-sw3"}
    assert h.first_of_each_minor(["3.5.1", "4.0.0", "4.0.1", "4.14.1", "4.15.0rc1", "4.15.0", "5.0.0.dev0"]) == \
        ["4.0.0", "4.14.1", "4.15.0"]

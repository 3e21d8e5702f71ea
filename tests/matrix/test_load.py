"""The shipped matrix holds the hand-transcribed facts of tests/data/facts_tables.json; the loader rejects bad input with file:line."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.version import Version

import glmcompat
from glmcompat.matrix.load import cache_entry_name, load_facts
from glmcompat.matrix.locations import seal
from glmcompat.matrix.schema import load_file, load_matrix
from glmcompat.matrix.store import cache_dir
from glmcompat.matrix.view import Facts
from glmcompat.model.errors import InputError, MatrixError

from tests.conftest import ROOT, run_cli

FACTS = json.loads((Path(__file__).parents[1] / "data" / "facts_tables.json").read_text())


@pytest.fixture(scope="module")
def m() -> glmcompat.Matrix:
    return load_matrix()


@pytest.fixture(scope="module")
def facts(m: glmcompat.Matrix) -> Facts:
    return m.view()


@pytest.mark.parametrize("package,versions,torch,cuda,sass", FACTS["kernels"])
def test_kernel_rows(m, facts, package, versions, torch, cuda, sass):
    for v in versions:
        k = m.kernel_for(package, v)
        assert k is not None, f"{package} {v} missing"
        assert (m.built_for(package, v), k.cuda) == (torch, cuda)
        assert facts.gpu_code(package, v)[:2] == (tuple(sass), ())


@pytest.mark.parametrize("versions,cuda,present,absent", FACTS["torch"])
def test_torch_rows(facts, versions, cuda, present, absent):
    for v in versions:
        tb = facts.torch_build(v)
        assert tb is not None and tb.cuda == cuda
        sass, _, _ = facts.gpu_code("torch", v)
        assert set(present) <= set(sass) and not set(absent) & set(sass)
    assert facts.gpu_code("torch", versions[0] + "+cpu")[:2] == ((), ())
    assert facts.torch_build(versions[0] + "+cu999") is None


@pytest.mark.parametrize("package,version,torch", FACTS["family"])
def test_family_rows(facts, package, version, torch):
    spec, row = facts.family(package, version)
    assert spec == f"=={torch}" and row.evidence in ("metadata", "inferred")
    assert facts.family_for_torch(package, torch) == version


@pytest.mark.parametrize("package,version,torch,compatible,missing", FACTS["abi_probes"])
def test_abi_probes(facts, package, version, torch, compatible, missing):
    p = facts.abi_verdict(package, version, torch)
    assert p is not None and (p.compatible, p.missing, p.evidence) == (compatible, missing, "abi-probe")


@pytest.mark.parametrize("version,pins", FACTS["sglang_releases"])
def test_sglang_releases(facts, version, pins):
    (r,) = [r for r in facts.rows("release") if r.package == "sglang" and Version(r.version) == Version(version)]
    assert set(pins) <= set(r.requires)


def test_targets_and_rules(m, facts):
    names = [(t.name, t.compute_capability) for t in m.targets()]
    assert names == [tuple(x) for x in FACTS["targets"]]
    for name, smem in FACTS["smem"]:
        assert m.get_target(name).smem_per_block_optin == smem
    assert [e.packages for e in facts.rows("equal_version")] == [("flashinfer-python", "flashinfer-cubin")]
    glm = facts.model("glm_moe_dsa")
    assert (glm.transformers, glm.sglang) == (">=5.2.0", ">=0.5.9")
    (fix,) = [r for r in facts.target_requirements("sm120") if r.package == "sglang"]
    assert fix.specifier == ">=0.5.9" and "14311" in fix.reason and fix.evidence == "upstream-fix"
    s = facts.stack("glm5-sglang-0.5.9")
    assert s.pins["torch"] == "2.9.1" and s.pins["sgl-kernel"] == "0.3.21" and s.overrides == {"transformers": "5.2.0"}
    assert {"sm90", "sm100", "sm120"} <= set(s.targets)
    assert len(m.stack) >= 3
    ids = {sig.id for sig in m.signature}
    assert {"torchvision-nms-missing", "undefined-symbol", "model-type-unknown", "smem-hardware-limit",
            "lxc-cuda-init-hmm", "torchaudio-load-failure"} <= ids


def test_every_fact_has_evidence_and_source(m):
    from glmcompat.matrix.schema import TABLES

    n = 0
    for row in (r for t in TABLES for r in getattr(m, t)):
        assert row.evidence in ("metadata", "abi-probe", "arch-probe", "observed-run", "upstream-fix", "inferred",
                                "documentation")
        assert row.source.strip()
        n += 1
    assert n > 50


def test_signatures_match_the_real_error_texts(m):
    texts = {
        "torchvision-nms-missing": "RuntimeError: operator torchvision::nms does not exist",
        "torchaudio-load-failure": "OSError: Could not load this library: /x/torchaudio/lib/libtorchaudio.so",
        "undefined-symbol": "ImportError: common_ops.abi3.so: undefined symbol: _ZN3c1013MessageLoggerC1EPKcii",
        "model-type-unknown": "KeyError: 'glm_moe_dsa'",
        "smem-hardware-limit": "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 106496, Hardware limit: 101376",
    }
    for sig in m.signature:
        if sig.id in texts:
            assert re.search(sig.pattern, texts[sig.id]), sig.id


# --- bad input: exit 2, one line naming file:line and the value ---------------------------------------------

def _broken_copy(tmp_path: Path, file: str, old: str, new: str) -> Path:
    d = tmp_path / "matrices"
    shutil.copytree(ROOT / "glmcompat" / "matrix" / "data", d)
    text = (d / file).read_text()
    assert old in text
    (d / file).write_text(text.replace(old, new, 1))
    return d / file


BROKEN = [
    # (file, old, new, text of the line the error must point at, text the message must quote)
    ("kernels.toml", 'torch = "2.9.1"\ncuda = "12.9"', 'torch = "2.9.1x"\ncuda = "12.9"', 'torch = "2.9.1x"', "'2.9.1x'"),
    ("rules.toml", 'versions = ">=0.5.9"', 'versions = "=>0.5.9"', 'versions = "=>0.5.9"', "'=>0.5.9'"),
    ("targets.toml", 'min_cuda = "11.0"', 'min_cuda = "11.0"\nflavour = "x"', 'flavour = "x"', "unknown key 'target.2.flavour'"),
    ("stacks.toml", 'targets = ["sm90", "sm100", "sm120"]', 'targets = ["sm90", "sm100", "sm999"]', "sm999", "'sm999'"),
    ("kernels.toml", 'versions = ["0.3.16.post3"]', 'versions = ["0.3.16.post3", "0.3.21"]', 'torch = "2.9.1"', "contradicting facts: sgl-kernel 0.3.21"),
    ("torch.toml", 'cuda = "12.6"', 'cuda = "12.6', 'cuda = "12.6', "invalid TOML"),
    ("signatures.toml", 'pattern = "operator torchvision::nms does not exist|', 'pattern = "operator (torchvision|', "operator (torchvision", "regular expression"),
    ("kernels.toml", 'sass = ["sm_80", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_101a", "sm_120a"]', 'sass = ["sm80"]', 'sass = ["sm80"]', "'sm80'"),
]


@pytest.mark.parametrize("file,old,new,at,needle", BROKEN)
def test_validate_rejects_broken_copy(tmp_path, file, old, new, at, needle):
    path = _broken_copy(tmp_path, file, old, new)
    r = run_cli("matrix", "validate", *sorted(str(p) for p in path.parent.glob("*.toml")))
    assert r.returncode == 2, r.stderr
    err = r.stderr.strip()
    assert "\n" not in err and "Traceback" not in err
    assert needle in err
    m = re.match(r"^error: (.+?):(\d+): ", err)
    assert m, err
    assert Path(m.group(1)).name == file
    assert at in path.read_text().splitlines()[int(m.group(2)) - 1], err


def test_a_file_is_parsed_once_per_content_and_an_edit_or_a_fault_is_read_again(tmp_path):
    """load_file keeps what it parsed by the bytes' digest (matrix refresh validates the whole matrix after each edit):
    the same bytes at another path are the same rows, an edit is parsed anew, a broken file names its own path."""
    shipped = ROOT / "glmcompat" / "matrix" / "data" / "kernels.toml"
    first, text = load_file(shipped)
    copy = tmp_path / "copy.toml"
    copy.write_bytes(shipped.read_bytes())
    assert load_file(copy)[0] is first and load_file(copy)[1] == text
    copy.write_text(text.replace('torch = "2.9.1"', 'torch = "2.9.0"', 1))
    edited, _ = load_file(copy)
    assert edited is not first and edited != first
    for name in ("a.toml", "b.toml"):  # a fault is not kept: each read names the file it read
        bad = tmp_path / name
        bad.write_text(text.replace('cuda = "', 'cuda = "x', 1))
        with pytest.raises(MatrixError, match=re.escape(str(bad))):
            load_file(bad)


def test_facts_are_decoded_from_a_cache_entry_once_per_content():
    """load_facts decodes the 400 KB of rows once per process for an entry's content (an API caller checking many
    locks), whichever file holds it; an entry whose bytes changed is decoded again, and a broken one is a miss,
    validated anew and rewritten."""
    first = load_facts()
    assert load_facts() is first
    entry = cache_dir() / str(cache_entry_name())
    sealed = entry.read_bytes()
    entry.unlink()
    entry.write_bytes(sealed)  # the same bytes in a new file: the same rows
    assert load_facts() is first
    line, _, payload = sealed.partition(b"\n")
    entry.write_bytes(line + b"\n" + b"x" * len(payload))  # its seal line, already verified here, in a file of its size:
    assert load_facts() is first  # served from memory on reading that line alone (the rows verified when decoded)
    entry.write_bytes(sealed)
    doc = json.loads(sealed.partition(b"\n")[2])
    doc["tables"]["target"] = doc["tables"]["target"][:1]  # other rows, sealed as glmcompat seals them
    entry.write_bytes(seal("matrix", entry.name, json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()))
    other = load_facts()
    assert other is not first and len(other.rows("target")) == 1 < len(first.rows("target"))
    entry.write_bytes(sealed[: len(sealed) // 2])  # broken: a miss, validated anew and the entry rewritten
    healed = load_facts()
    assert healed is not other and healed.data == first.data and entry.read_bytes() == sealed



def test_the_parsed_files_kept_are_bounded(tmp_path):
    """load_file keeps at most its memo's bound of parsed files (a refresh parses many): the oldest goes first and is
    parsed again when read again."""
    from glmcompat.matrix import schema

    bound = schema._PARSED.bound
    files = [tmp_path / f"f{i}.toml" for i in range(bound + 2)]
    parsed = []
    for i, f in enumerate(files):
        f.write_text(f"# file {i}\nschema = 1\n")
        parsed.append(load_file(f)[0])
        assert len(schema._PARSED) <= bound
    assert load_file(files[-1])[0] is parsed[-1]  # kept
    assert load_file(files[0])[0] is not parsed[0]  # dropped first, parsed again


def test_the_facts_kept_are_bounded():
    """load_facts keeps the rows of at most its memo's bound of cache entries (one per matrix a process uses): an
    entry dropped is decoded again."""
    from glmcompat.matrix import load

    first = load_facts()
    entry = cache_dir() / str(cache_entry_name())
    sealed = entry.read_bytes()
    doc = json.loads(sealed.partition(b"\n")[2])
    targets = doc["tables"]["target"]
    bound = load._SERVED.bound
    assert len(targets) > bound + 1
    try:
        for n in range(1, bound + 3):
            doc["tables"]["target"] = targets[:n]
            entry.write_bytes(seal("matrix", entry.name, json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()))
            assert len(load_facts().rows("target")) == n
            assert len(load._SERVED) <= bound
    finally:
        entry.write_bytes(sealed)
    again = load_facts()
    assert again is not first and again.data == first.data  # the first entry was dropped: decoded again

def test_validate_ok_and_missing_file(tmp_path):
    r = run_cli("matrix", "validate")
    assert r.returncode == 0 and r.stdout.startswith("ok:")
    r = run_cli("matrix", "validate", str(tmp_path / "nope.toml"))
    assert r.returncode == 2 and "nope.toml: no such file" in r.stderr


def test_show_schema_targets_cli():
    r = run_cli("targets", "--json")
    doc = json.loads(r.stdout)
    assert doc["version"] == 1
    rows = doc["targets"]
    assert [x["name"] for x in rows] == [t for t, _ in FACTS["targets"]]
    assert all({"name", "compute_capability", "smem_per_block_optin"} <= x.keys() for x in rows)
    r = run_cli("matrix", "schema")
    schema = json.loads(r.stdout)
    assert schema["additionalProperties"] is False and "kernel" in schema["properties"]
    r = run_cli("matrix", "show", "--json")
    doc = json.loads(r.stdout)
    assert doc["version"] == 1 and doc["kernel"]
    r = run_cli("--version")
    assert r.stdout.startswith("glmcompat ")


# --- property: arbitrary TOML never fails with anything but MatrixError -----------------------------------------

_scalars = st.one_of(st.text(max_size=8), st.integers(), st.booleans(), st.floats(allow_nan=False))
_values = st.recursive(_scalars, lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=6), c, max_size=3)), max_leaves=8)
_keys = st.sampled_from(["schema", "kernel", "target", "stack", "torch", "family", "signature", "x", "versions"])
_docs = st.dictionaries(_keys, st.one_of(_values, st.lists(st.dictionaries(st.sampled_from(
    ["package", "versions", "torch", "evidence", "source", "name", "sass", "pins", "pattern", "compute_capability", "zz"]), _values, max_size=6), max_size=3)), max_size=5)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=_docs)
def test_arbitrary_toml_only_raises_matrix_error(tmp_path, doc):
    import tomlkit

    path = tmp_path / "m.toml"
    try:
        path.write_text(tomlkit.dumps(doc))
    except Exception:  # tomlkit cannot express the document: nothing to test
        return
    try:
        load_file(path)
    except MatrixError as e:
        assert "\n" not in str(e)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=64))
def test_arbitrary_bytes_only_raise_matrix_error(tmp_path, raw):
    path = tmp_path / "m.toml"
    path.write_bytes(raw)
    try:
        load_file(path)
    except MatrixError:
        pass


@pytest.mark.parametrize("spelling,target", [
    ("rtx5090", "sm120"), ("RTX 5090", "sm120"), ("h100", "sm90"), ("GH200", "sm90"), ("b200", "sm100"),
    ("t4", "sm75"), ("V100", "sm70"), ("jetson agx orin", "sm87"), ("JetsonAGXThor", "sm110"),
    ("rtx-pro-6000-blackwell", "sm120"), ("dgx spark (gb10)", "sm121"), ("sm_110", "sm110"), ("11.0", "sm110"),
    (" SM87 ", "sm87"), ("7.5", "sm75")])
def test_target_by_name_capability_or_product(facts, spelling, target):
    assert facts.target(spelling).name == target


def test_every_listed_product_names_its_target_and_no_other(facts):
    from glmcompat.model.names import product_key

    keys = [(product_key(p), t.name) for t in facts.rows("target") for p in t.products]
    assert len({k for k, _ in keys}) == len(keys)  # one spelling each, never two targets
    for k, name in keys:
        assert facts.target(k).name == name
    with pytest.raises(InputError, match="unknown target 'rtx9999'"):
        facts.target("rtx9999")

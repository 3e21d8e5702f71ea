"""Targets name the platforms they ship on; facts, probes and `check` are per platform (x86_64, aarch64).

The aarch64 facts asserted here are the probe results recorded in glmcompat/matrix/data/aarch64.toml (read from the
index's wheels with `glmcompat arch/abi ... --platform aarch64`); nothing here needs the network.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from glmcompat.cli import main
from glmcompat.decide.rules import evaluate_lock
from glmcompat.matrix.load import load_facts
from glmcompat.matrix.schema import load_matrix
from glmcompat.model.environments import flat_environments
from glmcompat.model.errors import InputError, MatrixError
from glmcompat.model.platforms import products_on, target_platforms
from glmcompat.model.wheeltags import wheel_fits
from glmcompat.ops.wheelprobe import machine_of
from glmcompat.readers.fatbin import parse_fatbin
from glmcompat.readers.formats import read_lock
from glmcompat.readers.formats.common import Entry


@pytest.fixture(scope="module")
def facts():
    return load_facts()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        rc = main(list(args))
    except SystemExit as e:
        rc = int(e.code or 0)
    out, err = capsys.readouterr()
    return rc, out, err


# ------------------------------------------------------------------------------------------------
# Targets
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("target", "platforms", "aarch64_products"), [
    ("sm80", ["x86_64"], []),
    ("sm90", ["x86_64", "aarch64"], ["GH200"]),
    ("sm100", ["x86_64", "aarch64"], ["GB200"]),
    ("sm103", ["x86_64", "aarch64"], ["GB300"]),
    ("sm120", ["x86_64"], []),
    ("sm121", ["aarch64"], ["DGX Spark (GB10)"]),
])
def test_targets_name_their_platforms(facts, target, platforms, aarch64_products):
    row = facts.target(target)
    assert target_platforms(row) == platforms
    assert products_on(row, "aarch64") == aarch64_products
    assert load_matrix().get_target(target).ships_on == tuple(platforms)


def test_targets_json_shows_platforms(capsys):
    rc, out, _ = run(capsys, "targets", "--json")
    assert rc == 0
    rows = {r["name"]: r for r in json.loads(out)["targets"]}
    assert rows["sm90"]["platforms"] == {"H100": ["x86_64"], "H200": ["x86_64"], "GH200": ["aarch64"]}
    assert rows["sm90"]["ships_on"] == ["x86_64", "aarch64"]
    assert rows["sm121"]["ships_on"] == ["aarch64"]
    assert "nvidia.com" in rows["sm121"]["source"]


@pytest.mark.parametrize(("platforms", "message"), [
    ('{ A = ["x86_64"] }', "does not say where product 'B' ships"),
    ('{ A = ["x86_64"], B = ["x86_64"], C = ["aarch64"] }', "'C', which is not one of the products"),
    ('{ A = ["x86_64"], B = ["riscv64"] }', "riscv64"),
    ('{ A = ["x86_64"], B = [] }', "platforms of product 'B' is empty"),
])
def test_bad_target_platforms(tmp_path, platforms, message):
    p = tmp_path / "t.toml"
    p.write_text(f'schema = 1\n[[target]]\nname = "sm90"\ncompute_capability = "9.0"\nproducts = ["A", "B"]\n'
                 f'platforms = {platforms}\nmin_cuda = "12.0"\nevidence = "metadata"\nsource = "x"\n')
    with pytest.raises(MatrixError, match=message):
        load_matrix([p])


# ------------------------------------------------------------------------------------------------
# Facts per platform (the rows of glmcompat/matrix/data/aarch64.toml)
# ------------------------------------------------------------------------------------------------


def test_torch_default_aarch64_wheels_are_cpu_only_up_to_2_10(facts):
    arm = facts.on("aarch64")
    for v in ("2.3.0", "2.7.0", "2.9.1", "2.10.0"):
        sass, ptx, row = arm.gpu_code("torch", v)
        assert (sass, ptx) == ((), ()) and arm.torch_cuda(v) == "" and row.platform == "aarch64"
        assert facts.gpu_code("torch", v)[0], v  # the x86_64 wheel of the same release carries CUDA code
    for v, cuda in (("2.11.0", "13.0"), ("2.14.1", "13.0"), ("2.15.0", "13.2")):
        assert arm.torch_cuda(v) == cuda and "sm_121a" in arm.gpu_code("torch", v)[0]


def test_sglang_kernel_aarch64_wheel_carries_sm121a_and_x86_does_not(facts):
    arm = facts.on("aarch64")
    x86 = arm.on("x86_64")
    assert x86 is facts
    assert {"sm_121a", "sm_110a"} <= set(arm.gpu_code("sglang-kernel", "0.4.2.post2")[0])
    assert not {"sm_121a", "sm_110a"} & set(facts.gpu_code("sglang-kernel", "0.4.2.post2")[0])
    assert arm.kernel("sglang-kernel", "0.4.2.post2").torch == "2.11.0"
    assert "sm_121a" not in arm.gpu_code("sgl-kernel", "0.3.21")[0]
    assert "sm_121a" not in arm.gpu_code("sglang-kernel", "0.4.1.post1")[0]
    # a release with only x86_64 rows is still a compiled extension on aarch64 -- and unknown there
    assert "torchao" in arm.kernel_packages() and arm.kernel("torchao", "0.9.0") is None


def test_abi_verdicts_are_per_platform(facts):
    arm = facts.on("aarch64")
    assert arm.abi_verdict("sglang-kernel", "0.4.2.post2", "2.11.0").compatible is True
    assert arm.abi_verdict("sglang-kernel", "0.4.2.post2", "2.13.0").compatible is False
    assert arm.abi_verdict("sgl-kernel", "0.3.21", "2.11.0").missing == 2


def test_typed_queries_take_a_platform():
    m = load_matrix()
    assert m.kernel_for("sglang-kernel", "0.4.2.post2").platform == "x86_64"
    k = m.kernel_for("sglang-kernel", "0.4.2.post2", "aarch64")
    assert k.platform == "aarch64" and "sm_121a" in k.sass
    assert m.view().on("aarch64").torch_build("2.10.0").cuda is None
    assert m.view().torch_build("2.10.0").cuda == "12.8"


def test_unknown_platform(facts):
    with pytest.raises(InputError, match="unknown platform 'ppc64le'"):
        facts.on("ppc64le")
    assert machine_of("manylinux_2_28_aarch64") == "aarch64" and machine_of("arm64") == "aarch64"
    for bad in ("ppc64le", "win_amd64", "macosx_14_0_arm"):
        with pytest.raises(InputError):
            machine_of(bad)


def test_one_kernel_release_may_pair_differently_per_platform_but_not_twice_on_one(tmp_path):
    row = ('[[kernel]]\npackage = "k"\nversions = ["1.0"]\ntorch = "{t}"\nplatform = "{p}"\n'
           'evidence = "metadata"\nsource = "x"\n')
    ok = tmp_path / "ok.toml"
    ok.write_text("schema = 1\n" + row.format(t="2.9.1", p="x86_64") + row.format(t="2.11.0", p="aarch64"))
    assert len(load_matrix([ok]).kernel) == 2
    bad = tmp_path / "bad.toml"
    bad.write_text("schema = 1\n" + row.format(t="2.9.1", p="aarch64") + row.format(t="2.11.0", p="aarch64"))
    with pytest.raises(MatrixError, match=r"k 1.0 \(aarch64\) is mapped to torch"):
        load_matrix([bad])


def test_a_cpu_only_torch_row_carries_no_gpu_code(tmp_path):
    p = tmp_path / "t.toml"
    p.write_text('schema = 1\n[[torch]]\nversions = ["9.0"]\nplatform = "aarch64"\nsass = ["sm_90"]\n'
                 'evidence = "metadata"\nsource = "x"\n')
    with pytest.raises(MatrixError, match="CPU-only build"):
        load_matrix([p])


# ------------------------------------------------------------------------------------------------
# Environments for both machines
# ------------------------------------------------------------------------------------------------


def test_flat_files_get_an_environment_per_machine():
    envs = flat_environments("r.txt", [Entry("torch", "2.9.1"), Entry("sgl-kernel", "0.3.21")], None)
    assert [(e.name, e.platform) for e in envs] == [("Linux x86_64", "x86_64"), ("Linux aarch64", "aarch64")]
    # a file whose markers leave aarch64 out has one environment, unnamed, as before
    x86 = "platform_machine == 'x86_64' and sys_platform == 'linux'"
    envs = flat_environments("r.txt", [Entry("torch", "2.9.1", x86)], None)
    assert [(e.name, e.platform) for e in envs] == [("", "x86_64")]
    # per-machine markers: each machine its own set
    envs = flat_environments("r.txt", [Entry("torch", "2.9.1", x86),
                                       Entry("torch", "2.11.0", "platform_machine == 'aarch64'")], None)
    assert {e.platform: e.packages["torch"] for e in envs} == {"x86_64": "2.9.1", "aarch64": "2.11.0"}


@pytest.mark.parametrize(("wheel", "machine", "python", "fits"), [
    ("torch-2.11.0-cp312-cp312-manylinux_2_28_aarch64.whl", "aarch64", "3.12", True),
    ("torch-2.11.0-cp312-cp312-manylinux_2_28_aarch64.whl", "x86_64", "3.12", False),
    ("torch-2.11.0-cp312-cp312-manylinux_2_28_aarch64.whl", "aarch64", "3.11", False),
    ("torch-2.11.0%2Bcu130-cp313-cp313t-manylinux_2_28_aarch64.whl", "aarch64", "3.13", False),
    ("sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl", "x86_64", "3.12", True),
    ("sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl", "aarch64", "3.12", False),
    ("sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl", "x86_64", "3.9", False),
    ("six-1.17.0-py2.py3-none-any.whl", "aarch64", "3.12", True),
    ("x-1.0-cp312-cp312-musllinux_1_2_aarch64.whl", "aarch64", "3.12", False),
    ("x-1.0-cp312-cp312-manylinux_2_17_aarch64.manylinux2014_aarch64.whl", "aarch64", "3.12", True),
    ("x-1.0-py3-none-manylinux_2_28_x86_64.whl", "x86_64", "3.12", True),
    ("x-1.0-cp312-none-any.whl", "x86_64", "3.12", True),
    ("x-1.0-cp312-none-any.whl", "x86_64", "3.13", False),
    ("x-1.0-cp313-cp313t-manylinux_2_28_x86_64.whl", "x86_64", "3.13", False),
    ("https://files.index.invalid/x/x-1.0-cp311-abi3-linux_x86_64.whl#sha256=00", "x86_64", "3.12", True),
    ("x-1.0.tar.gz", "x86_64", "3.12", True),
])
def test_wheel_fits(wheel, machine, python, fits):
    assert wheel_fits(wheel, machine, python) is fits


@pytest.mark.parametrize("wheel", ["torch-2.9.1-cp312-cp312-manylinux_2_28_x86_64.whl",
                                   "sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl",
                                   "x-1.0-cp312-cp312-musllinux_1_2_x86_64.whl",
                                   "x-1.0-cp312-cp312t-manylinux_2_28_x86_64.whl"])
def test_wheel_fits_agrees_with_the_resolvers_selection(wheel):
    """One tag implementation: the uv.lock reader's judgement is the resolver's wheel selection."""
    from packaging.utils import parse_wheel_filename

    from glmcompat.edges.index import IndexFile, select_wheel, supported_tags
    _, version, _, tags = parse_wheel_filename(wheel)
    f = IndexFile(filename=wheel, url=wheel, size=None, sha256=None, requires_python=None, yanked=False,
                  version=str(version), is_wheel=True, tags=frozenset(str(t) for t in tags))
    chosen = select_wheel([f], supported_tags("cp312", "manylinux_x86_64"))
    assert wheel_fits(wheel, "x86_64", "3.12") is (chosen is f)


UV_LOCK = """version = 1
revision = 3
requires-python = "==3.12.*"
{supported}

[[package]]
name = "proj"
version = "0.1.0"
source = {{ virtual = "." }}
dependencies = [{{ name = "sgl-kernel" }}, {{ name = "torch" }}]

[[package]]
name = "sgl-kernel"
version = "0.3.21"
source = {{ registry = "https://index.invalid/simple" }}
wheels = [{{ url = "https://index.invalid/sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl" }}]

[[package]]
name = "torch"
version = "2.9.1"
source = {{ registry = "https://index.invalid/simple" }}
wheels = [
    {{ url = "https://index.invalid/torch-2.9.1-cp312-cp312-manylinux_2_28_x86_64.whl" }},
    {{ url = "https://index.invalid/torch-2.9.1-cp312-cp312-manylinux_2_28_aarch64.whl" }},
]
"""


def _uv_lock(tmp_path: Path, supported: str = "") -> Path:
    p = tmp_path / "uv.lock"
    p.write_text(UV_LOCK.format(supported=supported))
    return p


def test_uv_lock_environments_per_machine(tmp_path):
    lock = read_lock(_uv_lock(tmp_path), use_cache=False)
    by = {e.platform: e for e in lock.sets}
    assert set(by) == {"x86_64", "aarch64"}
    assert by["aarch64"].name == "base, Python 3.12, Linux aarch64"
    assert by["aarch64"].missing_wheels == {"sgl-kernel": "0.3.21"} and not by["x86_64"].missing_wheels
    supported = "supported-markers = [\"platform_machine == 'x86_64' and sys_platform == 'linux'\"]"
    lock = read_lock(_uv_lock(tmp_path, supported), use_cache=False)
    assert [e.platform for e in lock.sets] == ["x86_64"]


# ------------------------------------------------------------------------------------------------
# check: the environments of the target's platforms
# ------------------------------------------------------------------------------------------------


def _req(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "requirements.txt"
    p.write_text(text)
    return p


def _rules(found):
    return sorted((f.rule, f.severity) for f in found)


def test_a_cpu_only_aarch64_torch_is_one_warning_for_a_target_that_also_ships_on_x86(tmp_path, facts):
    lock = read_lock(_req(tmp_path, "torch==2.9.1\nsgl-kernel==0.3.21\n"), use_cache=False)
    found = evaluate_lock(lock, "sm90", None, facts, False)
    assert _rules(found) == [("platform", "warning")]
    (f,) = found
    assert "does not serve sm90 on aarch64 (GH200)" in f.message and "CPU-only" in f.message
    assert f.environments == ("Linux aarch64",) and any(k == "arch-probe" for k, _ in f.evidence)
    # sm120 ships on x86_64 only: the aarch64 environment is not judged at all
    assert evaluate_lock(lock, "sm120", None, facts, False) == []
    # judged strictly on aarch64, the same environment is unsafe
    strict = evaluate_lock(lock, "sm90", None, facts, False, platforms=["aarch64"])
    assert ("gpu-code", "error") in _rules(strict) and ("platform", "warning") not in _rules(strict)


def test_sm121_names_the_kernel_and_the_aarch64_release_that_runs_there(tmp_path, facts):
    lock = read_lock(_req(tmp_path, "torch==2.11.0\nsgl-kernel==0.3.21\n"), use_cache=False)
    found = evaluate_lock(lock, "sm121", None, facts, False)
    gpu = [f for f in found if f.rule == "gpu-code"]
    assert [f.pins for f in gpu] == [("sgl-kernel==0.3.21",)]
    assert "sm_120a" in gpu[0].message and "none of it runs on sm121" in gpu[0].message
    assert gpu[0].remedy.startswith("use sglang-kernel==") and "Linux aarch64 wheel carries sm_121a" in gpu[0].remedy
    ok = read_lock(_req(tmp_path, "torch==2.11.0\nsglang-kernel==0.4.2.post2\n"), use_cache=False)
    assert [f for f in evaluate_lock(ok, "sm121", None, facts, False) if f.severity == "error"] == []
    # the same pair judged for an x86_64 target: the x86_64 wheel is judged (and runs on sm120)
    assert [f for f in evaluate_lock(ok, "sm120", None, facts, False) if f.severity == "error"] == []


def test_a_lock_for_x86_64_only(tmp_path, facts):
    supported = "supported-markers = [\"platform_machine == 'x86_64' and sys_platform == 'linux'\"]"
    lock = read_lock(_uv_lock(tmp_path, supported), use_cache=False)
    (w,) = [f for f in evaluate_lock(lock, "sm90", None, facts, False) if f.rule == "platform"]
    assert w.severity == "warning" and "installs nothing on Linux aarch64" in w.message
    (e,) = evaluate_lock(lock, "sm121", None, facts, False)
    assert (e.rule, e.severity) == ("platform", "error") and "the only platform sm121 ships on" in e.message


def test_a_package_without_an_aarch64_wheel_excuses_that_environment(tmp_path, facts):
    lock = read_lock(_uv_lock(tmp_path), use_cache=False)
    found = evaluate_lock(lock, "sm90", None, facts, False)
    (w,) = [f for f in found if f.rule == "platform"]
    assert "sgl-kernel 0.3.21 has no Linux aarch64 wheel in the lock" in w.message
    assert w.environments == ("base, Python 3.12, Linux aarch64",)


def test_unrecorded_aarch64_builds_are_warnings_for_a_dual_platform_target(tmp_path, facts):
    lock = read_lock(_req(tmp_path, "torch==2.11.0+cu128\n"), use_cache=False)
    found = evaluate_lock(lock, "sm90", None, facts, False)
    assert not [f for f in found if f.severity == "error"]
    unknown = [f for f in found if f.rule == "unknown"]
    assert unknown and all(f.environments == ("Linux aarch64",) for f in unknown)
    strict = evaluate_lock(lock, "sm90", None, facts, False, platforms=["aarch64"])
    assert [f.rule for f in strict if f.severity == "error"] == ["unknown"]


def test_a_platform_the_target_never_ships_on(tmp_path, facts):
    lock = read_lock(_req(tmp_path, "torch==2.11.0\n"), use_cache=False)
    with pytest.raises(InputError, match="target sm121 never ships on x86_64"):
        evaluate_lock(lock, "sm121", None, facts, False, platforms=["x86_64"])
    with pytest.raises(InputError, match="unknown platform"):
        evaluate_lock(lock, "sm90", None, facts, False, platforms=["sparc"])


def test_check_cli_on_both_machines(tmp_path, capsys):
    p = _req(tmp_path, "torch==2.9.1\nsgl-kernel==0.3.21\n")
    rc, out, _ = run(capsys, "check", str(p), "--target", "sm90", "--json")
    doc = json.loads(out)
    assert rc == 0 and [f["rule"] for f in doc["findings"]] == ["platform"]
    rc, out, _ = run(capsys, "check", str(p), "--target", "sm121")
    assert rc == 1 and "none of it runs on sm121" in out


# ------------------------------------------------------------------------------------------------
# Probes: --platform, checked before anything is fetched
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "message"), [
    (["arch", "sgl-kernel==0.3.21", "--target", "sm121", "--platform", "x86_64"],
     "target sm121 never ships on x86_64 (DGX Spark (GB10) on aarch64)"),
    (["arch", "sgl-kernel==0.3.21", "--target", "sm120", "--platform", "manylinux_2_28_aarch64"],
     "target sm120 never ships on aarch64"),
    (["arch", "sgl-kernel==0.3.21", "--platform", "ppc64le"], "unknown platform 'ppc64le'"),
    (["abi", "sgl-kernel==0.3.21", "--torch", "2.9.1", "--platform", "win_amd64"], "unknown platform 'win_amd64'"),
])
def test_probe_platform_bad_input(capsys, args, message):
    rc, out, err = run(capsys, *args, "--index-url", "http://127.0.0.1:9/simple")
    assert rc == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1


def test_fatbin_containers_padded_to_8_bytes():
    """aarch64 links pad the .nv_fatbin containers to 8 bytes (sglang-kernel 0.4.2.post2's lib/mscclpp_nccl.so:
    a container ends at 2802504, the next starts at 2802688)."""
    def entry(arch: int) -> bytes:
        hdr = bytearray(64)
        struct.pack_into("<HHIQ", hdr, 0, 2, 0, 64, 8)
        struct.pack_into("<I", hdr, 28, arch)
        return bytes(hdr) + bytes(8)

    def container(arch: int) -> bytes:
        body = entry(arch)
        return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body

    first = container(90)
    pad = bytes(8 + 16 * 2)
    data = first + pad + container(121)
    assert len(first) % 16 == 8 and len(first + pad) % 16 == 0  # a 16-byte walk from 88 meets 8 zeros + magic
    assert [(e.kind, e.arch) for e in parse_fatbin(data)] == [("sass", 90), ("sass", 121)]

"""What a requirements file installs that it does not pin: the exact pins of what it names (vLLM's METADATA pins
torch exactly; torchvision's pins torch), and wildcard pins (``torch==2.8.0.*``). Read from real files written
here, judged with the shipped matrix (whose rows were read from the wheels' METADATA)."""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.decide.rules import evaluate_lock, resolve_named
from glmcompat.matrix.load import load_facts
from glmcompat.readers.formats import read_lock


@pytest.fixture(scope="module")
def facts():
    return load_facts()


def _check(tmp_path, text, target="sm90", name="requirements.txt", **kw):
    f = tmp_path / name
    f.write_text(text)
    lock = read_lock(f)
    return lock, evaluate_lock(lock, target, None, load_facts(), False, **kw)


def _x86(lock):
    (env,) = [e for e in lock.sets if e.platform == "x86_64"]
    return env


@pytest.mark.parametrize("line", ["torch==2.8.0.*", "torch===2.8.0", "torch==2.8.0"])
def test_wildcard_pin_is_a_pin(tmp_path, facts, line):
    """`torch==2.8.0.*` admits one torch release: it is judged like `torch==2.8.0` (no "not pinned", no
    "no torch is in the set"); on sm120 torch 2.8.0's default wheel carries sm_120 SASS."""
    lock, found = _check(tmp_path, f"{line}\ntorchvision==0.23.0\n", target="sm120")
    assert [f for f in found if f.severity == "error"] == []
    assert not [f for f in found if f.rule == "unpinned"]


def test_wildcard_of_a_minor_judges_the_newest_and_still_warns(facts):
    implied, left = resolve_named({}, {"torch": "==2.9.*"}, facts)
    assert implied["torch"][0] == "2.9.1" and left == {"torch": "==2.9.*"}
    implied, left = resolve_named({}, {"torch": "==2.7.*"}, facts)
    assert implied["torch"][0] == "2.7.1"


def test_wildcard_break_is_found(tmp_path):
    """torch==2.10.0.* next to sgl-kernel 0.3.21 (built for 2.9.1; 2 symbols missing vs 2.10.0) is unsafe."""
    _, found = _check(tmp_path, "torch==2.10.0.*\nsgl-kernel==0.3.21\n")
    assert any(f.rule == "abi" and f.severity == "error" and "torch==2.10.0" in f.pins for f in found)


LIGHTNING = Path(__file__).parents[1] / "fixtures" / "formats" / "lightning-range" / "requirements.txt"  # real


@pytest.mark.parametrize("target", ["sm90", "sm120"])
def test_a_range_closed_above_judges_the_newest_it_admits(target):
    """Lightning's real requirements/pytorch/base.txt asks for torch >=1.11.0, <=2.0.0: pip installs 2.0.0, whose
    default wheel (CUDA 11.7) carries SASS up to sm_86 and no PTX, so it runs on neither target; read as "not pinned"
    alone it was a warning and exit 0."""
    lock = read_lock(LIGHTNING)
    found = evaluate_lock(lock, target, None, load_facts(), False)
    gpu = [f for f in found if f.rule == "gpu-code" and f.severity == "error"]
    assert gpu and gpu[0].pins == ("torch==2.0.0",) and "torch<=2.0.0,>=1.11.0 is a range" in gpu[0].message


@pytest.mark.parametrize(("asked", "judged", "still_open"), [
    ("~=2.6.0", "2.6.0", False),  # one release
    ("<2.6", "2.5.1", True),  # several: the newest, and the warning stays
    (">=2.1,<2.4", "2.3.1", True),
    (">=2.0", None, True),  # open above: the index's newest, which the matrix may not know, is not guessed
    ("!=2.6.0", None, True),
])
def test_torch_ranges(facts, asked, judged, still_open):
    implied, left = resolve_named({}, {"torch": asked}, facts)
    assert implied.get("torch", (None,))[0] == judged and ("torch" in left) == still_open


def test_an_exact_pin_of_a_package_comes_before_a_range(facts):
    """torchvision 0.16.0 pins torch==2.1.0, which torch<2.5 admits: that is what installs, not 2.4.1."""
    implied, _ = resolve_named({"torchvision": "0.16.0"}, {"torch": "<2.5"}, facts)
    assert implied["torch"][0] == "2.1.0"


def test_vllm_implies_its_torch(tmp_path, facts):
    """A file that names vLLM and no torch installs the torch vLLM pins exactly: vllm 0.18.0 -> torch 2.10.0,
    torchvision 0.25.0, torchaudio 2.10.0 (its METADATA). Next to sgl-kernel 0.3.21 (built for 2.9.1) that breaks."""
    lock, found = _check(tmp_path, "vllm==0.18.0\nsgl-kernel==0.3.21\n")
    abi = [f for f in found if f.rule == "abi" and f.severity == "error"]
    assert abi and abi[0].pins == ("sgl-kernel==0.3.21", "torch==2.10.0")
    assert "the file does not pin torch: vllm 0.18.0 pins torch==2.10.0 exactly" in abi[0].message
    assert any("vllm-0.18.0" in src for _, src in abi[0].evidence)
    implied, _ = resolve_named({"vllm": "0.18.0"}, {}, facts)
    assert {n: v for n, (v, _, _) in implied.items()}.items() >= {"torch": "2.10.0", "torchvision": "0.25.0", "torchaudio": "2.10.0"}.items()


def test_vllm_alone_is_judged_with_its_torch(tmp_path):
    """Without the implied torch, vllm 0.18.0 was "built against torch 2.10.0, and no torch is in the set"."""
    _, found = _check(tmp_path, "vllm==0.18.0\n")
    assert [f for f in found if f.severity == "error"] == []
    assert not [f for f in found if f.rule in ("abi", "family") and "torch" not in f.names]  # "no torch is in the set"


def test_family_pin_implies_torch_that_an_open_spec_admits(tmp_path):
    """`torch>=2.8` + torchvision==0.23.0: pip installs torch 2.8.0 (torchvision pins it); `torch<2.8` cannot be
    satisfied with it, so nothing is implied and the family rule says no torch fits."""
    _, found = _check(tmp_path, "torch>=2.8\ntorchvision==0.23.0\n")
    assert [f for f in found if f.severity == "error"] == [] and not [f for f in found if f.rule == "unpinned"]
    _, found = _check(tmp_path, "torch<2.8\ntorchvision==0.23.0\n")
    assert any(f.rule == "family" and f.severity == "error" for f in found)


def test_a_lock_is_not_resolved_again(tmp_path):
    """A lock lists what installs: pins are not implied into it (a poetry.lock without torch stays without)."""
    text = ('[[package]]\nname = "vllm"\nversion = "0.18.0"\noptional = false\npython-versions = "*"\nfiles = []\n\n'
            '[metadata]\nlock-version = "2.0"\npython-versions = ">=3.11,<3.13"\ncontent-hash = "x"\n')
    _, found = _check(tmp_path, text, name="poetry.lock")
    # vllm judged without a torch: "built against torch 2.10.0, and no torch is in the set"
    assert [(f.packages, f.remedy) for f in found if (f.rule, f.severity) == ("abi", "error")] == [
        ((("vllm", "0.18.0"),), "add torch==2.10.0")]


def test_a_kernel_whose_metadata_pins_torch_brings_it(tmp_path, facts):
    """xformers 0.0.33.post2's wheel declares Requires-Dist: torch==2.9.1 (its kernel row records it): a file that pins
    xformers and torchao 0.15.0 but no torch installs torch 2.9.1 -- not "no torch is in the set"
    (text-generation-webui's requirements, tests/fixtures/heldout36/h16)."""
    lock, found = _check(tmp_path, "xformers==0.0.33.post2\ntorchao==0.15.0\n")
    assert [f.message for f in found if f.severity == "error"] == []
    implied, _ = resolve_named({"xformers": "0.0.33.post2"}, {}, facts)
    assert implied["torch"][0] == "2.9.1" and "pins torch==2.9.1" in implied["torch"][1]
    # a kernel whose row is an ABI probe (no METADATA pin) brings nothing
    assert "torch" not in resolve_named({"sgl-kernel": "0.3.21"}, {}, facts)[0]


def test_contradicted_exact_pin_is_unsatisfiable(tmp_path):
    """`torch==2.3.0` next to `xformers==0.0.28.post1`, whose METADATA pins torch==2.4.1 (the shipped xformers row):
    pip cannot install both, so the file is unsafe though xformers' own load failure is only a warning. With the
    torch it pins, nothing is contradicted. (tests/fixtures/heldout36c/c12, a real `pip freeze`, has this pair.)"""
    _, found = _check(tmp_path, "torch==2.3.0\nxformers==0.0.28.post1\n")
    req = [f for f in found if f.rule == "requires" and f.severity == "error"]
    assert req and req[0].pins == ("xformers==0.0.28.post1", "torch==2.3.0")
    assert "pins torch==2.4.1 exactly" in req[0].message and "no installer can satisfy both" in req[0].message
    _, found = _check(tmp_path, "torch==2.4.1\nxformers==0.0.28.post1\n")
    assert not [f for f in found if f.rule == "requires"]


def test_contradicted_pin_in_a_lock_is_not_this_rule(tmp_path):
    """A lock was resolved where it was made (an override may depart on purpose): the unsatisfiable-pins rule is
    for files an installer resolves."""
    text = ('version = 1\nrequires-python = ">=3.11"\n\n'
            '[[package]]\nname = "torch"\nversion = "2.3.0"\nsource = { registry = "https://index.invalid/simple" }\n\n'
            '[[package]]\nname = "xformers"\nversion = "0.0.28.post1"\n'
            'source = { registry = "https://index.invalid/simple" }\n')
    _, found = _check(tmp_path, text, name="uv.lock")
    assert not [f for f in found if f.rule == "requires" and "no installer" in f.message]


CONDA_CU118 = """name: env
channels:
  - pytorch
  - nvidia
dependencies:
  - python=3.10
  - numpy=1.23.5
  - pytorch=2.2.1
  - torchvision=0.17.1
  - torchaudio=2.2.1
  - pytorch-cuda=11.8
"""


def test_conda_torch_family_is_the_cuda_variant_of_its_torch(tmp_path):
    """conda's pytorch 2.2.1 with pytorch-cuda 11.8 (tests/fixtures/heldout36c/c10): torchvision 0.17.1 and
    torchaudio 2.2.1 come from the same channel, built for the same CUDA, so they are not judged as the default
    wheels (CUDA 12): their pairs are torchvision 0.17.1 -> torch==2.2.1 and torchaudio 2.2.1 -> torch==2.2.1 (their
    METADATA), and torch 2.2.1's CUDA 11.8 build carries sm_90 (pytorch/builder release/2.2): safe on sm90. On sm120
    it has no code to run (an error that names the build), not "not recorded"."""
    lock, found = _check(tmp_path, CONDA_CU118, name="environment.yml")
    env = _x86(lock)
    assert env.packages["torchvision"] == "0.17.1+cu118" and env.packages["torchaudio"] == "2.2.1+cu118"
    assert [f for f in found if f.severity == "error"] == []
    _, found = _check(tmp_path, CONDA_CU118, target="sm120", name="environment.yml")
    errs = [f for f in found if f.severity == "error"]
    assert [f.rule for f in errs] == ["gpu-code"] and "sm_90" in errs[0].message
    assert "not recorded" not in errs[0].message

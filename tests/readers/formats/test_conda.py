"""conda environment files (glmcompat.readers.formats.conda): real files, PyYAML's safe loader as the oracle."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from glmcompat.readers.formats.common import Entry
from glmcompat.readers.formats.conda import conda_document

from tests.readers.formats.helpers import LINUX, E, bad_input, fixture, kind_python_and_meta, load


# --- whole files: every entry, or the ones that matter plus the count --------------------------------------------

WHOLE = [
    ("conda-pytorch/environment.yml", [
        E("torch", "2.3.0+cu121", line=9), E("torchvision", "0.18.0+cu121", line=10), E("torchaudio", "2.3.0+cu121", line=11),
        E("pytorch-cuda", None, spec="==12.1.*", line=12), E("numpy", None, spec="<2,>=1.26", line=13),
        E("pip", None, spec="", line=14),
        E("vllm", "0.5.0", origin="requirements-serve.txt", line=1),
        E("transformers", None, spec=">=4.40", origin="requirements-serve.txt", line=2),
        E("xformers", "0.0.26.post1", line=17)]),
    ("conda-forge/environment.yaml", [
        E("torch", "2.5.1+cu126.cf", line=6), E("cuda-version", None, spec="==12.6.*", line=7),
        E("triton", None, spec=">=3.1", line=8), E("sentencepiece", None, spec="", line=9),
        E("sgl-kernel", "0.3.21", LINUX, line=11)]),
    ("conda-cpu/conda-cpu.yml", [
        E("torch", "2.3.0+cpu", line=5), E("cpuonly", None, spec="", line=6), E("transformers", "4.41.2", line=7)]),
    ("conda-export/env.yaml", [
        E("-libgcc-mutex", None, spec="==0.1.*", line=7), E("ca-certificates", "2024.3.11", line=8),
        E("openssl", "3.0.13", line=9), E("torch", "2.2.2+cu118", line=11),
        E("pytorch-cuda", None, spec="==11.8.*", line=12), E("tzdata", None, spec="===2024a", line=13),
        E("sgl-kernel", "0.0.3", line=15)]),
]


@pytest.mark.parametrize("rel, entries", WHOLE, ids=[w[0] for w in WHOLE])
def test_whole_file(rel: str, entries: list[Entry]) -> None:
    assert list(load(fixture(rel)).entries) == entries


META = [  # (file, kind, requires_python, meta keys and values that must be there)
    ("conda-pytorch/environment.yml", "environment.yml", "==3.11.*", {
        "conda_cuda": "12.1", "channels": ["pytorch", "nvidia", "conda-forge"],
        "conda_packages": ["numpy", "pip", "pytorch-cuda", "torch", "torchaudio", "torchvision"]}),
    ("conda-forge/environment.yaml", "environment.yml", "==3.12.*", {"conda_cuda": "12.6", "channels": ["conda-forge"]}),
    ("conda-export/env.yaml", "environment.yml", "==3.10.14", {"conda_cuda": "11.8"}),
    ("conda-cpu/conda-cpu.yml", "environment.yml", None, {"channels": ["pytorch"]}),
]


@pytest.mark.parametrize("rel, kind, python, meta", META, ids=[m[0] for m in META])
def test_kind_python_and_meta(rel: str, kind: str, python: str | None, meta: dict[str, object]) -> None:
    kind_python_and_meta(rel, kind, python, meta)


# --- bad input: one line, exit 2, naming the file, the line and the value ---------------------------------------

ERRORS = [  # (files, file to read, where the message must point, what it must say)
    # conda environment files
    ({"environment.yml": "name: empty\nchannels:\n  - conda-forge\n"}, "environment.yml", "environment.yml",
     ["no packages (neither conda packages nor a pip section"]),
    ({"environment.yml": "name: py\ndependencies:\n  - python=3.11\n  - pip:\n    - -e .\n"}, "environment.yml",
     "environment.yml", ["no packages"]),
    ({"environment.yml": "dependencies:\n  - pytorch: 2.3.0\n"}, "environment.yml", "environment.yml:2",
     ["unsupported YAML", "'pytorch: 2.3.0'"]),
    ({"environment.yml": "dependencies:\n  - &torch pytorch=2.3.0\n"}, "environment.yml", "environment.yml:2",
     ["a YAML anchor or alias (refused"]),
    ({"environment.yml": "dependencies:\n  - pytorch=2.3.0\n  - *torch\n"}, "environment.yml", "environment.yml:3",
     ["a YAML anchor or alias (refused"]),
    # a billion laughs: nine lines whose aliases stand for 10**9 scalars
    ({"environment.yml": "variables:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"  {chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))},
     "environment.yml", "environment.yml:2", ["a YAML anchor or alias (refused"]),
    ({"environment.yml": "dependencies:\n  - " + "[" * 9 + "]" * 9 + "\n"}, "environment.yml", "environment.yml:2",
     ["nested deeper than 8"]),
    ({"environment.yml": "dependencies:\n  - torch\n" + "# x\n" * 700_000}, "environment.yml", "environment.yml",
     ["more than a conda environment file may hold (2 MiB)"]),
    ({"environment.yml": "dependencies:\n\t- pytorch=2.3.0\n"}, "environment.yml", "environment.yml:2",
     ["a tab in the indentation"]),
    ({"environment.yml": "name: x\nbuild:\n  - pytorch\n"}, "environment.yml", "environment.yml:2",
     ["unsupported key 'build'"]),
    ({"environment.yml": "dependencies:\n  - torch\n  - pip:\n    - a==1\n  - pip:\n    - b==1\n"},
     "environment.yml", "environment.yml:5", ["a second '- pip:' section"]),
    ({"environment.yml": "dependencies:\n  - numpy\n   - scipy\n"}, "environment.yml", "environment.yml:2",
     ["a value over several lines in 'dependencies': 'numpy - scipy'"]),
    ({"environment.yml": "dependencies:\n  - \"numpy\n"}, "environment.yml", "environment.yml:3",
     ["invalid YAML: while scanning a quoted scalar, found unexpected end of stream"]),
    ({"environment.yml": "dependencies:\n  - numpy[version='>=1.26'\n"}, "environment.yml", "environment.yml:2",
     ["unsupported conda package spec \"numpy[version='>=1.26'\""]),
    ({"environment.yml": "dependencies:\n  - numpy >=1.2|<1.0\n"}, "environment.yml", "environment.yml:2",
     ["unsupported conda package spec"]),
    ({"environment.yml": "dependencies:\n  - pip:\n    - torch==\n"}, "environment.yml", "environment.yml:3",
     ["'torch=='"]),
    ({"environment.yml": "dependencies:\n  - pip:\n    - -r missing.txt\n"}, "environment.yml", "environment.yml:3",
     ["-r 'missing.txt': no such file"]),
    ({"environment.yml": 'dependencies:\n  - pip:\n    - "-r a\\0b"\n'}, "environment.yml", "environment.yml:3",
     ["a control character in '-r a\\x00b'"]),
    ({"environment.yml": "dependencies: |\n  pytorch\n"}, "environment.yml", "environment.yml:1",
     ["'dependencies' must be a list, not '|'"]),
]


@pytest.mark.parametrize("files, top, where, needles", ERRORS)
def test_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], top: str, where: str,
                   needles: list[str]) -> None:
    bad_input(tmp_path, monkeypatch, files, top, where, needles)


_PLAIN = st.from_regex(r"[a-z][a-z0-9_-]{0,8}((=|==|>=|<)[0-9]{1,2}(\.[0-9]{1,2}){0,2}(=[a-z0-9_]{1,6})?)?",
                       fullmatch=True).filter(lambda s: s not in {"yes", "no", "on", "off", "true", "false", "null"})


@st.composite
def _scalar(draw: st.DrawFn) -> str:
    s = draw(_PLAIN)
    style = draw(st.sampled_from(["plain", "single", "double"]))
    text = {"plain": s, "single": f"'{s}'", "double": f'"{s}"'}[style]
    return text + draw(st.sampled_from(["", "  # why", " #"]))


@st.composite
def _env_file(draw: st.DrawFn) -> str:
    ind = draw(st.sampled_from([0, 2, 4]))
    lines = [f"name: {draw(_scalar())}"] if draw(st.booleans()) else []
    if draw(st.booleans()):
        lines += ["channels:"] + [" " * ind + f"- {draw(_scalar())}" for _ in range(draw(st.integers(0, 3)))]
    lines += ["dependencies:"]
    for _ in range(draw(st.integers(0, 4))):
        lines.append(" " * ind + f"- {draw(_scalar())}")
    if draw(st.booleans()):
        sub = ind + 2 + draw(st.sampled_from([0, 2]))
        lines.append(" " * ind + "- pip:" + draw(st.sampled_from(["", "  # pip"])))
        lines += [" " * sub + f"- {draw(_scalar())}" for _ in range(draw(st.integers(0, 3)))]
        lines += [" " * ind + f"- {draw(_scalar())}" for _ in range(draw(st.integers(0, 2)))]
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(["", "# comment", "   # indented"])))
    return "\n".join(lines) + "\n"


def _plain(value: object) -> object:
    """conda_document's (line, value) scalars as plain values, to compare with PyYAML."""
    if isinstance(value, tuple):
        return value[1]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(text=_env_file())
def test_conda_reader_agrees_with_pyyaml(text: str) -> None:
    """conda_document's (line, value) scalars are what PyYAML's safe_load reads."""
    assert _plain(conda_document(Path("environment.yml"), text)) == yaml.safe_load(text)


# --- conda-forge's own torch builds, and pip requirements a conda package already meets ---------------------------

E09 = Path(__file__).parents[2] / "fixtures" / "heldout36e" / "e09" / "environment.yml"  # 0Jmins0/Distillation, real


def test_a_conda_forge_build_is_read_as_conda_forge_s():
    """The real export's pytorch=2.5.1=cuda126_generic_py39_... is conda-forge's CUDA 12.6 build (+cu126.cf), and pip's
    torch==2.5.1 installs nothing over it (pip keeps the installed torch 2.5.1); pip's nvidia-* pins stay."""
    lock = load(E09)
    torch = [e for e in lock.entries if e.name == "torch"]
    assert [(e.version, e.line) for e in torch] == [("2.5.1+cu126.cf", 378)]
    assert {e.name: e.version for e in lock.entries}["nvidia-cudnn-cu12"] == "9.1.0.70"


@pytest.mark.parametrize(("text", "torch"), [
    # the pytorch channel's build string: PyTorch's own +cu121 build
    ("channels: [pytorch, nvidia]\ndependencies:\n  - pytorch=2.3.0=py3.11_cuda12.1_cudnn8.9.2_0\n", ["2.3.0+cu121"]),
    # a conda-forge build named by its build string, its channel, or conda-forge alone in front of the channels
    ("dependencies:\n  - pytorch=2.7.1=cuda129_mkl_py312_h1b2c3d4_301\n", ["2.7.1+cu129.cf"]),
    ("dependencies:\n  - conda-forge::pytorch=2.6.0\n  - cuda-version=12.6\n", ["2.6.0+cu126.cf"]),
    ("channels: [conda-forge]\ndependencies:\n  - pytorch=2.5.1\n  - cuda-version=12.6\n", ["2.5.1+cu126.cf"]),
    ("channels: [conda-forge, pytorch]\ndependencies:\n  - pytorch=2.5.1\n  - pytorch-cuda=12.4\n", ["2.5.1+cu124"]),
    # conda-forge's, its CUDA left to the solver: +cf (a CUDA build, which one not said)
    ("channels: [conda-forge]\ndependencies:\n  - pytorch=2.5.1=*cuda*\n", ["2.5.1+cf"]),
    ("dependencies:\n  - pytorch-gpu=2.4.1\n", ["2.4.1+cf"]),
    # pip asks for another build than the installed one: pip replaces it; the same version or a range it meets: not
    ("dependencies:\n  - pytorch=2.5.1=cuda126_generic_py311_h1_208\n  - pip:\n    - torch==2.5.1+cu124\n",
     ["2.5.1+cu126.cf", "2.5.1+cu124"]),
    ("dependencies:\n  - pytorch=2.5.1=cuda126_generic_py311_h1_208\n  - pip:\n    - torch>=2.4\n", ["2.5.1+cu126.cf"]),
    ("dependencies:\n  - pytorch=2.5.1=cuda126_generic_py311_h1_208\n  - pip:\n    - torch==2.6.0\n",
     ["2.5.1+cu126.cf", "2.6.0"]),
])
def test_conda_torch_and_pip_over_it(tmp_path, text, torch):
    p = tmp_path / "environment.yml"
    p.write_text(text)
    assert [e.version for e in load(p).entries if e.name == "torch"] == torch


@pytest.mark.parametrize(("spec", "version", "want"), [
    # conda's MatchSpec forms beside the simple ones: a build after a range, the bracket keys, a version of "*"
    ("pytorch>=2.1 *cuda*", None, ">=2.1"),
    ("pytorch[version='>=2.1']", None, ">=2.1"),
    ("pytorch>=2.1,<2.3[build=*cuda*]", None, "<2.3,>=2.1"),
    ("pytorch[version='2.4.1', build=py3.11_cuda12.1_cudnn8.9.2_0]", "2.4.1+cu121", None),
    ("pytorch=*=*cuda*", None, ""),
    ("numpy >=1.21,<2", None, "<2,>=1.21"),
])
def test_match_spec_forms(tmp_path, spec, version, want):
    p = tmp_path / "environment.yml"
    p.write_text(f'channels: [pytorch, conda-forge]\ndependencies:\n  - "{spec}"\n')
    (e,) = load(p).entries
    assert (e.version, e.spec) == (version, want)


def test_a_range_of_conda_forge_s_torch_is_not_read_as_a_wheel_s(tmp_path):
    """conda-forge's solver takes its own CUDA build of some release in the range (its GPU code the feedstock's),
    not the index's newest wheel in it: the torch stays one the file does not pin."""
    p = tmp_path / "environment.yml"
    p.write_text("channels: [conda-forge]\ndependencies:\n  - pytorch>=2.4,<2.5 cuda120*\n")
    (e,) = load(p).entries
    assert (e.name, e.version, e.spec) == ("torch", None, "")

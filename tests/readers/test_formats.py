"""glmcompat.readers.formats: requirements files (with includes) and the lock formats people hand to ``check``.

Fixtures under tests/fixtures/formats/<case>/ are real files (a SOURCE line names where each came from; poetry/,
pdm/ and pipenv/ are locks the real tools wrote, recorded by scripts/record_format_fixtures.py) or hand-written files
in the real formats (conda, whose solver is not here; poetry-sources/, poetry 1.2's lock-version 1.1 with git, url and
legacy sources); the error cases and odd-but-valid inputs build their small files in tmp_path.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glmcompat.model.errors import LockFormatError
from glmcompat.readers.formats.common import Entry, Lock, decode_text
from glmcompat.readers.formats.conda import conda_document, parse_conda_env
from glmcompat.readers.formats.pdm import parse_pdm_lock
from glmcompat.readers.formats.pipfile import parse_pipfile_lock
from glmcompat.readers.formats.poetry import parse_poetry_lock, poetry_python
from glmcompat.readers.formats.registry import kind_from_name, sniff_kind
from glmcompat.readers.formats.requirements import parse_requirements

from tests.conftest import FIXTURES, LOCKS

FORMATS = FIXTURES / "formats"
Parser = Callable[[Path, str], Lock]
PARSERS: dict[str, Parser] = {
    "requirements.txt": parse_requirements,
    "poetry.lock": parse_poetry_lock,
    "pdm.lock": parse_pdm_lock,
    "Pipfile.lock": parse_pipfile_lock,
    "environment.yml": parse_conda_env,
}


def load(path: Path) -> Lock:
    """Read a file the way the lead's dispatch will: kind from the name, else from the content."""
    text = decode_text(path, path.read_bytes())
    kind = kind_from_name(path.name) or sniff_kind(path, text)
    assert kind in PARSERS, kind
    return PARSERS[kind](path, text)


def fixture(rel: str) -> Path:
    return FORMATS / rel


def E(name: str, version: str | None, marker: str | None = None, source: str = "registry", spec: str | None = None,
      constraint: bool = False, origin: str | None = None, line: int | None = None) -> Entry:
    return Entry(name, version, marker, source, spec, constraint, origin, line)


LINUX = 'sys_platform == "linux"'

# --- whole files: every entry, or the ones that matter plus the count ----------------------------------------------

WHOLE = [
    ("s1/requirements.txt", [E("sgl-kernel", "0.3.21", origin="base.txt", line=1), E("torch", "2.10.0", line=2)]),
    ("s12/requirements.txt", [E("torch", "2.10.0", line=1), E("sgl-kernel", "0.3.21", line=2)]),
    ("s2/requirements.txt", [
        E("torch", "2.9.1+cu128", LINUX, line=2), E("torch", "2.9.1", 'sys_platform == "darwin"', line=4),
        E("torchvision", "0.24.1+cu128", LINUX, line=5), E("sgl-kernel", "0.3.21", LINUX, line=6)]),
    ("direct-refs/requirements.txt", [
        E("torchvision", "0.24.1+cu128", constraint=True, origin="constraints.txt", line=2),
        E("transformers", None, spec="<5", constraint=True, origin="constraints.txt", line=3),
        E("xgrammar", "0.1.25", origin="common.in", line=1),
        E("vllm", "0.11.0", 'platform_machine == "x86_64"', origin="serving/engine.txt", line=2),
        E("torch", "2.9.1+cu128", 'python_version == "3.12"', "wheel", line=6),
        E("sgl-kernel", "0.3.21+cu128", None, "wheel", line=7),
        E("flash-attn", None, None, "git", line=8),
        E("deep-gemm", None, None, "directory", line=9),
        E("glm-tools", None, None, "url", line=10),
        E("flashinfer", None, None, "editable", line=11),
        E("sglang", None, None, "editable", line=12),
        E("xformers", "0.0.33+cu128", None, "wheel", line=14),
        E("transformers-stream-generator", None, spec=">=0.0.5", line=15),
        E("numpy", None, spec="~=1.26", line=16)]),
    ("poetry-sources/poetry.lock", [
        E("deep-gemm", "1.0.0", None, "editable", line=3),
        E("einops", "0.8.0", line=16),
        E("flash-attn", "2.5.8", None, "git", line=24),
        E("glm-tools", "0.2.0", None, "path", line=43),
        E("pytest", "8.2.0", line=55),
        E("torch", "2.3.0+cu121", line=63),
        E("xformers", "0.0.26.post1", None, "wheel", line=76)]),
    ("conda-pytorch/environment.yml", [
        E("torch", "2.3.0+cu121", line=9), E("torchvision", "0.18.0", line=10), E("torchaudio", "2.3.0", line=11),
        E("pytorch-cuda", None, spec="==12.1.*", line=12), E("numpy", None, spec="<2,>=1.26", line=13),
        E("pip", None, spec="", line=14),
        E("vllm", "0.5.0", origin="requirements-serve.txt", line=1),
        E("transformers", None, spec=">=4.40", origin="requirements-serve.txt", line=2),
        E("xformers", "0.0.26.post1", line=17)]),
    ("conda-forge/environment.yaml", [
        E("torch", "2.5.1+cu126", line=6), E("cuda-version", None, spec="==12.6.*", line=7),
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


SOME = [  # (file, entry count, entries that must be among them)
    ("vllm-cuda/cuda.txt", 72, [
        E("regex", None, spec="", origin="common.txt", line=1),
        E("transformers", None, spec="<5,>=4.56.0", origin="common.txt", line=10),
        E("llguidance", None, 'platform_machine == "x86_64" or platform_machine == "arm64" or platform_machine == '
          '"aarch64" or platform_machine == "s390x" or platform_machine == "ppc64le"', spec="<1.4.0,>=1.3.0",
          origin="common.txt", line=22),
        E("fastapi", None, spec=">=0.115.0", origin="common.txt", line=13),
        E("torch", "2.13.0", line=7), E("torchvision", "0.28.0", line=10), E("torchcodec", None, spec=">=0.14", line=11),
        E("flashinfer-python", "0.6.18.post1", line=17), E("nvidia-cutlass-dsl", "4.7.1", line=29),
        E("tokenspeed-mla", "0.1.8", 'platform_system == "Linux"', line=33)]),
    ("tgi-uv-compile/requirements_cuda.txt", 118, [E("accelerate", "1.6.0", line=3), E("torch", "2.7.0", line=340)]),
    ("mistral-poetry/poetry.lock", 66, [
        E("torch", "2.3.0", line=1804), E("xformers", "0.0.26.post1", line=1926),
        E("colorama", "0.4.6", 'sys_platform == "win32"', line=149)]),
    ("pip-freeze/requirements.txt", 12, [
        E("glm-serve", None, None, "editable", line=4), E("sglang", None, None, "editable", line=5),
        E("mypkg", None, None, "directory", line=7), E("torch", "2.8.0+cu128", line=10)]),
    # real locks (scripts/record_format_fixtures.py): torch from a second named source, torchvision, xformers under a
    # marker, an extra with a git project and a wheel URL, a local path project, a dev group
    ("poetry/poetry.lock", 37, [
        E("colorama", "0.4.6", 'sys_platform == "win32"', line=3),
        E("einops", "0.8.0", 'extra == "flash"', "wheel", line=16),
        E("flash-attn", "2.7.4.post1", 'extra == "flash"', "git", line=63),
        E("glm-tools", "0.1.0", None, "editable", line=124),
        E("nvidia-nccl-cu12", "2.21.5", 'platform_system == "Linux" and platform_machine == "x86_64"', line=571),
        E("torch", "2.5.1", line=879),
        # poetry 2.5 writes markers = {dev = 'python_version == "3.10"'}: main needs it everywhere, so no marker
        E("typing-extensions", "4.16.0", line=996),
        E("xformers", "0.0.28.post3", 'sys_platform == "linux"', line=1009)]),
    ("pipenv/Pipfile.lock", 33, [
        E("einops", "0.8.0", None, "wheel", line=24),
        E("flash-attn", None, None, "git", line=39),  # pipenv locks a git project's commit, never its version
        E("glm-tools", None, None, "editable", line=51),
        # pipenv writes a package's Requires-Python as its marker and drops torch's platform marker for it
        E("nvidia-nccl-cu12", "2.21.5", 'python_version >= "3"', line=393),
        E("torch", "2.5.1", 'python_full_version >= "3.8.0"', line=515),
        E("xformers", "0.0.28.post3", 'sys_platform == "linux"', line=581),
        E("pytest", "8.3.3", 'python_version >= "3.8"', line=618)]),
    ("pdm/pdm.lock", 49, [
        E("einops", "0.8.0", None, "wheel", line=52),
        E("flash-attn", "2.7.4.post1", None, "git", line=89),
        E("glm-devtools", "0.1.0", None, "editable", line=114),
        E("glm-tools", "0.1.0", None, "directory", line=123),
        E("nvidia-nccl-cu12", "2.21.5", 'platform_system == "Linux" and platform_machine == "x86_64"', line=478),
        E("pytest", "8.3.3", line=579),
        E("torch", "2.5.1", line=704),
        E("uvicorn", "0.32.0", line=800),  # once, though pdm lists it again for its [standard] extra (line 816)
        E("xformers", "0.0.28.post3", 'sys_platform == "linux"', line=965)]),
    ("rye/requirements.lock", 6, [
        E("nvidia-nccl-cu12", "2.21.5", 'platform_machine == "x86_64" and platform_system == "Linux"', line=18),
        E("torch", "2.5.1", line=22)]),
]


@pytest.mark.parametrize("rel, count, some", SOME, ids=[s[0] for s in SOME])
def test_entries_among(rel: str, count: int, some: list[Entry]) -> None:
    entries = load(fixture(rel)).entries
    assert len(entries) == count
    for e in some:
        assert e in entries


META = [  # (file, kind, requires_python, meta keys and values that must be there)
    ("s2/requirements.txt", "requirements.txt", None, {"index_urls": ["https://pytorch-index.invalid/whl/cu128"]}),
    ("direct-refs/requirements.txt", "requirements.txt", None, {
        "index_urls": ["https://index.invalid/simple"],
        "notes": [f"{FORMATS}/direct-refs/requirements.txt:13: editable '.': cannot tell its project name "
                  "(no #egg=); not checked"]}),
    ("rye/requirements.lock", "requirements.txt", None, {
        "notes": [f"{FORMATS}/rye/requirements.lock:12: editable 'file:.': cannot tell its project name (no #egg=); "
                  "not checked"]}),
    ("mistral-poetry/poetry.lock", "poetry.lock", ">=3.9.10,<4", {"extras": {}, "optional": []}),
    ("poetry-sources/poetry.lock", "poetry.lock", ">=3.10,<3.12", {
        "extras": {"flash": ["flash-attn", "einops"]}, "optional": ["einops", "flash-attn"]}),
    ("pdm/pdm.lock", "pdm.lock", ">=3.10,<3.13", {}),
    ("poetry/poetry.lock", "poetry.lock", ">=3.10,<3.13", {
        "extras": {"flash": ["einops", "flash-attn"]}, "optional": ["einops", "flash-attn"]}),
    ("pipenv/Pipfile.lock", "Pipfile.lock", "==3.11.*", {}),
    ("conda-pytorch/environment.yml", "environment.yml", "==3.11.*", {
        "conda_cuda": "12.1", "channels": ["pytorch", "nvidia", "conda-forge"],
        "conda_packages": ["numpy", "pip", "pytorch-cuda", "torch", "torchaudio", "torchvision"]}),
    ("conda-forge/environment.yaml", "environment.yml", "==3.12.*", {"conda_cuda": "12.6", "channels": ["conda-forge"]}),
    ("conda-export/env.yaml", "environment.yml", "==3.10.14", {"conda_cuda": "11.8"}),
    ("conda-cpu/conda-cpu.yml", "environment.yml", None, {"channels": ["pytorch"]}),
]


@pytest.mark.parametrize("rel, kind, python, meta", META, ids=[m[0] for m in META])
def test_kind_python_and_meta(rel: str, kind: str, python: str | None, meta: dict[str, object]) -> None:
    lock = load(fixture(rel))
    assert (lock.kind, lock.requires_python, lock.path) == (kind, python, str(fixture(rel)))
    for key, value in meta.items():
        assert lock.meta[key] == value, key


PDM_GROUPS = {"torch": ["default", "flash"], "flash-attn": ["flash"], "einops": ["flash"], "glm-tools": ["default"],
              "glm-devtools": ["dev"], "pytest": ["dev"], "uvicorn": ["default"]}
GROUPS = [  # (file, package -> the groups that must be its groups)
    ("poetry/poetry.lock", {"torch": ["main"], "pytest": ["dev"], "typing-extensions": ["main", "dev"],
                            "flash-attn": ["main"]}),
    ("pipenv/Pipfile.lock", {"torch": ["default"], "flash-attn": ["default"], "glm-tools": ["default"],
                             "einops": ["default"], "pytest": ["develop"]}),
    ("pdm/pdm.lock", PDM_GROUPS),
]


@pytest.mark.parametrize("rel, groups", GROUPS, ids=[g[0] for g in GROUPS])
def test_groups_of_real_locks(rel: str, groups: dict[str, list[str]]) -> None:
    got = load(fixture(rel)).meta["groups"]
    assert {name: got[name] for name in groups} == groups


# What no tool here writes but a hand-edited or older lock holds: a range for a version, a package in both sections
# (pipenv before 2024 repeated them), a name not in canonical form. The real locks above cover the rest.
PIPFILE_ODD = """{
    "_meta": {"pipfile-spec": 6, "requires": {"python_version": "3.11"}, "sources": []},
    "default": {
        "filelock": {"version": "==3.16.1", "markers": "python_version >= '3.8'"},
        "torch": {"version": "==2.4.1+cu121", "index": "pytorch"},
        "transformers": {"version": ">=4.45"}
    },
    "develop": {
        "filelock": {"version": "==3.16.1", "markers": "python_version >= '3.8'"}
    }
}
"""
PDM_ODD = '[metadata]\ngroups = ["default"]\nlock_version = "4.5.0"\n\n[[package]]\nname = "Torch"\nversion = "2.5.1"\n' \
          'groups = ["default"]\n'


def test_odd_but_valid_pipenv_and_pdm_locks(tmp_path: Path) -> None:
    p = tmp_path / "Pipfile.lock"
    p.write_text(PIPFILE_ODD)
    lock = load(p)
    assert lock.entries == (E("filelock", "3.16.1", 'python_version >= "3.8"', line=4), E("torch", "2.4.1+cu121", line=5),
                            E("transformers", None, spec=">=4.45", line=6),
                            E("filelock", "3.16.1", 'python_version >= "3.8"', line=9))
    assert lock.meta["groups"] == {"filelock": ["default", "develop"], "torch": ["default"], "transformers": ["default"]}
    p = tmp_path / "pdm.lock"
    p.write_text(PDM_ODD)
    assert load(p).entries == (E("torch", "2.5.1", line=5),)


def test_poetry_groups_and_deterministic_output() -> None:
    p = fixture("poetry-sources/poetry.lock")
    first = load(p)
    assert first.meta["groups"]["pytest"] == ["dev"] and first.meta["groups"]["torch"] == ["main"]
    assert load(p) == first


# --- bytes to text ----------------------------------------------------------------------------------------------

S2_TEXT = fixture("s2/requirements.txt").read_text()


@pytest.mark.parametrize("encode", [
    lambda t: t.encode("utf-8"),
    lambda t: codecs.BOM_UTF8 + t.encode("utf-8"),
    lambda t: codecs.BOM_UTF16_LE + t.encode("utf-16-le"),
    lambda t: codecs.BOM_UTF16_BE + t.encode("utf-16-be"),
    lambda t: codecs.BOM_UTF32_LE + t.encode("utf-32-le"),
    lambda t: codecs.BOM_UTF32_BE + t.encode("utf-32-be"),
    lambda t: t.replace("\n", "\r\n").encode("utf-8"),
    lambda t: t.replace("\n", "\r").encode("utf-8"),
    lambda t: codecs.BOM_UTF16_LE + t.replace("\n", "\r\n").encode("utf-16-le"),  # Windows Notepad's "Unicode"
], ids=["utf-8", "utf-8-bom", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "crlf", "cr", "utf-16-crlf"])
def test_decode_text(tmp_path: Path, encode: Callable[[str], bytes]) -> None:
    p = tmp_path / "requirements.txt"
    p.write_bytes(encode(S2_TEXT))
    assert decode_text(p, p.read_bytes()) == S2_TEXT
    assert load(p).entries == load(fixture("s2/requirements.txt")).entries


BAD_BYTES = [
    (b"torch==2.9.1\nsgl-kernel==0.3.21\xff\n", 2, ["not UTF-8 text", "b'\\xff'"]),
    (b"torch==2.9.1\r\n\r\nx==1\xc3(\n", 3, ["not UTF-8 text", "b'\\xc3'"]),
    (b"torch==2.9.1\n\x00\x01\x02", 2, ["binary data", "NUL"]),
    ("torch==2.9.1\n".encode("utf-16-le"), 1, ["NUL", "UTF-16 without a byte-order mark?"]),
    (codecs.BOM_UTF16_LE + "torch==2.9.1\n".encode("utf-16-le") + b"\x00\xd8", 2, ["not UTF-16-LE text"]),
]


@pytest.mark.parametrize("data, line, needles", BAD_BYTES)
def test_decode_text_errors(tmp_path: Path, data: bytes, line: int, needles: list[str]) -> None:
    p = tmp_path / "requirements.txt"
    with pytest.raises(LockFormatError) as err:
        decode_text(p, data)
    msg = str(err.value)
    assert err.value.exit_code == 2 and "\n" not in msg and msg.startswith(f"{p}:{line}: "), msg
    for needle in needles:
        assert needle in msg, msg


# --- kinds ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, kind", [
    ("poetry.lock", "poetry.lock"), ("pdm.lock", "pdm.lock"), ("Pipfile.lock", "Pipfile.lock"),
    ("environment.yml", "environment.yml"), ("environment.yaml", "environment.yml"),
    ("environment-cuda.yml", "environment.yml"), ("conda.yaml", "environment.yml"), ("conda-gpu.yml", "environment.yml"),
    ("requirements.lock", "requirements.txt"), ("requirements-dev.lock", "requirements.txt"),
    ("requirements.txt", "requirements.txt"), ("cuda.txt", "requirements.txt"), ("requirements.in", "requirements.txt"),
    ("uv.lock", "uv.lock"), ("pylock.toml", "pylock.toml"), ("pylock.gpu.toml", "pylock.toml"),
    ("prod.lock", None), ("env.yaml", None), ("pyproject.toml", None), ("Pipfile", None),
])
def test_kind_from_name(name: str, kind: str | None) -> None:
    assert kind_from_name(name) == kind


@pytest.mark.parametrize("src, kind", [
    (FORMATS / "mistral-poetry/poetry.lock", "poetry.lock"),
    (FORMATS / "poetry-sources/poetry.lock", "poetry.lock"),
    (FORMATS / "pdm/pdm.lock", "pdm.lock"),
    (FORMATS / "pipenv/Pipfile.lock", "Pipfile.lock"),
    (FORMATS / "conda-export/env.yaml", "environment.yml"),
    (FORMATS / "conda-forge/environment.yaml", "environment.yml"),
    (FORMATS / "tgi-uv-compile/requirements_cuda.txt", "requirements.txt"),
    (FORMATS / "s12/requirements.txt", "requirements.txt"),
    (LOCKS / "glm5-sglang-0.5.9/uv.lock", "uv.lock"),
    (LOCKS / "glm5-sglang-0.5.9/pylock.toml", "pylock.toml"),
    (LOCKS / "glm5-sglang-0.5.9/pyproject.toml", None),
], ids=lambda v: v if isinstance(v, str) or v is None else "/".join(Path(v).parts[-2:]))
def test_sniff_kind_by_content(src: Path, kind: str | None) -> None:
    """Under a name that tells nothing (``locks/prod.lock``), the content tells the kind."""
    assert sniff_kind(Path("locks/prod.lock"), decode_text(src, src.read_bytes())) == kind


def test_a_poetry_lock_named_txt_reads_as_poetry(tmp_path: Path) -> None:
    p = tmp_path / "deps.txt"
    p.write_bytes(fixture("poetry-sources/poetry.lock").read_bytes())
    text = decode_text(p, p.read_bytes())
    assert sniff_kind(p, text) == "poetry.lock"
    assert parse_poetry_lock(p, text).entries == load(fixture("poetry-sources/poetry.lock")).entries


# --- requirements line syntax -----------------------------------------------------------------------------------

LINES = [
    ("torch==2.9.1 \\\n    --hash=sha256:00 \\\n    --hash=sha256:11\nsgl-kernel==0.3.21\n",
     [E("torch", "2.9.1", line=1), E("sgl-kernel", "0.3.21", line=4)]),
    ("Sgl_Kernel===0.3.21+cu128\nflashinfer.python==0.5.*  # wildcard\n",
     [E("sgl-kernel", "0.3.21+cu128", line=1), E("flashinfer-python", None, spec="==0.5.*", line=2)]),
    ("torch>=2.8,<2.10\nvllm\nxformers[triton]==0.0.33 ; python_version >= '3.10'\n",
     [E("torch", None, spec="<2.10,>=2.8", line=1), E("vllm", None, spec="", line=2),
      E("xformers", "0.0.33", 'python_version >= "3.10"', line=3)]),
    ("# comment\n  # indented comment \\\ntorch==2.9.1#not-a-comment-without-space\n",
     None),  # '#' glued to a version is part of it: an invalid requirement, tested in ERRORS
    ("-i https://index.invalid/simple\n--extra-index-url=https://index.invalid/cu128\n--trusted-host index.invalid\n"
     "--pre\n--prefer-binary\n--only-binary :all:\n--no-binary=sgl-kernel\n--require-hashes\n--use-feature=fast-deps\n"
     "-f ./wheels\n--frobnicate\ntorch==2.9.1 --config-settings editable_mode=compat\n",
     [E("torch", "2.9.1", line=12)]),
    ("-e git+https://github.com/org/repo.git@main\n-e \"python[all]\"\n--editable=./third_party/deep_ep#egg=deep-ep\n"
     "https://github.com/org/repo/archive/main.zip\ntorch==2.9.1\n",
     [E("deep-ep", None, None, "editable", line=3), E("torch", "2.9.1", line=5)]),
    ("torch @ file:///wheels/torch-2.9.1+cu130-cp312-cp312-linux_x86_64.whl\n"
     "sgl-kernel @ ./wheels/sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl\n"
     "glm @ git+https://github.com/org/glm.git#subdirectory=python\nlocal @ ../src/local\n"
     "https://index.invalid/p/flash_attn-2.8.3+cu12torch2.9-cp312-cp312-linux_x86_64.whl ; sys_platform == 'linux'\n",
     [E("torch", "2.9.1+cu130", None, "wheel", line=1), E("sgl-kernel", "0.3.21", None, "wheel", line=2),
      E("glm", None, None, "git", line=3), E("local", None, None, "directory", line=4),
      E("flash-attn", "2.8.3+cu12torch2.9", LINUX, "wheel", line=5)]),
]


@pytest.mark.parametrize("text, entries", [x for x in LINES if x[1] is not None])
def test_requirement_lines(tmp_path: Path, text: str, entries: list[Entry]) -> None:
    p = tmp_path / "requirements.txt"
    p.write_text(text)
    assert list(load(p).entries) == entries


def test_editable_names_that_cannot_be_known_are_notes(tmp_path: Path) -> None:
    p = tmp_path / "requirements.txt"
    p.write_text(LINES[5][0])
    assert load(p).meta["notes"] == [
        f"{p}:1: editable 'git+https://github.com/org/repo.git@main': cannot tell its project name (no #egg=); "
        "not checked",
        f"{p}:2: editable 'python[all]': cannot tell its project name (no #egg=); not checked",
        f"{p}:4: cannot tell the project name of 'https://github.com/org/repo/archive/main.zip' (no #egg=); "
        "not checked",
    ]


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


INCLUDES = [
    ({"requirements.txt": "-rbase.txt\n--requirement sub/more.txt\n-c ../shared/pins.txt\ntorch==2.9.1\n",
      "base.txt": "sgl-kernel==0.3.21\n", "sub/more.txt": "-r ../base.txt\n--requirement=deeper.txt\n",
      "sub/deeper.txt": "vllm==0.11.0\n"},
     [E("sgl-kernel", "0.3.21", origin="base.txt", line=1), E("vllm", "0.11.0", origin="sub/deeper.txt", line=1),
      E("torchvision", "0.24.1", constraint=True, origin="../shared/pins.txt", line=1),
      E("torch", "2.9.1", line=4)]),
    ({"requirements.txt": "-c constraints.txt\ntorch\n", "constraints.txt": "-r nested.txt\n-c pins.txt\n",
      "nested.txt": "numpy==2.1.0\n", "pins.txt": "torch==2.9.1\n"},  # pip: -r inside a -c file still requires
     [E("numpy", "2.1.0", origin="nested.txt", line=1),
      E("torch", "2.9.1", constraint=True, origin="pins.txt", line=1), E("torch", None, spec="", line=2)]),
]


@pytest.mark.parametrize("files, entries", INCLUDES)
def test_includes(tmp_path: Path, files: dict[str, str], entries: list[Entry]) -> None:
    write_tree(tmp_path / "proj", files)
    write_tree(tmp_path, {"shared/pins.txt": "torchvision==0.24.1\n"})
    assert list(load(tmp_path / "proj" / "requirements.txt").entries) == entries


# --- bad input: one line, exit 2, naming the file, the line and the value ---------------------------------------

ERRORS = [  # (files, file to read, where the message must point, what it must say)
    ({"requirements.txt": "torch==2.9.1\n-r a.txt\n", "a.txt": "-r b.txt\n", "b.txt": "x==1\n-r a.txt\n"},
     "requirements.txt", "b.txt:2", ["-r 'a.txt': include cycle", "requirements.txt -> a.txt -> b.txt -> a.txt"]),
    ({"requirements.txt": "-r requirements.txt\n"}, "requirements.txt", "requirements.txt:1", ["include cycle"]),
    ({"requirements.txt": "torch==2.9.1\n-r nope.txt\n"}, "requirements.txt", "requirements.txt:2",
     ["-r 'nope.txt': no such file"]),
    ({"requirements.txt": "-c sub\n", "sub/x.txt": "a==1\n"}, "requirements.txt", "requirements.txt:1",
     ["-c 'sub': is a directory"]),
    ({"requirements.txt": "-r https://index.invalid/reqs.txt\n"}, "requirements.txt", "requirements.txt:1",
     ["'https://index.invalid/reqs.txt': a URL"]),
    ({"requirements.txt": "-r\n"}, "requirements.txt", "requirements.txt:1", ["option -r needs a value"]),
    ({"requirements.txt": "a==1\n\ntorch==\n"}, "requirements.txt", "requirements.txt:3", ["'torch=='"]),
    ({"requirements.txt": "==1.0\n"}, "requirements.txt", "requirements.txt:1", ["invalid requirement '==1.0'"]),
    ({"requirements.txt": "torch==2.9.1 ; sys_platform = 'linux'\n"}, "requirements.txt", "requirements.txt:1",
     ["invalid requirement"]),
    ({"requirements.txt": "torch==2.9.1#not-a-comment\n"}, "requirements.txt", "requirements.txt:1",
     ["'torch==2.9.1#not-a-comment'"]),
    ({"requirements.txt": "torch=2.9.1\n"}, "requirements.txt", "requirements.txt:1", ["'torch=2.9.1'"]),
    ({"requirements.txt": "x @ https://index.invalid/p/not-a-wheel.whl\n"}, "requirements.txt",
     "requirements.txt:1", ["invalid wheel file name 'not-a-wheel.whl'"]),
    ({"requirements.txt": "torch @ https://index.invalid/p/sgl_kernel-0.3.21-cp310-abi3-linux_x86_64.whl\n"},
     "requirements.txt", "requirements.txt:1", ["'torch' names the wheel", "which is 'sgl-kernel'"]),
    ({"requirements.txt": "./w/x-1.0-py3-none-any.whl ; os_name =\n"}, "requirements.txt", "requirements.txt:1",
     ["invalid marker 'os_name ='"]),
    ({"requirements.txt": "base.txt: a==1\n", "base.txt": "\n"}, "requirements.txt", "requirements.txt:1",
     ["invalid requirement"]),
    ({"requirements.txt": "-r base.txt\n", "base.txt": "a==1\nb==\xff\n"}, "requirements.txt", "base.txt:2",
     ["'b==\xff'"]),
    ({"requirements.txt": "# only comments\n--index-url https://index.invalid/simple\n\n"}, "requirements.txt",
     "requirements.txt", ["no requirements found"]),
    ({"requirements.txt": ""}, "requirements.txt", "requirements.txt", ["no requirements found"]),
    ({"requirements.txt": "-c pins.txt\n", "pins.txt": "torch==2.9.1\n"}, "requirements.txt", "requirements.txt",
     ["no requirements found (only constraints)"]),
    ({"requirements.txt": "-e .\n"}, "requirements.txt", "requirements.txt", ["no requirements found",
                                                                              "editable '.'"]),
    # poetry.lock
    ({"poetry.lock": '[[package]]\nname = "torch"\nversion = "2.3.0"\n\n[metadata]\nlock-version = "3.0"\n'},
     "poetry.lock", "poetry.lock:6", ["lock-version '3.0' is not supported (known: 1.x, 2.x)"]),
    ({"poetry.lock": '[[package]]\nname = "torch"\nversion = "2.3.0"\n'}, "poetry.lock", "poetry.lock",
     ["lock-version None is not supported"]),
    ({"poetry.lock": '[[package]]\nname = "torch"\nversion = "2.3.0"\n[package.source]\ntype = "hg"\nurl = "x"\n'
                     '[metadata]\nlock-version = "2.1"\n'}, "poetry.lock", "poetry.lock:1",
     ["unknown source type 'hg'"]),
    ({"poetry.lock": '[metadata]\nlock-version = "2.1"\n\n[[package]]\nname = "torch"\nversion = "latest"\n'},
     "poetry.lock", "poetry.lock:4", ["package 'torch': invalid version 'latest'"]),
    ({"poetry.lock": '[metadata]\nlock-version = "2.1"\n[[package]]\nname = "torch"\nversion = "2.3.0"\n'
                     'markers = "python_version >> \'3\'"\n'}, "poetry.lock", "poetry.lock:3",
     ["invalid marker"]),
    ({"poetry.lock": '[metadata]\nlock-version = "2.1"\n[[package]]\nname = "torch"\nversion = "2.3.0"\n'
                     'optional = "no"\n'}, "poetry.lock", "poetry.lock:3", ["'optional' must be true or false"]),
    ({"poetry.lock": '[metadata]\nlock-version = "2.1"\n[[package]\n'}, "poetry.lock", "poetry.lock:3",
     ["invalid TOML"]),
    # pdm.lock
    ({"pdm.lock": '[metadata]\nlock_version = "5.0.0"\n[[package]]\nname = "torch"\nversion = "2.5.1"\n'},
     "pdm.lock", "pdm.lock:2", ["pdm.lock lock_version '5.0.0' is not supported (known: 4.x)"]),
    ({"pdm.lock": '[metadata]\nlock_version = 4\n'}, "pdm.lock", "pdm.lock:2", ["lock_version 4 is not supported"]),
    ({"pdm.lock": '[metadata]\nlock_version = "4.5.0"\nrequires_python = ">=3.10 <4"\n'}, "pdm.lock", "pdm.lock:3",
     ["invalid requires_python '>=3.10 <4'"]),
    # Pipfile.lock
    ({"Pipfile.lock": '{"_meta": {"pipfile-spec": 7}, "default": {}}'}, "Pipfile.lock", "Pipfile.lock:1",
     ["_meta.pipfile-spec 7 is not supported (known: 6)"]),
    ({"Pipfile.lock": '{"_meta": {"pipfile-spec": "6"}}'}, "Pipfile.lock", "Pipfile.lock:1",
     ["_meta.pipfile-spec '6' is not supported"]),
    ({"Pipfile.lock": '{"_meta": {"pipfile-spec": 6},\n "default": {"torch": {"version": "2.4.1"}}}'},
     "Pipfile.lock", "Pipfile.lock:2", ["package 'torch': invalid version '2.4.1'"]),
    ({"Pipfile.lock": '{"_meta": {"pipfile-spec": 6},\n "default": {"torch": {"version": "==2.4.1",\n'},
     "Pipfile.lock", "Pipfile.lock:3", ["invalid JSON"]),
    ({"Pipfile.lock": '[1, 2]'}, "Pipfile.lock", "Pipfile.lock:1", ["no '_meta' object"]),
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
    ({"environment.yml": "dependencies:\n  - numpy[version='>=1.26']\n"}, "environment.yml", "environment.yml:2",
     ["unsupported conda package spec \"numpy[version='>=1.26']\""]),
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


def read_error(path: Path) -> LockFormatError:
    with pytest.raises(LockFormatError) as err:
        load(path)
    return err.value


@pytest.mark.parametrize("files, top, where, needles", ERRORS)
def test_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], top: str, where: str,
                   needles: list[str]) -> None:
    write_tree(tmp_path, files)
    monkeypatch.chdir(tmp_path)  # messages name files as the user gave them: relative here
    e = read_error(Path(top))
    msg = str(e)
    assert e.exit_code == 2 and "\n" not in msg and "Traceback" not in msg, msg
    assert msg.startswith(where + ":"), msg
    for needle in needles:
        assert needle in msg, msg


def test_a_huge_bad_value_is_quoted_short(tmp_path: Path) -> None:
    p = tmp_path / "requirements.txt"
    p.write_text("torch==2.9.1\n" + "x" * 20_000 + "==\n")
    msg = str(read_error(p))
    assert msg.startswith(f"{p}:2: invalid requirement 'xxx") and msg.endswith("...") and len(msg) < 400, msg


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
@pytest.mark.parametrize("link, include", [
    ("base.txt", "-r base.txt"),  # a file link to outside the tree
    ("sub", "-c sub/pins.txt"),  # a directory link to outside the tree
])
def test_include_escaping_through_a_symlink(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, link: str,
                                            include: str) -> None:
    write_tree(tmp_path, {"outside/pins.txt": "root:x:0:0\n", "proj/requirements.txt": f"torch==2.9.1\n{include}\n"})
    target = tmp_path / "outside" / ("pins.txt" if link == "base.txt" else "")
    (tmp_path / "proj" / link).symlink_to(target)
    monkeypatch.chdir(tmp_path / "proj")
    msg = str(read_error(Path("requirements.txt")))
    assert msg.startswith("requirements.txt:2: ") and f"{include.split()[0]} '{include.split()[1]}' escapes" in msg, msg
    assert "through a symlink" in msg and "root:x" not in msg


def test_symlinks_inside_the_tree_and_explicit_parent_includes_are_fine(tmp_path: Path) -> None:
    write_tree(tmp_path, {"shared/common.txt": "numpy==2.1.0\n", "proj/reqs/base.txt": "sgl-kernel==0.3.21\n",
                          "proj/requirements.txt": "-r ../shared/common.txt\n-r base.txt\ntorch==2.10.0\n"})
    (tmp_path / "proj" / "base.txt").symlink_to(tmp_path / "proj" / "reqs" / "base.txt")
    assert list(load(tmp_path / "proj" / "requirements.txt").entries) == [
        E("numpy", "2.1.0", origin="../shared/common.txt", line=1), E("sgl-kernel", "0.3.21", origin="base.txt", line=1),
        E("torch", "2.10.0", line=3)]


# --- poetry details ---------------------------------------------------------------------------------------------

POETRY2 = '''# This file is automatically @generated by Poetry 2.1.1 and should not be changed by hand.

[[package]]
name = "triton"
version = "3.1.0"
description = "A language and compiler for custom Deep Learning operations"
optional = true
python-versions = "*"
groups = ["main", "gpu"]
markers = {main = "platform_system == \\"Linux\\" and extra == \\"gpu\\"", gpu = "platform_system == \\"Linux\\""}
files = []

[extras]
gpu = ["triton (>=3.0)"]

[metadata]
lock-version = "2.1"
python-versions = ">=3.10,<3.14"
content-hash = "0000"
'''


def test_poetry2_markers_by_group_and_extras(tmp_path: Path) -> None:
    p = tmp_path / "poetry.lock"
    p.write_text(POETRY2)
    lock = load(p)
    assert lock.entries == (E("triton", "3.1.0", '(platform_system == "Linux") or '
                                                 '(platform_system == "Linux" and extra == "gpu")', line=3),)
    assert lock.meta == {"extras": {"gpu": ["triton"]}, "optional": ["triton"], "groups": {"triton": ["main", "gpu"]}}
    assert lock.requires_python == ">=3.10,<3.14"


@pytest.mark.parametrize("constraint, spec", [
    ("^3.9.10", ">=3.9.10,<4"), ("^3.10", ">=3.10,<4"), ("~3.10", ">=3.10,<3.11"), ("~3.10.2", ">=3.10.2,<3.11"),
    (">=3.10,<4.0", ">=3.10,<4.0"), (">=3.8 <3.13", ">=3.8,<3.13"), ("3.11.*", "==3.11.*"), ("^0.2", ">=0.2,<0.3"),
    ("*", None), ("^3.9 || ^4.0", None), ("", None), (None, None), ("python3", None), ("^3.x", None),
])
def test_poetry_python(constraint: str | None, spec: str | None) -> None:
    assert poetry_python(constraint) == spec


# --- property tests ---------------------------------------------------------------------------------------------

_TOKENS = [
    "torch==2.9.1", "torch==", "==1.0", "-r base.txt", "-r loop.txt", "-r sub", "-c base.txt", "-e .",
    "-e git+https://github.com/a/b.git#egg=b", "x @ https://index.invalid/x-1.0-py3-none-any.whl", "\\",
    "    --hash=sha256:00", "# c", "a ; python_version >= '3", "[[package]]", 'name = "torch"', 'version = "2.3.0"',
    "[metadata]", 'lock-version = "2.1"', 'lock_version = "4.5.0"', "[package.source]", 'type = "git"',
    '{"_meta": {"pipfile-spec": 6}, "default": {"torch": {"version": "==2.4.1"}}}', "name: env", "dependencies:",
    "  - pytorch=2.3.0", "  - pip:", "    - -r base.txt", "    - torch==", "  - 'x", "channels: [a, b", "\t- x",
    "  - pytorch==2.3.0=py3.11_cuda12.1_cudnn8_0", "  - numpy >=1|<0", "markers = {a = 1}", "optional = 3",
    '"_meta": [', '    - "-r a\\0b"', "a ; " + "(" * 3000, "torch==" + "9" * 5000, "a = " + "[" * 3000, '{"_meta": ' + "[" * 3000,
]
_inputs = st.one_of(
    st.binary(max_size=300),
    st.lists(st.sampled_from(_TOKENS), max_size=12).map(lambda ls: "\n".join(ls).encode()),
    st.lists(st.sampled_from(_TOKENS), max_size=8).map(lambda ls: "\r\n".join(ls).encode("utf-16")),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_inputs, kind=st.sampled_from(sorted(PARSERS)))
def test_arbitrary_bytes_only_raise_lock_format_error(tmp_path: Path, data: bytes, kind: str) -> None:
    write_tree(tmp_path, {"base.txt": "sgl-kernel==0.3.21\n", "loop.txt": "-r loop.txt\n", "sub/x.txt": ""})
    p = tmp_path / kind
    try:
        lock = PARSERS[kind](p, decode_text(p, data))
    except LockFormatError as e:
        assert "\n" not in str(e) and str(e).startswith(str(tmp_path)), str(e)
    else:
        assert lock.kind == kind and all(isinstance(e, Entry) and e.name for e in lock.entries)


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


@settings(max_examples=300, deadline=None)
@given(text=_env_file())
def test_conda_reader_agrees_with_pyyaml(text: str) -> None:
    """conda_document's (line, value) scalars are what PyYAML's safe_load reads."""
    assert _plain(conda_document(Path("environment.yml"), text)) == yaml.safe_load(text)


_NAMES = st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,5}([-_.][A-Za-z0-9]{1,4}){0,2}", fullmatch=True)
_VERSIONS = st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,3}){0,3}((a|b|rc|\.post|\.dev)[0-9]{1,2})?(\+cu1[0-9]{2})?",
                          fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(pins=st.lists(st.tuples(_NAMES, _VERSIONS, st.sampled_from(["==", " == ", "==="]),
                               st.sampled_from(["", "  # pinned", " ; python_version >= '3.10'"])),
                     min_size=1, max_size=6))
def test_pins_read_back(pins: list[tuple[str, str, str, str]]) -> None:
    text = "".join(f"{n}{op}{v}{tail}\n" for n, v, op, tail in pins)
    lock = parse_requirements(Path("requirements.txt"), text)
    assert [(e.name, e.version, e.line) for e in lock.entries] == [
        (n.lower().replace("_", "-").replace(".", "-"), v, i) for i, (n, v, _, _) in enumerate(pins, 1)]

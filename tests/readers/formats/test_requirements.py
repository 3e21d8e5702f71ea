"""pip requirements files (glmcompat.readers.formats.requirements): line syntax, includes, bad input."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glmcompat.readers.formats.common import Entry
from glmcompat.readers.formats.requirements import parse_requirements

from tests.readers.formats.helpers import (
    FIXTURE_DIR, LINUX, E, bad_input, entries_among, fixture, kind_python_and_meta, load, read_error, write_tree,
)

# --- whole files: every entry, or the ones that matter plus the count --------------------------------------------

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
    # real pip 26.3 freeze (scripts/record_format_fixtures.py): an editable git project without a remote (pip's
    # comment line before it), an editable subdirectory of a clone (-e git+...#egg=&subdirectory=), a local directory
    ("pip-freeze/requirements.txt", 12, [
        E("glm-serve", None, None, "editable", line=5), E("sglang", None, None, "editable", line=9),
        E("mypkg", None, None, "directory", line=6), E("torch", "2.8.0", line=10)]),
    ("rye/requirements.lock", 6, [
        E("nvidia-nccl-cu12", "2.21.5", 'platform_machine == "x86_64" and platform_system == "Linux"', line=18),
        E("torch", "2.5.1", line=22)]),
]


@pytest.mark.parametrize("rel, count, some", SOME, ids=[s[0] for s in SOME])
def test_entries_among(rel: str, count: int, some: list[Entry]) -> None:
    entries_among(rel, count, some)


META = [  # (file, kind, requires_python, meta keys and values that must be there)
    ("s2/requirements.txt", "requirements.txt", None, {"index_urls": ["https://pytorch-index.invalid/whl/cu128"]}),
    ("direct-refs/requirements.txt", "requirements.txt", None, {
        "index_urls": ["https://index.invalid/simple"],
        "notes": [f"{FIXTURE_DIR}/direct-refs/requirements.txt:13: editable '.': cannot tell its project name "
                  "(no #egg=); not checked"]}),
    ("rye/requirements.lock", "requirements.txt", None, {
        "notes": [f"{FIXTURE_DIR}/rye/requirements.lock:12: editable 'file:.': cannot tell its project name (no #egg=); "
                  "not checked"]}),
]


@pytest.mark.parametrize("rel, kind, python, meta", META, ids=[m[0] for m in META])
def test_kind_python_and_meta(rel: str, kind: str, python: str | None, meta: dict[str, object]) -> None:
    kind_python_and_meta(rel, kind, python, meta)


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
]


@pytest.mark.parametrize("files, top, where, needles", ERRORS)
def test_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], top: str, where: str,
                   needles: list[str]) -> None:
    bad_input(tmp_path, monkeypatch, files, top, where, needles)


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


def test_a_huge_bad_value_is_quoted_short(tmp_path: Path) -> None:
    p = tmp_path / "requirements.txt"
    p.write_text("torch==2.9.1\n" + "x" * 20_000 + "==\n")
    msg = str(read_error(p))
    # the value is quoted short whatever the path (pytest's numbered tmp directory grows with the session: the bound
    # is on what follows the file's name, not on the whole line)
    assert msg.startswith(f"{p}:2: invalid requirement 'xxx") and msg.endswith("...") and len(msg) - len(str(p)) < 400, msg


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


_NAMES = st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,5}([-_.][A-Za-z0-9]{1,4}){0,2}", fullmatch=True)


_VERSIONS = st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,3}){0,3}((a|b|rc|\.post|\.dev)[0-9]{1,2})?(\+cu1[0-9]{2})?",
                          fullmatch=True)


@settings(max_examples=100, deadline=None)
@given(pins=st.lists(st.tuples(_NAMES, _VERSIONS, st.sampled_from(["==", " == ", "==="]),
                               st.sampled_from(["", "  # pinned", " ; python_version >= '3.10'"])),
                     min_size=1, max_size=6))
def test_pins_read_back(pins: list[tuple[str, str, str, str]]) -> None:
    text = "".join(f"{n}{op}{v}{tail}\n" for n, v, op, tail in pins)
    lock = parse_requirements(Path("requirements.txt"), text)
    assert [(e.name, e.version, e.line) for e in lock.entries] == [
        (n.lower().replace("_", "-").replace(".", "-"), v, i) for i, (n, v, _, _) in enumerate(pins, 1)]


def _read_or_error(text: str) -> object:
    try:
        lock = parse_requirements(Path("requirements.txt"), text)
    except Exception as e:  # the slow path's refusal, compared as it reads
        return (type(e).__name__, str(e))
    return list(lock.entries)


def _with_and_without_the_shortcut(text: str) -> tuple[object, object]:
    """``text`` read as shipped, and with requirements._PLAIN_PIN matching nothing (every line to packaging's parser)."""
    import glmcompat.readers.formats.requirements as R  # lazy: the module whose shortcut is turned off here

    fast = _read_or_error(text)
    saved, R._PLAIN_PIN = R._PLAIN_PIN, re.compile(r"(?!)")
    try:
        return fast, _read_or_error(text)
    finally:
        R._PLAIN_PIN = saved


def test_a_plain_pin_reads_as_packagings_parser_reads_it() -> None:
    """requirements._PLAIN_PIN ("name==1.2.3" read without packaging's parser) gives what the parser gives: the same
    entries for the lines it takes, and every other line goes to the parser (its errors included): 1,500 generated
    lines near the shortcut's edge (names of any PEP 508 character, ==, === or == with a space, versions of digits and
    dots with a pre-release, local or stray character), each read alone, and all the readable ones as one file."""
    import random

    rnd = random.Random(39)
    name_chars, version_chars = "abcXYZ019._-", "01234567890."
    lines = []
    for _ in range(1500):
        name = "".join(rnd.choice(name_chars) for _ in range(rnd.randint(1, 8)))
        version = "".join(rnd.choice(version_chars) for _ in range(rnd.randint(0, 12)))
        tail = rnd.choice(["", "", "", "", "", "", "a1", "rc2", "+cu128", "x", " ", ".*"])
        lines.append(f"{name}{rnd.choice(['==', '==', '===', '== '])}{version}{tail}")
    differ = []
    for line in lines:
        fast, slow = _with_and_without_the_shortcut(line + "\n")
        if fast != slow:
            differ.append((line, fast, slow))
    assert not differ, differ[:3]
    from glmcompat.readers.formats.requirements import _PLAIN_PIN  # lazy: the shortcut whose reach is counted

    taken = sum(_PLAIN_PIN.fullmatch(line) is not None for line in lines)
    assert 100 < taken < 1400, taken  # the generated lines reach both sides of the shortcut
    readable = [line for line in lines if isinstance(_read_or_error(line + "\n"), list)]
    fast, slow = _with_and_without_the_shortcut("".join(f"{line}\n" for line in readable))
    assert fast == slow


@pytest.mark.parametrize("line", ["numpy==1.26.4", "Torch_Audio==2.9.0", "a==0", "x.y-z==01.002", "n==" + "9" * 20,
                                  "n==" + "9" * 21, "n==" + "9" * 5000, "a-==1", "a_==1", "-a==1", "a==1.", "a==1..2",
                                  "a==1.0a1", "a===1.0", "a== 1.0", "a==1.0+cu128", "Az9==" + ".".join("1" * 22)])
def test_plain_pin_edges_read_as_packagings_parser_reads_them(line: str) -> None:
    from glmcompat.readers.formats.requirements import _PLAIN_PIN  # lazy: the shortcut whose reach is asserted

    fast, slow = _with_and_without_the_shortcut(line + "\n")
    assert fast == slow, line
    taken = _PLAIN_PIN.fullmatch(line) is not None
    assert taken == (line in ("numpy==1.26.4", "Torch_Audio==2.9.0", "a==0", "x.y-z==01.002", "n==" + "9" * 20)), line

"""A build label's C++ ABI against the set's torch, where the artifact cannot be read (glmcompat/ops/labelabi.py and
the artifact rule): torch's ABI read from its own ``libc10.so``, built here by g++ with ``_GLIBCXX_USE_CXX11_ABI`` 1
and 0, served on 127.0.0.1; the labelled wheel's URL answers nothing."""

from __future__ import annotations

import pytest

from glmcompat import api
from glmcompat.ops.artifacts import PROBE_ENV
from glmcompat.ops.labelabi import CXX11, OLD, abi_of, label_abi
from tests.abifakes import HAVE_GXX, LocalServer, gxx, wheel
from tests.conftest import run_cli

CHECK = r"""
#include <string>
namespace c10 { namespace detail {
void torchCheckFail(const char*, const char*, unsigned, const std::string&) {}
} }
"""
DEAD = "http://127.0.0.1:9"  # port 9: nothing answers


@pytest.fixture(scope="module")
def libc10(tmp_path_factory):
    if not HAVE_GXX:
        pytest.skip("g++ builds the fake libc10.so")
    tmp = tmp_path_factory.mktemp("c10")
    new = gxx(tmp, "new", CHECK, "libc10.so", "-D_GLIBCXX_USE_CXX11_ABI=1").read_bytes()
    (tmp / "old").mkdir()
    old = gxx(tmp / "old", "old", CHECK, "libc10.so", "-D_GLIBCXX_USE_CXX11_ABI=0").read_bytes()
    return {True: new, False: old}


@pytest.fixture(scope="module")
def served(libc10):
    cuda = b"\x7fELF"  # a CUDA build's file list: libtorch_cuda.so is there
    files = {f"torch-{v}-cp311-cp311-manylinux_2_28_x86_64.whl": wheel(
        {"torch/__init__.py": b"", "torch/lib/libc10.so": libc10[abi], "torch/lib/libtorch_cuda.so": cuda}, "torch", v)
        for v, abi in (("9.2.0", True), ("9.3.0", False))}
    with LocalServer(files) as server:
        yield server


def test_the_premise_gcc_mangles_the_two_abis_apart(libc10):
    assert CXX11 in libc10[True] and OLD not in libc10[True]
    assert OLD in libc10[False] and CXX11 not in libc10[False]
    assert abi_of(libc10[True]) is True and abi_of(libc10[False]) is False and abi_of(b"no torch here") is None


@pytest.mark.parametrize(("version", "abi"), [
    ("2.8.3+cu12torch2.8cxx11abiFALSE", False), ("2.8.3+cu12torch2.8cxx11abiTRUE", True),
    ("2.8.3+cu12torch2.8", None), ("2.8.3", None), ("not a version", None)])
def test_the_label_states_the_abi(version, abi):
    assert label_abi(version) is abi


@pytest.mark.parametrize(("torch", "label", "breaks"), [
    ("9.2.0", "cxx11abiFALSE", True), ("9.2.0", "cxx11abiTRUE", False),
    ("9.3.0", "cxx11abiTRUE", True), ("9.3.0", "cxx11abiFALSE", False)])
def test_an_unreadable_wheel_whose_label_states_the_other_abi_is_an_error(served, tmp_path, monkeypatch, torch, label,
                                                                         breaks):
    monkeypatch.delenv(PROBE_ENV, raising=False)
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "requirements.txt"
    fn = f"labelled-1.0+cu12torch9.2{label}-cp311-cp311-linux_x86_64.whl"
    p.write_text(f"--index-url {served.base}\ntorch=={torch}\nlabelled @ {DEAD}/{fn}\n")
    result = api.check(p, "sm90", allow_unknown=True, platforms=["x86_64"])
    found = [f for v in result.verdicts for f in v.findings if f.rule == "abi" and f.severity == "error"]
    assert bool(found) is breaks, [f.message for v in result.verdicts for f in v.findings]
    if breaks:
        assert f"torch {torch} is built with _GLIBCXX_USE_CXX11_ABI={0 if label.endswith('TRUE') else 1}" in found[0].message
    r = run_cli("check", str(p), "--target", "sm90", "--allow-unknown", "--platform", "x86_64",
                env={PROBE_ENV: "", "GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")})
    assert ("cxx11abi" in r.stdout + r.stderr) and (("_GLIBCXX_USE_CXX11_ABI" in r.stdout + r.stderr) is breaks)

"""Judging compiled packages from their own bytes (glmcompat/ops/artifacts.py, glmcompat/decide/rules/artifacts.py): NumPy's C
API from real numexpr wheels' strings (recorded by scripts/record_numpy_abi_fixtures.py), torch symbols of gcc-built
extensions against gcc-built torch wheels served by a real HTTP server on 127.0.0.1 (tests/abifakes.py), local wheels,
``NAME @ URL`` and the second index a requirements file names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glmcompat.decide.rules import evaluate_lock
from glmcompat.edges.cache import Cache
from glmcompat.edges.index import IndexClient
from glmcompat.matrix.load import load_facts
from glmcompat.model.errors import InputError
from glmcompat.ops.artifacts import PROBE_ENV, named_torch, numpy_abi_of, numpy_summary, probe_lock
from glmcompat.ops.wheelinput import Artifact, parse_artifact
from glmcompat.readers.formats import read_lock
from glmcompat.readers.wheelzip import BytesSource, RemoteZip
from tests.abifakes import HAVE_GXX, served_fakes, gxx, wheel
from tests.conftest import run_cli

NUMEXPR = json.loads((Path(__file__).parents[1] / "fixtures" / "numpyabi" / "numexpr.json").read_text())
STABLE = "stableext-1.0-cp310-abi3-manylinux2014_x86_64.whl"
needs_gxx = pytest.mark.skipif(not HAVE_GXX, reason="g++ builds the fake wheels")


@pytest.mark.parametrize(("pin", "abi"), [("numexpr==2.8.8", 1), ("numexpr==2.10.2", 2)])
def test_numpy_abi_of_real_numexpr_strings(pin, abi):
    (strings,) = NUMEXPR[pin]["modules"].values()
    assert numpy_abi_of(b"\0".join(s.encode() for s in strings) + b"\0") == abi


@pytest.mark.parametrize(("member", "torch"), [("p/libtorch_c_dlpack_addon_torch29-cuda.so", "2.9"),
                                              ("p/addon_torch210-cpu.so", "2.10"), ("p/x_torch_2_8.so", "2.8"),
                                              ("torch/lib/libtorch_python.so", None), ("p/_C.abi3.so", None)])
def test_named_torch(member, torch):
    assert named_torch(member) == torch


def test_numpy_abi_of_nothing():
    assert numpy_abi_of(b"no numpy here\0numpyish\0") is None


@needs_gxx
@pytest.mark.parametrize(("module", "abi"), [("numpy.core._multiarray_umath", 1), ("numpy._core._multiarray_umath", 2)])
def test_numpy_summary_reads_a_gcc_built_module(tmp_path, module, abi):
    src = f'extern "C" const char* which(void) {{ return "{module}"; }}\n'
    so = gxx(tmp_path, "np", src, "_np.so").read_bytes()
    zf = RemoteZip(BytesSource(wheel({"np/_np.so": so, "np/__init__.py": b""}, "np", "1.0")))
    assert numpy_summary(zf) == {"np/_np.so": abi}


def test_parse_artifact(tmp_path):
    assert parse_artifact("Flash_Attn==2.8.1") == Artifact("flash-attn", "2.8.1")
    url = "https://files.invalid/x/flash_attn-2.8.1+cu12torch2.7-cp311-cp311-linux_x86_64.whl#sha256=00"
    assert parse_artifact(f"flash-attn @ {url}") == Artifact("flash-attn", "2.8.1+cu12torch2.7", url)
    p = tmp_path / "myext-1.0-cp311-cp311-linux_x86_64.whl"
    p.write_bytes(b"")
    assert parse_artifact(str(p)) == Artifact("myext", "1.0", str(p))
    for bad in ("flash-attn", "other @ " + url, str(tmp_path / "gone-1.0-py3-none-any.whl"), "x @ https://h.invalid/x.tar.gz"):
        with pytest.raises(InputError):
            parse_artifact(bad)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    yield from served_fakes(tmp_path_factory)


def _requirements(tmp_path: Path, base: str, torch: str, ext: bytes, line: str | None = None) -> Path:
    (tmp_path / STABLE).write_bytes(ext)
    p = tmp_path / "requirements.txt"
    p.write_text(f"--index-url {base}\ntorch=={torch}\n{line or './' + STABLE}\n")
    return p


@pytest.mark.parametrize(("torch", "missing"), [("9.0.0", ("torch_new_stable_ivalue",)), ("9.1.0", ())])
def test_local_wheel_judged_against_the_sets_torch(served, tmp_path, monkeypatch, torch, missing):
    server, files = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    lock = read_lock(_requirements(tmp_path, server.base, torch, files[STABLE]))
    facts = load_facts()
    cache = Cache(tmp_path / "cache")
    with IndexClient(server.base, cache=cache, retries=0) as index:
        got = probe_lock(lock, facts, index=index, cache=cache, resolved_at_install=True)
    a = got[("stableext", "1.0")]
    assert a.read and a.torch_missing == {torch: missing} and a.torch_needs == 2
    found = [f for f in evaluate_lock(lock, "sm90", None, facts, True, artifacts=got) if f.rule == "abi"]  # the cause's id
    assert [f.severity for f in found] == (["error"] if missing else [])
    if missing:
        assert "torch_new_stable_ivalue" in found[0].message and found[0].probe == f"glmcompat abi {tmp_path / STABLE} --torch 9.0.0"
    requests = server.requests
    with IndexClient(server.base, cache=cache, retries=0) as index:  # stored by sha256: the next check reads no wheel
        assert probe_lock(lock, facts, index=index, cache=cache, resolved_at_install=True) == got
    assert server.requests - requests <= 1  # at most the torch page (its pick is stored with the page's lifetime)


def test_name_at_url_is_read_over_http(served, tmp_path, monkeypatch):
    server, files = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    url = server.base.replace("/simple", "/files/") + STABLE
    lock = read_lock(_requirements(tmp_path, server.base, "9.0.0", files[STABLE], f"stableext @ {url}"))
    cache = Cache(tmp_path / "cache")
    with IndexClient(server.base, cache=cache, retries=0) as index:
        got = probe_lock(lock, load_facts(), index=index, cache=cache, resolved_at_install=True)
    assert got[("stableext", "1.0")].torch_missing == {"9.0.0": ("torch_new_stable_ivalue",)}


def test_a_pure_wheel_at_an_unreachable_url_is_judged_by_its_name(served, tmp_path, monkeypatch):
    # a py3-none-any wheel ships no compiled code (as an index's is taken): nothing to read, nothing "not checked"
    server, files = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    dead = "http://127.0.0.1:9/files"
    lock = read_lock(_requirements(tmp_path, server.base, "9.0.0", files[STABLE],
                                   f"pureext @ {dead}/pureext-1.0-py3-none-any.whl\nstableext @ {dead}/{STABLE}"))
    cache = Cache(tmp_path / "cache")
    with IndexClient(server.base, cache=cache, retries=0) as index:
        got = probe_lock(lock, load_facts(), index=index, cache=cache, resolved_at_install=True)
    assert got[("pureext", "1.0")].read and got[("pureext", "1.0")].artifact == "pureext-1.0-py3-none-any.whl"
    assert not got[("stableext", "1.0")].read  # a compiled one there is not read, and said so


def test_index_package_from_the_files_second_index(served, tmp_path, monkeypatch):
    server, _ = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    p = tmp_path / "requirements.txt"
    p.write_text(f"--index-url {server.base}\ntorch==9.0.0\nstableext==1.0\n")
    cache = Cache(tmp_path / "cache")
    lock = read_lock(p)
    with IndexClient(lock.meta["index_urls"][0], cache=cache, retries=0) as index:
        got = probe_lock(lock, load_facts(), index=index, cache=cache, resolved_at_install=True)
    assert got[("stableext", "1.0")].artifact == STABLE


def test_unread_is_a_warning_naming_the_command(tmp_path):
    p = tmp_path / "requirements.txt"
    p.write_text("--index-url http://127.0.0.1:9/simple\nnumexpr==2.8.8\nnumpy==2.2.6\n")  # port 9: nothing answers
    r = run_cli("check", str(p), "--target", "sm90")  # GLMCOMPAT_NO_ARTIFACTS (set for tests without the network mark)
    assert r.returncode == 0 and "not checked" not in r.stdout  # asked not to read: nothing read, nothing said
    r = run_cli("check", str(p), "--target", "sm90", env={PROBE_ENV: ""})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "the compiled code of numexpr 2.8.8 was not checked" in r.stdout and "glmcompat abi numexpr==2.8.8" in r.stdout


def test_check_and_abi_end_to_end(served, tmp_path):
    server, files = served
    req = _requirements(tmp_path, server.base, "9.0.0", files[STABLE])
    env = {PROBE_ENV: "", "GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")}
    r = run_cli("check", str(req), "--target", "sm90", "--allow-unknown", env=env)
    assert r.returncode == 1 and "stableext 1.0 needs 1 torch symbol(s) that torch 9.0.0 does not export" in r.stdout
    r = run_cli("abi", str(tmp_path / STABLE), "--torch", "9.0.0", "--index-url", server.base, env=env)
    assert r.returncode == 1 and "torch_new_stable_ivalue" in r.stdout, r.stdout + r.stderr
    r = run_cli("abi", str(tmp_path / STABLE), "--torch", "9.1.0", "--index-url", server.base, env=env)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize(("pin", "rc"), [("numexpr==2.8.8", 1), ("numexpr==2.10.2", 0)])
def test_numexpr_against_numpy_2_from_the_index(tmp_path, pin, rc):
    p = tmp_path / "requirements.txt"
    p.write_text(f"{pin}\nnumpy==2.2.6\n")
    r = run_cli("check", str(p), "--target", "sm120", env={PROBE_ENV: ""})
    assert r.returncode == rc, r.stdout + r.stderr


def test_a_wheel_whose_sha256_is_not_the_recorded_one_is_an_error(served, tmp_path, monkeypatch):
    server, files = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    line = f"stableext @ file://{tmp_path / STABLE}#sha256={'0' * 64}"
    lock = read_lock(_requirements(tmp_path, server.base, "9.1.0", files[STABLE], line))
    cache = Cache(tmp_path / "cache")
    with IndexClient(server.base, cache=cache, retries=0) as index:
        got = probe_lock(lock, load_facts(), index=index, cache=cache, resolved_at_install=True)
    (f,) = [f for f in evaluate_lock(lock, "sm90", None, load_facts(), True, artifacts=got) if f.rule == "artifact"]
    assert f.severity == "error" and "records sha256 " + "0" * 64 in f.message


def test_uv_lock_keeps_where_a_url_wheel_comes_from():
    lock = read_lock(Path(__file__).parents[1] / "fixtures" / "realworld" / "01" / "uv.lock")
    url = lock.meta["wheel_urls"]["flash-attn==2.8.1+cu13torch2.10cxx11abitrue"]
    assert url.endswith(".whl#sha256=a14fea157eb61dfee56f605a24a7a6150704517759125b3942dd04bffa05d6cf")


def test_arch_reads_a_local_wheel(served, tmp_path):
    _, files = served
    p = tmp_path / "ext-1.0-cp310-abi3-manylinux2014_x86_64.whl"
    p.write_bytes(files["ext-1.0-cp310-abi3-manylinux2014_x86_64.whl"])
    r = run_cli("arch", str(p), "--target", "sm120", "--json", env={"GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")})
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["wheel"] == p.name and "sm_120a" in json.dumps(doc), r.stdout + r.stderr

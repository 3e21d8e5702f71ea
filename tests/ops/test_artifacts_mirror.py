"""Causes found by the held-out real files (tests/fixtures/heldout36): a wheel a lock records at a host this machine
cannot reach is read from a configured index that lists the same file with the same sha256 (never another file); a
CUDA variant of torch that cannot be read lends its release's exports; a tracked package the matrix has no row for is
read from its own bytes; a requirements file with only ``--extra-index-url`` keeps the configured index. Wheels are
built here with g++ and served on 127.0.0.1 (tests/abifakes.py); the lock is written by the real uv."""

from __future__ import annotations

import re
from dataclasses import replace

from packaging.utils import parse_wheel_filename
from pathlib import Path

import pytest

from glmcompat.edges.cache import Cache
from glmcompat.edges.index import IndexClient
from glmcompat.matrix.load import load_facts
from glmcompat.ops import artifacts
from glmcompat.ops.artifacts import PROBE_ENV, candidates, probe_lock, read_machines
from glmcompat.readers.formats import read_lock
from tests.abifakes import HAVE_GXX, LocalServer, build_fakes, served_fakes
from tests.ops.test_artifacts_lock import DEAD, STABLE, _uv_project

GONE = "http://127.0.0.1:9"  # port 9: nothing answers


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    yield from served_fakes(tmp_path_factory)


def _unreachable(path: Path, base: str, *, tamper: str = "") -> Path:
    """The lock with every recorded URL moved to a host that answers nothing (as a lock made against a public index
    reads on a machine that reaches only its mirror); ``tamper``: a file whose recorded sha256 is changed."""
    host = base.removesuffix("/simple")
    text = path.read_text().replace(host, GONE)
    if tamper:
        text = re.sub(rf'({re.escape(tamper)}", hash = "sha256:)([0-9a-f])', lambda m: m.group(1) + ("0" if m.group(2) != "0" else "1"), text)
    path.write_text(text)
    return path


@pytest.mark.slow
def test_a_lock_wheel_at_an_unreachable_host_is_read_from_the_index_with_the_same_sha256(served, tmp_path, monkeypatch):
    server, _ = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    lock = read_lock(_unreachable(_uv_project(tmp_path, server.base, "9.0.0"), server.base))
    assert all(u.startswith(GONE) for u in lock.meta["lock_wheels"]["stableext==1.0"])
    cache = Cache(tmp_path / "cache")
    with IndexClient(server.base, cache=cache, retries=0) as mirror:
        got = probe_lock(lock, load_facts(), index=mirror, cache=cache, resolved_at_install=False)
    a = got[("stableext", "1.0")]
    assert a.read and a.artifact == STABLE and a.torch_missing == {"9.0.0": ("torch_new_stable_ivalue",)}, a


@pytest.mark.slow
def test_another_file_on_the_index_is_never_read_in_its_place(served, tmp_path, monkeypatch):
    server, _ = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    lock = read_lock(_unreachable(_uv_project(tmp_path, server.base, "9.1.0"), server.base, tamper=STABLE))
    cache = Cache(tmp_path / "cache")
    with IndexClient(server.base, cache=cache, retries=0) as mirror:
        got = probe_lock(lock, load_facts(), index=mirror, cache=cache, resolved_at_install=False)
    a = got[("stableext", "1.0")]
    assert not a.read and "sha256" in a.unread and a.command.startswith("glmcompat abi stableext==1.0"), a


def test_same_file_matches_name_and_sha256(served, tmp_path):
    server, files = served
    import hashlib

    from glmcompat.edges.index import IndexFile
    from glmcompat.model.errors import GlmcompatError

    sha = hashlib.sha256(files[STABLE]).hexdigest()
    f = IndexFile(STABLE, f"{GONE}/files/{STABLE}", None, sha, None, False, None, True)
    with IndexClient(DEAD, cache=None, retries=0) as dead, IndexClient(server.base, cache=None, retries=0) as live:
        i, g = artifacts.same_file([dead, live], f)
        assert i is live and g.filename == STABLE and g.sha256 == sha
        with pytest.raises(GlmcompatError, match="sha256"):
            artifacts.same_file([live], IndexFile(STABLE, f.url, None, "0" * 64, None, False, None, True))


def test_a_tracked_package_without_a_row_is_read_from_its_bytes(tmp_path):
    """torchcodec 0.7.0 (no pairing row) is a candidate; torchvision 0.24.1 (its METADATA pin is a row) is not."""
    p = tmp_path / "requirements.txt"
    p.write_text("torch==2.8.0\ntorchcodec==0.7.0\ntorchvision==0.24.1\n")
    facts = load_facts()
    assert "torchcodec" in facts.family_packages() and facts.family("torchcodec", "0.7.0") is None
    lock = read_lock(p)
    names = {c[0] for c in candidates(lock, facts, True, read_machines(lock))}
    assert "torchcodec" in names and not names & {"torchvision", "torch"}


def test_a_bytes_judged_package_is_not_an_unknown(tmp_path):
    """Where its bytes were read against the set's torch, the rule that would fail closed on a missing row is quiet:
    the artifact rule says what is missing, if anything."""
    from glmcompat.decide.rules import evaluate_lock
    from glmcompat.model.artifacts import ArtifactFacts

    p = tmp_path / "requirements.txt"
    p.write_text("torch==2.8.0\ntorchcodec==0.7.0\n")
    lock = read_lock(p)
    facts = load_facts()
    ok = ArtifactFacts("torchcodec", "0.7.0", "torchcodec-0.7.0-cp311-cp311-manylinux_2_28_x86_64.whl", "ab" * 32,
                       None, "", 120, {"2.8.0": ()})
    bad = ArtifactFacts("torchcodec", "0.7.0", ok.artifact, ok.sha256, None, "", 120, {"2.8.0": ("_ZN3c104wtf",)})
    before = [f for f in evaluate_lock(lock, "sm90", None, facts, False) if "torchcodec" in f.message]
    assert any(f.severity == "error" and "no recorded torch pairing" in f.message for f in before)
    quiet = [f for f in evaluate_lock(lock, "sm90", None, facts, False, artifacts={("torchcodec", "0.7.0"): ok})
             if "torchcodec" in f.message]
    assert quiet == []
    broke = [f for f in evaluate_lock(lock, "sm90", None, facts, False, artifacts={("torchcodec", "0.7.0"): bad})
             if "torchcodec" in f.message]
    assert [f.severity for f in broke] == ["error"] and "_ZN3c104wtf" in broke[0].message + str(broke[0].evidence)


@pytest.mark.parametrize(("lines", "index_url"), [
    ("--extra-index-url http://127.0.0.1:9/a\n", None),
    ("--index-url http://127.0.0.1:9/b\n--extra-index-url http://127.0.0.1:9/a\n", "http://127.0.0.1:9/b"),
    ("-i http://127.0.0.1:9/b\n", "http://127.0.0.1:9/b")])
def test_only_index_url_replaces_the_configured_index(tmp_path, lines, index_url):
    p = tmp_path / "requirements.txt"
    p.write_text(lines + "torch==2.9.1\n")
    assert read_lock(p).meta.get("index_url") == index_url


def test_extra_index_url_keeps_the_configured_index_first(served, tmp_path, monkeypatch):
    """pip searches the configured index and the extra ones: a file naming only an unreachable extra index still has
    its packages read from the configured one."""
    server, _ = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("UV_DEFAULT_INDEX", server.base)
    p = tmp_path / "requirements.txt"
    p.write_text(f"--extra-index-url {DEAD}\ntorch==9.0.0\nstableext==1.0\n")
    got = artifacts.read_artifacts(read_lock(p), load_facts(), resolved_at_install=True, platforms=["x86_64"])
    a = got[("stableext", "1.0")]
    assert a.read and a.artifact == STABLE and a.torch_missing == {"9.0.0": ("torch_new_stable_ivalue",)}, a


def _digest(data: bytes) -> str:
    import base64
    import hashlib

    return "sha-256=:" + base64.b64encode(hashlib.sha256(data).digest()).decode() + ":"


@pytest.mark.parametrize(("stated", "want"), [("same", "verified"), ("other", "mismatch"), (None, "unverified")])
def test_a_url_wheels_recorded_sha256_is_checked_by_the_servers_stated_hash(served, tmp_path, monkeypatch, stated,
                                                                           want):
    """A wheel URL is read by range requests (never whole): its recorded sha256 is compared with the hash the server
    states (Repr-Digest); a different one is an error, none stated is a warning naming the command that checks it."""
    import hashlib

    from glmcompat.decide.rules import evaluate_lock

    server, files = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("UV_DEFAULT_INDEX", server.base)
    sha = hashlib.sha256(files[STABLE]).hexdigest()
    server.digests.pop(STABLE, None)
    if stated:
        server.digests[STABLE] = _digest(files[STABLE] if stated == "same" else b"another file")
    url = f"{server.base.removesuffix('/simple')}/files/{STABLE}#sha256={sha}"
    p = tmp_path / "requirements.txt"
    p.write_text(f"torch==9.0.0\nstableext @ {url}\n")
    lock = read_lock(p)
    try:
        got = artifacts.read_artifacts(lock, load_facts(), resolved_at_install=True, platforms=["x86_64"])
    finally:
        server.digests.pop(STABLE, None)
    a = got[("stableext", "1.0")]
    found = [f for f in evaluate_lock(lock, "sm90", None, load_facts(), True, artifacts=got) if f.rule == "artifact"]
    if want == "verified":
        assert a.read and not a.unverified and not a.recorded_sha256 and not found, (a, found)
    elif want == "mismatch":
        assert a.recorded_sha256 == sha and a.sha256 != sha
        assert [f.severity for f in found] == ["error"] and "not the artifact the lock was made with" in found[0].message
    else:
        assert a.read and "states no sha256" in a.unverified and sha in a.unverified
        (w,) = found
        assert w.severity == "warning" and "was not checked" in w.message and "sha256sum" in w.remedy and sha in w.remedy


def test_a_conda_package_is_not_judged_by_the_index_wheel_of_its_name(tmp_path, monkeypatch):
    """environment.yml's conda section installs the channel's builds (gxx_linux-64, cmake): the index's wheel of the
    same name is other bytes, so it is not read in their place; they are told as not read (NX-AI/xlstm's
    environment, tests/fixtures/heldout36/h15). The pip section's packages are read from the index as before."""
    monkeypatch.delenv(PROBE_ENV, raising=False)
    p = tmp_path / "environment.yml"
    p.write_text("name: x\nchannels:\n  - pytorch\n  - nvidia\ndependencies:\n  - python=3.11\n  - pytorch=2.4.0\n"
                 "  - pytorch-cuda=12.4\n  - cmake=3.30.0\n  - gxx_linux-64=13.2.0\n  - pip:\n      - tqdm==4.66.0\n")
    lock = read_lock(p)
    facts = load_facts()
    todo = {c[0]: c[2] for c in candidates(lock, facts, True, read_machines(lock))}
    assert todo.get("cmake") == "conda" and todo.get("gxx-linux-64") == "conda" and todo.get("tqdm") == "index"
    with IndexClient(DEAD, cache=None, retries=0) as dead:
        got = probe_lock(lock, facts, index=dead, cache=None, resolved_at_install=True)
    a = got[("gxx-linux-64", "13.2.0")]
    assert not a.read and "conda" in a.unread and a.command == "glmcompat verify"


def test_a_torch_wheel_without_a_row_is_read_for_its_cuda_library(tmp_path, monkeypatch):
    """torch 2.2.1's default aarch64 wheel has no row: its file list decides whether it is a CUDA build (the held-out
    h2ogpt requirements, tests/fixtures/heldout36/h14). Fake releases: 9.2.0 without torch/lib/libtorch_cuda.so
    (CPU-only), 9.0.0 with it. A CPU-only build's environment does not serve a GPU target; a CUDA one is judged as before."""
    if not HAVE_GXX:
        pytest.skip("g++ builds the fake wheels")
    from glmcompat.decide.rules.lockjudge import _cannot_serve
    from tests.abifakes import wheel

    files = build_fakes(tmp_path / "fakes")
    files["torch-9.2.0-cp311-cp311-manylinux_2_28_x86_64.whl"] = wheel({"torch/__init__.py": b""}, "torch", "9.2.0")
    monkeypatch.delenv(PROBE_ENV, raising=False)
    facts = load_facts()
    with LocalServer(files) as server, IndexClient(server.base, cache=None, retries=0) as index:
        for ver, cpu in (("9.0.0", False), ("9.2.0", True)):
            p = tmp_path / f"requirements-{ver}.txt"
            p.write_text(f"torch=={ver}\n")
            lock = read_lock(p)
            got = artifacts.torch_builds(lock, facts, [index], None, "cp311")
            a = got[("torch", ver)]
            assert a.read and a.cpu_only is cpu and a.artifact.startswith(f"torch-{ver}-"), a
            (env,) = [e for e in lock.sets if e.platform == "x86_64"]
            why = _cannot_serve(env, facts.on("x86_64"), True, {("torch", ver): a})
            assert (why is not None and "CPU-only" in why[0]) is cpu


def test_an_exactly_pinned_yanked_release_is_read(monkeypatch):
    """PEP 592: a yanked file is still installed where the version is pinned exactly (aiohttp 3.11.14, yanked, is
    locked by datalab-to/marker's poetry.lock: tests/fixtures/heldout36/h07); a newer unyanked build wins."""
    from glmcompat.edges.index import IndexFile, Project, select_wheel
    from glmcompat.model.wheeltags import supported_tags

    def f(fn: str, yanked: bool) -> IndexFile:
        return IndexFile(fn, f"http://127.0.0.1:9/{fn}", 1, "ab" * 32, ">=3.9", yanked, "3.11.14", True,
                         frozenset(str(t) for t in parse_wheel_filename(fn)[3]))

    y = f("aiohttp-3.11.14-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", True)
    tags = supported_tags("cp310", "manylinux_x86_64")
    assert select_wheel([y], tags) is None and select_wheel([y], tags, yanked=True) is y
    with IndexClient(DEAD, cache=None, retries=0) as index:
        monkeypatch.setattr(IndexClient, "project", lambda self, name: Project(name, ["3.11.14"], [y]))
        assert index.find_wheel("aiohttp", "3.11.14", python="cp310").filename == y.filename


def test_an_environment_without_a_stated_python_reads_the_build_another_python_installs(monkeypatch):
    """cosmos-xenna 0.4.0 ships cp312-abi3 only; a poetry environment states no Python, so the assumed cp311 is not
    the only one tried (tests/fixtures/heldout36/h08). Where the environment states its Python, only that one."""
    from glmcompat.edges.index import IndexFile, Project
    from glmcompat.model.errors import GlmcompatError

    fn = "cosmos_xenna-0.4.0-cp312-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    w = IndexFile(fn, f"http://127.0.0.1:9/{fn}", 1, "cd" * 32, ">=3.12", False, "0.4.0", True,
                  frozenset(str(t) for t in parse_wheel_filename(fn)[3]))
    monkeypatch.setattr(IndexClient, "project", lambda self, name: Project(name, ["0.4.0"], [w]))
    with IndexClient(DEAD, cache=None, retries=0) as index:
        got = artifacts._find_any_python([index], None, "cosmos-xenna", "0.4.0", "cp311", "manylinux_x86_64", stated=False)
        assert got.filename == fn
        with pytest.raises(GlmcompatError, match="no wheel for cp311"):
            artifacts._find_any_python([index], None, "cosmos-xenna", "0.4.0", "cp311", "manylinux_x86_64", stated=True)


def test_sibling_builds_per_torch_are_named_by_their_release():
    """mooncake-transfer-engine 0.3.11.post1 ships ep_2_9_1, ep_2_10_0, ep_2_11_0 ... and loads the one for the torch
    beside it (found by the held-out reading of realworld/07): each is judged against its own torch only."""
    got = artifacts.named_torches([
        "mooncake/ep_2_9_1.cpython-312-x86_64-linux-gnu.so", "mooncake/ep_2_11_0.cpython-312-x86_64-linux-gnu.so",
        "mooncake/pg_2_10_0.cpython-312-x86_64-linux-gnu.so", "mooncake/pg_2_11_0.cpython-312-x86_64-linux-gnu.so",
        "mooncake/engine.so", "x/_lib_1_2.cpython-312-x86_64-linux-gnu.so",
        "tvm_ffi/libtorch_c_dlpack_addon_torch29-cuda.so"])
    assert got == {"mooncake/ep_2_9_1.cpython-312-x86_64-linux-gnu.so": "2.9",
                   "mooncake/ep_2_11_0.cpython-312-x86_64-linux-gnu.so": "2.11",
                   "mooncake/pg_2_10_0.cpython-312-x86_64-linux-gnu.so": "2.10",
                   "mooncake/pg_2_11_0.cpython-312-x86_64-linux-gnu.so": "2.11",
                   "tvm_ffi/libtorch_c_dlpack_addon_torch29-cuda.so": "2.9"}  # a lone _1_2 is no release family


def test_pybind11s_own_numpy_import_is_not_numpy1_headers():
    """pybind11 < 2.12 (pynvvideocodec 2.0.4's modules) imports numpy.core.multiarray for _ARRAY_API itself, with no
    ABI version check, and NumPy 2 keeps that module as a shim: not the NumPy 1.x headers' import_array, which
    refuses NumPy 2 (numexpr 2.8.8: numpy.core._multiarray_umath)."""
    old_pybind = b"numpy.core.multiarray\0_ARRAY_API\0pybind11 numpy support requires numpy >= 1.7.0\0"
    assert artifacts.numpy_abi_of(old_pybind) is None
    assert artifacts.numpy_abi_of(b"numpy.core.multiarray\0_ARRAY_API\0") == 1
    assert artifacts.numpy_abi_of(b"numpy.core._multiarray_umath\0pybind11 numpy support requires numpy\0") == 1


def test_a_cuda12_distribution_beside_its_cuda13_sibling_is_not_loaded(tmp_path):
    """nixl 1.3.0 installs nixl-cu12 and nixl-cu13 and imports the one for torch's CUDA (realworld/01 read with its
    artifacts): nixl-cu12's libcudart.so.12 beside torch 2.11.0+cu130 is no break while nixl-cu13 is in the set; alone,
    it is."""
    from glmcompat.decide.rules import evaluate_lock
    from glmcompat.model.artifacts import ArtifactFacts

    facts = load_facts()
    cu12 = ArtifactFacts("nixl-cu12", "1.3.0", "nixl_cu12-1.3.0-cp312-cp312-manylinux_2_28_x86_64.whl", "ab" * 32, None,
                         "", 40, {"2.11.0": ()}, {}, (12,))
    cu13 = replace(cu12, name="nixl-cu13", artifact=cu12.artifact.replace("cu12", "cu13"), cuda_majors=(13,))
    for lines, arts, want in (("nixl-cu12==1.3.0\nnixl-cu13==1.3.0\n", {("nixl-cu12", "1.3.0"): cu12,
                                                                          ("nixl-cu13", "1.3.0"): cu13}, []),
                              ("nixl-cu12==1.3.0\n", {("nixl-cu12", "1.3.0"): cu12}, ["error"])):
        p = tmp_path / "requirements.txt"
        p.write_text("torch==2.11.0\n" + lines)
        found = [f.severity for f in evaluate_lock(read_lock(p), "sm90", None, facts, True, artifacts=arts)
                 if f.rule == "artifact" and "CUDA" in f.message]
        assert found == want, lines

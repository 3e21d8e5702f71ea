"""Every compiled wheel a lock records is read from where the installer reads it (glmcompat/ops/artifacts.py): the
wheels uv.lock, pylock and poetry.lock record (pure ``-none-any`` ones left out), a second index named by
``[tool.uv.sources]`` (locked by the real uv against gcc-built wheels served on 127.0.0.1), ``--extra-index-url``, the
machine's own wheel (aarch64), and :func:`glmcompat.api.check` reading them as ``check`` does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from glmcompat import api
from glmcompat.decide.rules import evaluate_lock
from glmcompat.edges.cache import Cache
from glmcompat.edges.index import IndexClient
from glmcompat.matrix.load import load_facts
from glmcompat.ops import artifacts
from glmcompat.ops.artifacts import PROBE_ENV, candidates, pick_wheel, probe_lock, read_machines
from glmcompat.readers.formats import read_lock
from tests.abifakes import HAVE_GXX, LocalServer, build_fakes
from tests.conftest import run_cli

FIX = Path(__file__).parents[1] / "fixtures"
STABLE = "stableext-1.0-cp310-abi3-manylinux2014_x86_64.whl"
DEAD = "http://127.0.0.1:9/simple"  # port 9: nothing answers


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    if not HAVE_GXX:
        pytest.skip("g++ builds the fake wheels")
    files = build_fakes(tmp_path_factory.mktemp("fakes"))
    # the same builds under aarch64 names: which wheel of the lock is read is what is tested, by its name
    files["stableext-1.0-cp310-abi3-manylinux2014_aarch64.whl"] = files[STABLE]
    for v in ("9.0.0", "9.1.0"):
        files[f"torch-{v}-cp311-cp311-manylinux_2_28_aarch64.whl"] = files[f"torch-{v}-cp311-cp311-manylinux_2_28_x86_64.whl"]
    with LocalServer(files) as server:
        yield server, files


def test_lock_wheels_are_the_compiled_linux_wheels_only():
    uv = read_lock(FIX / "locks" / "glm5-sglang-0.5.9" / "uv.lock")
    got = uv.meta["lock_wheels"]
    assert "aiohttp==3.14.5" in got and all("linux" in u and "#sha256=" in u for u in got["aiohttp==3.14.5"])
    pure = {f"{e.name}=={e.version}" for e in uv.entries if e.name in ("requests", "six", "idna", "transformers")}
    assert pure and not pure & got.keys()
    py = read_lock(FIX / "locks" / "glm5-sglang-0.5.9" / "pylock.toml").meta["lock_wheels"]
    assert py["aiohttp==3.14.5"] == got["aiohttp==3.14.5"]
    poetry = read_lock(FIX / "formats" / "poetry" / "poetry.lock").meta["lock_wheels"]
    assert poetry and all("://" not in u and u.split("#")[0].endswith(".whl") for v in poetry.values() for u in v)


def test_every_compiled_wheel_is_a_candidate_not_only_the_matrixs():
    lock = read_lock(FIX / "locks" / "glm5-sglang-0.5.9" / "uv.lock")
    facts = load_facts()
    todo = candidates(lock, facts, False, read_machines(lock))
    names = {c[0] for c in todo}
    listed = {n for row in facts.rows("compiled") for n in row.packages}
    assert {"pyarrow", "scipy", "xgrammar", "tokenizers"} <= names and names - listed
    assert {c[2] for c in todo} == {"lock"} and {c[4] for c in todo} == {"x86_64"}
    assert not names & {"requests", "torch", "numpy"}  # pure, or judged by the matrix's rows


def test_pick_wheel_takes_the_machines_wheel():
    lock = read_lock(FIX / "realworld" / "01" / "uv.lock")
    locs = lock.meta["lock_wheels"]["aiohttp==3.14.2"]
    x86 = pick_wheel(locs, "cp313", "x86_64")
    arm = pick_wheel(locs, "cp313", "aarch64")
    assert x86 is not None and "manylinux" in x86 and x86.split("#")[0].endswith("_x86_64.whl")
    assert arm is not None and "manylinux" in arm and arm.split("#")[0].endswith("_aarch64.whl")
    assert pick_wheel(locs, "cp311", "x86_64") == x86  # a Python the lock has no wheel for: the machine's first
    assert pick_wheel(locs, "cp313", "ppc64le") is None


def _uv_project(tmp: Path, base: str, torch: str, *, aarch64: bool = False) -> Path:
    """A project whose torch and stableext come from a second index named in [tool.uv.sources], locked by uv."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv locks the project")
    env_markers = ['"sys_platform == \'linux\' and platform_machine == \'x86_64\'"']
    if aarch64:
        env_markers.append('"sys_platform == \'linux\' and platform_machine == \'aarch64\'"')
    (tmp / "pyproject.toml").write_text(
        f'[project]\nname = "app"\nversion = "0.1"\nrequires-python = "==3.11.*"\n'
        f'dependencies = ["torch=={torch}", "stableext==1.0"]\n\n'
        f'[tool.uv]\nenvironments = [{", ".join(env_markers)}]\n\n'
        f'[[tool.uv.index]]\nname = "gpu-second"\nurl = "{base}"\nexplicit = true\n\n'
        f'[tool.uv.sources]\ntorch = {{ index = "gpu-second" }}\nstableext = {{ index = "gpu-second" }}\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_"))}
    env.update(UV_PYTHON_DOWNLOADS="never", UV_PYTHON=sys.executable, UV_INDEX_URL=DEAD, UV_NO_CACHE="1")
    r = subprocess.run([uv, "lock", "-q", "--no-build"], cwd=tmp, env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0 and "3.11" in r.stderr:
        pytest.skip(f"uv cannot lock for Python 3.11 here: {r.stderr[-200:]}")
    assert r.returncode == 0, r.stderr
    return tmp / "uv.lock"


@pytest.mark.slow
@pytest.mark.parametrize(("torch", "missing"), [("9.0.0", ("torch_new_stable_ivalue",)), ("9.1.0", ())])
def test_uv_sources_second_index_is_read_from_that_index(served, tmp_path, monkeypatch, torch, missing):
    server, _ = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    path = _uv_project(tmp_path, server.base, torch)
    lock = read_lock(path)
    assert all(u.startswith(server.base.removesuffix("/simple")) for u in lock.meta["lock_wheels"]["stableext==1.0"])
    cache = Cache(tmp_path / "cache")
    with IndexClient(DEAD, cache=cache, retries=0) as default:  # the default index answers nothing: not asked
        got = probe_lock(lock, load_facts(), index=default, cache=cache, resolved_at_install=False)
    a = got[("stableext", "1.0")]
    assert a.read and a.artifact == STABLE and a.torch_missing == {torch: missing}, a
    # the bytes-judged torch-symbol break reads as the abi rule's (one vocabulary of causes, model/causes.py)
    found = [f for f in evaluate_lock(lock, "sm90", None, load_facts(), True, artifacts=got) if f.rule == "abi"]
    assert [f.severity for f in found] == (["error"] if missing else [])
    requests = server.requests
    r = run_cli("check", str(path), "--target", "sm90", "--allow-unknown",
                env={PROBE_ENV: "", "GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache"), "GLMCOMPAT_INDEX_URL": DEAD})
    assert r.returncode == (1 if missing else 0), r.stdout + r.stderr
    assert server.requests == requests  # stored by sha256: the CLI's check read nothing again
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "cache"))

    def no_probe(*a: object, **k: object) -> None:
        raise AssertionError("the lock's wheels did not change: their facts are one stored entry")

    monkeypatch.setattr(artifacts, "probe_lock", no_probe)
    path.write_text(path.read_text() + "\n# a hand edit\n")
    again = artifacts.read_artifacts(read_lock(path), load_facts(), resolved_at_install=False)
    assert again[("stableext", "1.0")] == a


@pytest.mark.slow
def test_aarch64_reads_the_aarch64_wheel_or_says_it_did_not(served, tmp_path, monkeypatch):
    server, _ = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    lock = read_lock(_uv_project(tmp_path, server.base, "9.0.0", aarch64=True))
    assert {e.platform for e in lock.sets} == {"x86_64", "aarch64"}
    cache = Cache(tmp_path / "cache")
    with IndexClient(DEAD, cache=cache, retries=0) as default:
        arm = probe_lock(lock, load_facts(), index=default, cache=cache, resolved_at_install=False, platforms=["aarch64"])
        both = probe_lock(lock, load_facts(), index=default, cache=cache, resolved_at_install=False)
    a = arm[("stableext", "1.0", "aarch64")]
    assert a.read and a.artifact.endswith("_aarch64.whl") and a.torch_missing == {"9.0.0": ("torch_new_stable_ivalue",)}
    assert both[("stableext", "1.0")].artifact == STABLE
    skipped = both[("stableext", "1.0", "aarch64")]
    assert not skipped.read and "--platform aarch64" in skipped.command
    found = [f for f in evaluate_lock(lock, "sm90", None, load_facts(), True, artifacts=both) if f.rule == "artifact"]
    warned = [f for f in found if f.severity == "warning"]
    assert len(warned) == 1 and "stableext 1.0 was not checked" in warned[0].message
    assert all("aarch64" in e for e in warned[0].environments)


@pytest.mark.slow
def test_a_target_that_ships_on_aarch64_reads_the_aarch64_wheels_without_platform(served, tmp_path, monkeypatch):
    # sm90 ships on GH200 (aarch64): the lock's aarch64 environments are judged from the aarch64 wheel they install,
    # with no --platform; sm120 ships on x86_64 only: its aarch64 wheels are not read (and said so)
    server, _ = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GLMCOMPAT_INDEX_URL", DEAD)
    lock = read_lock(_uv_project(tmp_path, server.base, "9.0.0", aarch64=True))
    facts = load_facts()
    assert facts.target("sm90").ships_on == ("x86_64", "aarch64") and facts.target("sm120").ships_on == ("x86_64",)
    gh200 = artifacts.read_artifacts(lock, facts, resolved_at_install=False, ships_on={"x86_64", "aarch64"})
    a = gh200[("stableext", "1.0", "aarch64")]
    assert a.read and a.artifact.endswith("_aarch64.whl") and a.torch_missing == {"9.0.0": ("torch_new_stable_ivalue",)}
    assert gh200[("stableext", "1.0")].artifact == STABLE
    found = [f for f in evaluate_lock(lock, "sm90", None, facts, True, artifacts=gh200) if f.rule == "abi"]
    assert found and all(f.severity == "error" for f in found)
    assert not [f for f in evaluate_lock(lock, "sm90", None, facts, True, artifacts=gh200) if "was not checked" in f.message]
    x86 = artifacts.read_artifacts(lock, facts, resolved_at_install=False, ships_on={"x86_64"})
    assert not x86[("stableext", "1.0", "aarch64")].read


def test_extra_index_url_is_searched_in_order(served, tmp_path, monkeypatch):
    server, _ = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    p = tmp_path / "requirements.txt"
    p.write_text(f"--index-url {DEAD}\n--extra-index-url {server.base}\ntorch==9.0.0\nstableext==1.0\n")
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "cache"))
    from glmcompat.ops.artifacts import read_artifacts

    got = read_artifacts(read_lock(p), load_facts(), resolved_at_install=True, platforms=["x86_64"])
    a = got[("stableext", "1.0")]
    assert a.read and a.artifact == STABLE and a.torch_missing == {"9.0.0": ("torch_new_stable_ivalue",)}


@pytest.mark.parametrize(("torch", "severities"), [("9.0.0", ["error"]), ("9.1.0", [])])
def test_api_check_reads_artifacts_like_the_cli(served, tmp_path, monkeypatch, torch, severities):
    server, files = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / STABLE).write_bytes(files[STABLE])
    p = tmp_path / "requirements.txt"
    p.write_text(f"--index-url {server.base}\ntorch=={torch}\n./{STABLE}\n")
    result = api.check(p, "sm90", allow_unknown=True, platforms=["x86_64"])
    (verdict,) = result.verdicts
    found = [f for f in verdict.findings if f.rule == "abi"]
    assert [f.severity for f in found] == severities
    if severities:
        assert "torch_new_stable_ivalue" in found[0].message
    r = run_cli("check", str(p), "--target", "sm90", "--allow-unknown", "--platform", "x86_64",
                env={PROBE_ENV: "", "GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == (1 if severities else 0), r.stdout + r.stderr


@pytest.mark.parametrize(("member", "read"), [
    ("scipy.libs/libscipy_openblas-6cdc3b4a.so", False), ("scipy/linalg/_fblas.cpython-311-x86_64-linux-gnu.so", True),
    ("pyarrow/libarrow.so.2600", True), ("ext.libs/libc10-1a2b3c4d.so", True), ("ext.libs/libtorch_cpu-9f.so", True)])
def test_grafted_system_libraries_are_not_read(member, read):
    assert artifacts.own_code(member) is read


def _poetry(tmp: Path, base: str, torch: str, files: dict[str, bytes]) -> Path:
    """A poetry.lock (lock-version 2.1) whose torch and stableext come from a ``legacy`` source: file names and hashes
    only, as poetry writes them."""
    import hashlib

    def pkg(name: str, version: str, fn: str) -> str:
        sha = hashlib.sha256(files[fn]).hexdigest()
        return (f'[[package]]\nname = "{name}"\nversion = "{version}"\ndescription = ""\noptional = false\n'
                f'python-versions = ">=3.10"\ngroups = ["main"]\nfiles = [\n    {{file = "{fn}", hash = "sha256:{sha}"}},\n]\n\n'
                f'[package.source]\ntype = "legacy"\nurl = "{base}"\nreference = "gpu-second"\n\n')

    text = (pkg("torch", torch, f"torch-{torch}-cp311-cp311-manylinux_2_28_x86_64.whl") + pkg("stableext", "1.0", STABLE)
            + '[metadata]\nlock-version = "2.1"\npython-versions = ">=3.11,<3.12"\ncontent-hash = "00"\n')
    (tmp / "poetry.lock").write_text(text)
    return tmp / "poetry.lock"


def test_poetry_legacy_source_is_the_index_read(served, tmp_path, monkeypatch):
    server, files = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("UV_DEFAULT_INDEX", DEAD)  # the default index answers nothing: the lock's source is read
    lock = read_lock(_poetry(tmp_path, server.base, "9.0.0", files))
    assert lock.meta["wheel_indexes"] == {"stableext==1.0": server.base, "torch==9.0.0": server.base}
    got = artifacts.read_artifacts(lock, load_facts(), resolved_at_install=False, platforms=["x86_64"])
    a = got[("stableext", "1.0")]
    assert a.read and a.artifact == STABLE and a.torch_missing == {"9.0.0": ("torch_new_stable_ivalue",)}, a


@pytest.mark.network
@pytest.mark.slow
def test_live_gh200_environments_of_a_real_lock_are_judged_from_their_aarch64_wheels() -> None:
    # a real uv.lock (tests/fixtures/heldout36/h01) with aarch64 environments: for sm90 (H100 and GH200) every compiled
    # package there is read from the aarch64 wheel it installs (debugpy: its py2.py3-none-any wheel), with no --platform
    lock = Path(__file__).resolve().parents[1] / "fixtures" / "heldout36" / "h01" / "uv.lock"
    r = run_cli("check", "uv.lock", "--target", "sm90", cwd=lock.parent)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "was not checked" not in r.stdout + r.stderr and "--platform aarch64" not in r.stdout + r.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("torch", "missing"), [("9.0.0", ("torch_new_stable_ivalue",)), ("9.1.0", ())])
def test_project_lock_judges_the_compiled_wheels_as_check_does(served, tmp_path, monkeypatch, torch, missing):
    """The lock ``glmcompat lock`` writes is one ``check`` passes: its judge reads the compiled packages' own bytes
    too (a wheel built against another torch is refused by the lock, not only by a later check)."""
    from glmcompat.ops.projectlock import judge

    server, _ = served
    monkeypatch.delenv(PROBE_ENV, raising=False)
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "cache"))
    path = _uv_project(tmp_path, server.base, torch)
    facts = load_facts()
    found = judge(facts, path, [facts.target("sm90")], None, "x86_64")["sm90"]
    abi = [f for f in found if f.rule == "abi"]
    assert [f.severity for f in abi] == (["error"] if missing else [])
    assert all(m in abi[0].message for m in missing) if missing else True
    checked = evaluate_lock(read_lock(path), facts.target("sm90"), None, facts, False, platforms=["x86_64"],
                            artifacts=artifacts.read_artifacts(read_lock(path), facts, resolved_at_install=False,
                                                               platforms=["x86_64"]))
    assert [(f.rule, f.severity, f.message) for f in checked] == [(f.rule, f.severity, f.message) for f in found]


def test_answers_in_the_order_asked_local_ones_here() -> None:
    """The candidates whose summary is shipped are judged in this thread, the others in the pool started first; the
    answer keeps the candidates' order either way (issue 39)."""
    import threading

    todo = [(f"p{i}", "1.0", "lock" if i % 3 else "index", "cp311", "x86_64") for i in range(9)]
    where: dict[str, int] = {}

    def one(item):
        where[item[0]] = threading.get_ident()
        return (item[0], item[1]), item[2]

    got = artifacts._answers(one, todo, lambda item: item[2] == "lock")
    assert list(got) == [(f"p{i}", "1.0") for i in range(9)] and list(got.values()) == [c[2] for c in todo]
    here = threading.get_ident()
    assert {n for n, t in where.items() if t == here} == {c[0] for c in todo if c[2] == "lock"}
    # one far candidate is not worth a pool: everything here
    where.clear()
    artifacts._answers(one, todo[:3], lambda item: item[2] == "lock")
    assert set(where.values()) == {here}

"""`glmcompat lock` / `upgrade`: the resolver on a recorded index, the committed locks, atomic writes."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import replace

import pytest

from glmcompat.decide.explain import resolve, skipped_newer
from glmcompat.decide.plan import plan
from glmcompat.decide.resolver import Request
from glmcompat.decide.rules import evaluate
from glmcompat.edges.sources import RecordedSource
from glmcompat.matrix.load import load_facts
from glmcompat.model.errors import EnvironmentFailure, InputError, UnsafeError
from glmcompat.ops.lockgen import LockRequest, lock, memoize, render_pyproject, resolve_core
from glmcompat.readers.formats import read_lock

from tests.conftest import FIXTURES, ROOT, run_cli

INDEX = FIXTURES / "resolver" / "index.json"
GLM5 = {"flashinfer-cubin": "0.6.3", "flashinfer-python": "0.6.3", "sgl-kernel": "0.3.21", "sglang": "0.5.9",
        "torch": "2.9.1", "torchaudio": "2.9.1", "torchvision": "0.24.1", "transformers": "5.2.0"}
STACK = "glm5-sglang-0.5.9"


def stack_request(facts, stack, target, model=None, *rest, platform=None, **kw) -> LockRequest:
    """The request of `glmcompat lock --stack STACK --target TARGET [--platform P] [--model M]`, its plan built as the
    command builds it (the model taken as given: hostile text stays text)."""
    return LockRequest(stack, replace(plan(facts, [target], platform), model=model), *rest, **kw)


@pytest.fixture(scope="module")
def facts():
    return load_facts()


@pytest.fixture(scope="module")
def src():
    return RecordedSource(INDEX)


@pytest.mark.parametrize("target", ["sm90", "sm100", "sm120"])
def test_default_lock_is_the_glm5_stack(facts, src, target):
    out = resolve(facts, src, Request(STACK, facts.target(target), "glm_moe_dsa"))
    assert out.pins == GLM5
    assert "transformers" in out.overridden and "4.57.1" in out.overridden["transformers"]
    assert not [f for f in evaluate(out.pins, target=target, model="glm_moe_dsa", matrix=facts) if f.severity == "error"]


def test_with_torch_2_10_fails_with_a_derivation(facts, src):
    with pytest.raises(UnsafeError) as e:
        resolve(facts, src, Request(STACK, facts.target("sm120"), "glm_moe_dsa", ("torch==2.10.0",)))
    text = str(e.value)
    assert text.startswith("Because sgl-kernel 0.3.21 was built against torch 2.9.1 (evidence ")
    (cause,) = e.value.causes
    assert (cause.kind, cause.subject) == ("abi", "torch")
    assert cause.clauses[0].endswith(" and you require torch==2.10.0")
    assert cause.clauses[1:] == ("no kernel release built against torch==2.10.0 carries code for sm120",)
    assert cause.conclusion == "no safe set of the core exists for sm120 (stack glm5-sglang-0.5.9, model glm_moe_dsa)"
    assert cause.remedy.startswith("keep torch==2.9.1") and text.splitlines()[-1] == f"hint: {cause.remedy}"


def test_target_is_a_pseudo_requirement_in_explanations(facts, src):
    with pytest.raises(UnsafeError) as e:
        resolve(facts, src, Request(STACK, facts.target("sm103"), "glm_moe_dsa", ("sgl-kernel==0.3.21",)))
    (cause,) = e.value.causes
    assert (cause.kind, cause.subject, cause.clauses[0]) == ("ruled-out", "sgl-kernel", "you require sgl-kernel==0.3.21")
    assert cause.clauses[1].startswith("you lock for sm103 (compute capability 10.3), and sgl-kernel 0.3.21 carries sm_80, "
                                       "sm_89, sm_90, sm_90a, sm_100a, sm_120a, which runs only on compute capability")
    assert "10.0" in cause.clauses[1] and "12.0" in cause.clauses[1]


def test_upgrade_prefers_the_newest_safe_set_and_says_why(facts, src):
    req = Request(STACK, facts.target("sm120"), "glm_moe_dsa", (), True)
    out = resolve(facts, src, req)
    assert Version(out.pins["sglang"]) > Version("0.5.9") and Version(out.pins["torch"]) > Version("2.9.1")
    assert "sgl-kernel" not in out.pins  # sglang >= 0.5.10 moved to sglang-kernel; never both
    assert not [f for f in evaluate(out.pins, target="sm120", model="glm_moe_dsa", matrix=facts) if f.severity == "error"]
    skipped = skipped_newer(facts, src, req, out)
    assert skipped["torch"] and all(why for why in skipped["torch"].values())
    assert all(why.startswith("Because ") and "we can conclude" in why for why in skipped["torchvision"].values())


def test_newest_stack_upgrade_reaches_sglang_0_5_23(facts, src):
    out = resolve(facts, src, Request("sglang-0.5.23", facts.target("sm120"), "glm_moe_dsa", (), False))
    assert out.pins["sglang"] == "0.5.23" and out.pins["sglang-kernel"] == "0.4.10" and out.pins["torch"] == "2.14.1"


@pytest.mark.parametrize("target", ["sm90", "sm100", "sm120"])
def test_committed_locks_are_current(facts, src, target):
    """The committed pyproject.toml is exactly what the resolver and renderer produce today, and the
    committed hash-pinned requirements.txt passes the check for its target."""
    req = stack_request(facts, STACK, target, "glm_moe_dsa")
    res = resolve_core(facts, req, source=src)
    d = ROOT / "locks" / STACK / target
    assert (d / "pyproject.toml").read_text() == render_pyproject(facts, req, res)
    lock_ = read_lock(d / "requirements.txt")
    for env in lock_.sets:
        pkgs = env.packages
        assert {k: pkgs[k] for k in GLM5} == GLM5
        assert not [f for f in evaluate(pkgs, target=target, model="glm_moe_dsa", matrix=facts) if f.severity == "error"]
    text = (d / "requirements.txt").read_text()
    assert "--hash=sha256:" in text and "://" not in text


def test_failed_run_leaves_earlier_outputs_untouched(tmp_path, facts, src, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    for n in ("pyproject.toml", "uv.lock", "requirements.txt", "pylock.toml"):
        (out / n).write_text(f"# Generated by `glmcompat lock`\nearlier {n}\n")
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in out.iterdir()}
    monkeypatch.setenv("UV_PYTHON", str(tmp_path / "no-such-python"))  # the real uv fails to find it
    with pytest.raises(EnvironmentFailure, match="uv lock"):
        lock(facts, stack_request(facts, STACK, "sm120", "glm_moe_dsa"), out, source=src)
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in out.iterdir()}
    assert after == before
    assert not [p for p in out.iterdir() if p.name.startswith(".glmcompat-")]


def test_uv_missing(tmp_path, facts, src, monkeypatch):
    import glmcompat.ops.lockgen as L

    monkeypatch.setattr(L, "uv_binary", lambda: (_ for _ in ()).throw(EnvironmentFailure("uv is not installed (pip install uv)")))
    with pytest.raises(EnvironmentFailure, match="uv is not installed"):
        lock(facts, stack_request(facts, STACK, "sm120", "glm_moe_dsa"), tmp_path / "o", source=src)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("args,needle", [
    (["--target", "sm999"], "unknown target 'sm999'"),
    (["--target", "sm120", "--platform", "sparc"], "unknown platform 'sparc' (known: x86_64, aarch64)"),
    (["--target", "sm121", "--platform", "x86_64"], "target sm121 never ships on x86_64 (DGX Spark (GB10) on aarch64)"),
    (["--target", "sm120", "--platform", "aarch64"], "target sm120 never ships on aarch64"),
    (["--target", "sm120", "--stack", "nope"], "unknown stack 'nope'"),
    (["--target", "sm120", "--model", "llama9"], "unknown model type 'llama9'"),
    (["--target", "sm120", "--with", "torch=="], "invalid requirement 'torch=='"),
    (["--target", "sm120", "--with", "numpy==2.0"], "'numpy' is not in the coupled core"),
    (["--target", "sm120", "--python", "3"], "expected a CPython 3 minor version such as 3.11"),
])
def test_bad_input(tmp_path, args, needle):
    r = run_cli("lock", *args, "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "o").exists()


def test_bad_with_in_library(facts, src):
    with pytest.raises(InputError):
        resolve(facts, src, Request(STACK, facts.target("sm120"), None, ("transformers>>1",)))


# ------------------------------------------------------------------------------------------------
# vLLM locks
# ------------------------------------------------------------------------------------------------

VSTACK = "glm5-vllm-0.33.0"
VLLM = {"flashinfer-python": "0.7.2.post1", "torch": "2.14.0", "torchaudio": "2.11.0", "torchvision": "0.29.0",
        "transformers": "5.20.2", "vllm": "0.33.0"}


@pytest.mark.parametrize("target", ["sm90", "sm100", "sm120"])
def test_committed_vllm_locks_are_current(facts, src, target):
    """The committed vLLM pyproject.toml is what the resolver and renderer produce; the hash-pinned requirements
    carry the chosen set (and vLLM's whole tree) and pass the check for the target and model."""
    req = stack_request(facts, VSTACK, target, "glm_moe_dsa")
    res = resolve_core(facts, req, source=src)
    assert res.pins == VLLM and res.overrides == {}
    d = ROOT / "locks" / VSTACK / target
    assert (d / "pyproject.toml").read_text() == render_pyproject(facts, req, res)
    lock_ = read_lock(d / "requirements.txt")
    for env in lock_.sets:
        pkgs = env.packages
        assert {k: pkgs[k] for k in VLLM} == VLLM and "sglang" not in pkgs
        assert not [f for f in evaluate(pkgs, target=target, model="glm_moe_dsa", matrix=facts) if f.severity == "error"]
    text = (d / "requirements.txt").read_text()
    assert "--hash=sha256:" in text and "://" not in text
    r = run_cli("check", str(d / "requirements.txt"), "--target", target, "--model", "glm_moe_dsa")
    assert r.returncode == 0 and r.stdout.startswith(f"ok: {d / 'requirements.txt'} on {target}"), r.stdout + r.stderr


@pytest.mark.parametrize("args,needle", [
    (["--engine", "tensorrt"], "error: unknown engine 'tensorrt' (known: sglang, vllm)"),
    (["--engine", "sglang", "--stack", VSTACK], "error: --engine sglang does not match stack 'glm5-vllm-0.33.0', a vllm stack"),
    (["--engine", "vllm", "--stack", STACK], "error: --engine vllm does not match stack 'glm5-sglang-0.5.9', a sglang stack"),
])
def test_bad_engine(tmp_path, args, needle):
    r = run_cli("lock", "--target", "sm120", *args, "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and r.stderr.startswith(needle) and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "o").exists()


@pytest.fixture
def vllm_index():
    """The recorded index (pages.json) served on a local port, for in-process command runs: ``--index-url`` and its
    URL."""
    import json

    from tests.localindex import serve_recorded

    with serve_recorded(json.loads((FIXTURES / "resolver" / "pages.json").read_text())) as url:
        yield ["--index-url", url]


@pytest.mark.parametrize("withs,first", [
    (["vllm==0.26.0", "torch==2.13.0"], "error: Because vllm 0.26.0 requires torch==2.11.0, and you require torch==2.13.0, "
                                         "we can conclude that no safe set of the core exists for sm120 "
                                         "(stack glm5-vllm-0.33.0, model glm_moe_dsa)."),
    (["torch==2.12.0"], "error: Because vllm 0.33.0 requires torch==2.14.0, and you require torch==2.12.0, and every older "
                        "vllm release that fits (0.16.0 .. 0.32.0) fails the same way"),
    (["vllm==0.1.0"], "error: Because you require vllm==0.1.0, and vllm 0.1.0 has no wheel for CPython 3.11 on Linux x86_64"),
])
def test_vllm_lock_without_a_safe_set_exits_1(vllm_index, tmp_path, capsys, withs, first):
    from glmcompat.cli import main

    argv = ["lock", *vllm_index, "--target", "sm120", "--engine", "vllm", "--out", str(tmp_path / "o"), "-q"]
    for w in withs:
        argv += ["--with", w]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(first) and "hint: " in err, err
    assert not (tmp_path / "o").exists()


@pytest.fixture
def local_index(tmp_path, monkeypatch):
    """A local PEP 691 index (a thread of this process) with tiny wheels named like the vLLM core, for the real uv."""
    yield from _serve(VLLM, tmp_path, monkeypatch)


@pytest.fixture
def arm_local_index(tmp_path, monkeypatch):
    """The same with tiny (pure) wheels named like the aarch64 core set."""
    yield from _serve(ARM, tmp_path, monkeypatch)


def _serve(pins, tmp_path, monkeypatch):
    from tests.localindex import serve_wheels

    with serve_wheels(pins) as url:
        monkeypatch.setenv("UV_DEFAULT_INDEX", url)
        monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
        yield


def test_vllm_lock_end_to_end_with_the_real_uv(local_index, tmp_path, src):
    """`glmcompat lock --target sm120 --engine vllm` as a process: the recorded resolution (seeded in the memo),
    the real `uv lock` on a local index, the check, the host-free exports; a second run changes nothing."""

    from glmcompat.matrix.store import cache_dir
    from glmcompat.ops.lockgen import resolution_key

    matrix = tmp_path / "matrices"  # a snapshot: the tree may change under a long test run
    shutil.copytree(ROOT / "glmcompat" / "matrix" / "data", matrix)
    facts = load_facts([matrix])
    req = stack_request(facts, VSTACK, "sm120", "glm_moe_dsa")
    memo = cache_dir() / "resolutions" / f"{resolution_key(facts, req)}.json"
    memo.parent.mkdir(parents=True, exist_ok=True)
    memoize(facts, req, resolve_core(facts, req, source=src))
    out = tmp_path / "out"
    cmd = ("lock", "--target", "sm120", "--engine", "vllm", "--matrix", str(matrix), "--out", str(out))
    r0 = r = run_cli(*cmd)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[:2] == [
        f"Locked {VSTACK} for sm120 on Linux x86_64 in {out} (wrote pyproject.toml, uv.lock, requirements.txt, pylock.toml)",
        "  core: " + " ".join(f"{n}=={v}" for n, v in VLLM.items())]
    assert (out / "pyproject.toml").read_text() == (ROOT / "locks" / VSTACK / "sm120" / "pyproject.toml").read_text()
    lock_ = read_lock(out / "requirements.txt")
    assert all({k: e.packages[k] for k in VLLM} == VLLM for e in lock_.sets)
    assert "127.0.0.1" not in (out / "requirements.txt").read_text()
    r = run_cli("check", str(out / "uv.lock"), "--target", "sm120", "--model", "glm_moe_dsa", "--matrix", str(matrix))
    assert r.returncode == 0, r.stdout
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    first = r0.stdout.splitlines()
    r = run_cli(*cmd)
    assert r.returncode == 0 and "(up to date)" in r.stdout.splitlines()[0], r.stdout + r.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert r.stdout.splitlines()[1:] == first[1:]  # the same core, notes and warnings as the run that wrote it


# ------------------------------------------------------------------------------------------------
# Linux aarch64 locks: GB200 (sm100 --platform aarch64) and DGX Spark (sm121, aarch64 only)
# ------------------------------------------------------------------------------------------------

ARM = {"flashinfer-python": "0.7.2", "sglang": "0.5.23", "sglang-kernel": "0.4.10", "torch": "2.14.1", "torchaudio": "2.11.0",
       "torchvision": "0.29.2", "transformers": "5.19.0"}
ARM_LOCKS = [("sm100", "aarch64"), ("sm121", None)]  # (target, --platform): sm121 ships on aarch64 only
ARM_ENV = "sys_platform == 'linux' and platform_machine == 'aarch64'"


@pytest.fixture(scope="module")
def arm_src():
    return RecordedSource(FIXTURES / "resolver" / "index-aarch64.json")


def _wheel_names():
    """{sha256: file name} of every file the recorded pages hold (the core packages, both machines)."""
    import json

    pages = json.loads((FIXTURES / "resolver" / "pages.json").read_text())["pages"]
    return {f["hashes"]["sha256"]: f["filename"] for p in pages.values() for f in p["files"] if f.get("hashes", {}).get("sha256")}


def _machine_of(filename):
    """'any' for a pure wheel, else the Linux machine(s) its platform tags name ('wasm32' and the like for others)."""
    from packaging.utils import parse_wheel_filename

    plats = {t.platform for t in parse_wheel_filename(filename)[3]}
    if plats == {"any"}:
        return "any"
    return "/".join(sorted({m for p in plats for m in ("x86_64", "aarch64") if p.endswith(m)} or plats))


@pytest.mark.parametrize("target,platform", ARM_LOCKS)
def test_committed_aarch64_locks_are_current(facts, arm_src, target, platform):
    """The committed aarch64 pyproject.toml is exactly what the resolver (on the recorded aarch64 index) and the
    renderer produce: uv environments and required-environments for Linux aarch64, its own directory and
    project name; the requirements carry the set, pass the check on aarch64, and every core wheel they pin is an
    aarch64 (or pure) wheel."""
    import tomllib

    req = stack_request(facts, STACK, target, "glm_moe_dsa", platform=platform)
    res = resolve_core(facts, req, source=arm_src)
    assert res.pins == ARM and res.overrides == {}
    d = ROOT / "locks" / STACK / f"{target}-aarch64"
    text = (d / "pyproject.toml").read_text()
    assert text == render_pyproject(facts, req, res)
    assert text.startswith(f"# Generated by `glmcompat lock --stack {STACK} --target {target} --platform aarch64 --model glm_moe_dsa`")
    doc = tomllib.loads(text)
    assert doc["tool"]["uv"]["environments"] == doc["tool"]["uv"]["required-environments"] == [ARM_ENV]
    assert doc["project"]["name"] == f"glm5-sglang-0-5-9-{target}-aarch64" and doc["tool"]["glmcompat"]["platform"] == "aarch64"
    lock_ = read_lock(d / "requirements.txt")
    assert [e.platform for e in lock_.sets] and all(e.platform == "aarch64" for e in lock_.sets)
    for env in lock_.sets:
        pkgs = env.packages
        assert {k: pkgs[k] for k in ARM} == ARM and "sgl-kernel" not in pkgs and "flashinfer-cubin" not in pkgs
    reqs = (d / "requirements.txt").read_text()
    assert "--hash=sha256:" in reqs and "://" not in reqs and "x86_64" not in reqs
    names = _wheel_names()
    import re

    for block in re.split(r"\n(?=[a-z0-9])", reqs):
        m = re.match(r"([a-z0-9._-]+)==", block)
        if not m:
            continue
        known = [names[h] for h in re.findall(r"--hash=sha256:([0-9a-f]{64})", block) if h in names]
        wheels = [_machine_of(f) for f in known if f.endswith(".whl")]
        if m.group(1) in ARM:
            assert wheels and set(wheels) <= {"aarch64", "any"}, (m.group(1), known)
    r = run_cli("check", str(d / "requirements.txt"), "--target", target, "--model", "glm_moe_dsa", "--platform", "aarch64")
    assert r.returncode == 0 and r.stdout.startswith(f"ok: {d / 'requirements.txt'} on {target} (compute capability "), r.stdout
    assert "Linux aarch64 only, model glm_moe_dsa): the stack is safe\n" in r.stdout.splitlines()[0] + "\n", r.stdout
    r = run_cli("check", str(d / "requirements.txt"), "--target", target)
    assert r.returncode == 0, r.stdout


@pytest.mark.parametrize("args,rc,needle", [
    (["--target", "sm121", "--platform", "x86_64"], 2,
     "error: target sm121 never ships on x86_64 (DGX Spark (GB10) on aarch64): pass --platform aarch64 (or leave --platform out)"),
    (["--target", "sm100", "--platform", "sparc"], 2, "error: unknown platform 'sparc' (known: x86_64, aarch64)"),
])
def test_check_platform_bad_input(args, rc, needle):
    r = run_cli("check", str(ROOT / "locks" / STACK / "sm121-aarch64" / "requirements.txt"), *args)
    assert r.returncode == rc and r.stderr.strip() == needle, r.stderr


def test_check_platform_is_strict():
    """`check --platform P` judges only P's environments and excuses nothing: the GB200 lock installs nothing on x86_64."""
    req = ROOT / "locks" / STACK / "sm100-aarch64" / "requirements.txt"
    import json

    r = run_cli("check", str(req), "--target", "sm100", "--platform", "x86_64", "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and [c["platforms"] for c in doc["checked"]] == [["x86_64"]], r.stdout
    assert [(f["rule"], f["severity"], f["packages"]) for f in doc["findings"]] == [("platform", "error", [])]
    assert doc["findings"][0]["message"].startswith("this lock installs nothing on Linux x86_64")
    r = run_cli("check", str(req), "--target", "sm100", "--platform", "arm64", "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["ok"] and doc["findings"] == []  # without --platform: the x86_64 warning


def test_x86_64_lock_files_are_unchanged_by_platforms(facts, src):
    """An x86_64 lock renders as before platforms existed: `environments` only, no `required-environments`, no
    platform in [tool.glmcompat] or the project name, the same header."""
    res = resolve_core(facts, stack_request(facts, STACK, "sm100", "glm_moe_dsa"), source=src)
    for req in (stack_request(facts, STACK, "sm100", "glm_moe_dsa"), stack_request(facts, STACK, "sm100", "glm_moe_dsa", platform="x86_64")):
        text = render_pyproject(facts, req, res)
        assert text == (ROOT / "locks" / STACK / "sm100" / "pyproject.toml").read_text()
        assert "required-environments" not in text and "aarch64" not in text and "--platform" not in text


def test_resolution_key_normalises_the_platform(facts):
    from glmcompat.ops.lockgen import resolution_key

    key = resolution_key
    assert key(facts, stack_request(facts, STACK, "sm121")) == key(facts, stack_request(facts, STACK, "sm121", platform="aarch64"))
    assert key(facts, stack_request(facts, STACK, "sm100")) == key(facts, stack_request(facts, STACK, "sm100", platform="x86_64"))
    assert key(facts, stack_request(facts, STACK, "sm100")) != key(facts, stack_request(facts, STACK, "sm100", platform="aarch64"))


def test_resolution_key_includes_the_index(facts, monkeypatch):
    """A resolution memoised from one index is never reused for a lock against another (`--index-url`)."""
    from glmcompat.ops.lockgen import resolution_key

    monkeypatch.setenv("UV_DEFAULT_INDEX", "https://index.invalid/simple/")
    one = resolution_key(facts, stack_request(facts, STACK, "sm120"))
    monkeypatch.setenv("UV_DEFAULT_INDEX", "https://mirror.invalid/simple/")
    assert resolution_key(facts, stack_request(facts, STACK, "sm120")) != one


def test_aarch64_lock_against_an_x86_64_source_is_refused(facts, src, tmp_path):
    with pytest.raises(InputError, match="the source reads the x86_64 wheels, and the request is for aarch64"):
        lock(facts, stack_request(facts, STACK, "sm100", "glm_moe_dsa", platform="aarch64"), tmp_path / "o", source=src)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("target,platform", ARM_LOCKS)
def test_aarch64_lock_end_to_end_with_the_real_uv(arm_local_index, tmp_path, arm_src, target, platform):
    """`glmcompat lock --target T [--platform aarch64]` as a process: the recorded aarch64 resolution (seeded in the
    memo), the real `uv lock` for Linux aarch64 on a local index, the check for aarch64, the host-free exports; the
    output says which machine was locked; a second run changes nothing."""

    from glmcompat.matrix.store import cache_dir
    from glmcompat.ops.lockgen import resolution_key

    matrix = tmp_path / "matrices"
    shutil.copytree(ROOT / "glmcompat" / "matrix" / "data", matrix)
    facts = load_facts([matrix])
    req = stack_request(facts, STACK, target, "glm_moe_dsa", platform=platform)
    memo = cache_dir() / "resolutions" / f"{resolution_key(facts, req)}.json"
    memo.parent.mkdir(parents=True, exist_ok=True)
    memoize(facts, req, resolve_core(facts, req, source=arm_src))
    out = tmp_path / "out"
    cmd = ("lock", "--target", target, *(["--platform", platform] if platform else []), "--matrix", str(matrix), "--out", str(out))
    r0 = r = run_cli(*cmd)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == [
        f"Locked {STACK} for {target} on Linux aarch64 in {out} (wrote pyproject.toml, uv.lock, requirements.txt, pylock.toml)",
        "  core: " + " ".join(f"{n}=={v}" for n, v in ARM.items())]
    assert f"  note: the stack's own pins are not safe for {target}" in r.stdout
    assert "(`--with sglang==0.5.9 --platform aarch64` shows why)" in r.stdout
    if target == "sm100":
        assert lines[-1] == ("  platform: Linux aarch64 (GB200); sm100 also ships on Linux x86_64 (B200): `--platform x86_64` "
                             "locks for it")
    else:
        assert lines[-1] == "  platform: Linux aarch64 (DGX Spark (GB10))"
    assert (out / "pyproject.toml").read_text() == (ROOT / "locks" / STACK / f"{target}-aarch64" / "pyproject.toml").read_text()
    lock_ = read_lock(out / "uv.lock")
    assert [e.platform for e in lock_.sets] and all(e.platform == "aarch64" for e in lock_.sets)
    assert "127.0.0.1" not in (out / "requirements.txt").read_text()
    r = run_cli("check", str(out / "uv.lock"), "--target", target, "--model", "glm_moe_dsa", "--platform", "aarch64",
                "--matrix", str(matrix))
    assert r.returncode == 0, r.stdout
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    first = r0.stdout.splitlines()
    r = run_cli(*cmd)
    assert r.returncode == 0 and "(up to date)" in r.stdout.splitlines()[0], r.stdout + r.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert r.stdout.splitlines()[1:] == first[1:]  # the same core, notes and warnings as the run that wrote it


def test_default_platform_is_said_and_the_other_named(facts, src, tmp_path, monkeypatch, capsys):
    """A target with two machines locks for x86_64 by default, says so, and names `--platform aarch64` and where
    that lock goes."""
    from glmcompat.cli.commands import lock as cmd

    from glmcompat.ops.lockgen import LockOutcome

    monkeypatch.setattr("glmcompat.ops.lockgen.lock", lambda facts, req, out, **k: LockOutcome(
        str(out), req.target, req.platform, dict(GLM5), {}))
    monkeypatch.chdir(tmp_path)
    assert cmd.main("lock", ["--target", "sm100"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"Locked {STACK} for sm100 on Linux x86_64 in locks/{STACK}/sm100 (up to date)"
    assert out[-1] == (f"  platform: Linux x86_64 (B200; the default for sm100); sm100 also ships on Linux aarch64 (GB200): "
                       f"`--platform aarch64` locks for it in locks/{STACK}/sm100-aarch64")
    assert cmd.main("lock", ["--target", "sm120"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "  platform: Linux x86_64 (RTX PRO 6000 Blackwell, RTX 5090)"


def _pins(requirements: str) -> dict[str, str]:
    """Each requirement of a requirements.txt uv exported: its name and exact version."""
    import re

    from packaging.utils import canonicalize_name

    return {canonicalize_name(m[1]): m[2] for m in re.finditer(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", requirements, re.M)}


def _holds_what_glmcompat_decides(out, committed, lock_args, check_args) -> None:
    """A fresh lock (``out``) and the committed one hold the same decisions of glmcompat's: the pyproject.toml byte for
    byte (the core pins, the overrides and why, the stack's exclude-newer, the environments), and in requirements.txt
    every package that pyproject.toml pins, at its pin; the committed set passes the check, and ``lock --check`` finds
    nothing stale but, at most, requirements.txt.

    The other pins of requirements.txt are uv's choices from what the index held, up to the stack's exclude-newer,
    when the lock was made. An index that gains files dated before that day (a mirror that syncs a package late) moves
    them without any decision of glmcompat's changing: a user's committed lock stays what it was, valid (every pin
    exact, each file's hash checked) and passing the check, and a test comparing those pins would fail on the index,
    not on glmcompat. So they are not compared (``lock --check`` reports such a requirements.txt, rightly: a lock
    written now would differ)."""
    import json
    import re
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    assert (out / "pyproject.toml").read_text() == (committed / "pyproject.toml").read_text()
    doc = tomllib.loads((committed / "pyproject.toml").read_text())
    uv = doc["tool"]["uv"]
    decided = {}
    for text in [*doc["project"]["dependencies"], *uv["constraint-dependencies"], *uv.get("override-dependencies", [])]:
        r = Requirement(text)
        (spec,) = r.specifier
        assert spec.operator == "==", text
        decided[canonicalize_name(r.name)] = spec.version
    assert decided
    for where in (out, committed):
        pins = _pins((where / "requirements.txt").read_text())
        assert {n: pins.get(n) for n in decided} == decided, where
    model = doc["tool"]["glmcompat"]["model"]
    r = run_cli("check", str(committed / "requirements.txt"), *lock_args[:2], "--model", model, *check_args)
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_cli("lock", *lock_args, "--check", "--json", "--out", str(committed))
    problems = json.loads(r.stdout)["problems"]
    assert all(re.fullmatch(r".*: requirements\.txt not current; run `glmcompat lock .*`", p) for p in problems), problems
    assert r.returncode == (1 if problems else 0), r.stderr


@pytest.mark.network
@pytest.mark.parametrize("target,platform", ARM_LOCKS)
def test_aarch64_lock_for_real(tmp_path, target, platform):
    """The live path for GB200 and DGX Spark: the lock holds the committed one's decisions (see
    :func:`_holds_what_glmcompat_decides`), the check accepts it for aarch64, and every wheel the hash-pinned requirements name (looked up in uv.lock) is an
    aarch64 or pure wheel (uv also lists pyemscripten wasm32 wheels of two packages, which no Linux machine
    installs); every requirement has one."""
    import re
    import tomllib

    from packaging.utils import parse_wheel_filename

    plat = ["--platform", platform] if platform else []
    out = tmp_path / "lock"
    r = run_cli("lock", "--target", target, *plat, "--out", str(out))
    assert r.returncode == 0, r.stderr
    committed = ROOT / "locks" / STACK / f"{target}-aarch64"
    _holds_what_glmcompat_decides(out, committed, ["--target", target, *plat], ["--platform", "aarch64"])
    r = run_cli("check", str(out / "uv.lock"), "--target", target, "--model", "glm_moe_dsa", "--platform", "aarch64")
    assert r.returncode == 0, r.stdout
    uv = tomllib.loads((out / "uv.lock").read_text())
    files = {w["hash"].split(":", 1)[1]: w["url"].rsplit("/", 1)[1] for p in uv["package"] for w in p.get("wheels", [])}
    reqs = (out / "requirements.txt").read_text()
    for block in re.split(r"\n(?=[a-z0-9])", reqs.split("\n", 2)[2]):
        name = block.split("==", 1)[0]
        wheels = [files[h] for h in re.findall(r"--hash=sha256:([0-9a-f]{64})", block) if h in files]
        plats = [{t.platform for t in parse_wheel_filename(f)[3]} for f in wheels]
        linux = [p for p in plats if not all("emscripten" in x or "wasm" in x for x in p)]
        assert all(p == {"any"} or all(x.endswith("_aarch64") for x in p) for p in linux), (name, wheels)
        assert linux, (name, wheels)


@pytest.mark.network
def test_vllm_lock_for_real(tmp_path):
    """The live path: lock for sm120 with vLLM, it holds the committed lock's decisions, and uv can install it
    (a dry run of the hash-pinned requirements: every wheel resolves for Linux x86_64, nothing is built)."""
    import os
    import subprocess
    import sys

    from glmcompat.edges.uv import uv_binary

    out = tmp_path / "sm120"
    r = run_cli("lock", "--target", "sm120", "--engine", "vllm", "--out", str(out))
    assert r.returncode == 0, r.stderr
    committed = ROOT / "locks" / VSTACK / "sm120"
    _holds_what_glmcompat_decides(out, committed, ["--target", "sm120", "--engine", "vllm"], [])
    uv = uv_binary()
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(tmp_path / "venv")], check=True, env=env)
    p = subprocess.run([uv, "pip", "install", "--dry-run", "--no-build", "--require-hashes", "--python",
                        str(tmp_path / "venv" / "bin" / "python"), "-r", str(committed / "requirements.txt")],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr
    assert " + vllm==0.33.0" in p.stderr + p.stdout and " + torch==2.14.0" in p.stderr + p.stdout


@pytest.mark.network
def test_lock_for_real(tmp_path):
    """The main job against the real index and the real uv; it holds the committed sm120 lock's decisions."""
    out = tmp_path / "sm120"
    r = run_cli("lock", "--target", "sm120", "--out", str(out))
    assert r.returncode == 0, r.stderr
    _holds_what_glmcompat_decides(out, ROOT / "locks" / STACK / "sm120", ["--target", "sm120"], [])
    r = run_cli("check", str(out / "uv.lock"), "--target", "sm120", "--model", "glm_moe_dsa")
    assert r.returncode == 0, r.stdout
    shutil.rmtree(out)


from packaging.version import Version  # noqa: E402

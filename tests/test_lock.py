"""`glmcompat lock` / `upgrade`: the resolver on a recorded index, the committed locks, atomic writes."""

from __future__ import annotations

import hashlib
import shutil

import pytest

from glmcompat.errors import EnvironmentFailure, InputError, UnsafeError
from glmcompat.facts import load_facts
from glmcompat.lock import LockRequest, lock, render_pyproject, resolve_core
from glmcompat.lockfiles import read_lock
from glmcompat.resolver import RecordedSource, Request, resolve, skipped_newer
from glmcompat.rules import evaluate

from .conftest import FIXTURES, ROOT, run_cli

INDEX = FIXTURES / "resolver" / "index.json"
GLM5 = {"flashinfer-cubin": "0.6.3", "flashinfer-python": "0.6.3", "sgl-kernel": "0.3.21", "sglang": "0.5.9",
        "torch": "2.9.1", "torchaudio": "2.9.1", "torchvision": "0.24.1", "transformers": "5.2.0"}
STACK = "glm5-sglang-0.5.9"


@pytest.fixture(scope="module")
def facts():
    return load_facts()


@pytest.fixture(scope="module")
def src():
    return RecordedSource(INDEX)


@pytest.mark.parametrize("target", ["sm90", "sm100", "sm120"])
def test_default_lock_is_the_glm5_stack(facts, src, target):
    out = resolve(facts, src, Request(STACK, target, "glm_moe_dsa"))
    assert out.pins == GLM5
    assert "transformers" in out.overridden and "4.57.1" in out.overridden["transformers"]
    assert not [f for f in evaluate(out.pins, target=target, model="glm_moe_dsa", matrix=facts) if f.severity == "error"]


def test_with_torch_2_10_fails_with_a_derivation(facts, src):
    with pytest.raises(UnsafeError) as e:
        resolve(facts, src, Request(STACK, "sm120", "glm_moe_dsa", ("torch==2.10.0",)))
    text = str(e.value)
    assert text.startswith("Because sgl-kernel 0.3.21 was built against torch 2.9.1 (evidence metadata:")
    assert "and you require torch==2.10.0" in text
    assert "no kernel release built against torch==2.10.0 carries code for sm120" in text
    assert "we can conclude that no safe set of the core exists for sm120" in text
    assert text.splitlines()[-1].startswith("hint: keep torch==2.9.1")


def test_target_is_a_pseudo_requirement_in_explanations(facts, src):
    with pytest.raises(UnsafeError) as e:
        resolve(facts, src, Request(STACK, "sm103", "glm_moe_dsa", ("sgl-kernel==0.3.21",)))
    text = str(e.value)
    assert "you lock for sm103 (compute capability 10.3)" in text
    assert "sgl-kernel 0.3.21 carries sm_80, sm_89, sm_90, sm_90a, sm_100a, sm_120a, which runs only on compute capability" in text
    assert "10.0" in text and "12.0" in text


def test_upgrade_prefers_the_newest_safe_set_and_says_why(facts, src):
    req = Request(STACK, "sm120", "glm_moe_dsa", (), True)
    out = resolve(facts, src, req)
    assert Version(out.pins["sglang"]) > Version("0.5.9") and Version(out.pins["torch"]) > Version("2.9.1")
    assert "sgl-kernel" not in out.pins  # sglang >= 0.5.10 moved to sglang-kernel; never both
    assert not [f for f in evaluate(out.pins, target="sm120", model="glm_moe_dsa", matrix=facts) if f.severity == "error"]
    skipped = skipped_newer(facts, src, req, out)
    assert skipped["torch"] and all(why for why in skipped["torch"].values())
    assert any("torchaudio" in why or "requires torch" in why for why in skipped["torchvision"].values())


def test_newest_stack_upgrade_reaches_sglang_0_5_23(facts, src):
    out = resolve(facts, src, Request("sglang-0.5.23", "sm120", "glm_moe_dsa", (), False))
    assert out.pins["sglang"] == "0.5.23" and out.pins["sglang-kernel"] == "0.4.10" and out.pins["torch"] == "2.14.1"


@pytest.mark.parametrize("target", ["sm90", "sm100", "sm120"])
def test_committed_locks_are_current(facts, src, target):
    """The committed pyproject.toml is exactly what the resolver and renderer produce today, and the
    committed hash-pinned requirements.txt passes the check for its target."""
    req = LockRequest(STACK, target, "glm_moe_dsa")
    res = resolve_core(facts, req, source=src)
    d = ROOT / "locks" / STACK / target
    assert (d / "pyproject.toml").read_text() == render_pyproject(facts, req, res)
    lock_ = read_lock(d / "requirements.txt")
    for env in lock_.sets:
        pkgs = env["packages"]
        assert {k: pkgs[k] for k in GLM5} == GLM5
        assert not [f for f in evaluate(pkgs, target=target, model="glm_moe_dsa", matrix=facts) if f.severity == "error"]
    text = (d / "requirements.txt").read_text()
    assert "--hash=sha256:" in text and "://" not in text


def test_failed_run_leaves_earlier_outputs_untouched(tmp_path, facts, src, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    for n in ("pyproject.toml", "uv.lock", "requirements.txt", "pylock.toml"):
        (out / n).write_text(f"earlier {n}\n")
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in out.iterdir()}
    monkeypatch.setenv("UV_PYTHON", str(tmp_path / "no-such-python"))  # the real uv fails to find it
    with pytest.raises(EnvironmentFailure, match="uv lock"):
        lock(facts, LockRequest(STACK, "sm120", "glm_moe_dsa"), out, source=src)
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in out.iterdir()}
    assert after == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".glmcompat-lock-")]


def test_uv_missing(tmp_path, facts, src, monkeypatch):
    import glmcompat.lock as L

    monkeypatch.setattr(L, "uv_binary", lambda: (_ for _ in ()).throw(EnvironmentFailure("uv is not installed (pip install uv)")))
    with pytest.raises(EnvironmentFailure, match="uv is not installed"):
        lock(facts, LockRequest(STACK, "sm120", "glm_moe_dsa"), tmp_path / "o", source=src)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("args,needle", [
    (["--target", "sm999"], "unknown target 'sm999'"),
    (["--target", "sm120", "--stack", "nope"], "unknown stack 'nope'"),
    (["--target", "sm120", "--model", "llama9"], "unknown model type 'llama9'"),
    (["--target", "sm120", "--with", "torch=="], "invalid requirement 'torch=='"),
    (["--target", "sm120", "--with", "numpy==2.0"], "'numpy' is not in the coupled core"),
    (["--target", "sm120", "--python", "3"], "expected X.Y"),
])
def test_bad_input(tmp_path, args, needle):
    r = run_cli("lock", *args, "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


def test_bad_with_in_library(facts, src):
    with pytest.raises(InputError):
        resolve(facts, src, Request(STACK, "sm120", None, ("transformers>>1",)))


@pytest.mark.network
def test_lock_for_real(tmp_path):
    """The main job against the real index and the real uv; then the committed sm120 lock is current."""
    out = tmp_path / "sm120"
    r = run_cli("lock", "--target", "sm120", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "pyproject.toml").read_text() == (ROOT / "locks" / STACK / "sm120" / "pyproject.toml").read_text()
    r = run_cli("check", str(out / "uv.lock"), "--target", "sm120", "--model", "glm_moe_dsa")
    assert r.returncode == 0, r.stdout
    r = run_cli("lock", "--target", "sm120", "--check", "--out", str(ROOT / "locks" / STACK / "sm120"))
    assert r.returncode == 0, r.stderr
    shutil.rmtree(out)


from packaging.version import Version  # noqa: E402

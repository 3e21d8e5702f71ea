"""The speculative `uv lock` of a cold `glmcompat lock` (glmcompat.ops.speculate): started on a predicted
pyproject.toml while the core resolves, used only when the prediction was exactly the lock's question, and
then the outputs are byte for byte those of an unspeculated run; a wrong prediction is killed and the lock
runs as before, with the same outputs; no uv process and no directory outlive the run.

Offline with the real uv: the local index and the recorded resolution of tests/ops/test_publish.py.
"""

from __future__ import annotations

import os
import shutil

import pytest

import glmcompat.ops.lockgen as L
from glmcompat.model.errors import EnvironmentFailure, InputError
from glmcompat.ops import speculate
from glmcompat.ops.lockgen import lock
from glmcompat.ops.lockset import OUTPUTS

from tests.ops import test_publish as safety
from tests.conftest import ROOT, run_cli
from tests.ops.test_publish import A, B, put, same_set, strays, tree

index, matrix, facts, src, uv_cache, refs, env = (safety.index, safety.matrix, safety.facts, safety.src, safety.uv_cache,
                                                  safety.refs, safety.env)
RP = ">=3.11,<3.13"


@pytest.fixture
def uv_calls(monkeypatch):
    """The uv commands the lock runs itself (a speculation's own runs are not among them)."""
    calls: list[str] = []
    real, real_all = L.run_uv, L.run_uv_all

    def spy(args, cwd, requires_python=None, extra_env=None):
        calls.append(args[0])
        return real(args, cwd, requires_python, extra_env)

    def spy_all(commands, cwd, requires_python=None, extra_env=None):
        calls.extend(args[0] for args in commands)
        return real_all(commands, cwd, requires_python, extra_env)

    monkeypatch.setattr(L, "run_uv", spy)
    monkeypatch.setattr(L, "run_uv_all", spy_all)
    return calls


def pending(pyproject: bytes, uvlock: bytes | None = None) -> speculate.Speculation:
    """A speculation as the command line starts one before the heavy imports (it then hands it to the lock)."""
    spec = speculate.start(pyproject, uvlock, RP)
    assert spec is not None
    return spec


def gone(spec: speculate.Speculation) -> bool:
    """No uv of the speculation runs any more, and its directory is removed."""
    return all(p.poll() is not None for p in spec.procs) and not spec.dir.exists()


@pytest.mark.parametrize("extra", [b"", b"# a comment uv never reads\n"], ids=["same-bytes", "same-data"])
def test_a_right_prediction_is_used(tmp_path, env, facts, src, refs, uv_calls, extra):
    out = tmp_path / "out"
    spec = pending(refs[A]["pyproject.toml"] + extra)
    s = lock(facts, A, out, source=src, spec=spec)
    assert uv_calls == ([] if not extra else ["export", "export"])  # uv lock (and the exports) ran speculatively
    assert s.changed == list(OUTPUTS)
    assert same_set(out, refs[A]) and strays(out) == []  # the rendered pyproject.toml, not the predicted bytes
    assert gone(spec)


def test_a_right_prediction_seeded_with_the_previous_lock(tmp_path, env, facts, src, refs, uv_calls):
    """A re-lock whose set is current: the speculation (seeded as the lock seeds its own uv) answers the no-op."""
    out = tmp_path / "out"
    put(out, refs[A])
    before = tree(out)
    spec = pending(refs[A]["pyproject.toml"], refs[A]["uv.lock"])
    assert lock(facts, A, out, source=src, spec=spec).changed == []
    assert uv_calls == [] and tree(out) == before and gone(spec)


@pytest.mark.parametrize("case", ["other-data", "other-seed", "unparsable"])
def test_a_wrong_prediction_gives_todays_outputs(tmp_path, env, facts, src, refs, uv_calls, case):
    """A miss is killed; the lock runs uv itself and writes exactly what a run without speculation writes."""
    start = tmp_path / "start"
    put(start, refs[B])  # the previous set: B's, so the lock of A seeds its uv with B's uv.lock
    today, out = tmp_path / "today", tmp_path / "out"
    shutil.copytree(start, today)
    shutil.copytree(start, out)
    lock(facts, A, today, source=src)  # no speculation: today's path
    uv_calls.clear()
    prediction = {"other-data": (refs[B]["pyproject.toml"], refs[B]["uv.lock"]),
                  "other-seed": (refs[A]["pyproject.toml"], None),
                  "unparsable": (b"[project\n", refs[B]["uv.lock"])}[case]
    spec = pending(*prediction)
    lock(facts, A, out, source=src, spec=spec)
    assert uv_calls == ["lock", "export", "export"]
    assert tree(out) == tree(today) and same_set(out, refs[A])
    assert gone(spec)


def test_the_stack_pins_predict_an_empty_out(tmp_path, env, facts, src, refs, monkeypatch):
    """A cold run into an empty --out predicts from the stack's pins: the lock's own data for the GLM-5 stack."""
    import tomllib

    started: list[bytes] = []
    real = speculate.start

    def start(pyproject, uvlock, requires_python):
        started.append(pyproject)
        return real(pyproject, uvlock, requires_python)

    monkeypatch.setattr(speculate, "start", start)
    for p in (safety.cache_dir() / "resolutions").glob("*.json"):
        p.unlink()  # a cold run: nothing memoized
    spec = L._speculate(facts, A, tmp_path / "out")
    assert spec is not None
    spec.discard()
    assert len(started) == 1 and tomllib.loads(started[0].decode()) == tomllib.loads(refs[A]["pyproject.toml"].decode())
    assert started[0] == refs[A]["pyproject.toml"]  # the comments too (the override's reason): the exports are reused


def test_a_stack_override_is_predicted_only_where_the_engine_pin_needs_it(facts):
    """sglang 0.5.9 pins transformers==4.57.1 (no release row: the stack's override is taken as declared); vllm
    0.33.0's own requirement admits the stack's transformers 5.20.2, so no override is expected (the committed
    vLLM lock has none)."""
    overrides, reasons = L._expected_overrides(facts, facts.stack("glm5-sglang-0.5.9"), "glm_moe_dsa")
    assert overrides == {"transformers": "5.2.0"}
    assert reasons == {"transformers": "sglang 0.5.9 pins transformers==4.57.1, which does not know the model; "
                                       "overridden to transformers>=5.2.0 (stack override)"}
    assert L._expected_overrides(facts, facts.stack("glm5-sglang-0.5.9"), None) == ({"transformers": "5.2.0"}, {})
    vllm = facts.stack("glm5-vllm-0.33.0")
    assert dict(vllm.overrides) and L._expected_overrides(facts, vllm, "glm_moe_dsa") == ({}, {})
    assert b"override-dependencies" not in (ROOT / "locks" / "glm5-vllm-0.33.0" / "sm120" / "pyproject.toml").read_bytes()


def test_another_environment_is_a_miss(tmp_path, env, facts, src, refs, uv_calls, monkeypatch):
    spec = pending(refs[A]["pyproject.toml"])
    monkeypatch.setenv("UV_NO_BUILD", "0")  # uv would run with another environment than the speculation's
    lock(facts, A, tmp_path / "out", source=src, spec=spec)
    assert uv_calls == ["lock", "export", "export"] and gone(spec)


def test_a_failing_run_kills_the_speculation(tmp_path, env, facts, src, refs, monkeypatch):
    spec = pending(refs[A]["pyproject.toml"])
    monkeypatch.setattr(L, "resolve_core", lambda *a, **k: (_ for _ in ()).throw(InputError("no")))
    with pytest.raises(InputError):
        lock(facts, A, tmp_path / "out", source=src, spec=spec)
    assert gone(spec) and not (tmp_path / "out").exists()


def test_a_failed_speculative_uv_leaves_the_lock_to_its_own(tmp_path, env, facts, src, refs, uv_calls, monkeypatch):
    monkeypatch.setenv("UV_PYTHON", str(tmp_path / "no-such-python"))  # uv fails: in the speculation and after it
    spec = pending(refs[A]["pyproject.toml"])
    with pytest.raises(EnvironmentFailure, match="uv lock"):
        lock(facts, A, tmp_path / "out", source=src, spec=spec)
    assert uv_calls == ["lock"] and gone(spec)


def test_the_command_line_speculates_on_a_fresh_checkout(tmp_path, env, refs, matrix):
    """`glmcompat lock` on what a checkout holds (the committed pyproject.toml and requirements.txt): the same
    set as a run that cannot speculate."""
    outs = {}
    for name, extra in (("speculating", {}), ("not", {speculate.OFF_ENV: "1"})):
        out = tmp_path / name
        out.mkdir()
        for n in ("pyproject.toml", "requirements.txt"):
            (out / n).write_bytes(refs[A][n])
        r = run_cli(*safety.argv(out, A, "-q"), env=extra)
        assert r.returncode == 0 and r.stdout == r.stderr == "", r.stderr
        outs[name] = out
    assert same_set(outs["speculating"], refs[A]) and tree(outs["speculating"]) == tree(outs["not"])


def test_start_early_predicts_and_filters(tmp_path, monkeypatch, refs):
    monkeypatch.chdir(tmp_path)
    d = tmp_path / "locks" / "glm5-sglang-0.5.9" / "sm120"
    d.mkdir(parents=True)
    (d / "pyproject.toml").write_bytes(refs[A]["pyproject.toml"])
    default = "glm5-sglang-0.5.9"
    assert speculate.predicted_out(["--target", "sm120"], default) == os.path.join("locks", default, "sm120")
    assert speculate.predicted_out(["--target", "sm120", "--out", "x"], default) == "x"
    assert speculate.predicted_out(["--target", "sm120", "--engine", "vllm"], default) is None  # no vLLM lock here
    for stack, version in (("old-vllm", "0.19.1"), ("new-vllm", "0.33.0"), ("newer-sglang", "9.9")):
        (tmp_path / "locks" / stack / "sm120").mkdir(parents=True)
        pin = "vllm" if "vllm" in stack else "sglang"
        (tmp_path / "locks" / stack / "sm120" / "pyproject.toml").write_text(f'[project]\ndependencies = [\n    "{pin}=={version}",\n]\n')
    assert speculate.predicted_out(["--target", "sm120", "--engine", "vllm"], default) == os.path.join("locks", "new-vllm", "sm120")
    assert speculate.predicted_out(["--target", "sm120", "--check"], default) is None
    assert speculate.predicted_out(["--target", "sm121"], default) is None  # nothing there
    text = refs[A]["pyproject.toml"]
    assert speculate._header_fits(text, ["--target", "sm120"])
    assert not speculate._header_fits(text, ["--target", "sm120", "--with", "torch==2.9.1"])
    assert not speculate._header_fits(text, ["--target", "sm120", "--python", "3.11"])
    assert speculate._header_fits(refs[B]["pyproject.toml"], ["--target", "sm120", "--python", "3.11"])
    assert speculate.start_early(["--target", "sm120", "--with", "torch==2.9.1"], default) is None
    monkeypatch.setenv(speculate.OFF_ENV, "1")
    assert speculate.start_early(["--target", "sm120"], default) is None
    monkeypatch.delenv(speculate.OFF_ENV)
    # issue 26: no stamp records that pyproject.toml: uv never starts on it
    assert speculate.start_early(["--target", "sm120"], default) is None
    (d / ".glmcompat-stamp").write_bytes(refs[A][".glmcompat-stamp"])
    spec = speculate.start_early(["--target", "sm120"], default)
    assert spec is not None and spec.pyproject == text and spec.uvlock is None
    spec.discard()
    assert gone(spec)


def test_the_committed_lock_is_a_prediction_that_fits(refs):
    """The fresh-checkout case: the committed pyproject.toml is byte for byte what the lock renders."""
    assert (ROOT / "locks" / "glm5-sglang-0.5.9" / "sm120" / "pyproject.toml").read_bytes() == refs[A]["pyproject.toml"]

"""The library API (glmcompat/api.py, docs/api.md): docs/api.md's examples run as a doctest, a script that uses only
the documented API checks a uv.lock, locks a project offline (as tests/ops/test_projectlock.py does: the core from the
recorded index, the real uv on a local index) and reads the findings; every error is a GlmcompatError."""

from __future__ import annotations

import doctest
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import glmcompat
from glmcompat.model.errors import NoTarget

from tests.conftest import FIXTURES, LOCKS
from tests.ops.test_projectlock import INDEX, local_index, make_project  # noqa: F401 - local_index is a fixture

ROOT = Path(__file__).resolve().parent.parent


def test_docs_api_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = doctest.testfile(str(ROOT / "docs" / "api.md"), module_relative=False,
                              optionflags=doctest.ELLIPSIS, raise_on_error=False, verbose=False)
    assert result.attempted >= 20 and result.failed == 0


def test_docs_api_names_every_public_name():
    text = (ROOT / "docs" / "api.md").read_text()
    for name in glmcompat.__all__:
        if name not in ("__version__", "SEVERITIES", "Matrix"):
            assert f"`{name}" in text, name


def test_every_public_name_resolves():
    for name in glmcompat.__all__:
        assert getattr(glmcompat, name) is not None
    assert sorted(dir(glmcompat)) == sorted(glmcompat.__all__)
    with pytest.raises(AttributeError):
        glmcompat.no_such_name  # noqa: B018


@pytest.mark.parametrize("module", ["glmcompat", "glmcompat.api", "glmcompat.model.errors", "glmcompat.model.findings",
                                    "glmcompat.matrix.schema", "glmcompat.ops.projectlock"])
def test_public_modules_declare_all(module):
    mod = importlib.import_module(module)
    assert isinstance(mod.__all__, list | tuple) and mod.__all__
    for name in mod.__all__:
        assert hasattr(mod, name), (module, name)


@pytest.mark.slow
@pytest.mark.usefixtures("local_index")
def test_the_script_checks_a_lock_locks_a_project_and_reads_the_findings(tmp_path):
    project = make_project(tmp_path / "bench", "torch", "sgl-kernel==0.3.21").parent
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "api_script.py"),
                        str(LOCKS / "glm5-torch-2.10.0" / "uv.lock"), str(project), "sm120", str(INDEX)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 1, r.stderr  # the first lock is unsafe, the project's new one safe
    lines = r.stdout.splitlines()
    assert any(line.endswith("on sm120: unsafe (1 error(s), 5 warning(s))") for line in lines), r.stdout
    assert "  error [abi] sgl-kernel==0.3.21 torch==2.10.0" in lines
    assert any(line.startswith("  safe set: ") and "torch==2.9.1" in line for line in lines)
    assert any(line.startswith(f"locked {project}: core sgl-kernel==0.3.21 torch==2.9.1; wrote ") for line in lines)
    assert f"{project}/uv.lock on sm120: safe (0 error(s), 0 warning(s))" in lines
    assert (project / "uv.lock").is_file() and "torch==2.9.1" in (project / "pyproject.toml").read_text()
    result = glmcompat.check(project / "uv.lock", target="sm120")
    assert result.ok and result.kind == "uv.lock"


def test_check_reads_the_projects_settings(tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    (d / "uv.lock").write_bytes((LOCKS / "glm5-torch-2.10.0" / "uv.lock").read_bytes())
    (d / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n\n[tool.glmcompat]\ntargets = ["sm120", "sm90"]\n')
    result = glmcompat.check(d / "pyproject.toml")
    assert [v.target for v in result.verdicts] == ["sm120", "sm90"] and not result.ok
    assert result.verdict("rtx5090") is result.verdicts[0]
    with pytest.raises(glmcompat.InputError, match="was not checked for sm100"):
        result.verdict("sm100")
    (d / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n')
    with pytest.raises(NoTarget) as info:
        glmcompat.check(d / "uv.lock")
    assert (info.value.argument, info.value.where, info.value.exit_code) == ("target", str(d / "pyproject.toml"), 2)


@pytest.mark.parametrize("call, match", [
    (lambda: glmcompat.check_versions({"torch": "banana"}, "sm120"), "not a version"),
    (lambda: glmcompat.check_versions({"torch": 2}, "sm120"), "must be strings"),
    (lambda: glmcompat.check_versions(["torch"], "sm120"), "expected a mapping"),
    (lambda: glmcompat.check_versions({"torch": "2.9.1"}, "sm999"), "unknown target"),
    (lambda: glmcompat.check_versions({"torch": "2.9.1"}, "sm120", model="no_such_model"), "model"),
    (lambda: glmcompat.check_versions({"torch": "2.9.1"}, "sm120", platform="sparc"), "sparc"),
    (lambda: glmcompat.check_versions({"torch": "2.9.1"}, "sm120", matrix=42), "expected a Matrix"),
    (lambda: glmcompat.check("no/such/uv.lock", target="sm120"), "no such file"),
    (lambda: glmcompat.check(FIXTURES, target="sm120"), "is a directory"),
    (lambda: glmcompat.resolve_core(["torch"], "sm120", python="2.7", index=INDEX), "CPython 3"),
    (lambda: glmcompat.resolve_core(["torch"], "sm120", index="no-such-index.json"), "no such recorded index"),
    (lambda: glmcompat.resolve_core(["torch>=banana"], "sm120", index=INDEX), None),
    (lambda: glmcompat.load_matrix(["no/such/matrix.toml"]), None),
])
def test_every_error_is_a_glmcompat_error(call, match):
    with pytest.raises(glmcompat.GlmcompatError, match=match) as info:
        call()
    assert isinstance(info.value, glmcompat.InputError | glmcompat.EnvironmentFailure), repr(info.value)
    assert info.value.exit_code in (2, 3)


def test_an_unexpected_exception_is_an_internal_error(monkeypatch):
    from glmcompat.decide import rules

    def boom(*a, **k):
        raise KeyError("x")

    monkeypatch.setattr(rules, "evaluate", boom)
    with pytest.raises(glmcompat.InternalError, match="internal error: KeyError") as info:
        glmcompat.check_versions({"torch": "2.9.1"}, "sm120")
    assert isinstance(info.value.__cause__, KeyError) and info.value.exit_code == 4


def test_facts_of_a_matrix():
    from glmcompat.matrix.view import Facts

    facts = Facts(glmcompat.load_matrix())
    assert facts.target("rtx5090").name == "sm120"
    with pytest.raises(glmcompat.InputError, match="expected a Matrix"):
        Facts(42)


def test_check_versions_with_a_matrix_and_a_platform():
    m = glmcompat.load_matrix()
    v = glmcompat.check_versions({"torch": "2.9.1", "sgl-kernel": "0.3.21"}, "sm90", matrix=m, platform="aarch64")
    assert v.platforms == ("aarch64",) and v.target == "sm90"
    assert v.to_json()["ok"] == v.ok


def test_check_environment_reads_an_interpreters_site(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python3*/site-packages"))
    for name, version in (("torch", "2.10.0"), ("sgl_kernel", "0.3.21")):
        info = site / f"{name}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n\n")
    v = glmcompat.check_environment("sm120", python=venv)
    assert not v.ok and [f.rule for f in v.errors] == ["abi"] and v.safe_set == {"sgl-kernel": "0.3.21", "torch": "2.9.1"}
    assert glmcompat.check_environment("sm120").target == "sm120"  # this interpreter's environment

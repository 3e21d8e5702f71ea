"""Where a command's target, model and platform come from: the flag, else GLMCOMPAT_TARGET / GLMCOMPAT_MODEL /
GLMCOMPAT_PLATFORM, else [tool.glmcompat] of the project (docs/cli.md, "Settings"). Offline: check on the lock
fixtures; upgrade, arch and lock --stack are stopped before the index by an unknown value that proves where the value
came from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from glmcompat.cli import _from_environment
from glmcompat.model.errors import NoTarget

from tests.conftest import LOCKS, run_cli

LOCK = str(LOCKS / "glm5-torch-2.10.0" / "uv.lock")
SAFE = str(LOCKS / "glm5-sglang-0.5.9" / "uv.lock")


@pytest.fixture(autouse=True)
def _no_settings_from_the_shell(monkeypatch):
    for var in ("GLMCOMPAT_TARGET", "GLMCOMPAT_MODEL", "GLMCOMPAT_PLATFORM"):
        monkeypatch.delenv(var, raising=False)


def test_the_environment_gives_flags_no_flag_gives():
    env = {"GLMCOMPAT_TARGET": "sm120, sm90", "GLMCOMPAT_MODEL": "glm_moe_dsa", "GLMCOMPAT_PLATFORM": "aarch64"}
    args, problem = _from_environment(["check", "uv.lock", "--", "x"], env)
    assert problem is None
    assert args == ["check", "uv.lock", "--target", "sm120", "--target", "sm90", "--model", "glm_moe_dsa",
                    "--platform", "aarch64", "--", "x"]
    args, _ = _from_environment(["check", "uv.lock", "--target=sm100", "--model", "m"], env)
    assert args == ["check", "uv.lock", "--target=sm100", "--model", "m", "--platform", "aarch64"]  # the flag wins
    assert _from_environment(["explain", "log"], env) == (["explain", "log"], None)  # a command without --target
    assert _from_environment(["pip", "constraints"], env)[0] == ["pip", "constraints"]
    assert _from_environment(["pip", "install", "x"], env)[0][3:5] == ["--target", "sm120"]
    args, problem = _from_environment(["upgrade"], env)
    assert problem is not None and "GLMCOMPAT_TARGET" in problem and "takes one --target" in problem
    assert _from_environment(["check", "uv.lock"], {"GLMCOMPAT_TARGET": "  "})[0] == ["check", "uv.lock"]


def test_check_takes_the_target_from_the_environment():
    r = run_cli("check", LOCK, "--json", env={"GLMCOMPAT_TARGET": "rtx5090"})
    assert r.returncode == 1, r.stderr
    assert [c["target"] for c in json.loads(r.stdout)["checked"]] == ["sm120"]
    r = run_cli("check", LOCK, "--json", "--target", "sm90", env={"GLMCOMPAT_TARGET": "sm120"})  # the flag wins
    assert [c["target"] for c in json.loads(r.stdout)["checked"]] == ["sm90"]
    # the recorded verdict of one run (the start-up fast path) never answers another target
    r = run_cli("check", LOCK, "--json", env={"GLMCOMPAT_TARGET": "sm100"})
    assert [c["target"] for c in json.loads(r.stdout)["checked"]] == ["sm100"]


def test_the_environment_beats_tool_glmcompat(tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    (d / "uv.lock").write_bytes(Path(SAFE).read_bytes())
    (d / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n\n[tool.glmcompat]\ntargets = ["sm90"]\n')
    r = run_cli("check", str(d / "uv.lock"), "--json")
    assert [c["target"] for c in json.loads(r.stdout)["checked"]] == ["sm90"]
    r = run_cli("check", str(d / "uv.lock"), "--json", env={"GLMCOMPAT_TARGET": "sm120"})
    assert [c["target"] for c in json.loads(r.stdout)["checked"]] == ["sm120"]


def test_a_bad_value_from_the_environment_names_its_variable():
    r = run_cli("check", LOCK, env={"GLMCOMPAT_TARGET": "sm999"})
    assert r.returncode == 2 and r.stderr.strip().endswith("(from GLMCOMPAT_TARGET)"), r.stderr
    r = run_cli("check", LOCK, "--target", "sm120", env={"GLMCOMPAT_MODEL": "no_such_model"})
    assert r.returncode == 2 and "no_such_model" in r.stderr and "(from GLMCOMPAT_MODEL)" in r.stderr
    r = run_cli("upgrade", "--json", env={"GLMCOMPAT_TARGET": "sm120,sm90"})
    assert r.returncode == 2 and json.loads(r.stdout)["error"]["code"] == 2


def test_the_platform_from_the_environment():
    r = run_cli("check", SAFE, "--target", "sm90", "--json", env={"GLMCOMPAT_PLATFORM": "aarch64"})
    assert r.returncode == 1, r.stdout + r.stderr
    assert [c["platforms"] for c in json.loads(r.stdout)["checked"]] == [["aarch64"]]


def _project(tmp_path: Path, settings: str) -> Path:
    d = tmp_path / "proj"
    d.mkdir()
    (d / "pyproject.toml").write_text(f'[project]\nname = "proj"\nversion = "0"\n\n[tool.glmcompat]\n{settings}\n')
    return d


@pytest.mark.parametrize("argv", [["upgrade"], ["arch", "sgl-kernel==0.3.21"], ["lock", "--stack", "glm5-sglang-0.5.9"]])
def test_commands_that_take_a_target_read_tool_glmcompat(tmp_path, argv):
    # names no target can have: each run is refused before the index is asked anything
    d = _project(tmp_path, 'targets = ["gpu-a"]')
    r = run_cli(*argv, cwd=d)
    assert r.returncode == 2 and "gpu-a" in r.stderr, r.stderr  # the project's target
    r = run_cli(*argv, cwd=d, env={"GLMCOMPAT_TARGET": "gpu-b"})
    assert r.returncode == 2 and "gpu-b" in r.stderr and "gpu-a" not in r.stderr, r.stderr  # environment > settings
    r = run_cli(*argv, "--target", "gpu-c", cwd=d, env={"GLMCOMPAT_TARGET": "gpu-b"})
    assert r.returncode == 2 and "gpu-c" in r.stderr and "gpu-b" not in r.stderr, r.stderr  # flag > environment


@pytest.mark.parametrize("argv", [["upgrade"], ["lock", "--stack", "glm5-sglang-0.5.9"], ["lock"], ["check", "{d}/uv.lock"]])
def test_every_command_without_a_target_says_one_error(tmp_path, argv):
    """check, lock (project and --stack) and upgrade, with no --target, no GLMCOMPAT_TARGET and a [tool.glmcompat]
    naming none: the one NoTarget error, naming the pyproject.toml that was read."""
    d = _project(tmp_path, 'model = "glm_moe_dsa"')
    shutil.copy(SAFE, d / "uv.lock")
    r = run_cli(*[a.format(d=d) for a in argv], cwd=d)
    assert (r.returncode, r.stderr) == (2, f"error: {NoTarget(str(d / 'pyproject.toml')).one_line()}\n"), r.stderr


def test_upgrade_with_several_project_targets_asks_for_one(tmp_path):
    d = _project(tmp_path, 'targets = ["sm120", "sm90"]')
    r = run_cli("upgrade", cwd=d)
    assert r.returncode == 2 and "takes one" in r.stderr and str(d / "pyproject.toml") in r.stderr, r.stderr
    r = run_cli("upgrade", cwd=tmp_path)
    assert r.returncode == 2 and "GLMCOMPAT_TARGET" in r.stderr and "[tool.glmcompat]" in r.stderr


def test_a_project_model_reaches_upgrade(tmp_path):
    d = _project(tmp_path, 'targets = ["sm120"]\nmodel = "no_such_model"')
    r = run_cli("upgrade", cwd=d)
    assert r.returncode == 2 and "no_such_model" in r.stderr, r.stderr


@pytest.mark.slow
def test_lock_hands_index_url_and_no_cache_to_uv_explicitly(tmp_path):
    """`lock --index-url URL --no-cache` in a project: uv locks against URL (the process's own UV_INDEX_URL, an
    index that does not exist, is not what it reads) and glmcompat keeps no record of the run."""
    from tests.localindex import serve_index
    from tests.ops.test_projectlock import make_project

    project = make_project(tmp_path / "p", "numpy").parent
    cache = tmp_path / "cache"
    with serve_index({"numpy": {"2.3.0": []}}) as url:
        env = {"UV_INDEX_URL": "http://127.0.0.1:9/simple", "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
               "GLMCOMPAT_CACHE_DIR": str(cache)}
        r = run_cli("lock", "--target", "sm120", "--index-url", url, "--no-cache", cwd=project, env=env)
    assert r.returncode == 0, r.stderr
    assert url.split("://")[1].split("/")[0] in (project / "uv.lock").read_text()  # the index uv locked against
    assert not (cache / "project-verdicts").exists()  # --no-cache: no record

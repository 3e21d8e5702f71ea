"""The guess of a cold project lock's pyproject.toml (glmcompat.ops.projectguess): wherever it guesses, the very bytes
the lock predicts for itself (glmcompat.ops.projectlock._predicted); no guess for any other shape; and the run the
entry point starts on it, which the lock takes as its predicted run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from glmcompat.decide.plan import plan
from glmcompat.matrix.locations import seal
from glmcompat.ops import projectguess, projectspec
from glmcompat.ops import projectlock as pl
from glmcompat.ops.projectresult import ProjectLockRequest
from glmcompat.ops.speculate import OFF_ENV, UV_PREFIX
from glmcompat.readers import pyproject as pp
from tests.ops.test_projectlock import REQ, make_project
from tests.ops.test_projectspec import _count_runs, _facts, _files, _local_index, _src, _uv_cache  # noqa: F401

BENCH = ("torch", "sgl-kernel==0.3.21", "torchvision", "numpy")  # the benchmark project (uv alone: torch 2.15)


@pytest.fixture(scope="module", name="table")
def _table(facts: Any) -> dict[str, Any]:
    return projectguess.table(facts)


def _project(d: Path, deps: tuple[str, ...] | list[str], extra: str = "") -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0.1.0"\nrequires-python = ">=3.11"\n'
                                      "dependencies = [\n" + "".join(f'    "{x}",\n' for x in deps) + "]\n" + extra)
    return d


def _predicted(facts: Any, d: Path, target: str) -> bytes | None:
    """What the lock itself predicts for the project at ``d`` and ``target`` (the matrix's resolution, written)."""
    project = pp.load(d / "pyproject.toml")
    req = ProjectLockRequest(plan(facts, [target]))
    python = pl._python(project.requires_python, None)
    reqs, _ = pl.project_requirements(project, python, req.platform)
    return pl._predicted(facts, project, reqs, req, python, {})


def _releases(table: dict[str, Any]) -> list[tuple[str, str]]:
    """Each kernel package's newest three releases in the table, and the benchmark's."""
    from packaging.version import Version

    out = [("sgl-kernel", "0.3.21")]
    for pkg, rel in sorted(table["kernels"].items()):
        out += [(pkg, v) for v in sorted(rel, key=Version)[-3:] if (pkg, v) not in out]
    return out


def test_each_guess_is_the_lock_s_own_prediction(tmp_path, facts, table):
    """For a project naming a kernel release, torch and none, one or both of the family, on two targets: the guess is
    made, and wherever the lock predicts a pyproject.toml from the matrix, the guess is that one, byte for byte."""
    agreed = 0
    for i, (kernel, version) in enumerate(_releases(table)):
        for j, family in enumerate(((), ("torchvision",), ("torchaudio", "torchvision"))):
            d = _project(tmp_path / f"p{i}-{j}", [f"{kernel}=={version}", "torch", *family, "numpy"])
            guessed = projectguess.guess(d, ["--target", "sm120", "-q"], table)
            assert guessed is not None, (kernel, version, family)
            for target in ("sm120", "sm90"):
                want = _predicted(facts, d, target)
                if want is not None:
                    assert guessed == want, (kernel, version, family, target)
                    agreed += 1
    assert agreed >= 10


@pytest.mark.parametrize("extra", ["", '\n[[tool.uv.index]]\nurl = "https://index.invalid/simple"\ndefault = true\n',
                                   '\n[tool.uv]\nindex-strategy = "first-index"\n\n[tool.glmcompat]\ntargets = ["sm120"]\n'])
def test_the_benchmark_project_is_guessed(tmp_path, facts, table, extra):
    """The issue's benchmark project, alone or with where uv reads packages from and the targets it is locked for."""
    d = _project(tmp_path, BENCH, extra)
    guessed = projectguess.guess(d, ["--target", "sm120"], table)
    assert guessed is not None and guessed == _predicted(facts, d, "sm120")
    assert b'    "torch==2.9.1",  # glmcompat lock\n    "torchvision==0.24.1",  # glmcompat lock\n' in guessed


@pytest.mark.parametrize(("deps", "extra", "argv"), [
    (BENCH, "", ["--target", "sm120", "--platform", "aarch64"]),  # another machine: other rows
    (BENCH, "", ["--target", "sm120", "--model", "glm_moe_dsa"]),  # a model's rows weigh in
    (BENCH, "", ["--target", "sm120", "--python", "3.12"]),
    (BENCH, "", ["--target", "sm120", "--upgrade"]),
    (BENCH, "\n[tool.uv]\nexclude-newer = \"2025-01-01T00:00:00Z\"\n", ["--target", "sm120"]),
    (BENCH, "\n[tool.uv]\nconstraint-dependencies = [\"torch<2.9\"]\n", ["--target", "sm120"]),  # the user's own
    (BENCH, "\n[tool.glmcompat]\nmodel = \"glm_moe_dsa\"\n", ["--target", "sm120"]),
    (BENCH, "\n[project.optional-dependencies]\nx = [\"vllm\"]\n", ["--target", "sm120"]),
    (BENCH, "\n[dependency-groups]\ndev = [\"pytest\"]\n", ["--target", "sm120"]),
    (("torch>=2.6", "sgl-kernel==0.3.21"), "", ["--target", "sm120"]),  # a specifier: the resolver's to weigh
    (("torch", "sgl-kernel==0.3.21; sys_platform == 'linux'"), "", ["--target", "sm120"]),
    (("torch", "sgl-kernel>=0.3.21"), "", ["--target", "sm120"]),
    (("sgl-kernel==0.3.21",), "", ["--target", "sm120"]),  # torch no root: the matrix predicts nothing
    (("torch==2.8.0", "sgl-kernel==0.3.21"), "", ["--target", "sm120"]),  # built against another torch
    (("torch", "sgl-kernel==0.3.21", "transformers"), "", ["--target", "sm120"]),  # another core package
    (("torch", "sgl-kernel==0.3.21", "torchvision==0.23.0"), "", ["--target", "sm120"]),
    (("torch", "sgl-kernel==9.9.9"), "", ["--target", "sm120"]),  # a release the matrix does not record
    (("torch", "torchvision"), "", ["--target", "sm120"]),  # no kernel: uv's own pick may be the answer
])
def test_no_guess_for_another_shape(tmp_path, table, deps, extra, argv):
    d = _project(tmp_path, deps, extra)
    assert projectguess.guess(d, argv, table) is None


@pytest.mark.parametrize("change", ["lock", "bom", "ours"])
def test_no_guess_for_a_project_glmcompat_or_uv_locked(tmp_path, table, change):
    d = _project(tmp_path, BENCH)
    assert projectguess.guess(d, ["--target", "sm120"], table) is not None
    p = d / "pyproject.toml"
    if change == "lock":
        (d / "uv.lock").write_text("version = 1\n")
    elif change == "bom":
        p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())
    else:
        p.write_bytes(projectguess.guess(d, ["--target", "sm120"], table) or b"")
    assert projectguess.guess(d, ["--target", "sm120"], table) is None


def test_the_table_is_read_only_as_this_glmcompat_wrote_it(tmp_path, facts, table):
    path = tmp_path / "predict.json"
    assert projectguess.load_table(path) is None  # a checkout ships none
    path.write_bytes(projectguess.table_file(facts))
    assert projectguess.load_table(path) == json.loads(json.dumps(table))
    path.write_bytes(path.read_bytes()[:-2] + b"}}")
    assert projectguess.load_table(path) is None  # edited: the seal says so
    other = {**table, "version": "0.0.0"}
    path.write_bytes(seal("predict", "predict.json", json.dumps(other).encode()))
    assert projectguess.load_table(path) is None


def test_the_entry_point_starts_the_run_on_the_guess(tmp_path, monkeypatch, facts, table):
    """With the table shipped, the entry point's run is on the guessed pyproject.toml; without it, on the project as
    written."""
    d = _project(tmp_path / "bench", BENCH)
    monkeypatch.chdir(d)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(projectguess, "TABLE", tmp_path / "absent.json")
    run = projectspec.start_early(["--target", "sm120", "-q"])
    assert run is not None and run.files == {"pyproject.toml": (d / "pyproject.toml").read_bytes()}
    run.discard()
    shipped = tmp_path / "predict.json"
    shipped.write_bytes(projectguess.table_file(facts))
    monkeypatch.setattr(projectguess, "TABLE", shipped)
    run = projectspec.start_early(["--target", "sm120", "-q"])
    assert run is not None and run.files == {"pyproject.toml": projectguess.guess(d, [], table)}
    run.discard()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(UV_PREFIX)]


@pytest.mark.slow
def test_the_lock_takes_the_run_on_the_guess(tmp_path, facts, src, local_index, monkeypatch):
    """uv's own pick (torch 2.15.0) is not the safe core; the run the entry point started on the guess asked exactly
    the question the lock predicts, so it is the only uv run started, its lock is the one taken, and that is byte for
    byte the uv.lock `uv lock` writes in place."""
    shipped = tmp_path / "predict.json"
    shipped.write_bytes(projectguess.table_file(facts))
    monkeypatch.setattr(projectguess, "TABLE", shipped)
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    started = _count_runs(monkeypatch)
    spec = make_project(tmp_path / "spec" / "bench", *BENCH)
    monkeypatch.chdir(spec.parent)
    early = projectspec.start_early(["--target", "sm120", "-q"])
    assert early is not None
    try:
        pl.lock_project_recorded(facts, spec, REQ, source=src, quiet=True, spec=early)
    finally:
        early.discard()
    assert [p.name for p in temp.iterdir() if p.name.startswith(UV_PREFIX)] == []
    assert started == [spec.read_bytes()]  # the guess, and nothing more: it is the answer
    monkeypatch.setenv(OFF_ENV, "1")
    plain = make_project(tmp_path / "plain" / "bench", *BENCH)
    pl.lock_project(facts, plain, REQ, source=src, quiet=True)
    assert _files(spec.parent) == _files(plain.parent)
    assert b'name = "torch"\nversion = "2.9.1"' in (spec.parent / "uv.lock").read_bytes()


@pytest.mark.parametrize("kernel", ["sgl-kernel==0.3.21", "SGL_Kernel==0.3.21", "sgl.kernel==0.3.21", "sgl--kernel==0.3.21"])
def test_a_kernel_named_in_any_spelling_is_guessed(tmp_path, table, kernel):
    """The text is searched for a kernel's name before it is parsed (a project that names none is no guess: its
    TOML is not read before uv starts); every spelling that names the kernel still reaches the guess."""
    d = _project(tmp_path, ("torch", kernel, "torchvision", "numpy"))
    assert projectguess._names_a_kernel((d / "pyproject.toml").read_bytes(), table["kernels"])
    assert projectguess.guess(d, ["--target", "sm120"], table) is not None


def test_a_project_naming_no_kernel_is_not_parsed(tmp_path, table):
    """No guess for a project that names no kernel release, and its TOML not parsed (the module that parses it not
    imported before uv starts); a project naming one is parsed, by the text's module alone: no dataclasses are built
    before uv starts either way (their module and the classes cost that start about 10 ms)."""
    import subprocess
    import sys

    (tmp_path / "table.json").write_text(json.dumps(table))
    code = ("import json, sys; from pathlib import Path; from glmcompat.ops.projectguess import guess; "
            "got = guess(Path(sys.argv[1]), ['--target', 'sm120'], json.loads(Path(sys.argv[2]).read_text())); "
            "print(got is None, 'glmcompat.readers.pyprojecttext' in sys.modules, 'dataclasses' in sys.modules)")
    for deps, want in ((("sglang>=0.5.9", "fastapi", "redis>=5"), "True False False"), (BENCH, "False True False")):
        d = _project(tmp_path / deps[0].split(">")[0], deps)
        assert projectguess._names_a_kernel((d / "pyproject.toml").read_bytes(), table["kernels"]) == (deps == BENCH)
        p = subprocess.run([sys.executable, "-c", code, str(d), str(tmp_path / "table.json")], capture_output=True,
                           text=True, cwd=Path(__file__).resolve().parents[2])
        assert p.stdout.strip() == want, p.stdout + p.stderr

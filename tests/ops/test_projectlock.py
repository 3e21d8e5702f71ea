"""`glmcompat lock` on the user's own project (project mode) and on a requirements.in (requirements mode).

Offline: the projects are made by the real uv (`uv init`, `uv add --frozen`), the core is resolved on the recorded
index (tests/fixtures/resolver/index.json: the real versions and Requires-Dist of the core), and the real `uv lock`
/ `uv pip compile` run against a local index of tiny wheels that carry those same Requires-Dist (reduced to the
served projects). Live, under `network`: the four serving projects of the issue, against the real index.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glmcompat.decide.plan import plan
from glmcompat.edges.sources import RecordedSource
from glmcompat.matrix.load import load_facts
from glmcompat.model.errors import InputError, UnsafeError
from glmcompat.ops.projectlock import ProjectLockRequest, lock_project, lock_requirements
from glmcompat.readers import pyproject as pp
from glmcompat.readers.formats import read_lock

from tests.conftest import FIXTURES, run_cli

INDEX = FIXTURES / "resolver" / "index.json"
# What the local index serves: the releases these projects can reach, with their recorded Requires-Dist.
SERVED = {"torch": ["2.9.1", "2.10.0", "2.15.0"], "torchvision": ["0.24.1", "0.25.0", "0.29.2"],
          "sgl-kernel": ["0.3.21"], "torchaudio": ["2.9.1"]}
PLAIN = {"numpy": ["2.3.0"], "redis": ["5.2.1"], "fastapi": ["0.115.0"], "filelock": ["3.20.0"],
         "typing-extensions": ["4.15.0"], "sympy": ["1.14.0"], "networkx": ["3.5"], "jinja2": ["3.1.6"],
         "fsspec": ["2025.9.0"], "pillow": ["11.3.0"], "pytest": ["8.4.2"]}


@pytest.fixture(scope="module")
def facts() -> Any:
    return load_facts()


@pytest.fixture(scope="module")
def src() -> RecordedSource:
    return RecordedSource(INDEX)


def _projects() -> dict[str, dict[str, list[str]]]:
    recorded = json.loads(INDEX.read_text())
    out: dict[str, dict[str, list[str]]] = {}
    for name, versions in SERVED.items():
        out[name] = {v: recorded[name]["requires"].get(v, []) for v in versions}
    for name, versions in PLAIN.items():
        out[name] = {v: [] for v in versions}
    return out


_UV_CACHES: dict[str, Path] = {}  # module -> the uv cache of its tests


@pytest.fixture
def local_index(request, tmp_path_factory, monkeypatch):
    """The local index (its own per test) and one uv cache per module that uses it: a fresh cache per test made every
    uv process (each `uv add`, each `uv lock`) query the machine's interpreters again (about 0.3 s of CPU each). The
    index pages carry no freshness headers: uv fetches them again rather than reading an earlier test's."""
    from tests.localindex import serve_index

    name = request.module.__name__
    if name not in _UV_CACHES:
        _UV_CACHES[name] = tmp_path_factory.mktemp("uv-cache")
    with serve_index(_projects()) as url:
        monkeypatch.setenv("UV_DEFAULT_INDEX", url)
        monkeypatch.setenv("UV_CACHE_DIR", str(_UV_CACHES[name]))
        yield url


def uv(*args: str, cwd: Path) -> None:
    from glmcompat.edges.uv import uv_binary

    r = subprocess.run([uv_binary(), *args], cwd=cwd, capture_output=True, text=True,
                       env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"})
    assert r.returncode == 0, r.stderr


_MADE: dict[tuple[str, tuple[str, ...], tuple[str, ...]], dict[str, bytes]] = {}  # (name, deps, dev) -> the files uv wrote


def make_project(path: Path, *deps: str, dev: tuple[str, ...] = (), name: str = "bench") -> Path:
    """A project as `uv init --bare` and `uv add --frozen` write it (no index needed). What uv writes for a name and
    its requirements in an empty directory outside any project is the same bytes wherever that directory is: the
    first project of each shape is made by uv, later ones get a copy of its files (each uv process costs about 0.2 s
    of CPU here, most of it finding the interpreter). A directory inside a project (a workspace member, whose root
    uv may edit) is always made by uv."""
    path.mkdir(parents=True, exist_ok=True)
    key = (name, deps, dev)
    alone = not any(path.iterdir()) and not any((p / "pyproject.toml").exists() for p in path.parents)
    if alone and key in _MADE:
        for n, data in _MADE[key].items():
            (path / n).write_bytes(data)
        return path / "pyproject.toml"
    uv("init", "--bare", "--name", name, "-q", "--python", "3.11", cwd=path)
    if deps:
        uv("add", "--frozen", "-q", *deps, cwd=path)
    if dev:
        uv("add", "--frozen", "-q", "--dev", *dev, cwd=path)
    if alone and all(p.is_file() for p in path.iterdir()):
        _MADE[key] = {p.name: p.read_bytes() for p in path.iterdir()}
    return path / "pyproject.toml"


def ours_removed(text: str) -> str:
    return pp.without_ours(Path("pyproject.toml"), text)


REQ = ProjectLockRequest(plan(load_facts(), ["sm120"]))


# ------------------------------------------------------------------------------------------------
# The edit of the user's pyproject.toml: only glmcompat's lines change
# ------------------------------------------------------------------------------------------------

SHAPES = {
    "no [tool.uv]": '[project]\nname = "x"\ndependencies = ["torch"]\n',
    "[tool.uv] without the key": '[project]\nname = "x"\n\n[tool.uv]\nindex-strategy = "first-index"\n\n[tool.x]\na = 1\n',
    "the user's multi-line constraints": ('[project]\nname = "x"\n\n[tool.uv]\n# theirs\nconstraint-dependencies = [  # c\n'
                                          '    "numpy<2",   # mine\n    "urllib3>=2"\n]\n'),
    "a one-line array": '[project]\nname = "x"\n\n[tool.uv]\nconstraint-dependencies = ["numpy<2"]\noverride-dependencies = []\n',
    "only [tool.uv.sources]": '[project]\nname = "x"\n\n[tool.uv.sources]\ntorch = { index = "pt" }\n',
    "CRLF-free comments and blank lines": '# top\n\n[project]\nname = "x"  # n\n\n\n[tool.uv]\n\n\nconstraint-dependencies = [\n]\n',
}
ENTRIES = {"constraint-dependencies": [("torch==2.9.1", ""), ("sgl-kernel==0.3.21", "")],
           "override-dependencies": [("transformers==5.2.0", "sglang 0.5.9 pins transformers==4.57.1")]}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_edit_round_trips_every_byte(shape):
    text = SHAPES[shape]
    new = pp.with_core(Path("pyproject.toml"), text, ENTRIES)
    assert ours_removed(new) == text
    assert pp.ours(Path("pyproject.toml"), new) == {k: [v for v, _ in e] for k, e in ENTRIES.items()}
    again = pp.with_core(Path("pyproject.toml"), ours_removed(new), ENTRIES)
    assert again == new  # a re-run with the same core writes the same bytes
    doc = pp.parse(Path("pyproject.toml"), new)
    assert doc["tool"]["uv"]["constraint-dependencies"][:2] == ["torch==2.9.1", "sgl-kernel==0.3.21"]


_req = st.from_regex(r"[a-z][a-z0-9-]{0,8}(==[0-9]\.[0-9]{1,2}|>=1|<3)?", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(shape=st.sampled_from(sorted(SHAPES)), theirs=st.lists(_req, max_size=3),
       core=st.lists(st.tuples(_req, st.text(st.characters(codec="ascii", exclude_categories=["Cc"]), max_size=20)),
                     min_size=1, max_size=4))
def test_edit_keeps_the_users_entries(shape, theirs, core):
    """Whatever glmcompat writes, removing it gives the user's file back, and the user's own entries (also ones that
    equal glmcompat's) are never taken for glmcompat's."""
    base = SHAPES[shape]
    path = Path("pyproject.toml")
    if theirs and "constraint-dependencies = [\n" in base:
        base = base.replace("constraint-dependencies = [\n", "constraint-dependencies = [\n"
                            + "".join(f'    "{t}",\n' for t in theirs), 1)
    new = pp.with_core(path, base, {"constraint-dependencies": core})
    assert pp.without_ours(path, new) == base
    arr = pp.parse(path, new)["tool"]["uv"]["constraint-dependencies"]
    before = pp.parse(path, base).get("tool", {}).get("uv", {}).get("constraint-dependencies", [])
    assert arr == [v for v, _ in core] + before


def test_a_user_line_that_looks_like_ours_in_another_table_is_refused():
    text = '[project]\nname = "x"\ndependencies = [\n    "torch==2.9.1",  # glmcompat lock\n]\n'
    with pytest.raises(InputError, match="not where glmcompat writes them"):
        pp.without_ours(Path("pyproject.toml"), text)


def test_dotted_tool_uv_is_refused_in_one_line():
    text = '[project]\nname = "x"\n\n[tool]\nuv.index-strategy = "first-index"\n'
    with pytest.raises(InputError, match="does not edit"):
        pp.with_core(Path("pyproject.toml"), text, ENTRIES)


# ------------------------------------------------------------------------------------------------
# Discovery and requirements
# ------------------------------------------------------------------------------------------------

def test_discovery_finds_the_workspace_root_from_a_member(tmp_path):
    root = make_project(tmp_path / "ws", name="ws")
    with root.open("a") as f:
        f.write('\n[tool.uv.workspace]\nmembers = ["packages/*"]\n')
    member = make_project(tmp_path / "ws" / "packages" / "bench", "torch", "sgl-kernel==0.3.21")
    (tmp_path / "ws" / "packages" / "bench" / "src").mkdir()
    assert pp.find(member.parent / "src") == root
    project = pp.load(root)
    assert [r.name for r in project.requirements] == ["sgl-kernel", "torch"]
    assert project.requirements[0].where == "packages/bench/pyproject.toml: [project] dependencies"


def test_requirements_come_from_extras_and_groups(tmp_path):
    path = make_project(tmp_path / "p", "numpy", dev=("torchvision",))
    uv("add", "--frozen", "-q", "--optional", "serve", "sglang[all]>=0.5.9", cwd=path.parent)
    reqs = {(r.name, r.extras, r.where.split(": ")[1]) for r in pp.load(path).requirements}
    assert ("sglang", ("all",), "[project.optional-dependencies] serve") in reqs
    assert ("torchvision", (), "[dependency-groups] dev") in reqs


# ------------------------------------------------------------------------------------------------
# Project mode with the real uv
# ------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_benchmark_project_gets_the_safe_core(tmp_path, facts, src, local_index):
    """torch unpinned, sgl-kernel==0.3.21, torchvision unpinned, numpy: plain `uv lock` picks torch 2.15.0; glmcompat
    writes the constraints that hold torch at the build torch of sgl-kernel 0.3.21, and the uv.lock passes the check."""
    path = make_project(tmp_path / "bench", "torch", "sgl-kernel==0.3.21", "torchvision", "numpy")
    uv("lock", "-q", cwd=path.parent)  # what plain uv does: the incident
    plain = {e.name: e.version for e in read_lock(path.parent / "uv.lock", use_cache=False).entries}
    assert plain["torch"] == "2.15.0"
    from tests.localindex import serve_recorded

    with serve_recorded(json.loads((FIXTURES / "resolver" / "pages.json").read_text())) as url:
        r = run_cli("check", str(path.parent / "uv.lock"), "--target", "sm120", "--index-url", url)
    hints = [line for line in r.stdout.splitlines() if "hint:" in line]
    assert r.returncode == 1 and len(hints) == 1 and hints[0].startswith(
        "hint: the nearest safe set for sm120: torch==2.9.1 torchvision==0.24.1"), r.stdout
    original = path.read_text()
    result = lock_project(facts, path, REQ, source=src, quiet=True)
    assert result.core == {"sgl-kernel": "0.3.21", "torch": "2.9.1", "torchvision": "0.24.1"}
    assert ours_removed(path.read_text()) == original  # the only change: glmcompat's lines
    locked = {e.name: e.version for e in read_lock(path.parent / "uv.lock", use_cache=False).entries}
    assert locked["torch"] == "2.9.1" and locked["torchvision"] == "0.24.1" and locked["numpy"] == "2.3.0"
    assert sorted(Path(w).name for w in result.written) == ["pyproject.toml", "uv.lock"]
    r = run_cli("check", str(path.parent / "uv.lock"), "--target", "sm120")
    assert r.returncode == 0, r.stdout + r.stderr
    # A second run with nothing changed writes nothing and says what the first said.
    before = {p.name: p.read_bytes() for p in path.parent.iterdir() if p.is_file()}
    again = lock_project(facts, path, REQ, source=src, quiet=True)
    assert again.written == [] and again.warnings == result.warnings and again.core == result.core
    assert {p.name: p.read_bytes() for p in path.parent.iterdir() if p.is_file()} == before
    # --check agrees; a hand edit of the constraints makes it fail
    assert lock_project(facts, path, REQ, source=src, check_only=True).problems == []
    path.write_text(path.read_text().replace('"torch==2.9.1",  # glmcompat lock', '"torch==2.10.0",  # glmcompat lock'))
    assert lock_project(facts, path, REQ, source=src, check_only=True).problems


@pytest.mark.slow
@pytest.mark.parametrize("extra", [[], ["-q"]], ids=["plain", "quiet"])
def test_the_run_right_after_a_lock_is_answered_at_start_up(tmp_path, local_index, extra):
    """The first lock (it writes pyproject.toml and uv.lock) leaves the record the next identical run answers from on
    the start-up path, importing nothing heavy; that answer is the full path's (the project's record, up to date)."""
    from tests.cli.test_fastlock import fast

    path = make_project(tmp_path / "next", "torch", "sgl-kernel==0.3.21", "torchvision")
    argv = ["lock", "--target", "sm120", *extra]
    first = run_cli(*argv, cwd=path.parent)
    assert first.returncode == 0 and first.stderr == "", first.stdout + first.stderr
    assert extra or "(wrote pyproject.toml, uv.lock)" in first.stdout, first.stdout
    files = {p.name: p.read_bytes() for p in path.parent.iterdir() if p.is_file()}
    got = fast(tmp_path, argv, cwd=path.parent)
    full = run_cli(*argv, cwd=path.parent, env={"GLMCOMPAT_LOCK_PAUSE": "0"})  # no start-up path: the full answer
    assert got == (full.returncode, full.stdout, full.stderr, []), (got, full)
    assert extra or "(up to date)" in full.stdout, full.stdout
    assert {p.name: p.read_bytes() for p in path.parent.iterdir() if p.is_file()} == files


class Refuse:
    """A resolver source that fails when asked: proves a run did not resolve (not a recorded source: no record of
    its answers is kept)."""

    machine = "x86_64"

    def versions(self, name: str) -> list[str]:
        raise AssertionError(f"resolved {name}")

    def requires(self, name: str, version: str) -> list[str]:
        raise AssertionError(f"resolved {name}=={version}")

    def unavailable(self, name: str) -> dict[str, list[str]]:
        raise AssertionError(f"explained {name}")

    def platform(self) -> str:
        return "CPython 3.11 on Linux x86_64"


@pytest.mark.slow
def test_an_edit_outside_the_core_keeps_the_core_without_resolving(tmp_path, facts, src, local_index):
    """After a lock, the user adds redis: uv locks it under glmcompat's lines, the check passes, nothing is resolved
    (least change). Adding a core package (torchaudio) is resolved and pinned."""
    path = make_project(tmp_path / "edit", "torch", "sgl-kernel==0.3.21", "torchvision")
    lock_project(facts, path, REQ, source=src, quiet=True)
    uv("add", "--frozen", "-q", "redis", cwd=path.parent)
    text = path.read_text()
    result = lock_project(facts, path, REQ, source=Refuse(), quiet=True)
    assert result.core == {"sgl-kernel": "0.3.21", "torch": "2.9.1", "torchvision": "0.24.1"}
    assert path.read_text() == text and result.written == [str(path.parent / "uv.lock")]
    assert "redis" in {e.name for e in read_lock(path.parent / "uv.lock", use_cache=False).entries}
    assert lock_project(facts, path, REQ, source=Refuse(), check_only=True).problems == []
    uv("add", "--frozen", "-q", "torchaudio", cwd=path.parent)
    result = lock_project(facts, path, REQ, source=src, quiet=True)
    assert result.core["torchaudio"] == "2.9.1" and '"torchaudio==2.9.1",  # glmcompat lock' in path.read_text()


def test_an_unsafe_pin_exits_1_and_touches_nothing(tmp_path, facts, src, local_index):
    path = make_project(tmp_path / "unsafe", "torch==2.10.0", "sgl-kernel==0.3.21")
    uv("lock", "-q", cwd=path.parent)
    before = {p.name: p.read_bytes() for p in path.parent.iterdir() if p.is_file()}
    with pytest.raises(UnsafeError) as e:
        lock_project(facts, path, REQ, source=src, quiet=True)
    text = e.value.message
    assert text.startswith("Because sgl-kernel 0.3.21 was built against torch 2.9.1")
    assert "you require torch==2.10.0" in text or "pyproject.toml requires torch==2.10.0" in text
    assert text.splitlines()[-1] == "hint: in pyproject.toml, require torch==2.9.1 (the torch sgl-kernel 0.3.21 was built against)"
    # one short citation, the probe that reproduces it; the cause keeps the recorded source in full (--json, -v)
    assert "(evidence abi-probe: `glmcompat abi sgl-kernel==0.3.21 --torch 2.10.0`)" in text and len(text) < 600
    row = facts.kernel("sgl-kernel", "0.3.21")
    assert [c.evidence for c in e.value.causes] == [(("abi-probe", row.source),)]
    assert {p.name: p.read_bytes() for p in path.parent.iterdir() if p.is_file()} == before


def test_the_remedy_applied_makes_the_lock_pass(tmp_path, facts, src, local_index):
    path = make_project(tmp_path / "fix", "torch==2.10.0", "sgl-kernel==0.3.21")
    with pytest.raises(UnsafeError):
        lock_project(facts, path, REQ, source=src, quiet=True)
    path.write_text(path.read_text().replace("torch==2.10.0", "torch==2.9.1"))
    assert lock_project(facts, path, REQ, source=src, quiet=True).verdicts == {"sm120": "safe"}


def test_a_failed_uv_lock_restores_both_files(tmp_path, facts, src, local_index):
    """uv cannot lock (a dependency the index does not have): pyproject.toml and uv.lock stay byte-identical."""
    path = make_project(tmp_path / "broken", "torch", "sgl-kernel==0.3.21")
    uv("lock", "-q", cwd=path.parent)
    uv("add", "--frozen", "-q", "no-such-project-on-the-index", cwd=path.parent)
    before = {p.name: p.read_bytes() for p in path.parent.iterdir() if p.is_file()}
    with pytest.raises(UnsafeError, match="uv cannot lock the project under the safe core"):
        lock_project(facts, path, REQ, source=src, quiet=True)
    assert {p.name: p.read_bytes() for p in path.parent.iterdir() if p.is_file()} == before


def test_a_project_without_the_core_gets_no_constraints(tmp_path, facts, src, local_index):
    path = make_project(tmp_path / "plain", "numpy")
    original = path.read_text()
    result = lock_project(facts, path, REQ, source=src, quiet=True)
    assert result.core == {} and path.read_text() == original
    assert any("uses no package of the coupled core" in w for w in result.warnings)


@pytest.mark.slow
def test_a_workspace_is_locked_at_its_root(tmp_path, facts, src, local_index):
    root = make_project(tmp_path / "ws", name="ws")
    with root.open("a") as f:
        f.write('\n[tool.uv.workspace]\nmembers = ["packages/*"]\n')
    member = make_project(tmp_path / "ws" / "packages" / "bench", "torch", "sgl-kernel==0.3.21", "torchvision")
    member_text = member.read_text()
    result = lock_project(facts, pp.find(member.parent), REQ, source=src, quiet=True)
    assert result.core["torch"] == "2.9.1"
    assert member.read_text() == member_text  # constraints go to the workspace root only
    assert "torch==2.9.1" in pp.ours(root, root.read_text())["constraint-dependencies"]
    assert (tmp_path / "ws" / "uv.lock").is_file()


def test_torch_from_a_second_index_through_sources(tmp_path, facts, src, local_index):
    """[tool.uv.sources] sends torch to another index: uv honours it, the constraint holds there too."""
    from tests.localindex import serve_index

    recorded = json.loads(INDEX.read_text())
    second = {"torch": {"2.9.1": recorded["torch"]["requires"]["2.9.1"], "2.15.0": recorded["torch"]["requires"]["2.15.0"]},
              **{n: {v: [] for v in vs} for n, vs in PLAIN.items()}}
    with serve_index(second) as url:
        path = make_project(tmp_path / "src", "torch", "sgl-kernel==0.3.21")
        with path.open("a") as f:
            f.write(f'\n[[tool.uv.index]]\nname = "pytorch"\nurl = "{url}"\nexplicit = true\n\n'
                    '[tool.uv.sources]\ntorch = { index = "pytorch" }\n')
        original = path.read_text()
        result = lock_project(facts, path, REQ, source=src, quiet=True)
        assert ours_removed(path.read_text()) == original
    lock_text = (path.parent / "uv.lock").read_text()
    assert f'source = {{ registry = "{url}" }}' in lock_text
    assert result.core["torch"] == "2.9.1"


def test_a_read_only_project_is_refused_and_unchanged(tmp_path, facts, src, local_index):
    if os.geteuid() == 0:
        pytest.skip("root writes through read-only permissions")
    path = make_project(tmp_path / "ro", "torch", "sgl-kernel==0.3.21")
    os.chmod(path, 0o444)
    os.chmod(path.parent, 0o555)
    try:
        with pytest.raises(Exception, match="not writable"):
            lock_project(facts, path, REQ, source=src, quiet=True)
    finally:
        os.chmod(path.parent, 0o755)


def test_several_targets_get_one_set(tmp_path, facts, src, local_index):
    path = make_project(tmp_path / "multi", "torch", "sgl-kernel==0.3.21", "torchvision")
    result = lock_project(facts, path, ProjectLockRequest(plan(facts, ["sm90", "sm120"])), source=src, quiet=True)
    assert result.verdicts == {"sm90": "safe", "sm120": "safe"} and result.core["torch"] == "2.9.1"


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path, facts, src):
    path = make_project(tmp_path / "dry", "torch", "sgl-kernel==0.3.21")
    before = path.read_bytes()
    result = lock_project(facts, path, REQ, source=src, dry_run=True)
    assert path.read_bytes() == before and not (path.parent / "uv.lock").exists()
    assert '+    "torch==2.9.1",  # glmcompat lock' in result.diff


def test_the_committed_example_project_is_current(facts, src, tmp_path):
    """examples/glm5-sglang (the README's main job): its pyproject.toml already holds what glmcompat writes there."""
    import shutil

    from tests.conftest import ROOT

    shutil.copy(ROOT / "examples" / "glm5-sglang" / "pyproject.toml", tmp_path / "pyproject.toml")
    req = ProjectLockRequest(plan(facts, ["sm120"], model="glm_moe_dsa"))
    result = lock_project(facts, tmp_path / "pyproject.toml", req, source=src, dry_run=True)
    assert result.diff == "" and result.core["torch"] == "2.9.1" and result.overrides == {"transformers": "5.2.0"}


# ------------------------------------------------------------------------------------------------
# Requirements mode
# ------------------------------------------------------------------------------------------------

def test_requirements_mode_follows_includes_and_writes_hashes(tmp_path, facts, src, local_index):
    (tmp_path / "deps").mkdir()
    (tmp_path / "deps" / "base.in").write_text("torch\nnumpy\n")
    infile = tmp_path / "requirements.in"
    infile.write_text("-r deps/base.in\nsgl-kernel==0.3.21\ntorchvision\n")
    ins = {p: p.read_bytes() for p in (infile, tmp_path / "deps" / "base.in")}
    out = tmp_path / "requirements.txt"
    result = lock_requirements(facts, infile, out, REQ, source=src, quiet=True)
    assert result.core["torch"] == "2.9.1" and result.written == [str(out)]
    text = out.read_text()
    assert "torch==2.9.1 \\\n    --hash=sha256:" in text and "torchvision==0.24.1" in text
    assert "127.0.0.1" not in text and str(tmp_path) not in text
    assert {p: p.read_bytes() for p in ins} == ins
    r = run_cli("check", str(out), "--target", "sm120")
    assert r.returncode == 0, r.stdout + r.stderr
    assert lock_requirements(facts, infile, out, REQ, source=src).written == []


def test_lock_json_matches_its_schema(tmp_path, facts, src, local_index):
    from tests.cli.test_schemas import validate

    path = make_project(tmp_path / "j", "torch", "sgl-kernel==0.3.21")
    for kw in ({"dry_run": True}, {}, {"check_only": True}):
        doc = validate("lock", json.dumps(lock_project(facts, path, REQ, source=src, **kw).to_json()))
        assert doc["core"]["torch"] == "2.9.1" and doc["error"] is None
    from glmcompat.ops.projectlock import ProjectLockResult

    failed = ProjectLockResult("project", str(path), ["sm120"], "x86_64", {}, error="Because ...")
    assert validate("lock", json.dumps(failed.to_json()))["error"] == "Because ..."
    failed.evidence = [{"kind": "abi-probe", "source": "glmcompat abi sgl-kernel==0.3.21 --torch 2.9.1: 0 missing"}]
    assert validate("lock", json.dumps(failed.to_json()))["evidence"] == failed.evidence


def test_the_library_call_reads_the_projects_settings(tmp_path, monkeypatch):
    import glmcompat

    path = make_project(tmp_path / "lib", "numpy")
    with path.open("a") as f:
        f.write('\n[tool.glmcompat]\ntargets = ["sm120"]\n')
    result = glmcompat.lock(path.parent, dry_run=True)
    assert isinstance(result, glmcompat.ProjectLockResult) and result.targets == ["sm120"] and result.core == {}
    with pytest.raises(glmcompat.InputError, match="unknown target"):
        glmcompat.lock(path.parent, "sm999", dry_run=True)


def test_the_library_and_the_command_line_say_no_target_alike(tmp_path):
    """One wording (the command line's); what the library's caller passes instead is the error's data."""
    import glmcompat
    from glmcompat.ops import projectlock as pl

    path = make_project(tmp_path / "p", "torch")
    for call in (lambda: glmcompat.lock(path.parent, dry_run=True),  # the package index (never reached)
                 lambda: glmcompat.lock(path.parent, dry_run=True, index=INDEX)):  # a recorded index
        with pytest.raises(pl.NoTarget) as info:
            call()
        assert (info.value.argument, info.value.where, info.value.exit_code) == ("targets", str(path), 2)
    r = run_cli("lock", cwd=path.parent)
    assert r.returncode == 2 and r.stderr == f"error: {info.value.one_line()}\n"
    with pytest.raises(TypeError, match="exactly one"):
        pl.lock(path.parent, "sm120", dry_run=True, index=None, source=None)


# ------------------------------------------------------------------------------------------------
# The command line: bad input is one line, exit 2
# ------------------------------------------------------------------------------------------------

def test_no_target_names_both_places(tmp_path):
    make_project(tmp_path / "p", "torch")
    r = run_cli("lock", cwd=tmp_path / "p")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "pass --target" in r.stderr and "[tool.glmcompat] targets" in r.stderr


def test_a_broken_pyproject_is_one_line(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["torch" "numpy"]\n')
    before = (tmp_path / "pyproject.toml").read_bytes()
    r = run_cli("lock", "--target", "sm120", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "pyproject.toml" in r.stderr, r.stderr
    assert (tmp_path / "pyproject.toml").read_bytes() == before


def test_an_invalid_requirement_names_file_and_value(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["torch >>> 2"]\n')
    r = run_cli("lock", "--target", "sm120", cwd=tmp_path)
    assert r.returncode == 2 and "pyproject.toml" in r.stderr and "'torch >>> 2'" in r.stderr, r.stderr


def test_stack_options_are_refused_in_a_project(tmp_path):
    make_project(tmp_path / "p", "torch")
    r = run_cli("lock", "--target", "sm120", "--project", str(tmp_path / "p"), "--stack", "glm5-sglang-0.5.9")
    assert r.returncode == 2 and "--project" in r.stderr


# ------------------------------------------------------------------------------------------------
# Live: the four serving projects of the issue, against the real index
# ------------------------------------------------------------------------------------------------

LIVE = {
    "sglang-api": (("sglang[all]>=0.5.9", "fastapi", "redis>=5"), ("--model", "glm_moe_dsa")),
    "vllm-app": (("vllm", "langchain-core", "boto3"), ("--model", "glm_moe_dsa")),
    "benchmark": (("torch", "sgl-kernel==0.3.21", "torchvision", "numpy"), ()),
}


@pytest.mark.network
@pytest.mark.parametrize("name", sorted(LIVE))
def test_live_projects(tmp_path, name):
    deps, extra = LIVE[name]
    path = make_project(tmp_path / name, *deps)
    (path.parent / ".python-version").unlink(missing_ok=True)
    original = path.read_text()
    r = run_cli("lock", "--target", "sm120", *extra, cwd=path.parent)
    if r.returncode == 1:  # the index's newest set is unsafe (sglang[all] 0.5.23 pulls st-attn 0.0.7, built for CUDA 12
        # and an older torch, beside torch 2.14.1): refused with its cause, and nothing written -- never a lock that
        # `check` then rejects
        assert "Because" in r.stderr and path.read_text() == original and not (path.parent / "uv.lock").exists()
        return
    assert r.returncode == 0, r.stdout + r.stderr
    assert ours_removed(path.read_text()) == original
    r = run_cli("check", "uv.lock", "--target", "sm120", *extra, cwd=path.parent)
    assert r.returncode == 0, r.stdout + r.stderr  # what lock wrote, check passes (both read the wheels' own bytes)
    names = {e.name for e in read_lock(path.parent / "uv.lock", use_cache=False).entries}
    assert {d.split("[")[0].split(">")[0].split("=")[0] for d in deps} <= names


@pytest.mark.network
def test_live_requirements_image(tmp_path):
    (tmp_path / "base.txt").write_text("torch\nnumpy\n")
    (tmp_path / "requirements.in").write_text("-r base.txt\nsgl-kernel==0.3.21\ntorchvision\n")
    r = run_cli("lock", "requirements.in", "--target", "sm120", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_cli("check", "requirements.txt", "--target", "sm120", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.network
def test_live_unsafe_pin_exits_1(tmp_path):
    path = make_project(tmp_path / "u", "torch==2.10.0", "sgl-kernel==0.3.21")
    before = path.read_bytes()
    r = run_cli("lock", "--target", "sm120", cwd=path.parent)
    assert r.returncode == 1 and "Because" in r.stderr and path.read_bytes() == before
    assert not (path.parent / "uv.lock").exists()


# ------------------------------------------------------------------------------------------------
# The machine: its NVIDIA driver prunes the CUDA builds it cannot run; the output states what it needs
# ------------------------------------------------------------------------------------------------


def _machine(driver: str | None = None, glibc: str | None = None) -> Any:
    from glmcompat.model.machine import Machine, Provenance

    return Machine(("sm120",), Provenance("flag", "--target"), driver, Provenance("flag", "--driver"), glibc,
                   Provenance("flag", "--glibc"))


def test_requirements_mode_picks_a_torch_the_driver_runs(tmp_path, facts, src, local_index):
    """The local index serves torch 2.15.0 (CUDA 13.2: driver >= 580) and 2.10.0 (CUDA 12.8): with driver 570.86
    the core is 2.10.0, and the output states the driver and glibc it needs; without a driver, 2.15.0."""
    infile = tmp_path / "requirements.in"
    infile.write_text("torch\ntorchvision\n")
    plain = lock_requirements(facts, infile, tmp_path / "plain.txt", REQ, source=src, quiet=True)
    assert plain.core["torch"] == "2.15.0" and plain.floors == {"driver": "580", "glibc": "2.28"}
    req = ProjectLockRequest(plan(facts, ["sm120"], machine=_machine("570.86", "2.34")))
    out = tmp_path / "requirements.txt"
    result = lock_requirements(facts, infile, out, req, source=src, quiet=True)
    assert result.core["torch"] == "2.10.0" and result.floors == {"driver": "525.60.13", "glibc": "2.34"}
    text = out.read_text()
    assert "torch==2.10.0 \\\n" in text and "--driver 570.86 --glibc 2.34" in text
    assert "# needs: NVIDIA driver >= 525.60.13 (the lowest every CUDA build here runs on; torch 2.10.0 (CUDA 12.8))" in text
    assert "# needs: glibc 2.34 (manylinux_2_34 wheels chosen, --glibc" in text
    doc = result.to_json()
    assert doc["machine"]["driver"] == "570.86" and doc["machine"]["driver_from"] == {"origin": "flag", "where": "--driver"}
    r = run_cli("check", str(out), "--target", "sm120", "--driver", "570.86")
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_cli("check", str(tmp_path / "plain.txt"), "--target", "sm120", "--driver", "570.86")
    assert r.returncode == 1 and "torch 2.15.0 is built for CUDA 13.2" in r.stdout and ">= 580" in r.stdout, r.stdout


def test_project_mode_takes_the_driver_from_tool_glmcompat(tmp_path, facts, src, local_index):
    path = make_project(tmp_path / "drv", "torch", "torchvision")
    with path.open("a") as f:
        f.write('\n[tool.glmcompat]\ntarget = "sm120"\ndriver = "570.86"\n')
    from glmcompat.cli.commands._machine import machine_for

    settings = pp.load(path).settings
    machine = machine_for(None, None, None, settings, str(path), with_targets=False)
    assert machine.driver == "570.86" and machine.driver_from.origin == "pyproject"
    result = lock_project(facts, path, ProjectLockRequest(plan(facts, ["sm120"], machine=machine)), source=src, quiet=True)
    assert result.core["torch"] == "2.10.0" and result.floors == {"driver": "525.60.13"}
    locked = {e.name: e.version for e in read_lock(path.parent / "uv.lock", use_cache=False).entries}
    assert locked["torch"] == "2.10.0"


@pytest.mark.network
@pytest.mark.slow
def test_sglang_0_5_23_locks_for_this_machines_glibc(tmp_path, facts):
    """sglang 0.5.23 publishes manylinux_2_34 wheels only: a compile for this machine's glibc (2.36 here) succeeds
    and states the glibc it was compiled for; one for glibc 2.28 is explained, naming both."""
    from glmcompat.edges.index import client_for
    from glmcompat.edges.machine import glibc

    here = glibc()
    if here is None or tuple(int(x) for x in here.split(".")) < (2, 34):
        pytest.skip(f"this machine's glibc ({here}) is older than sglang 0.5.23's wheels need")
    infile = tmp_path / "requirements.in"
    infile.write_text("sglang==0.5.23\n")
    m = _machine(None, here)
    result = lock_requirements(facts, infile, tmp_path / "requirements.txt", ProjectLockRequest(plan(facts, ["sm120"], machine=m)),
                               index=client_for, quiet=True)
    assert result.core["sglang"] == "0.5.23" and result.floors["glibc"] == here
    assert f"# needs: glibc {here} (manylinux_2_{here.split('.')[1]} wheels chosen" in (tmp_path / "requirements.txt").read_text()
    with pytest.raises(UnsafeError, match=r"glibc >= 2.34\) and the machine's glibc is 2.28"):
        lock_requirements(facts, infile, tmp_path / "old.txt", ProjectLockRequest(plan(facts, ["sm120"], machine=_machine(None, "2.28"))),
                          index=client_for, quiet=True)

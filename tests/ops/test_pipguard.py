"""`glmcompat pip install` / `glmcompat pip constraints` against real virtual environments, the real uv and the
real pip, and a local index (tests/localindex.py) serving metadata-only wheels that carry the real METADATA of
the releases involved (tests/fixtures/pipguard/metadata.json, recorded by scripts/record_pip_guard_fixtures.py).

The environment of the GLM-5 incident: torch 2.9.1 beside sgl-kernel 0.3.21 (whose wheel declares no
Requires-Dist). The index also holds torch 2.10.0 and torchvision 0.25.0 (which pins it), so the unguarded
`uv pip install torchvision` moves torch, as it did in the incident.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from glmcompat.cli import main
from glmcompat.edges.installer import Change, Plan, parse_pip_report, parse_uv_plan
from glmcompat.edges.nvml import Gpu
from glmcompat.matrix.load import load_facts
from glmcompat.ops.pipguard import find_targets, judge, new_errors
from glmcompat.readers.installed import read_environment
from tests.localindex import metadata_wheel, serve_releases

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "pipguard" / "metadata.json"
UV = str(Path(sys.executable).with_name("uv")) if Path(sys.executable).with_name("uv").exists() else shutil.which("uv")
BASE = ["torch==2.9.1", "sgl-kernel==0.3.21"]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(the local index's URL, a uv cache shared by this module's tests)."""
    meta = json.loads(FIXTURE.read_text())["metadata"]
    with serve_releases(metadata_wheel(m) for m in meta.values()) as url:
        yield url, str(tmp_path_factory.mktemp("uv-cache"))


@pytest.fixture
def installer_env(index: tuple[str, str], made_once: None, monkeypatch: pytest.MonkeyPatch,
                  tmp_path: Path) -> dict[str, str]:
    """The index as users configure it (UV_DEFAULT_INDEX, PIP_INDEX_URL); nothing of the developer's shell."""
    url, cache = index
    for k in list(os.environ):
        if k.startswith(("UV_", "PIP_")) or k in ("VIRTUAL_ENV", "CONDA_PREFIX"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
    monkeypatch.setenv("UV_DEFAULT_INDEX", url)
    monkeypatch.setenv("UV_CACHE_DIR", cache)
    monkeypatch.setenv("PIP_INDEX_URL", url)
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    monkeypatch.setenv("UV_NO_CONFIG", "1")  # neither the machine's uv.toml nor its pip.conf (find-links, indexes)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.chdir(tmp_path)  # no project around the test: targets come from --target only
    return {k: os.environ[k] for k in ("UV_DEFAULT_INDEX", "UV_CACHE_DIR", "PIP_INDEX_URL", "UV_PYTHON_DOWNLOADS")}


def bundled_pip() -> Path:
    """The pip wheel this Python ships for ensurepip (installing it is much faster than `python -m venv`)."""
    import ensurepip

    return next((Path(ensurepip.__file__).parent / "_bundled").glob("pip-*.whl"))


# The incident's environment as make_venv built it, kept for this module's tests: the index -> the environment, in
# the folder _ONCE names (the made_once fixture's).
_MADE: dict[str, Path] = {}
_ONCE: list[Path] = []


@pytest.fixture(scope="module")
def made_once(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A folder of this module's where make_venv keeps the environment it copies; at the end, each is checked to be
    byte for byte as uv made it (the tests changed their copies only)."""
    _ONCE[:] = [tmp_path_factory.mktemp("venvs-made-once")]
    yield
    try:
        for made in _MADE.values():
            assert _contents(made) == _AS_MADE[made], f"{made} was changed through a copy"
    finally:
        _MADE.clear()
        _AS_MADE.clear()
        _ONCE.clear()


_AS_MADE: dict[Path, dict[str, bytes]] = {}


def _contents(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


def _link_or_copy(src: str, dst: str) -> None:
    """site-packages' files linked (uv itself links the packages' files from its cache into each environment, and
    replaces or removes files, never writes one in place; made_once checks that the linked files stayed as made);
    the rest (pyvenv.cfg, the scripts) copied."""
    if f"{os.sep}site-packages{os.sep}" in src:
        os.link(src, dst)
    else:
        shutil.copy(src, dst)


def make_venv(path: Path, *, pip: bool = False, core: tuple[str, ...] = tuple(BASE)) -> Path:
    """A real virtual environment holding ``core`` (the incident's), installed by the real uv from the local index.

    The incident's environment (most tests') is made by uv once per module and index (:func:`_build_venv`) and
    copied to ``path`` (:func:`_link_or_copy`): every test changes its own copy, and a copy is what uv makes there
    (its scripts naming ``path``). Any other (one test's each) is made by uv at ``path``."""
    if pip or core != tuple(BASE):
        return _build_venv(path, pip=pip, core=core)
    key = os.environ.get("UV_DEFAULT_INDEX", "")
    if key not in _MADE:
        first = _ONCE[0] / f"v{len(_MADE)}"
        _build_venv(first, core=core)
        _MADE[key] = first
        _AS_MADE[first] = _contents(first)
    made = _MADE[key]
    shutil.copytree(made, path, symlinks=True, copy_function=_link_or_copy)
    for script in (path / "bin").iterdir():  # the activation scripts name the folder they were made in (copies)
        if script.is_file() and not script.is_symlink():
            text = script.read_bytes()
            if bytes(made) in text:
                script.write_bytes(text.replace(bytes(made), bytes(path)))
    return path / "bin" / "python"


def _build_venv(path: Path, *, pip: bool = False, core: tuple[str, ...] = tuple(BASE)) -> Path:
    subprocess.run([UV, "venv", "-q", "--python", sys.executable, str(path)], check=True, capture_output=True)
    py = path / "bin" / "python"
    subprocess.run([UV, "pip", "install", "-q", "--python", str(py), *core], check=True, capture_output=True)
    if pip:  # not compiled: its first run writes the bytecode of the modules it imports (see writes_bytecode)
        subprocess.run([UV, "pip", "install", "-q", "--python", str(py), str(bundled_pip())],
                       check=True, capture_output=True)
    return py


def installed(py: Path) -> dict[str, str]:
    """What the environment holds, as the real uv lists it."""
    r = subprocess.run([UV, "pip", "list", "--python", str(py), "--format", "json"], check=True, capture_output=True, text=True)
    return {d["name"]: d["version"] for d in json.loads(r.stdout)}


def snapshot(py: Path) -> list[tuple[str, int]]:
    """Every file in the environment's site-packages with its size: 'unchanged' means this is equal."""
    site = next((py.parent.parent / "lib").glob("python3*/site-packages"))
    return sorted((str(p.relative_to(site)), p.stat().st_size) for p in site.rglob("*") if p.is_file()
                  and "__pycache__" not in p.parts)


def glmcompat(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


# -- the acceptance cases ---------------------------------------------------------------------------


def test_constraints_pin_the_installed_core(installer_env, tmp_path, capsys):
    py = make_venv(tmp_path / "v")
    rc, out, err = glmcompat(capsys, "pip", "constraints", "--python", str(py))
    assert rc == 0, err
    lines = [ln for ln in out.splitlines() if ln and not ln.startswith("#")]
    assert lines == ["sgl-kernel==0.3.21", "torch==2.9.1"]  # the core only: not filelock, triton or the nvidia-*
    # ... written as examples/Dockerfile writes it, the file does what it says for every later call of the real
    # uv: UV_CONSTRAINT keeps torch.
    cfile = tmp_path / "constraints.txt"
    docker = (Path(__file__).resolve().parents[2] / "examples" / "Dockerfile").read_text()
    assert "RUN glmcompat pip constraints --python $VIRTUAL_ENV -o /etc/glmcompat-constraints.txt" in docker
    assert "ENV UV_CONSTRAINT=/etc/glmcompat-constraints.txt" in docker
    rc, _, err = glmcompat(capsys, "pip", "constraints", "--python", str(py.parent.parent), "-o", str(cfile))
    assert rc == 0 and cfile.read_text() == out, err
    r = subprocess.run([UV, "pip", "install", "--dry-run", "--python", str(py), "torchvision"], capture_output=True,
                       text=True, env={**os.environ, "UV_CONSTRAINT": str(cfile)})
    assert r.returncode == 0, r.stderr
    assert "+ torchvision==0.24.1" in r.stderr and "torch==2.10.0" not in r.stderr


def test_unguarded_uv_moves_torch(installer_env, tmp_path):
    """The incident, reproduced with the real uv on this index: without a guard, torchvision moves torch."""
    py = make_venv(tmp_path / "v")
    r = subprocess.run([UV, "pip", "install", "--dry-run", "--python", str(py), "torchvision"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    plan = parse_uv_plan(r.stderr)
    assert Change("torch", "2.9.1", "2.11.0") in plan and Change("torchvision", None, "0.26.0") in plan


def test_install_torchvision_keeps_torch(installer_env, tmp_path, capsys):
    py = make_venv(tmp_path / "v")
    rc, out, err = glmcompat(capsys, "pip", "install", "--python", str(py), "--target", "sm120", "torchvision")
    assert rc == 0, out + err
    now = installed(py)
    assert now["torchvision"] == "0.24.1" and now["torch"] == "2.9.1" and now["sgl-kernel"] == "0.3.21"
    assert "uv's own plan would break the core (~ torch 2.9.1 -> 2.11.0" in out
    assert "sgl-kernel 0.3.21" in out and "instead, keeping the installed core (sgl-kernel==0.3.21, torch==2.9.1):" in out
    assert "  + torchvision==0.24.1" in out
    assert "changed: + numpy==2.4.6, + pillow==13.0.0, + torchvision==0.24.1" in out
    assert "core now: sgl-kernel==0.3.21, torch==2.9.1, torchvision==0.24.1" in out


def test_install_torch_2_10_exits_1_and_changes_nothing(installer_env, tmp_path, capsys):
    py = make_venv(tmp_path / "v")
    before = snapshot(py)
    rc, out, err = glmcompat(capsys, "pip", "install", "--python", str(py), "--target", "sm120", "torch==2.10.0")
    assert rc == 1, out + err
    assert snapshot(py) == before
    assert err.startswith(f"error: no safe plan for torch==2.10.0 in {tmp_path / 'v'}\n")
    cause = err.splitlines()[1]
    assert cause.startswith("  cause: Because you asked for torch==2.10.0, and uv's plan for it changes the core "
                            "(~ torch 2.9.1 -> 2.10.0), and sgl-kernel==0.3.21 is installed and torch 2.10.0 breaks "
                            "sgl-kernel 0.3.21: sgl-kernel 0.3.21 was built against torch 2.9.1, and torch 2.10.0 does "
                            "not export the torch symbols it needs")  # the cause as check, verify and explain word it
    assert "(evidence abi-probe: glmcompat abi sgl-kernel==0.3.21 --torch 2.10.0)" in cause
    assert "keeping the installed core (sgl-kernel==0.3.21, torch==2.9.1) leaves uv no plan" in cause
    assert cause.endswith("we can conclude that no plan for torch==2.10.0 keeps this environment safe for sm120; nothing was changed.")
    assert err.splitlines()[2] == "  hint: pin torch==2.9.1"
    assert len(err.splitlines()) == 3


def test_install_numpy_leaves_the_core_alone(installer_env, tmp_path, capsys):
    py = make_venv(tmp_path / "v")
    before = installed(py)
    rc, out, err = glmcompat(capsys, "pip", "install", "--python", str(py), "--target", "sm120", "numpy")
    assert rc == 0, out + err
    now = installed(py)
    assert now.pop("numpy") == "2.4.6"
    assert now == before
    assert "uv's plan keeps the core safe:\n  + numpy==2.4.6\n" in out
    assert "changed: + numpy==2.4.6\ncore unchanged: sgl-kernel==0.3.21, torch==2.9.1\n" in out


def test_a_kernel_built_for_another_torch_moves_the_core_to_it(installer_env, tmp_path, capsys):
    """The nearest safe core: sglang-kernel 0.4.2 declares no torch, uv would put it beside torch 2.9.1; the
    matrix knows it was built against torch 2.11.0, so torch and torchvision move with it (judged again)."""
    py = make_venv(tmp_path / "v", core=("torch==2.9.1", "torchvision==0.24.1"))
    rc, out, err = glmcompat(capsys, "pip", "install", "--python", str(py), "--target", "sm120", "sglang-kernel==0.4.2")
    assert rc == 0, out + err
    assert "uv's own plan would break the core (+ sglang-kernel==0.4.2): sglang-kernel 0.4.2 was built against torch 2.11.0" in out
    assert ("instead, moving the core to torch 2.11.0, the torch sglang-kernel 0.4.2 was built against "
            "(torch==2.11.0, torchvision==0.26.0):\n") in out
    now = installed(py)
    assert (now["torch"], now["torchvision"], now["sglang-kernel"]) == ("2.11.0", "0.26.0", "0.4.2")


def test_no_core_fits_both_kernels(installer_env, tmp_path, capsys):
    py = make_venv(tmp_path / "v")
    before = snapshot(py)
    rc, out, err = glmcompat(capsys, "pip", "install", "--python", str(py), "--target", "sm120", "sglang-kernel==0.4.2")
    assert rc == 1, out + err
    assert snapshot(py) == before
    cause = err.splitlines()[1]
    assert "keeping the installed core (sgl-kernel==0.3.21, torch==2.9.1), uv's plan still breaks it: sglang-kernel 0.4.2" in cause
    assert ("moving the core to torch 2.11.0, the torch sglang-kernel 0.4.2 was built against (torch==2.11.0), uv's plan "
            "still breaks it: torch 2.11.0 breaks sgl-kernel 0.3.21") in cause or \
           ("moving the core to torch 2.11.0, the torch sglang-kernel 0.4.2 was built against (torch==2.11.0), uv's plan "
            "still breaks it: sgl-kernel 0.3.21 was built against torch 2.9.1") in cause


def test_dry_run_prints_the_judged_plan_and_installs_nothing(installer_env, tmp_path, capsys):
    py = make_venv(tmp_path / "v")
    before = snapshot(py)
    rc, out, err = glmcompat(capsys, "pip", "install", "--dry-run", "--python", str(py), "--target", "sm90", "torchvision")
    assert rc == 0, out + err
    assert snapshot(py) == before
    assert "instead, keeping the installed core (sgl-kernel==0.3.21, torch==2.9.1):\n  + numpy==2.4.6\n  + pillow==13.0.0\n  + torchvision==0.24.1\n" in out
    assert out.endswith("dry run: nothing was installed\n")


def test_found_like_uv_virtual_env_then_dot_venv(installer_env, tmp_path, capsys, monkeypatch):
    py = make_venv(tmp_path / ".venv")
    project = tmp_path / "proj" / "sub"
    project.mkdir(parents=True)
    monkeypatch.chdir(project)
    rc, out, err = glmcompat(capsys, "pip", "constraints")  # .venv in a folder above
    assert rc == 0 and "torch==2.9.1" in out, err
    other = tmp_path / "other"
    subprocess.run([UV, "venv", "-q", "--python", sys.executable, str(other)], check=True, capture_output=True)
    monkeypatch.setenv("VIRTUAL_ENV", str(other))  # the active environment wins over .venv
    rc, out, err = glmcompat(capsys, "pip", "constraints")
    assert rc == 0 and "torch" not in out.replace("UV_CONSTRAINT", "") .split("core installed")[1].split("\n", 2)[2]
    assert f"installed in {other}" in out
    assert py.exists()


def writes_bytecode(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pip processes a test starts write the bytecode of what they import, as pip does where
    PYTHONDONTWRITEBYTECODE is not set: the first compiles the modules it imports once (about 0.9 s of CPU), each
    later one reads them. Compiling all of pip when it is installed cost 2.2 s; compiling in memory at every start
    (PYTHONDONTWRITEBYTECODE, set on some machines) about 0.9 s a pip process. What pip does is the same."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)


@pytest.mark.slow
def test_pip_where_uv_is_absent(installer_env, tmp_path, capsys, monkeypatch):
    """pip's own plan (`pip install --dry-run --report -`), judged and re-planned the same way."""
    writes_bytecode(monkeypatch)
    py = make_venv(tmp_path / "v", pip=True)
    rc, out, err = glmcompat(capsys, "pip", "install", "--installer", "pip", "--python", str(py), "--target", "sm120",
                             "torchvision")
    assert rc == 0, out + err
    assert "pip's own plan would break the core (~ torch 2.9.1 -> 2.11.0" in out
    assert "instead, keeping the installed core (sgl-kernel==0.3.21, torch==2.9.1):\n  + numpy==2.4.6\n  + pillow==13.0.0\n  + torchvision==0.24.1\n" in out
    now = installed(py)
    assert now["torchvision"] == "0.24.1" and now["torch"] == "2.9.1"


# -- bad input: one line, exit 2 or 3, the environment as it was -------------------------------------


def test_the_plan_is_read_whatever_the_terminal_asks(installer_env, tmp_path, capsys, monkeypatch):
    """FORCE_COLOR colours uv's words (the plan is asked for uncoloured); a -q passed through hides the plan, which
    is refused rather than read as "nothing to change"."""
    py = make_venv(tmp_path / "v")
    monkeypatch.setenv("FORCE_COLOR", "1")
    rc, out, err = glmcompat(capsys, "pip", "install", "--dry-run", "--python", str(py), "--target", "sm120", "torchvision")
    assert rc == 0 and "  + torchvision==0.24.1\n" in out, out + err
    rc, out, err = glmcompat(capsys, "pip", "install", "--dry-run", "--python", str(py), "torchvision", "--", "-q")
    assert rc == 3 and err.startswith("error: cannot read uv's plan: no 'Would ...' line in its output") and err.count("\n") == 1


def test_no_such_interpreter(installer_env, tmp_path, capsys):
    rc, out, err = glmcompat(capsys, "pip", "install", "--python", str(tmp_path / "nope" / "python"), "numpy")
    assert (rc, err) == (2, f"error: --python '{tmp_path / 'nope' / 'python'}': no such interpreter\n")


def test_no_environment_at_all(installer_env, tmp_path, capsys):
    rc, out, err = glmcompat(capsys, "pip", "constraints")
    assert rc == 2 and err.startswith("error: no virtual environment found") and err.count("\n") == 1


def test_broken_environment(installer_env, tmp_path, capsys):
    py = make_venv(tmp_path / "v")
    real = Path(os.path.realpath(py))
    fake = tmp_path / "broken-python"
    fake.write_text(f"#!/bin/sh\necho 'Fatal Python error: init_fs_encoding' >&2\nexit 1\n# {real}\n")
    fake.chmod(0o755)
    rc, out, err = glmcompat(capsys, "pip", "install", "--python", str(fake), "numpy")
    assert rc == 3 and err.count("\n") == 1
    assert "a broken environment: its interpreter failed (Fatal Python error: init_fs_encoding)" in err


def test_a_request_the_installer_cannot_resolve_is_its_error(installer_env, tmp_path, capsys):
    py = make_venv(tmp_path / "v")
    before = snapshot(py)
    rc, out, err = glmcompat(capsys, "pip", "install", "--python", str(py), "--target", "sm120", "no-such-package")
    assert rc == 2
    assert "no-such-package was not found in the package registry" in err  # uv's own words, passed through
    assert err.endswith("error: uv failed (exit 1); nothing was changed by glmcompat\n")
    assert snapshot(py) == before


def test_unknown_target_is_bad_input(installer_env, tmp_path, capsys):
    py = make_venv(tmp_path / "v")
    rc, out, err = glmcompat(capsys, "pip", "install", "--python", str(py), "--target", "sm999", "numpy")
    assert rc == 2 and err.count("\n") == 1 and "sm999" in err


# -- the pieces -------------------------------------------------------------------------------------


UV_DRY_RUN = """Using Python 3.11.7 environment at: v1
Resolved 30 packages in 1.47s
Would download 8 packages
Would uninstall 3 packages
Would install 8 packages
 + cuda-bindings==12.9.4
 - nvidia-nvshmem-cu12==3.3.20
 + nvidia-nvshmem-cu12==3.4.5
 - torch==2.9.1
 + torch==2.10.0
 + torchvision==0.25.0
 ~ triton==3.5.1
 + my_pkg==1.0 (from file:///tmp/my_pkg-1.0-py3-none-any.whl)
warning: - this is not a change
"""


def test_parse_uv_plan():
    assert parse_uv_plan(UV_DRY_RUN) == (
        Change("cuda-bindings", None, "12.9.4"), Change("my-pkg", None, "1.0", direct=True),
        Change("nvidia-nvshmem-cu12", "3.3.20", "3.4.5"), Change("torch", "2.9.1", "2.10.0"),
        Change("torchvision", None, "0.25.0"), Change("triton", "3.5.1", "3.5.1"))
    assert parse_uv_plan("Using Python 3.11.7 environment at: v1\nChecked 1 package in 116ms\nWould make no changes\n") == ()


def test_parse_pip_report():
    report = {"version": "1", "install": [{"metadata": {"name": "torch", "version": "2.10.0"}, "is_direct": False},
                                          {"metadata": {"name": "TorchVision", "version": "0.25.0"}},
                                          {"metadata": {"name": "mine", "version": "1.0"}, "is_direct": True}]}
    plan = Plan("pip", parse_pip_report(json.dumps(report), {"torch": "2.9.1"}))
    assert plan.changes == (Change("mine", None, "1.0", direct=True), Change("torch", "2.9.1", "2.10.0"),
                            Change("torchvision", None, "0.25.0"))
    assert plan.apply({"torch": "2.9.1", "sgl-kernel": "0.3.21"}) == {"mine": "1.0", "sgl-kernel": "0.3.21",
                                                                         "torch": "2.10.0", "torchvision": "0.25.0"}


def _dist(site: Path, folder: str, name: str, version: str) -> None:
    d = site / folder
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nClassifier: A\n  folded\n\n"
                                "A description that quotes another METADATA:\nName: other\nVersion: 0.0.1\n")


def test_read_environment_keeps_local_labels_and_reports_leftovers(tmp_path):
    site = tmp_path / "site-packages"
    _dist(site, "torch-2.9.1+cu128.dist-info", "torch", "2.9.1+cu128")
    _dist(site, "Sgl_Kernel-0.3.20.dist-info", "sgl_kernel", "0.3.20")
    _dist(site, "sgl_kernel-0.3.21.dist-info", "sgl-kernel", "0.3.21")
    (site / "broken-1.0.dist-info").mkdir()
    env = read_environment([str(site), str(tmp_path / "absent")])
    assert env.versions() == {"sgl-kernel": "0.3.21", "torch": "2.9.1+cu128"}
    assert len(env.problems) == 2 and "broken-1.0.dist-info" in env.problems[0] and "judged as 0.3.21" in env.problems[1]


def test_constraints_leave_out_what_a_pin_cannot_name(tmp_path):
    """An editable or URL-installed core package (PEP 610 direct_url.json) is said, not pinned."""
    from glmcompat.edges.installer import Interpreter
    from glmcompat.ops.pipguard import Live, constraints_text

    site = tmp_path / "site-packages"
    _dist(site, "torch-2.9.1+cu128.dist-info", "torch", "2.9.1+cu128")
    _dist(site, "sglang-0.5.9.dev0.dist-info", "sglang", "0.5.9.dev0")
    (site / "sglang-0.5.9.dev0.dist-info" / "direct_url.json").write_text('{"url": "file:///src/sglang", "dir_info": {"editable": true}}')
    _dist(site, "numpy-2.4.6.dist-info", "numpy", "2.4.6")
    live = Live(Interpreter(str(tmp_path / "bin" / "python"), str(tmp_path), "3.11.7", (str(site),), "--python"),
                read_environment([str(site)]))
    text = constraints_text(live, load_facts())
    assert [ln for ln in text.splitlines() if not ln.startswith("#")] == ["torch==2.9.1+cu128"]
    assert "# sglang 0.5.9.dev0 is installed from a URL or a folder, which a version pin cannot name: not pinned" in text


def test_targets_from_the_project_then_the_gpu(tmp_path):
    from glmcompat.ops.pipguard import Targets

    facts = load_facts()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.glmcompat]\ntargets = ["sm_120"]\nmodel = "glm_moe_dsa"\n')
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    t = find_targets([], None, sub, facts, gpus=lambda: [])
    assert t.names == ("sm120",) and t.model == "glm_moe_dsa" and str(tmp_path / "pyproject.toml") in t.source
    assert find_targets(["sm90"], None, sub, facts) == Targets(("sm90",), "--target", "glm_moe_dsa")  # --target first
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "pyproject.toml").write_text('[project]\nname = "y"\n')
    h200 = find_targets([], None, bare, facts, gpus=lambda: [Gpu(0, "NVIDIA H200", "9.0")])
    assert h200.names == ("sm90",) and h200.source == "NVML: GPU 0 NVIDIA H200 (9.0)"
    none = find_targets([], None, bare, facts, gpus=lambda: [])
    assert none.names == () and "no GPU seen by NVML" in none.source


def test_no_target_still_judges_the_torch_abi():
    """Without a target the rules that hold on every target still run: the ABI break is one of them."""
    from glmcompat.ops.pipguard import Targets

    facts = load_facts()
    none = Targets((), "no target")
    before = judge({"torch": "2.9.1", "sgl-kernel": "0.3.21"}, none, facts, False)
    after = judge({"torch": "2.10.0", "sgl-kernel": "0.3.21", "torchvision": "0.25.0"}, none, facts, False)
    broken = new_errors(before, after)
    assert [(f.rule, f.pins) for f in broken] == [("abi", ("sgl-kernel==0.3.21", "torch==2.10.0"))]
    assert "built against torch 2.9.1" in broken[0].message
    assert new_errors(after, after) == []


# -- live ------------------------------------------------------------------------------------------


@pytest.mark.network
def test_live_index_plans_torchvision_for_the_installed_torch(tmp_path, monkeypatch, capsys):
    """Against the real index (its URL read from pip's and uv's configuration): the environment holds the
    metadata-only torch 2.9.1 and sgl-kernel 0.3.21; uv's own plan moves torch, the guarded one does not."""
    from glmcompat.edges.index import default_index_url

    live = default_index_url()
    meta = json.loads(FIXTURE.read_text())["metadata"]
    for k in list(os.environ):
        if k.startswith(("UV_", "PIP_")) or k == "VIRTUAL_ENV":
            monkeypatch.delenv(k)
    monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    monkeypatch.chdir(tmp_path)
    with serve_releases(metadata_wheel(m) for m in meta.values()) as url:
        monkeypatch.setenv("UV_DEFAULT_INDEX", url)
        py = make_venv(tmp_path / "v")
    monkeypatch.setenv("UV_DEFAULT_INDEX", live)
    rc, out, err = glmcompat(capsys, "pip", "install", "--dry-run", "--python", str(py), "--target", "sm120", "torchvision")
    assert rc == 0, out + err
    assert "uv's own plan would break the core (~ torch 2.9.1 -> " in out
    assert "  + torchvision==0.24.1\n" in out


@pytest.mark.gpu
@pytest.mark.skipif(not os.path.exists("/dev/nvidiactl"), reason="no NVIDIA driver")
def test_the_gpu_nvml_reports_is_the_target(tmp_path):
    """On a GPU host (measured on an H200: [Gpu(0, 'NVIDIA H200', '9.0')] in 0.02 s), NVML's capability names the
    target when neither --target nor [tool.glmcompat] does."""
    from glmcompat.edges.nvml import gpus

    seen = gpus()
    assert seen and all(g.capability.count(".") == 1 for g in seen)
    t = find_targets([], None, tmp_path, load_facts())
    assert t.source.startswith("NVML: GPU 0 ") and len(t.names) >= 1 or "is no target of the matrix" in t.source


def test_requirements_file_and_passthrough(installer_env, tmp_path, capsys):
    py = make_venv(tmp_path / "v")
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("torchvision\n")
    rc, out, err = glmcompat(capsys, "pip", "install", "--dry-run", "--python", str(py), "--target", "sm120",
                             "-r", str(reqs), "--", "--no-build")
    assert rc == 0, out + err
    assert "  + torchvision==0.24.1\n" in out
    rc, out, err = glmcompat(capsys, "pip", "install", "--python", str(py), "-r", str(tmp_path / "missing.txt"))
    assert (rc, err) == (2, f"error: {tmp_path / 'missing.txt'}: no such requirements file\n")


def test_no_installer_is_an_environment_failure(installer_env, tmp_path, capsys):
    py = make_venv(tmp_path / "v")  # made by uv: no pip in it
    before = snapshot(py)
    rc, out, err = glmcompat(capsys, "pip", "install", "--installer", "pip", "--python", str(py), "numpy")
    assert rc == 3 and err == f"error: --installer pip: pip is not installed in {tmp_path / 'v'} ({py} -m ensurepip installs it)\n"
    assert snapshot(py) == before


def test_an_installer_failure_under_json_is_the_error_document(installer_env, tmp_path, capsys):
    """--json: the installer's own failure (here: a requirement no index has) is the command's error document on
    stdout, with the installer's exit code; the installer's words stay on stderr."""
    from tests.cli.test_schemas import validate

    py = make_venv(tmp_path / "v")
    before = snapshot(py)
    rc, out, err = glmcompat(capsys, "pip", "install", "--python", str(py), "--target", "sm120", "--json",
                             "no-such-package-anywhere")
    assert rc in (2, 3), out + err
    e = validate("pip-install", out)["error"]
    assert e["code"] == rc and "failed" in e["message"] and snapshot(py) == before


def test_an_install_that_fails_after_its_plan_leaves_the_environment_as_it_was(installer_env, tmp_path, capsys, monkeypatch):
    """The plan needs only metadata; the install needs the wheel, which this index cannot deliver."""
    py = make_venv(tmp_path / "v")
    before = snapshot(py)
    meta = json.loads(FIXTURE.read_text())["metadata"]
    with serve_releases((metadata_wheel(m) for m in meta.values()), unavailable=["numpy-2.4.6-py3-none-any.whl"]) as url:
        monkeypatch.setenv("UV_DEFAULT_INDEX", url)
        monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "cache"))
        rc, out, err = glmcompat(capsys, "pip", "install", "--python", str(py), "--target", "sm120", "numpy")
    assert rc == 3, out + err
    assert "uv's plan keeps the core safe:\n  + numpy==2.4.6\n" in out
    assert "404" in err  # uv's own words
    assert err.endswith("error: uv failed installing the judged plan (exit 1); the environment is as it was\n")
    assert snapshot(py) == before


def test_json_report_validates(installer_env, tmp_path, capsys):
    """`pip install --json`: every verdict's report matches the shipped pip-install.schema.json."""
    from tests.cli.test_schemas import validate

    py = make_venv(tmp_path / "v")
    cases = [(["--dry-run", "torchvision"], 0, "would-install"), (["torch==2.10.0"], 1, "no-safe-plan"),
             (["torchvision"], 0, "installed"), (["torchvision"], 0, "nothing-to-change")]
    for extra, want_rc, verdict in cases:
        rc, out, err = glmcompat(capsys, "pip", "install", "--json", "--python", str(py), "--target", "sm120", *extra)
        assert rc == want_rc, out + err
        doc = validate("pip-install", out)
        assert doc["verdict"] == verdict and doc["core"]["torch"] == "2.9.1"
        if verdict == "no-safe-plan":
            assert doc["cause"]["subject"] == "sgl-kernel" and doc["cause"]["remedy"] == "pin torch==2.9.1"
            assert doc["breaks"][0]["rule"] == "abi"
        if verdict == "installed":
            assert {"name": "torchvision", "old": None, "new": "0.24.1"} in doc["changed"]
            assert doc["chosen"]["how"].startswith("keeping the installed core")


@pytest.mark.slow
def test_a_local_label_stays_as_installed(installer_env, tmp_path, capsys, monkeypatch):
    """torch from a PyTorch index carries a local label (2.9.1+cu128). The index serves it as a release of its
    own (torch 2.9.1's recorded METADATA under that version): the pin keeps the label, and torchvision 0.24.1's
    `torch==2.9.1` accepts it, so the installed build stays."""
    meta = json.loads(FIXTURE.read_text())["metadata"]
    labelled = meta["torch==2.9.1"].replace("Version: 2.9.1\n", "Version: 2.9.1+cu128\n")
    releases = [metadata_wheel(m) for k, m in meta.items() if k != "torch==2.9.1"] + [metadata_wheel(labelled)]
    with serve_releases(releases) as url:
        monkeypatch.setenv("UV_DEFAULT_INDEX", url)
        monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "cache"))
        py = make_venv(tmp_path / "v", core=("torch==2.9.1+cu128", "sgl-kernel==0.3.21"))
        rc, out, err = glmcompat(capsys, "pip", "constraints", "--python", str(py))
        assert "\ntorch==2.9.1+cu128\n" in out
        rc, out, err = glmcompat(capsys, "pip", "install", "--python", str(py), "--target", "sm120", "torchvision")
    assert rc == 0, out + err
    assert "instead, keeping the installed core (sgl-kernel==0.3.21, torch==2.9.1+cu128):" in out
    now = installed(py)
    assert (now["torch"], now["torchvision"]) == ("2.9.1+cu128", "0.24.1")


def test_a_plan_the_driver_cannot_run_is_an_error():
    """pip install judges the plan on the machine's driver: torch 2.11.0 (CUDA 13.0) on driver 570.86 is an error that
    the plan brings (so the install is refused); 580.95.05 runs it."""
    from glmcompat.matrix.load import load_facts
    from glmcompat.model.machine import Machine, Provenance
    from glmcompat.ops.pipguard import Targets, with_machine

    facts = load_facts()

    def on(driver: str) -> list:
        m = Machine((), Provenance("default"), driver, Provenance("detected", "NVML"))
        return [f for f in judge({"torch": "2.11.0"}, with_machine(Targets(("sm120",), "--target"), m), facts,
                                    False) if f.rule == "driver"]

    assert [f.severity for f in on("570.86")] == ["error"]
    assert new_errors([], on("570.86")) and on("580.95.05") == []


def test_a_refused_upgrade_says_it_was_refused_and_why(installer_env, tmp_path, capsys):
    """`pip install -U torch` next to sgl-kernel 0.3.21: uv's plan moves torch and breaks the kernel, the plan that keeps
    the core changes nothing. That is a refusal (exit 1, nothing installed), said with its reason and what to run,
    never "nothing to change" with exit 0."""
    from tests.cli.test_schemas import validate

    py = make_venv(tmp_path / "v")
    before = snapshot(py)
    rc, out, err = glmcompat(capsys, "pip", "install", "--python", str(py), "--target", "sm120", "-U", "torch")
    assert rc == 1, out + err
    assert "error: refused: torch 2.9.1 -> " in out and "uv's plan would break the core: " in out
    assert "nothing was installed" in out and "`glmcompat upgrade --target sm120`" in out
    assert "nothing to change" not in out and snapshot(py) == before
    rc, out, err = glmcompat(capsys, "pip", "install", "--json", "--python", str(py), "--target", "sm120", "-U", "torch")
    assert rc == 1 and validate("pip-install", out)["verdict"] == "refused"

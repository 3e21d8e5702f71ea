"""Record the format fixtures a real tool writes, for tests/readers/formats/ (run by hand; needs the index): poetry.lock
(poetry 2.5.1, 1.8.5 and 1.2.2), pdm.lock, Pipfile.lock and a ``pip freeze``.

It installs each tool into a throwaway venv (``uv venv`` + ``uv pip install``, Python 3.11), writes one small project per
case that exercises what glmcompat reads -- torch, a family package (torchvision), a kernel (xformers) under a marker, an
optional extra, a dev group, a second named source, a local editable path dependency, a git dependency (a local git
repository standing in for flash-attention) and a direct wheel URL -- and has each tool lock it in its lock-only mode
(``poetry lock``, ``pdm lock``, ``pipenv lock``): poetry 2.5/1.8, pdm and pipenv read metadata (PEP 658 where the index
serves it) and never download torch's wheels. The cases:

- ``poetry``, ``pdm``, ``pipenv``: today's lock formats (poetry's lock-version 2.1 with groups and package markers);
- ``poetry-1.8``: the ``poetry`` project in poetry 1.8.5's lock-version 2.0 (no category, no groups, no package markers);
- ``poetry-sources``: poetry 1.2.2's lock-version 1.1 (``category``, a source on every package): a directory, a local
  sdist, a git project, a wheel URL, a default and a secondary legacy source, an extra, a dev group; poetry 1.2 predates
  PEP 658 and downloads one wheel per package to read its metadata (about 2.3 GB, a minute here);
- ``poetry-extra-torch``: poetry 2.5's lock of a project whose torch arrives only through an extra's optional
  torchvision (torch is named in no ``[extras]`` list);
- ``pip-freeze``: the real pip's ``pip freeze`` of a venv it filled with ``--no-deps`` installs of the real wheels
  (about 1.5 GB: torch 2.8.0 and sgl-kernel), editable projects (a git repository without a remote, the subdirectory of
  a clone) and a local directory.

Every index host is rewritten to the placeholder ``index.invalid`` and the temporary directory to ``/src``, so that no
package-index host name and no machine path is committed; the lock's own hash of its manifest (poetry's content-hash,
pdm's content_hash, pipenv's _meta) hashes the temporary path and so differs from run to run.

    UV_PYTHON_DOWNLOADS=never python scripts/record_format_fixtures.py [tests/fixtures/formats] [CASE ...]

Each case takes one to two minutes here (pdm's the longest). The manifest each tool locked is kept in the case's SOURCE
file, not beside the lock, since every other file under tests/fixtures/formats is a dependency file the tests check.
Tool quirks met on the way: pdm 2.29.4 needs hishel 1.4 (its [locked] pin), pdm rewrites ``git+file:///p`` to
``git+file:/p`` (``file://localhost/p`` survives), pdm takes an editable only in a dev group, and the pdm and pipenv
venvs are separate because pdm[locked] pins a virtualenv that pipenv's range excludes; poetry 1.2.2 reads a non-poetry
pyproject.toml only by building it and then cannot read the metadata today's flit_core writes (2.4, beyond its
pkginfo 1.8), so its local projects are poetry-core ones, and it needs a keyring backend set (the null one); poetry
1.2's PyPI repository reads the JSON API, which is not reachable here, hence its default source is the index itself.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from glmcompat.edges.index import default_index_url

# one venv per tool; pdm 2.29.4 needs the hishel its [locked] extra pins (hishel 2.0 dropped SyncSqliteStorage);
# poetry 1.2.2 (the last lock-version 1.1 writer) with the dependencies of its day: --exclude-newer at its release
# month, but shellingham 1.5.0 (the one poetry 1.2.2's >=1.5 allowed then) is yanked, so shellingham is let newer
TOOLS = {"poetry": ["poetry==2.5.1"], "pdm": ["pdm==2.29.4", "hishel==1.4.0"], "pipenv": ["pipenv==2026.10.3"],
         "pip": ["pip==26.3"], "poetry18": ["poetry==1.8.5"],
         "poetry1": ["poetry==1.2.2", "--exclude-newer", "2022-11-15", "--exclude-newer-package", "shellingham=2023-11-01"]}
PYTHON = "3.11"
TORCH, TORCHVISION, XFORMERS, PYTEST, EINOPS = "2.5.1", "0.20.1", "0.0.28.post3", "8.3.3", "0.8.0"
FLASH = "2.7.4.post1"  # the version of the stand-in git project
KERNEL_MARKER = "sys_platform == 'linux'"


def _scrub(text: str, tmp: Path) -> str:
    text = text.replace(tmp.resolve().as_posix(), "/src").replace(tmp.as_posix(), "/src")
    # every host but github.com's (a git remote, not an index: pip freeze names the stand-in sglang clone's origin)
    return re.sub(r"https?://(?!github\.com/)[A-Za-z0-9.-]+(:\d+)?/", "https://index.invalid/", text)


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
    print("+", " ".join(cmd), f"(in {cwd.name})", flush=True)
    subprocess.run(cmd, cwd=cwd, env=env, check=True)


def _tool(root: Path, name: str, env: dict[str, str]) -> Path:
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    venv = root / f"venv-{name}"
    _run([uv, "venv", "-q", "-p", PYTHON, str(venv)], root, env)
    _run([uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), *TOOLS[name]], root, env)
    return venv / "bin"


def _file_url(index: str, name: str, filename: str) -> str:
    """The URL of ``name``'s file ``filename``, as the index's simple API (PEP 691) lists it."""
    req = urllib.request.Request(f"{index.rstrip('/')}/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        files = json.load(resp)["files"]
    for f in files:
        if f["filename"] == filename:
            return str(f["url"]).split("#")[0]
    raise SystemExit(f"{name}: no {filename} on the index")


def _wheel_url(index: str, name: str, version: str) -> str:
    """The URL of ``name``'s pure-Python wheel at ``version``."""
    return _file_url(index, name, f"{name}-{version}-py3-none-any.whl")


def _git_repo(where: Path, tag: str, env: dict[str, str]) -> None:
    """Commit ``where`` as a git repository (fixed author and dates, so its commit is the same each run) and tag it."""
    genv = {**env, "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z",
            "GIT_AUTHOR_NAME": "glmcompat", "GIT_AUTHOR_EMAIL": "glmcompat@index.invalid",
            "GIT_COMMITTER_NAME": "glmcompat", "GIT_COMMITTER_EMAIL": "glmcompat@index.invalid"}
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "."], ["git", "commit", "-q", "-m", "stand-in"],
                ["git", "tag", tag]):
        _run(cmd, where, genv)


def _local_projects(root: Path, env: dict[str, str]) -> str:
    """A local editable project (glm-tools) and a local git repository standing in for flash-attention; its URL."""
    tools = root / "tools" / "glm-tools"
    tools.mkdir(parents=True)
    (tools / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["flit_core>=3.2"]\nbuild-backend = "flit_core.buildapi"\n\n'
        '[project]\nname = "glm-tools"\nversion = "0.1.0"\ndescription = "Helpers for serving GLM models"\n'
        'requires-python = ">=3.10"\n')
    (tools / "glm_tools.py").write_text('"""Helpers."""\n')
    dev = root / "tools" / "glm-devtools"  # pdm takes an editable only in a dev group
    dev.mkdir()
    (dev / "pyproject.toml").write_text((tools / "pyproject.toml").read_text().replace("glm-tools", "glm-devtools"))
    (dev / "glm_devtools.py").write_text('"""Helpers."""\n')
    git = root / "flash-attention"
    git.mkdir()
    (git / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["flit_core>=3.2"]\nbuild-backend = "flit_core.buildapi"\n\n'
        f'[project]\nname = "flash-attn"\nversion = "{FLASH}"\ndescription = "stand-in"\n'
        f'requires-python = ">=3.9"\ndependencies = ["einops", "torch"]\n')
    (git / "flash_attn.py").write_text('"""Stand-in."""\n')
    _git_repo(git, f"v{FLASH}", env)
    return f"git+file://{git.as_posix()}"


def poetry(bin_: Path, proj: Path, index: str, git: str, wheel: str, env: dict[str, str]) -> Path:
    (proj / "pyproject.toml").write_text(f"""\
[tool.poetry]
name = "glm-serve"
version = "0.1.0"
description = "a GLM serving stack"
authors = ["glmcompat"]
package-mode = false

[tool.poetry.dependencies]
python = ">=3.10,<3.13"
torch = {{ version = "{TORCH}", source = "pytorch" }}
torchvision = "{TORCHVISION}"
xformers = {{ version = "{XFORMERS}", markers = "{KERNEL_MARKER}" }}
glm-tools = {{ path = "../tools/glm-tools", develop = true }}
flash-attn = {{ git = "{git.removeprefix('git+')}", tag = "v{FLASH}", optional = true }}
einops = {{ url = "{wheel}", optional = true }}

[tool.poetry.extras]
flash = ["flash-attn", "einops"]

[tool.poetry.group.dev.dependencies]
pytest = "{PYTEST}"

[[tool.poetry.source]]
name = "pytorch"
url = "{index}"
priority = "explicit"
""")
    _run([str(bin_ / "poetry"), "lock", "--no-interaction"], proj, env)
    return proj / "poetry.lock"


def poetry_extra_torch(bin_: Path, proj: Path, index: str, git: str, wheel: str, env: dict[str, str]) -> Path:
    """torch only through an extra's optional package: ``[extras] vision = ["torchvision"]``, torch declared nowhere
    (poetry marks it optional too, and the extra's table names torchvision alone)."""
    (proj / "pyproject.toml").write_text(f"""\
[tool.poetry]
name = "glm-vision"
version = "0.1.0"
description = "torch arrives only through an extra"
authors = ["glmcompat"]
package-mode = false

[tool.poetry.dependencies]
python = ">=3.10,<3.13"
einops = "{EINOPS}"
torchvision = {{ version = "{TORCHVISION}", optional = true }}

[tool.poetry.extras]
vision = ["torchvision"]
""")
    _run([str(bin_ / "poetry"), "lock", "--no-interaction"], proj, env)
    return proj / "poetry.lock"


KEYRING = {"PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}  # poetry 1.2 asks the keyring otherwise
XFORMERS_WHEEL = f"xformers-{XFORMERS}-cp311-cp311-manylinux_2_28_x86_64.whl"  # 15 MB, downloaded by poetry 1.2


def _poetry_core_project(where: Path, name: str, version: str, description: str, deps: str = "") -> None:
    """A poetry-core project (poetry 1.2 reads its pyproject.toml as is; a PEP 621 one it must build, and the metadata
    today's flit_core writes (2.4) is beyond the pkginfo poetry 1.2 reads it with)."""
    where.mkdir(parents=True)
    module = name.replace("-", "_")
    (where / "pyproject.toml").write_text(
        f'[tool.poetry]\nname = "{name}"\nversion = "{version}"\ndescription = "{description}"\n'
        f'authors = ["glmcompat"]\npackages = [{{ include = "{module}.py" }}]\n\n'
        f'[tool.poetry.dependencies]\npython = ">=3.8"\n{deps}\n'
        '[build-system]\nrequires = ["poetry-core>=1.0.0"]\nbuild-backend = "poetry.core.masonry.api"\n')
    (where / f"{module}.py").write_text('"""Stand-in."""\n')


def _poetry1_projects(root: Path, bin_: Path, env: dict[str, str]) -> tuple[Path, str]:
    """poetry 1.2's local sources: a project directory (DeepGEMM stand-in), an sdist of glm-tools 0.2.0 that poetry
    1.2 builds (``poetry build -f sdist``) and a git repository standing in for flash-attention; the sdist and the
    repository's URL."""
    _poetry_core_project(root / "vendor" / "DeepGEMM", "deep-gemm", "1.0.0",
                         "DeepGEMM: clean and efficient FP8 GEMM kernels")
    tools = root / "sdist" / "glm-tools"
    _poetry_core_project(tools, "glm-tools", "0.2.0", "Helpers for serving GLM models")
    for f in tools.iterdir():  # poetry-core 1.3 stores the files' mtimes: fixed ones give the same sdist each run
        os.utime(f, (1735689600, 1735689600))
    _run([str(bin_ / "poetry"), "build", "-f", "sdist", "--no-interaction"], tools, {**env, **KEYRING})
    git = root / "flash-attention-1"
    _poetry_core_project(git, "flash-attn", "2.5.8", "Flash Attention: Fast and Memory-Efficient Exact Attention",
                         'einops = "*"\ntorch = "*"\n')
    _git_repo(git, "v2.5.8", env)
    return tools / "dist" / "glm_tools-0.2.0.tar.gz", f"git+file://{git.as_posix()}"


def poetry_sources(bin_: Path, proj: Path, index: str, git: str, wheel: str, env: dict[str, str]) -> Path:
    """poetry 1.2.2 writing lock-version 1.1: a directory (develop), a file (sdist), a url (wheel), a git project, a
    default legacy source (the index, as a mirror) and a second, secondary one that torch and torchvision name,
    extras and a dev group. The default source is the index rather than poetry's PyPI repository because that one
    reads the index's JSON API, which is not reachable here (only the simple API is): so the lock is the same
    wherever it is recorded. poetry 1.2 reads a legacy source's metadata by downloading one wheel of each package
    (no PEP 658): the run downloads some GB (torch, triton, the nvidia-* wheels) into a temporary directory."""
    sdist, git = _poetry1_projects(proj.parent, bin_, env)
    xformers = _file_url(index, "xformers", XFORMERS_WHEEL)
    (proj / "pyproject.toml").write_text(f"""\
[tool.poetry]
name = "glm-serve"
version = "0.1.0"
description = "a GLM serving stack"
authors = ["glmcompat"]

[tool.poetry.dependencies]
python = ">=3.10,<3.12"
torch = {{ version = "{TORCH}", source = "pytorch" }}
torchvision = {{ version = "{TORCHVISION}", source = "pytorch" }}
xformers = {{ url = "{xformers}", markers = "{KERNEL_MARKER}" }}
deep-gemm = {{ path = "../vendor/DeepGEMM", develop = true }}
glm-tools = {{ path = "../sdist/glm-tools/dist/{sdist.name}" }}
flash-attn = {{ git = "{git.removeprefix('git+')}", tag = "v2.5.8", optional = true }}
einops = {{ version = "{EINOPS}", optional = true }}

[tool.poetry.extras]
flash = ["flash-attn", "einops"]

[tool.poetry.group.dev.dependencies]
pytest = "{PYTEST}"

[[tool.poetry.source]]
name = "mirror"
url = "{index}"
default = true

[[tool.poetry.source]]
name = "pytorch"
url = "{index}"
secondary = true
""")
    _run([str(bin_ / "poetry"), "lock", "--no-interaction"], proj, {**env, **KEYRING})
    return proj / "poetry.lock"


# pdm 2.29 rewrites git+file:///p to git+file:/p, which git reads as the host "file"; file://localhost/p it keeps
def pdm(bin_: Path, proj: Path, index: str, git: str, wheel: str, env: dict[str, str]) -> Path:
    (proj / "pyproject.toml").write_text(f"""\
[project]
name = "glm-serve"
version = "0.1.0"
requires-python = ">=3.10,<3.13"
dependencies = [
    "torch=={TORCH}",
    "torchvision=={TORCHVISION}",
    "xformers=={XFORMERS}; {KERNEL_MARKER}",
    "glm-tools @ file:///${{PROJECT_ROOT}}/../tools/glm-tools",
    "uvicorn[standard]==0.32.0",
]

[project.optional-dependencies]
flash = ["flash-attn @ {git.replace('file:///', 'file://localhost/')}@v{FLASH}", "einops @ {wheel}"]

[tool.pdm]
distribution = false

[tool.pdm.dev-dependencies]
dev = ["pytest=={PYTEST}", "-e file:///${{PROJECT_ROOT}}/../tools/glm-devtools"]

[[tool.pdm.source]]
name = "pytorch"
url = "{index}"
include_packages = ["torch"]
""")
    _run([str(bin_ / "pdm"), "lock", "-G", ":all"], proj, {**env, "PDM_PYPI_URL": index, "PDM_CHECK_UPDATE": "false"})
    return proj / "pdm.lock"


def pipenv(bin_: Path, proj: Path, index: str, git: str, wheel: str, env: dict[str, str]) -> Path:
    (proj / "Pipfile").write_text(f"""\
[[source]]
url = "{index}"
verify_ssl = true
name = "pypi"

[[source]]
url = "{index}"
verify_ssl = true
name = "pytorch"

[packages]
torch = {{ version = "=={TORCH}", index = "pytorch" }}
torchvision = "=={TORCHVISION}"
xformers = {{ version = "=={XFORMERS}", markers = "{KERNEL_MARKER}" }}
glm-tools = {{ path = "../tools/glm-tools", editable = true }}
flash-attn = {{ git = "{git.removeprefix('git+')}", ref = "v{FLASH}" }}
einops = {{ file = "{wheel}" }}

[dev-packages]
pytest = "=={PYTEST}"

[requires]
python_version = "{PYTHON}"
""")
    _run([str(bin_ / "pipenv"), "lock"], proj, {**env, "PIPENV_VENV_IN_PROJECT": "1", "PIPENV_YES": "1",
                                                  "PIPENV_NOSPIN": "1", "PIPENV_IGNORE_VIRTUALENVS": "1"})
    return proj / "Pipfile.lock"


# what `pip freeze` lists in a CUDA serving venv: the real wheels, installed with --no-deps (torch's 888 MB and
# sgl-kernel's 554 MB among them; PyPI's torch 2.8.0 is the CUDA 12.8 build, without the +cu128 that the PyTorch index's
# copy carries); flashinfer-python 0.5.2, because 0.4.1 is only an sdist whose build requires apache-tvm-ffi==0.1.0b15,
# a version the index no longer lists
FREEZE = ["accelerate==1.10.1", "aiohttp==3.12.15", "flashinfer-python==0.5.2", "nvidia-cuda-runtime-cu12==12.8.90",
          "sgl-kernel==0.3.16.post3", "torch==2.8.0", "torchaudio==2.8.0", "torchvision==0.23.0", "transformers==4.57.1"]
SGLANG_ORIGIN = "https://github.com/sgl-project/sglang.git"  # the stand-in clone's origin (pip freeze names it)


def pip_freeze(bin_: Path, proj: Path, index: str, git: str, wheel: str, env: dict[str, str]) -> Path:
    """``pip freeze`` of a venv that the real pip filled (``--no-deps``): index pins, an editable project in a git
    repository without a remote, an editable project in a subdirectory of a clone (a stand-in for sglang whose origin
    is sglang's), and a local directory installed as is."""
    root = proj.parent
    serve = root / "glm-serve"
    serve.mkdir()
    (serve / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["flit_core>=3.2"]\nbuild-backend = "flit_core.buildapi"\n\n'
        '[project]\nname = "glm-serve"\nversion = "0.1.0"\ndescription = "a GLM serving stack"\n')
    (serve / "glm_serve.py").write_text('"""Stand-in."""\n')
    _git_repo(serve, "v0.1.0", env)
    sglang = root / "sglang"
    (sglang / "python").mkdir(parents=True)
    (sglang / "python" / "pyproject.toml").write_text((serve / "pyproject.toml").read_text()
                                                      .replace("glm-serve", "sglang").replace("0.1.0", "0.5.4"))
    (sglang / "python" / "sglang.py").write_text('"""Stand-in."""\n')
    _git_repo(sglang, "v0.5.4", env)
    _run(["git", "remote", "add", "origin", SGLANG_ORIGIN], sglang, env)
    mypkg = root / "mypkg"
    mypkg.mkdir()
    (mypkg / "pyproject.toml").write_text((serve / "pyproject.toml").read_text().replace("glm-serve", "mypkg"))
    (mypkg / "mypkg.py").write_text('"""Stand-in."""\n')
    pip = [str(bin_ / "pip"), "--no-cache-dir", "--disable-pip-version-check"]
    installs = [["install", "-q", "--no-deps", "--no-compile", *FREEZE],
                ["install", "-q", "--no-deps", "-e", str(serve)], ["install", "-q", "--no-deps", "-e", str(sglang / "python")],
                ["install", "-q", "--no-deps", str(mypkg)]]
    for args in installs:
        _run([*pip, *args], proj, env)
    (proj / "install.txt").write_text("".join(f"pip {' '.join(a)}\n" for a in installs))
    frozen = subprocess.run([*pip, "freeze"], cwd=proj, env=env, capture_output=True, text=True, check=True).stdout
    (proj / "requirements.txt").write_text(frozen)
    return proj / "requirements.txt"


@dataclass(frozen=True)
class Case:
    """One recorded fixture: the tool (a TOOLS key) and its command, the manifest it locks, and how."""

    tool: str
    exe: str
    manifest: str
    lock: Callable[[Path, Path, str, str, str, dict[str, str]], Path]
    did: str = "locked this"


RECORDERS = {"poetry": Case("poetry", "poetry", "pyproject.toml", poetry),
             "pdm": Case("pdm", "pdm", "pyproject.toml", pdm),
             "pipenv": Case("pipenv", "pipenv", "Pipfile", pipenv),
             "poetry-sources": Case("poetry1", "poetry", "pyproject.toml", poetry_sources),
             # the same project as "poetry", in poetry 1.8's lock-version 2.0 (no category, no groups yet)
             "poetry-1.8": Case("poetry18", "poetry", "pyproject.toml", poetry),
             "pip-freeze": Case("pip", "pip", "install.txt", pip_freeze, "froze the venv it filled with"),
             # torch only through an extra's optional torchvision (issue 36)
             "poetry-extra-torch": Case("poetry", "poetry", "pyproject.toml", poetry_extra_torch)}


def record(out: Path, only: list[str]) -> None:
    index = default_index_url()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "UV_", "POETRY_", "PDM_", "PIPENV_")) and k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    env["UV_PYTHON_DOWNLOADS"] = "never"
    with tempfile.TemporaryDirectory(prefix="glmcompat-formats-") as d:
        root = Path(d)
        env.update({"HOME": str(root / "home"), "XDG_CACHE_HOME": str(root / "cache"),
                    "XDG_CONFIG_HOME": str(root / "config"), "PIP_INDEX_URL": index})
        git = _local_projects(root, env)
        wheel = _wheel_url(index, "einops", EINOPS)
        for name in only or list(RECORDERS):
            proj = root / name
            proj.mkdir()
            case = RECORDERS[name]
            bin_ = _tool(root, case.tool, env)
            lock = case.lock(bin_, proj, index, git, wheel, env)
            dest = out / name
            dest.mkdir(parents=True, exist_ok=True)
            manifest = case.manifest
            (dest / lock.name).write_text(_scrub(lock.read_text(), root))
            version = subprocess.run([str(bin_ / case.exe), "--version"], env=env, capture_output=True, text=True,
                                     check=True).stdout.strip().split(" from ")[0]  # pip names its own path
            # the manifest goes into SOURCE, not beside the lock: every file there is a dependency file the tests check
            (dest / "SOURCE").write_text(
                f"recorded by scripts/record_format_fixtures.py: {version} {case.did} {manifest} "
                f"(index hosts -> index.invalid, temporary directory -> /src)\n\n"
                + _scrub((proj / manifest).read_text(), root))
            print(f"recorded {dest}", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] in (["-h"], ["--help"]):
        print(f"{__doc__}\ncases: {', '.join(RECORDERS)}")
        raise SystemExit(0)
    unknown = [a for a in args[1:] if a not in RECORDERS] + [a for a in args[:1] if a.startswith("-")]
    if unknown:  # a misspelt case or option: say so before anything is installed or written
        raise SystemExit(f"unknown case {unknown[0]!r} (cases: {', '.join(RECORDERS)})")
    target = Path(args.pop(0)) if args and args[0] not in RECORDERS else Path("tests/fixtures/formats")
    record(target, args)

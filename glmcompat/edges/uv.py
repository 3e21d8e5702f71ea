"""The real uv binary, driven as a subprocess: found beside this interpreter or on PATH, given this
interpreter (``UV_PYTHON``) and no Python downloads, its failures turned into one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys

from glmcompat.model.errors import EnvironmentFailure

TYPE_CHECKING = False  # not typing's: a cold lock reads this module before it starts uv
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

# The name of uv's configuration file, at each level it is looked for (https://docs.astral.sh/uv/concepts/configuration-files/).
CONFIG_NAME = "uv.toml"
SYSTEM_CONFIG = "/etc/uv/uv.toml"  # the system level after each $XDG_CONFIG_DIRS/uv/uv.toml
# uv's Python version files, .python-version first (https://docs.astral.sh/uv/concepts/python-versions/#python-version-files;
# crates/uv-python/src/version_files.rs: PYTHON_VERSION_FILENAME, PYTHON_VERSIONS_FILENAME).
VERSION_FILES = (".python-version", ".python-versions")


def user_config_dir(environ: Mapping[str, str]) -> str:
    """uv's user-level configuration directory: ``$XDG_CONFIG_HOME/uv``, else ``~/.config/uv``
    (https://docs.astral.sh/uv/reference/storage/#configuration-directories)."""
    home = environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "uv")


def config_files(environ: Mapping[str, str] | None = None) -> list[str]:
    """The user- and system-level configuration files uv takes settings from, highest precedence first
    (https://docs.astral.sh/uv/concepts/configuration-files/): ``UV_CONFIG_FILE`` alone where it is set (it replaces
    discovery), none under ``UV_NO_CONFIG``, else ``$XDG_CONFIG_HOME/uv/uv.toml`` (``~/.config/uv/uv.toml``), then
    ``uv/uv.toml`` in each of ``$XDG_CONFIG_DIRS`` (``/etc/xdg``), then ``/etc/uv/uv.toml`` (of the system files, uv
    uses the first it finds). Whether or not each exists."""
    env = os.environ if environ is None else environ
    if env.get("UV_CONFIG_FILE"):
        return [os.path.abspath(env["UV_CONFIG_FILE"])]
    if env.get("UV_NO_CONFIG"):
        return []
    files = [os.path.join(user_config_dir(env), CONFIG_NAME)]
    files += [os.path.join(d, "uv", CONFIG_NAME) for d in (env.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep) if d]
    files.append(SYSTEM_CONFIG)
    return files


def reads(project: str | None = None, members: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> list[str]:
    """Every file ``uv lock`` and ``uv export`` read, run in the directory ``project`` (None: a directory of
    glmcompat's own, which holds only what glmcompat wrote there, a pyproject.toml with a ``[tool.uv]`` table, so uv
    looks in no directory above it) with the environment ``environ`` (default this
    process's), whether or not each exists (one appearing changes uv's answer): the one declaration of what uv
    reads that glmcompat's records of a no-op run (:mod:`glmcompat.ops.projectlock`, :mod:`glmcompat.cli.fastlock`)
    name as inputs, since no audit hook sees what a subprocess reads.

    Absolute paths, sorted, from uv's configuration-file discovery
    (https://docs.astral.sh/uv/concepts/configuration-files/):

    * the project: ``pyproject.toml``, ``uv.toml`` and ``uv.lock`` in ``project`` (the workspace root) and each
      member's pyproject.toml (``members``); uv takes ``[tool.uv]`` from the nearest ``uv.toml`` or
      ``pyproject.toml`` with such a table, searching the parent directories too: each parent's ``uv.toml`` and
      ``pyproject.toml``;
    * the user level: ``$XDG_CONFIG_HOME/uv/uv.toml``, else ``~/.config/uv/uv.toml``;
    * the system level: ``uv/uv.toml`` in each of ``$XDG_CONFIG_DIRS`` (default ``/etc/xdg``), then
      ``/etc/uv/uv.toml``;
    * ``UV_CONFIG_FILE``, which replaces the user and system files (they are named all the same, and under
      ``UV_NO_CONFIG`` too: naming a file uv does not read costs a replay a miss, never a stale answer);
    * the Python version files (``.python-version``, then ``.python-versions``) where no interpreter is asked for
      (``UV_PYTHON`` unset; uv's ``--python``), from which uv takes the interpreter a project command runs with
      (https://docs.astral.sh/uv/concepts/python-versions/#python-version-files): the working directory and its
      parents up to the project or workspace root (uv runs in ``project``, the workspace root: that directory
      alone), else the user-level configuration directory (:func:`user_config_dir`); named under ``UV_NO_CONFIG``
      too, which makes uv ignore them.

    :func:`config_files` is the user and system files as uv takes them, in its order.

    The rest of what uv reads is its environment (``UV_*``), which each record keys on whole."""
    env = os.environ if environ is None else environ
    discovered = {k: v for k, v in env.items() if k not in ("UV_CONFIG_FILE", "UV_NO_CONFIG")}
    files = config_files(discovered) + config_files(env)
    asks_python = bool(env.get("UV_PYTHON"))  # a request: uv reads no version file
    if not asks_python:
        files += [os.path.join(user_config_dir(env), name) for name in VERSION_FILES]
    if project is not None:
        root = os.path.abspath(project)
        files += [os.path.join(root, "pyproject.toml"), os.path.join(root, CONFIG_NAME), os.path.join(root, "uv.lock")]
        if not asks_python:
            files += [os.path.join(root, name) for name in VERSION_FILES]
        files += list(members)
        parent = os.path.dirname(root)
        while True:
            files += [os.path.join(parent, "pyproject.toml"), os.path.join(parent, CONFIG_NAME)]
            up = os.path.dirname(parent)
            if up == parent:
                break
            parent = up
    return sorted({os.path.abspath(f) for f in files})


def uv_binary() -> str:
    """The uv binary shipped with the ``uv`` package (beside this interpreter), else uv on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "uv")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    try:
        from uv import find_uv_bin  # lazy: optional uv package

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        pass
    import shutil  # lazy: start-up path (ops.speculate imports this module)

    found = shutil.which("uv")
    if not found:
        raise EnvironmentFailure("uv is not installed (pip install uv)")
    return found


def uv_env(requires_python: str | None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """uv's environment: no interpreter downloads, no source builds (``UV_NO_BUILD``: locking and exporting
    never run a package's build code), and this interpreter when it fits requires-python (uv then skips
    interpreter discovery, which costs more than the warm lock itself). ``extra``: the command line's options for
    uv (:meth:`glmcompat.edges.index.IndexOptions.uv_env`); a ``UV_DEFAULT_INDEX`` there drops the legacy
    ``UV_INDEX_URL``."""
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": os.environ.get("UV_PYTHON_DOWNLOADS", "never"),
           "UV_NO_BUILD": os.environ.get("UV_NO_BUILD", "1")}
    if extra:
        if "UV_DEFAULT_INDEX" in extra:
            env.pop("UV_INDEX_URL", None)
        env.update(extra)
    if requires_python and "UV_PYTHON" not in os.environ:
        fits = plain_fits(requires_python, sys.version_info[:3])
        if fits is None:
            from packaging.specifiers import (  # lazy: start-up path (ops.speculate imports this module)
                InvalidSpecifier,
                SpecifierSet,
            )

            try:
                fits = SpecifierSet(requires_python.replace(" ", "")).contains(".".join(map(str, sys.version_info[:3])))
            except InvalidSpecifier:
                fits = False  # uv names the bad value
        if fits:
            env["UV_PYTHON"] = sys.executable
    return env


def plain_fits(spec: str, release: tuple[int, ...]) -> bool | None:
    """Whether the final release ``release`` (``(3, 11, 7)``) satisfies ``spec`` when each of its clauses is
    ``>=``, ``>``, ``<=``, ``<``, ``==`` or ``!=`` with a plain release (``==``/``!=`` also with ``.*``), as a
    ``requires-python`` nearly always is: PEP 440's answer for a final release, without importing packaging
    (which costs a cold lock's speculative uv about 8 ms). None for anything else: packaging decides."""
    ok = True
    for clause in spec.replace(" ", "").split(","):
        op = next((o for o in (">=", "<=", "==", "!=", ">", "<") if clause.startswith(o)), None)
        if op is None:
            return None
        text = clause[len(op):]
        wildcard = text.endswith(".*") and op in ("==", "!=")
        parts = (text[:-2] if wildcard else text).split(".")
        if not all(p.isascii() and p.isdigit() for p in parts):
            return None  # a pre-release, an epoch, a local label, ~=, ===, a typo
        want = tuple(int(p) for p in parts)
        if wildcard:
            n = len(want)
            same = (release + (0,) * n)[:n] == want
            ok &= same if op == "==" else not same
            continue
        n = max(len(want), len(release))
        a, b = release + (0,) * (n - len(release)), want + (0,) * (n - len(want))
        ok &= {">=": a >= b, "<=": a <= b, "==": a == b, "!=": a != b, ">": a > b, "<": a < b}[op]
    return ok



def run_uv(args: list[str], cwd: Path, requires_python: str | None = None,
           extra_env: Mapping[str, str] | None = None) -> None:
    run_uv_all([args], cwd, requires_python, extra_env)


def run_uv_all(commands: list[list[str]], cwd: Path, requires_python: str | None = None,
               extra_env: Mapping[str, str] | None = None) -> None:
    """Run uv once per argument list, side by side, in ``cwd``; the first that fails (in the given order) is
    the one-line error, after all have ended. ``extra_env``: see :func:`uv_env`."""
    env = uv_env(requires_python, extra_env)
    procs: list[tuple[list[str], subprocess.Popen[str]]] = []
    try:
        for args in commands:
            procs.append((args, subprocess.Popen([uv_binary(), *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                                                 stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)))
    except OSError as e:
        for _, p in procs:
            p.kill()
            p.communicate()
        raise EnvironmentFailure(f"cannot run uv: {e.strerror}") from None
    results = [(args, p, *p.communicate()) for args, p in procs]
    for args, p, out, err in results:
        if p.returncode != 0:
            tail = " ".join((err or out).strip().splitlines()[-3:])
            raise EnvironmentFailure(f"`uv {' '.join(args)}` failed (exit {p.returncode}): {tail}")

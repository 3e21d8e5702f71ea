"""A live Python environment and the real installer that changes it: finding the environment as uv does
(``--python``, else ``VIRTUAL_ENV``, else a ``.venv`` in the working directory or one above it), asking its
interpreter where its site-packages are, asking uv (``uv pip install --dry-run``) or, where uv is absent, the
environment's pip (``pip install --dry-run --report -``) what an install would change, and running the install.

Nothing here decides anything: a :class:`Plan` is what the installer said it would do.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from glmcompat.edges.uv import uv_binary
from glmcompat.model.errors import EnvironmentFailure, GlmcompatError, InputError
from glmcompat.model.names import canonicalize

INSTALLERS = ("auto", "uv", "pip")
_TIMEOUT = 900.0  # an install of a real serving stack downloads gigabytes


@dataclass(frozen=True)
class Interpreter:
    """An environment's interpreter: its ``python`` (the path given to the installer), ``prefix``,
    ``version`` (``3.11.7``) and the site directories it imports distributions from, in ``sys.path`` order."""

    python: str
    prefix: str
    version: str
    sites: tuple[str, ...]
    found_by: str  # "--python", "VIRTUAL_ENV", ".venv"


@dataclass(frozen=True, order=True)
class Change:
    """One distribution the plan changes: ``old`` None = newly installed, ``new`` None = removed."""

    name: str
    old: str | None
    new: str | None
    direct: bool = False  # the new release comes from a URL or a path, not an index: no version pin names it

    def shown(self) -> str:
        if self.old is None:
            return f"+ {self.name}=={self.new}"
        if self.new is None:
            return f"- {self.name}=={self.old}"
        if self.old == self.new:
            return f"~ {self.name}=={self.new}"
        return f"~ {self.name} {self.old} -> {self.new}"


@dataclass(frozen=True)
class Plan:
    """What the installer would do (sorted by name), and which installer said so."""

    installer: str
    changes: tuple[Change, ...]

    def apply(self, packages: Mapping[str, str]) -> dict[str, str]:
        """``packages`` (name -> version) as the plan would leave them."""
        out = dict(packages)
        for c in self.changes:
            if c.new is None:
                out.pop(c.name, None)
            else:
                out[c.name] = c.new
        return dict(sorted(out.items()))


class InstallerFailed(GlmcompatError):
    """The installer refused or failed; ``output`` is what it printed (passed through to the user as is).
    Exit 2 when it could not resolve the request (exit 1 from uv and pip), else 3."""

    def __init__(self, installer: str, returncode: int, output: str) -> None:
        self.installer = installer
        self.returncode = returncode
        self.output = output
        self.exit_code = 2 if returncode == 1 else 3
        self.changed: tuple[Change, ...] | None = None  # after a failed install: what it changed (None: not read)
        tail = " ".join(output.strip().splitlines()[-2:]) or "no output"
        super().__init__(f"{installer} failed (exit {returncode}): {tail}")


# -- the environment ------------------------------------------------------------------------------


def _interpreter_in(directory: Path) -> Path | None:
    for rel in ("bin/python", "bin/python3", "Scripts/python.exe"):
        p = directory / rel
        if p.is_file() or p.is_symlink():
            return p
    return None


def find_interpreter(python: str | None, cwd: Path, environ: Mapping[str, str] | None = None) -> tuple[Path, str]:
    """(the interpreter, how it was found): ``python`` (an interpreter, a virtual environment's folder, or a
    name on PATH such as ``python3.11``), else ``$VIRTUAL_ENV``, else ``.venv`` in ``cwd`` or a folder above
    it, as ``uv pip install`` finds it. InputError (exit 2) when there is none."""
    env = os.environ if environ is None else environ
    if python is not None:
        p = Path(python).expanduser()
        if p.is_dir():
            found = _interpreter_in(p)
            if found is None:
                raise InputError(f"--python {python!r}: no interpreter in that folder (looked for bin/python)")
            return found, "--python"
        if p.exists():
            return p, "--python"
        if os.sep not in python:
            which = shutil.which(python, path=env.get("PATH"))
            if which:
                return Path(which), "--python"
        raise InputError(f"--python {python!r}: no such interpreter")
    venv = env.get("VIRTUAL_ENV")
    if venv:
        found = _interpreter_in(Path(venv))
        if found is None:
            raise InputError(f"VIRTUAL_ENV={venv!r}: no interpreter in it (looked for bin/python)")
        return found, "VIRTUAL_ENV"
    for d in (cwd, *cwd.parents):
        cand = d / ".venv"
        if cand.is_dir():
            found = _interpreter_in(cand)
            if found is not None:
                return found, ".venv"
    raise InputError("no virtual environment found (no --python, no VIRTUAL_ENV, no .venv here or above); "
                     "pass --python PATH")


_INSPECT = ("import json, sys, sysconfig\n"
            "paths = sysconfig.get_paths()\n"
            "sites = [paths['purelib'], paths['platlib']]\n"
            "print(json.dumps({'prefix': sys.prefix, 'version': '.'.join(map(str, sys.version_info[:3])),\n"
            "                  'sites': [p for p in sys.path if p in sites] + [p for p in sites if p not in sys.path]}))\n")


def child_env() -> dict[str, str]:
    """The environment the interpreter and the installer run in: this process's, without what would make the
    interpreter import glmcompat's own packages (``PYTHONPATH``, ``PYTHONHOME``) or point uv at another one."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "UV_PYTHON")}
    env.setdefault("UV_PYTHON_DOWNLOADS", "never")
    return env


def inspect(python: str | os.PathLike[str], found_by: str) -> Interpreter:
    """Ask the interpreter for its prefix, version and site directories (``-I``: neither this process's
    ``PYTHONPATH`` nor the user's site folder). EnvironmentFailure (exit 3) when it does not run."""
    path = os.fspath(python)
    try:
        r = subprocess.run([path, "-I", "-c", _INSPECT], capture_output=True, text=True, timeout=60,
                           env=child_env(), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise EnvironmentFailure(f"{path}: the interpreter did not answer within 60 s") from None
    except OSError as e:
        raise EnvironmentFailure(f"{path}: cannot run the interpreter ({e.strerror})") from None
    try:
        if r.returncode != 0:
            raise ValueError
        data = json.loads(r.stdout.strip().splitlines()[-1])
        sites = tuple(str(s) for s in data["sites"])
        info = Interpreter(path, str(data["prefix"]), str(data["version"]), sites, found_by)
    except (ValueError, KeyError, IndexError, TypeError):
        tail = " ".join((r.stderr or r.stdout).strip().splitlines()[-2:]) or f"exit {r.returncode}"
        raise EnvironmentFailure(f"{path}: a broken environment: its interpreter failed ({tail})") from None
    return info


# -- the installer ----------------------------------------------------------------------------------


def uv_path() -> str | None:
    """The uv binary (:func:`glmcompat.edges.uv.uv_binary`), or None where there is none."""
    try:
        return uv_binary()
    except EnvironmentFailure:
        return None


def has_pip(interp: Interpreter) -> bool:
    return any(os.path.isdir(os.path.join(s, "pip")) for s in interp.sites)


def choose(installer: str, interp: Interpreter) -> str:
    """``uv`` or ``pip`` for ``installer`` (``auto``: uv where it is installed, else the environment's pip)."""
    if installer == "uv" or (installer == "auto" and uv_path() is not None):
        if uv_path() is None:
            raise EnvironmentFailure("uv is not installed (pip install uv), and --installer uv asks for it")
        return "uv"
    if not has_pip(interp):
        if installer == "pip":
            raise EnvironmentFailure(f"--installer pip: pip is not installed in {interp.prefix} "
                                     f"({interp.python} -m ensurepip installs it)")
        raise EnvironmentFailure(f"{interp.python}: neither uv nor pip is there to install with "
                                 "(pip install uv, or python -m ensurepip)")
    return "pip"


def _argv(installer: str, interp: Interpreter, args: Sequence[str], constraints: Sequence[str],
          dry_run: bool) -> list[str]:
    cons = [a for c in constraints for a in ("-c", c)]
    if installer == "uv":
        binary = uv_path()
        assert binary is not None
        # the plan is read from uv's words: never coloured (FORCE_COLOR would colour them), whatever the terminal
        plan = ["--dry-run", "--color", "never"] if dry_run else []
        return [binary, "pip", "install", "--python", interp.python, *plan, *cons, *args]
    extra = ["--dry-run", "--report", "-", "--quiet"] if dry_run else []
    return [interp.python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", *extra, *cons, *args]


def _run(installer: str, argv: list[str], *, capture: bool) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=capture, text=True, timeout=_TIMEOUT, env=child_env(),
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise EnvironmentFailure(f"{installer} did not finish within {_TIMEOUT:.0f} s") from None
    except OSError as e:
        raise EnvironmentFailure(f"cannot run {installer}: {e.strerror}") from None


def env_constraints(installer: str) -> list[str]:
    """The constraints files the user's environment already names (``UV_CONSTRAINT`` for uv, ``PIP_CONSTRAINT``
    for pip, space-separated): an explicit ``-c`` would replace them, so they are passed along with it."""
    value = os.environ.get("UV_CONSTRAINT" if installer == "uv" else "PIP_CONSTRAINT", "")
    return value.split()


def plan(installer: str, interp: Interpreter, args: Sequence[str], constraints: Sequence[str],
         installed: Mapping[str, str]) -> Plan:
    """What ``installer`` would change, asked without changing anything. InstallerFailed when it refuses."""
    cons = [*env_constraints(installer), *constraints] if constraints else []
    r = _run(installer, _argv(installer, interp, args, cons, dry_run=True), capture=True)
    if r.returncode != 0:
        raise InstallerFailed(installer, r.returncode, (r.stderr or "") + (r.stdout or ""))
    if installer == "uv":
        text = _ANSI.sub("", r.stderr + "\n" + r.stdout)
        if not _UV_VERDICT.search(text):
            tail = " ".join(text.strip().splitlines()[-2:]) or "no output"
            raise EnvironmentFailure(f"cannot read uv's plan: no 'Would ...' line in its output ({tail}); "
                                     "do not pass -q to it")
        return Plan("uv", parse_uv_plan(text))
    return Plan("pip", parse_pip_report(r.stdout, installed))


def install(installer: str, interp: Interpreter, args: Sequence[str], constraints: Sequence[str]) -> None:
    """Run the install for real; its output goes to the terminal (stderr for uv, as uv writes it)."""
    cons = [*env_constraints(installer), *constraints] if constraints else []
    r = _run(installer, _argv(installer, interp, args, cons, dry_run=False), capture=True)
    if sys.stderr is not None:  # None: the caller closed it
        sys.stderr.write(r.stderr or "")
        if installer == "pip" and r.stdout:
            sys.stderr.write(r.stdout)
    if r.returncode != 0:
        raise InstallerFailed(installer, r.returncode, (r.stderr or "") + (r.stdout or ""))


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_UV_VERDICT = re.compile(r"^Would (make no changes|install|uninstall|download)\b", re.M)


def parse_uv_plan(text: str) -> tuple[Change, ...]:
    """The changes in ``uv pip install --dry-run``'s output: its `` - name==version`` (removed), `` + name==version``
    (installed) and `` ~ name==version`` (reinstalled) lines, a ``(from URL)`` after the version allowed; a
    removal and an install of one name are one change."""
    removed: dict[str, str] = {}
    added: dict[str, str] = {}
    direct: set[str] = set()
    for line in text.splitlines():
        s = line.strip()
        if len(s) < 3 or s[0] not in "-+~" or s[1] != " ":
            continue
        spec, paren, _ = s[2:].partition(" (")
        name, sep, version = spec.strip().partition("==")
        if not sep or not name or not version or " " in name:
            continue
        key = canonicalize(name)
        if paren and s[0] != "-":
            direct.add(key)
        if s[0] == "-":
            removed[key] = version
        elif s[0] == "+":
            added[key] = version
        else:
            removed[key] = added[key] = version
    names = sorted(set(removed) | set(added))
    return tuple(Change(n, removed.get(n), added.get(n), n in direct) for n in names)


def parse_pip_report(text: str, installed: Mapping[str, str]) -> tuple[Change, ...]:
    """The changes in ``pip install --dry-run --report -``'s JSON (PEP-less, pip's installation report, version 1):
    each item of ``install`` replaces the installed release of its name, if any."""
    try:
        start = text.index("{")
        report = json.loads(text[start:])
        items = report["install"]
        found = [(canonicalize(str(i["metadata"]["name"])), str(i["metadata"]["version"]), bool(i.get("is_direct")))
                 for i in items]
    except (ValueError, KeyError, TypeError, AttributeError):
        raise EnvironmentFailure("pip's --report is not the installation report glmcompat reads "
                                 "(pip 22.2 or newer writes it)") from None
    return tuple(sorted(Change(n, installed.get(n), v, d) for n, v, d in found))


__all__ = ["INSTALLERS", "Change", "InstallerFailed", "Interpreter", "Plan", "choose", "find_interpreter", "inspect",
           "install", "parse_pip_report", "parse_uv_plan", "plan"]

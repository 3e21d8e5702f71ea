"""``glmcompat lock``: resolve the core, write a pyproject.toml, run the real ``uv lock``, check the
result, export host-free requirements.txt and pylock.toml — atomically, or not at all.

I/O lives here (the uv subprocess, the files); the decisions are in :mod:`glmcompat.resolver` and
:mod:`glmcompat.rules`. Warm runs stay close to a plain ``uv lock``: the resolution is memoized
(exclude-newer makes the index's answer for a stack immutable), and a stamp records the exact bytes
of the uv.lock that was checked and exported, so an unchanged lock is not checked or exported twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import EnvironmentFailure, InputError, UnsafeError
from .facts import Facts, atomic_write, cache_dir

ENVIRONMENT = "sys_platform == 'linux' and platform_machine == 'x86_64'"
OUTPUTS = ("pyproject.toml", "uv.lock", "requirements.txt", "pylock.toml")
STAMP = ".glmcompat-stamp"
RESOLUTION_FORMAT = 3


@dataclass(frozen=True)
class LockRequest:
    stack: str
    target: str
    model: str | None = None
    python: str | None = None
    with_: tuple[str, ...] = ()
    upgrade: bool = False


@dataclass
class Resolution:
    pins: dict[str, str]
    overrides: dict[str, str]  # package -> version overridden against an upstream pin
    override_reasons: dict[str, str]
    requires_python: str
    exclude_newer: str | None


def _python_spec(facts: Facts, req: LockRequest) -> tuple[str, str]:
    """(requires-python, the interpreter minor to evaluate markers with)."""
    stack = facts.stack(req.stack)
    if req.python:
        parts = req.python.split(".")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise InputError(f"--python: expected X.Y, got {req.python!r}")
        nxt = f"{parts[0]}.{int(parts[1]) + 1}"
        return f">={req.python},<{nxt}", req.python
    spec = stack.get("python") or ">=3.11,<3.13"
    low = spec.split(",")[0].lstrip(">=").strip()
    return spec, low


def resolution_key(facts: Facts, req: LockRequest) -> str:
    stack = facts.stack(req.stack)
    blob = json.dumps([RESOLUTION_FORMAT, facts.key, req.stack, facts.target(req.target)["name"], req.model, req.python,
                       sorted(req.with_), req.upgrade, stack.get("exclude_newer")], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def resolve_core(facts: Facts, req: LockRequest, *, quiet: bool = False, source: Any = None) -> Resolution:
    """Resolve (or recall) the core pins for ``req``. With the stack's exclude-newer set, the index's
    answer is fixed, so a recalled resolution is exactly what a fresh one would give."""
    stack = facts.stack(req.stack)
    tname = facts.target(req.target)["name"]
    if req.model:
        facts.model(req.model)
    requires_python, py = _python_spec(facts, req)
    memo = cache_dir() / "resolutions" / f"{resolution_key(facts, req)}.json"
    if source is None and stack.get("exclude_newer"):
        try:
            d = json.loads(memo.read_bytes())
            return Resolution(d["pins"], d["overrides"], d["override_reasons"], d["requires_python"], d["exclude_newer"])
        except (OSError, ValueError, KeyError):
            pass
    from .resolver import IndexSource, Request, resolve

    own_client = None
    if source is None:
        from .cache import Cache
        from .index import IndexClient

        own_client = IndexClient(cache=Cache())
        source = IndexSource(own_client, python=py, exclude_newer=stack.get("exclude_newer"))
        source = _Progress(source, quiet)
    try:
        outcome = resolve(facts, source, Request(req.stack, tname, req.model, req.with_, req.upgrade, py))
    finally:
        if isinstance(source, _Progress):
            source.done()
        if own_client is not None:
            own_client.close()
    overrides = {n: outcome.pins[n] for n in outcome.overridden if n in outcome.pins}
    res = Resolution(outcome.pins, overrides, outcome.overridden, requires_python, stack.get("exclude_newer"))
    if own_client is not None and stack.get("exclude_newer"):
        atomic_write(memo, json.dumps(res.__dict__, sort_keys=True).encode())
    return res


class _Progress:
    """A one-line progress display on a terminal (stderr); silent otherwise or with --quiet."""

    def __init__(self, inner: Any, quiet: bool) -> None:
        self.inner = inner
        self.show = not quiet and sys.stderr.isatty()
        self.pages = 0
        self.metas = 0

    def _tick(self, what: str) -> None:
        if self.show:
            sys.stderr.write(f"\r\033[2K  resolving the core: {self.pages} project page(s), {self.metas} METADATA read(s) — {what}")
            sys.stderr.flush()

    def versions(self, name: str) -> list[str]:
        self.pages += 1
        self._tick(name)
        return self.inner.versions(name)

    def requires(self, name: str, version: str) -> list[str]:
        self.metas += 1
        self._tick(f"{name} {version}")
        return self.inner.requires(name, version)

    def done(self) -> None:
        if self.show:
            sys.stderr.write("\r\033[2K")
            sys.stderr.flush()


def render_pyproject(facts: Facts, req: LockRequest, res: Resolution) -> str:
    """The generated pyproject.toml (deterministic: sorted, no timestamps beyond exclude-newer)."""
    tname = facts.target(req.target)["name"]
    name = f"{req.stack}-{tname}".replace(".", "-")
    pins = [f"{n}=={v}" for n, v in sorted(res.pins.items())]
    cmd = f"glmcompat lock --stack {req.stack} --target {tname}"
    if req.model:
        cmd += f" --model {req.model}"
    if req.python:
        cmd += f" --python {req.python}"
    for w in sorted(req.with_):
        cmd += f" --with '{w}'"
    if req.upgrade:
        cmd += " --upgrade"

    def arr(items: list[str]) -> str:
        return "[\n" + "".join(f'    "{x}",\n' for x in items) + "]" if items else "[]"

    lines = [
        f"# Generated by `{cmd}`: do not edit by hand.",
        "# The core pins were resolved against glmcompat's compatibility matrix (torch ABI, GPU code for the",
        "# target, CUDA runtime, model support); `uv lock` resolves everything else.",
        "[project]",
        f'name = "{name}"',
        'version = "0"',
        f'requires-python = "{res.requires_python}"',
        f"dependencies = {arr(pins)}",
        "",
        "[tool.uv]",
        f"constraint-dependencies = {arr(pins)}",
    ]
    if res.overrides:
        lines.append("# Deliberate overrides of upstream pins:")
        for n in sorted(res.overrides):
            lines.append(f"#   {res.override_reasons.get(n, '')}")
        lines.append(f"override-dependencies = {arr([f'{n}=={v}' for n, v in sorted(res.overrides.items())])}")
    if res.exclude_newer:
        lines.append(f'exclude-newer = "{res.exclude_newer}"')
    lines += [f'environments = ["{ENVIRONMENT}"]', "", "[tool.glmcompat]", f'stack = "{req.stack}"', f'targets = ["{tname}"]']
    if req.model:
        lines.append(f'model = "{req.model}"')
    return "\n".join(lines) + "\n"


def uv_binary() -> str:
    """The uv binary shipped with the ``uv`` package (beside this interpreter), else uv on PATH."""
    here = Path(sys.executable).with_name("uv")
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        pass
    found = shutil.which("uv")
    if not found:
        raise EnvironmentFailure("uv is not installed (pip install uv)")
    return found


def _uv_env(requires_python: str | None) -> dict[str, str]:
    """uv's environment: no interpreter downloads, and this interpreter when it fits requires-python
    (uv then skips interpreter discovery, which costs more than the warm lock itself)."""
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": os.environ.get("UV_PYTHON_DOWNLOADS", "never")}
    if requires_python and "UV_PYTHON" not in os.environ:
        from packaging.specifiers import SpecifierSet

        here = ".".join(map(str, sys.version_info[:3]))
        if SpecifierSet(requires_python.replace(" ", "")).contains(here):
            env["UV_PYTHON"] = sys.executable
    return env


def run_uv(args: list[str], cwd: Path, requires_python: str | None = None) -> None:
    env = _uv_env(requires_python)
    try:
        r = subprocess.run([uv_binary(), *args], cwd=cwd, env=env, capture_output=True, text=True)
    except OSError as e:
        raise EnvironmentFailure(f"cannot run uv: {e.strerror}") from None
    if r.returncode != 0:
        tail = " ".join((r.stderr or r.stdout).strip().splitlines()[-3:])
        raise EnvironmentFailure(f"`uv {' '.join(args)}` failed (exit {r.returncode}): {tail}")


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(hashlib.sha256(p).digest())
    return h.hexdigest()


def _stamp(facts: Facts, pyproject: bytes, uvlock: bytes, exports: list[bytes]) -> str:
    from . import __version__

    return json.dumps({"glmcompat": __version__, "matrix": facts.key, "inputs": _digest(pyproject, uvlock),
                       "outputs": _digest(*exports)}, sort_keys=True)


def _read(p: Path) -> bytes | None:
    try:
        return p.read_bytes()
    except OSError:
        return None


def lock(facts: Facts, req: LockRequest, out: Path, *, quiet: bool = False, check_only: bool = False,
         source: Any = None) -> dict[str, Any]:
    """Write (or, with ``check_only``, verify) the lock for ``req`` in ``out``. Returns a summary.

    ``source`` replaces the index as the resolver's source (tests pass a recorded one)."""
    res = resolve_core(facts, req, quiet=quiet, source=source)
    text = render_pyproject(facts, req, res).encode()
    tname = facts.target(req.target)["name"]
    summary = {"out": str(out), "target": tname, "pins": res.pins, "overrides": res.overrides}
    old = {n: _read(out / n) for n in OUTPUTS}
    stamp = _read(out / STAMP)
    if (not check_only and old["pyproject.toml"] == text and old["uv.lock"] is not None
            and all(old[n] is not None for n in OUTPUTS)):
        # Warm path: uv re-validates the lock in place; if it keeps the same bytes that were already
        # checked and exported (the stamp), there is nothing else to do.
        run_uv(["lock", "-q"], out, res.requires_python)
        now = _read(out / "uv.lock") or b""
        exports = [old["requirements.txt"] or b"", old["pylock.toml"] or b""]
        if now == old["uv.lock"] and stamp == _stamp(facts, text, now, exports).encode():
            summary["changed"] = []
            return summary
        if now != old["uv.lock"]:
            atomic_write(out / "uv.lock", old["uv.lock"] or b"")  # put it back until the new one is proven
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".glmcompat-lock-", dir=out.parent) as tmp:
        work = Path(tmp)
        (work / "pyproject.toml").write_bytes(text)
        if old["uv.lock"] is not None:
            (work / "uv.lock").write_bytes(old["uv.lock"])  # keeps unrelated pins stable, makes uv warm
        run_uv(["lock", "-q"], work, res.requires_python)
        from .rules import evaluate_lock
        from .lockfiles import read_lock

        found = evaluate_lock(read_lock(work / "uv.lock"), tname, req.model, facts, allow_unknown=False)
        errors = [f for f in found if f.severity == "error"]
        if errors:
            lines = "\n".join(f"  × {f.message}\n      hint: {f.remedy}" for f in errors)
            raise UnsafeError(f"uv's lock for {tname} fails the check; nothing was written:\n{lines}")
        run_uv(["export", "-q", "--format", "requirements.txt", "--no-emit-project", "-o", "requirements.txt"], work, res.requires_python)
        run_uv(["export", "-q", "--format", "pylock.toml", "--no-emit-project", "-o", "pylock.toml"], work, res.requires_python)
        new = {n: (work / n).read_bytes() for n in OUTPUTS}
        summary["warnings"] = [f.message for f in found if f.severity == "warning"]
        if check_only:
            stale = [n for n in ("pyproject.toml", "requirements.txt") if old[n] != new[n]]
            summary["stale"] = stale
            return summary
        out.mkdir(parents=True, exist_ok=True)
        changed = [n for n in OUTPUTS if old[n] != new[n]]
        for n in OUTPUTS:
            if old[n] != new[n]:
                os.replace(work / n, out / n)
        atomic_write(out / STAMP, _stamp(facts, new["pyproject.toml"], new["uv.lock"],
                                         [new["requirements.txt"], new["pylock.toml"]]).encode())
        summary["changed"] = changed
        return summary

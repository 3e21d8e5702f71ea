"""glmcompat's library API: what the command line does, as functions with keyword arguments and typed results.

Everything here is also importable from the package itself (``glmcompat.check``, ``glmcompat.Verdict``); the
documentation, with examples that run as tests, is docs/api.md.

* :func:`check` judges a dependency file (uv.lock, pylock.toml, a pinned requirements.txt, poetry.lock, pdm.lock,
  Pipfile.lock, a conda environment file, or a pyproject.toml's lock) for one or more GPU targets, offline;
* :func:`check_versions` judges a mapping of distribution names to versions;
* :func:`check_environment` judges an installed environment (this interpreter's, or another's);
* :func:`lock` locks a project (or compiles a requirements.in) as ``glmcompat lock`` does;
* :func:`resolve_core` resolves the safe core set (torch, its family, the kernels, the engine) for requirements;
* :func:`load_matrix` returns the curated matrix (:class:`Matrix`).

Results are typed: a :class:`Verdict` per target, holding :class:`Finding` objects; a :class:`CheckResult` for a
file; :class:`CoreResult`; :class:`ProjectLockResult`. Every error is a :class:`GlmcompatError`: an
:class:`InputError` for bad input (an unknown target, a version that is not one, a file that cannot be read), an
:class:`UnsafeError` when no safe set exists, an :class:`EnvironmentFailure` when the network, the file system or uv
failed, an :class:`InternalError` for a bug.
"""

from __future__ import annotations

import functools
import os
import platform as _platform
import site
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from packaging.requirements import InvalidRequirement
from packaging.specifiers import InvalidSpecifier
from packaging.version import InvalidVersion, Version

from glmcompat.decide import rules
from glmcompat.decide.plan import plan
from glmcompat.edges.index import client_for
from glmcompat.edges.installer import find_interpreter, inspect
from glmcompat.matrix.load import load_facts
from glmcompat.matrix.schema import Matrix as Matrix
from glmcompat.matrix.schema import load_matrix as _load_matrix
from glmcompat.matrix.view import Facts
from glmcompat.model.errors import EnvironmentFailure as EnvironmentFailure
from glmcompat.model.errors import GlmcompatError as GlmcompatError
from glmcompat.model.errors import InputError as InputError
from glmcompat.model.errors import InternalError as InternalError
from glmcompat.model.errors import LockFormatError as LockFormatError
from glmcompat.model.errors import MatrixError as MatrixError
from glmcompat.model.errors import UnsafeError as UnsafeError
from glmcompat.model.errors import NoTarget, classify, is_network_error
from glmcompat.model.findings import SEVERITIES as SEVERITIES
from glmcompat.model.findings import Finding as Finding
from glmcompat.model.machine import Machine as Machine
from glmcompat.model.machine import Provenance as Provenance
from glmcompat.model.public import PUBLIC
from glmcompat.model.platforms import check_platform, python_minor, target_platforms
from glmcompat.ops import checkfile as cf
from glmcompat.ops import projectlock as pl
from glmcompat.ops.projectlock import ProjectLockResult as ProjectLockResult
from glmcompat.readers.formats import read_lock
from glmcompat.readers.installed import read_environment

if TYPE_CHECKING:
    from glmcompat.decide.resolver import Source
    from glmcompat.readers.formats.common import Lock

# The public names are declared once (glmcompat.model.public, which the package root names lazily); this module
# defines or re-exports each of them (the imports above say ``X as X``: an explicit re-export, whatever a checker
# makes of ``__all__``).
__all__ = [name for name in PUBLIC if name != "__version__"]

_F = TypeVar("_F", bound=Callable[..., Any])

MatrixLike = Any  # a Matrix (load_matrix), glmcompat's internal Facts view, or None for the shipped matrix


def _typed_errors(fn: _F) -> _F:
    """``fn`` raising only :class:`GlmcompatError`: an error glmcompat raised on purpose passes as it is; the network,
    the file system and memory become :class:`EnvironmentFailure`, a malformed version, specifier or requirement an
    :class:`InputError`, anything else an :class:`InternalError` (a bug), each with the line the CLI would print and
    the original as ``__cause__``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except GlmcompatError:
            raise
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as e:
            raise _typed(e) from e

    return wrapper  # type: ignore[return-value]


def _typed(e: BaseException) -> GlmcompatError:
    if isinstance(e, InvalidVersion | InvalidSpecifier | InvalidRequirement):
        return InputError(str(e))
    code, line = classify(e)
    if is_network_error(e) or isinstance(e, OSError | MemoryError):
        return EnvironmentFailure(line)
    return InternalError(line) if code == InternalError.exit_code else InputError(line)


# ------------------------------------------------------------------------------------------------
# Results
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """The verdict on one set of packages for one GPU target: its findings (errors first), and where it is unsafe,
    one consistent safe set of the core (``safe_set``: name -> version, None for a package it removes or replaces by
    another name) that the remedy pins."""

    target: str  # the target's canonical name (``sm120``)
    findings: tuple[Finding, ...] = ()
    path: str | None = None  # the file judged (None: a mapping or an environment)
    model: str | None = None
    platforms: tuple[str, ...] = ()  # the machines whose environments were judged
    safe_set: Mapping[str, str | None] | None = None

    @property
    def ok(self) -> bool:
        """Whether the stack is safe on the target: no finding is an error (warnings allowed)."""
        return not self.errors

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "warning")

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "path": self.path, "model": self.model, "ok": self.ok,
                "platforms": list(self.platforms), "safe_set": dict(self.safe_set) if self.safe_set else None,
                "findings": [f.to_json() for f in self.findings]}


@dataclass(frozen=True)
class CheckResult:
    """The verdicts on one dependency file, one per target; ``kind`` is the file's format (``uv.lock``, ...)."""

    path: str
    kind: str
    verdicts: tuple[Verdict, ...]
    environments: int = 1  # how many environments the file installs (uv.lock: one per extra, Python, machine ...)
    notes: tuple[str, ...] = ()  # what the reader noted about the file (unpinned lines it skipped ...)

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.verdicts)

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every finding of every target's verdict (a finding that holds on two targets appears twice)."""
        return tuple(f for v in self.verdicts for f in v.findings)

    def verdict(self, target: str) -> Verdict:
        """The verdict for ``target`` (``sm120``, or a name of it such as ``rtx5090``)."""
        name = load_facts().target(target).name
        for v in self.verdicts:
            if v.target == name:
                return v
        raise InputError(f"{self.path} was not checked for {name} (checked: {', '.join(v.target for v in self.verdicts)})")


@dataclass(frozen=True)
class CoreResult:
    """A resolved core: ``pins`` (name -> version), the engine pins it overrides (``overrides``, with the reason in
    ``override_reasons``), for ``targets`` on ``platform`` and CPython ``python``."""

    pins: Mapping[str, str]
    targets: tuple[str, ...]
    platform: str
    python: str
    overrides: Mapping[str, str] = field(default_factory=dict)
    override_reasons: Mapping[str, str] = field(default_factory=dict)

    def requirements(self) -> list[str]:
        """The pins as ``name==version`` lines (what a constraints file holds)."""
        return [f"{n}=={v}" for n, v in sorted(self.pins.items())]


# ------------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------------


def _facts(matrix: MatrixLike) -> Any:
    if matrix is None:
        return load_facts()
    if isinstance(matrix, Facts):
        return matrix
    view = getattr(matrix, "view", None)
    if callable(view):
        return view()
    if isinstance(matrix, str | os.PathLike) or (isinstance(matrix, Sequence) and not isinstance(matrix, Mapping)):
        return load_facts([os.fspath(matrix)] if isinstance(matrix, str | os.PathLike)
                          else [os.fspath(m) for m in matrix])
    raise InputError(f"matrix: expected a Matrix (glmcompat.load_matrix()), matrix files or None, not {type(matrix).__name__}")


def _targets(facts: Any, target: str | Sequence[str] | None, settings: Mapping[str, Any], where: str | None) -> list[str]:
    want = [target] if isinstance(target, str) else list(target or [])
    if not want:
        t = settings.get("targets", settings.get("target"))
        want = [t] if isinstance(t, str) else [x for x in (t or []) if isinstance(x, str)]
        if not want:
            raise NoTarget(where, argument="target")
        if where is not None:
            try:
                return [facts.target(t).name for t in want]
            except InputError as e:
                raise InputError(f"[tool.glmcompat] targets: {e.message}", path=where) from None
    for t in want:
        if not isinstance(t, str):
            raise InputError(f"target: expected a target name such as \"sm120\", not {t!r}")
    return [facts.target(t).name for t in want]


def _versions(packages: Mapping[str, str]) -> dict[str, str]:
    """``packages`` checked: names and versions must be strings, each version a valid one (PEP 440)."""
    if not isinstance(packages, Mapping):
        raise InputError(f"packages: expected a mapping of names to versions, not {type(packages).__name__}")
    out: dict[str, str] = {}
    for name, version in packages.items():
        if not isinstance(name, str) or not isinstance(version, str):
            raise InputError(f"packages: {name!r}: {version!r}: names and versions must be strings")
        try:
            Version(version)
        except InvalidVersion:
            raise InputError(f"packages: {name} {version!r} is not a version (PEP 440), e.g. \"2.9.1\"") from None
        out[name] = version
    return out


# ------------------------------------------------------------------------------------------------
# Checking
# ------------------------------------------------------------------------------------------------


@_typed_errors
def check_versions(packages: Mapping[str, str], target: str, *, model: str | None = None, platform: str = "x86_64",
                   allow_unknown: bool = False, matrix: MatrixLike = None, machine: Machine | None = None) -> Verdict:
    """The verdict on ``packages`` (distribution name -> version, as one environment installs them) for ``target``
    (``sm120``, ``sm_120``, ``12.0`` or a product such as ``rtx5090``) on the machine ``platform`` (``x86_64`` or
    ``aarch64``). ``model``: the HF ``model_type`` the stack must serve. ``allow_unknown``: combinations the matrix
    holds no evidence for are warnings, not errors. ``matrix``: a :class:`Matrix`, matrix files, or None for the
    shipped matrix. ``machine``: the :class:`Machine` judged (its NVIDIA driver: every CUDA build must run on it;
    None: not judged)."""
    return _check_versions(packages, target, model=model, platform=platform, allow_unknown=allow_unknown, matrix=matrix,
                           machine=machine)


def _check_versions(packages: Mapping[str, str], target: str, *, model: str | None = None, platform: str = "x86_64",
                   allow_unknown: bool = False, matrix: MatrixLike = None, machine: Machine | None = None) -> Verdict:
    """:func:`check_versions` (the errors not yet typed)."""
    pkgs = _versions(packages)
    facts = _facts(matrix).on(platform)
    tname = facts.target(target).name
    found = rules.evaluate(pkgs, target=tname, model=model, matrix=facts, allow_unknown=allow_unknown, machine=machine)
    safe = None
    if any(f.severity == "error" for f in found):
        from glmcompat.model.environments import Environment  # lazy: only for an unsafe set (a remedy to find)
        from glmcompat.ops.remedy import with_pins  # lazy: only for an unsafe set (a remedy to find)
        from glmcompat.readers.formats.common import Lock  # lazy: only for an unsafe set (a remedy to find)

        env = Environment(platform=facts.platform, packages=pkgs)

        def judge(new: Mapping[str, str | None]) -> bool:  # the verdict's own judgement, on the machine it names
            return not any(f.severity == "error" for f in rules.evaluate(
                with_pins(env, new).packages, target=tname, model=model, matrix=facts, allow_unknown=allow_unknown,
                machine=machine))

        safe = _safe_set(Lock(path="", kind="", entries=(), sets=(env,)), tname, model, facts, None, machine, judge)
    return Verdict(tname, tuple(found), None, model, (facts.platform,), safe)


def _safe_set(lock: Lock, target: str, model: str | None, facts: Facts, platforms: Sequence[str] | None,
              machine: Machine | None, judge: Callable[[Mapping[str, str | None]], bool] | None = None,
              ) -> dict[str, str | None] | None:
    """The one remedy ``check`` proposes (:func:`glmcompat.ops.remedy.for_lock`: the nearest safe set, proven as the
    verdict was judged), searched offline over the matrix's releases (:class:`~glmcompat.decide.remedysearch.MatrixSource`)
    and the file's own versions; None where it finds none."""
    from glmcompat.decide.remedysearch import MatrixSource  # lazy: the resolver, only for an unsafe set
    from glmcompat.ops.remedy import for_lock, safe_set_json  # lazy: only for an unsafe set (a remedy to find)

    def source_for(platform: str) -> MatrixSource:
        bad = next((e for e in lock.sets if e.platform == platform), None)
        return MatrixSource(facts.on(platform), platform, dict(bad.packages) if bad is not None else {})

    return safe_set_json(for_lock(lock, [target], model, facts, source_for, platforms=platforms, machine=machine,
                                  judge=judge).remedy)


@_typed_errors
def check_environment(target: str, *, python: str | os.PathLike[str] | None = None, model: str | None = None,
                      allow_unknown: bool = False, matrix: MatrixLike = None) -> Verdict:
    """The verdict on an installed environment for ``target``: the distributions its site-packages hold. ``python``:
    an interpreter, a virtual environment's folder or a name on PATH (as ``glmcompat pip --python`` takes it); None
    is the running interpreter. Other arguments as :func:`check_versions`."""
    if python is None:
        sites = [p for p in [*site.getsitepackages(), site.getusersitepackages(), *sys.path]
                 if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)]
        machine = _platform.machine()
    else:
        path, how = find_interpreter(os.fspath(python), Path.cwd())
        interp = inspect(path, how)
        sites = list(interp.sites)
        machine = _platform.machine()
    plat = "aarch64" if machine in ("aarch64", "arm64") else "x86_64"
    env = read_environment(list(dict.fromkeys(sites)))
    return _check_versions(env.versions(), target, model=model, platform=plat, allow_unknown=allow_unknown,
                           matrix=matrix)


@_typed_errors
def check(path: str | os.PathLike[str], target: str | Sequence[str] | None = None, *, model: str | None = None,
          platforms: Sequence[str] | None = None, stack: str | None = None, allow_unknown: bool = False,
          matrix: MatrixLike = None, machine: Machine | None = None) -> CheckResult:
    """Judge the dependency file ``path`` for ``target`` (a name or a list of names) as ``glmcompat check`` does: the
    compiled wheels the set installs are read too (:func:`glmcompat.ops.artifacts.read_artifacts`: bounded range reads,
    stored by sha256; ``GLMCOMPAT_NO_ARTIFACTS=1``: none, offline). ``path`` may be a pyproject.toml: its project's lock is judged. Targets, model and platform default to the
    ``[tool.glmcompat]`` table of the pyproject.toml beside the file. ``platforms``: judge only the environments of
    these machines (``["aarch64"]``), strictly. ``stack``: also require a curated stack's pins. ``machine``: the
    :class:`Machine` judged (its NVIDIA driver; None: not judged)."""
    facts = _facts(matrix)
    raw = os.fspath(path)
    p = Path(raw)
    lock_path, settings, settings_path = cf.locate(raw, needed=not target)
    names = _targets(facts, target, settings, None if target else (str(settings_path) if settings_path else raw))
    model = model or settings.get("model")
    if model is not None:
        facts.model(model)
    chosen = (list(dict.fromkeys(check_platform(x) for x in platforms)) if platforms is not None
              else cf.platform_setting(lock_path, settings if p.name == "pyproject.toml" else None))
    for t in names:
        cf.check_ships(facts.target(t), chosen)
    the_stack = facts.stack(stack) if stack else None
    from glmcompat.ops.artifacts import read_artifacts  # lazy: wheel reading, only when a file is checked
    from glmcompat.ops.indexpins import (  # lazy: index reading, only when a file is checked
        installed_view,
        with_index_pins,
        with_installed_numpy,
    )

    lock = with_index_pins(read_lock(lock_path), facts)
    iso = cf.no_isolation(lock_path)
    mixed = cf.output_set_problems(lock_path)
    arts = read_artifacts(installed_view(lock, facts), facts, resolved_at_install=lock.kind in rules.RESOLVED_AT_INSTALL,
                          platforms=chosen, ships_on={m for t in names for m in facts.target(t).ships_on})
    lock = with_installed_numpy(lock, arts)
    verdicts = []
    for t in names:
        findings = mixed + rules.evaluate_lock(lock, t, model, facts, allow_unknown, the_stack, iso, chosen,
                                               machine=machine, artifacts=arts)
        safe = _safe_set(lock, t, model, facts, chosen, machine) if any(f.severity == "error" for f in findings) else None
        verdicts.append(Verdict(t, tuple(findings), str(lock_path), model,
                                tuple(chosen or target_platforms(facts.target(t))), safe))
    broken = cf.unreadable_beside(lock_path)
    return CheckResult(str(lock_path), lock.kind, tuple(verdicts), sum(len(e.names) for e in lock.sets),
                       tuple(lock.meta.get("notes", ())) + ((broken,) if broken else ()))


# ------------------------------------------------------------------------------------------------
# Locking and resolving
# ------------------------------------------------------------------------------------------------


def _source(index: str | os.PathLike[str] | None) -> Source | None:
    """The resolver's source for ``index``: None (the configured package index), or a recorded index file (JSON, as
    glmcompat's scripts record it: offline)."""
    if index is None:
        return None
    from glmcompat.edges.sources import RecordedSource  # lazy: the resolver's modules, which check needs none of

    p = Path(index)
    if not p.is_file():
        raise InputError("index: no such recorded index file (pass None to read the configured package index)",
                         path=os.fspath(index))
    return RecordedSource(p)


@_typed_errors
def lock(path: str | os.PathLike[str] = ".", targets: str | Sequence[str] | None = None, *,
         platform: str | None = None, model: str | None = None, upgrade: bool = False, dry_run: bool = False,
         check: bool = False, output: str | os.PathLike[str] | None = None,
         index: str | os.PathLike[str] | None = None, machine: Machine | None = None) -> ProjectLockResult:
    """Lock the project found from ``path`` (a directory, as uv finds it, or its pyproject.toml) as ``glmcompat lock``
    does: the safe core for every target is written into ``[tool.uv] constraint-dependencies`` and the real ``uv lock``
    runs; or compile ``path`` when it is a requirements file (into ``output``, default ``.in`` -> ``.txt``). Targets,
    platform and model default to ``[tool.glmcompat]``. ``dry_run``: write nothing, the change is in ``.diff``;
    ``check``: write nothing, ``.problems`` says why the lock is stale or unsafe. ``index``: a recorded index file to
    resolve the core from (offline; uv reads its own configured index). ``machine``: the :class:`Machine` locked for
    (its NVIDIA driver prunes the CUDA builds it cannot run; its glibc is the compile's). Returns a :class:`ProjectLockResult`;
    :class:`UnsafeError` when no safe lock exists (nothing written)."""
    source = _source(index)
    return pl.lock(os.fspath(path), targets, platform=platform, model=model, upgrade=upgrade, dry_run=dry_run,
                   check=check, output=None if output is None else os.fspath(output),
                   index=client_for if source is None else None, source=source, machine=machine)


@_typed_errors
def resolve_core(requirements: Sequence[str] = ("torch",), target: str | Sequence[str] = "sm120", *,
                 model: str | None = None, python: str = "3.11", platform: str | None = None, upgrade: bool = False,
                 prefer: Mapping[str, str] | None = None, exclude_newer: str | None = None,
                 index: str | os.PathLike[str] | None = None, matrix: MatrixLike = None) -> CoreResult:
    """The one safe core set for ``requirements`` (PEP 508 strings such as ``"torch"``, ``"sgl-kernel==0.3.21"``,
    ``"sglang>=0.5"``) on every target of ``target``: what ``glmcompat lock`` writes as uv constraints. ``python``: the
    CPython minor (``3.11``); ``platform``: the machine (default: the target's only one, else x86_64); ``prefer``:
    versions to keep where they stay safe (a lock's current pins); ``exclude_newer``: an RFC 3339 cut-off for the
    index; ``index``: a recorded index file (offline), or None for the configured package index. Raises
    :class:`UnsafeError` with the reasons ("Because ..., we can conclude ...") when no set serves every target."""
    if isinstance(requirements, str):
        requirements = [requirements]
    facts = _facts(matrix)
    names = _targets(facts, target, {}, None)
    py = python_minor(python)
    req = pl.ProjectLockRequest(plan(facts, names, platform, model), upgrade, py)
    machine = req.platform
    source = _source(index)
    core = pl.resolve_set(facts, list(requirements), "requirements", req, py, dict(prefer or {}),
                          exclude_newer=exclude_newer, index=client_for if source is None else None, source=source,
                          quiet=True)
    return CoreResult(core.pins, tuple(names), machine, py, core.overrides, core.reasons)


@_typed_errors
def load_matrix(paths: Sequence[str | os.PathLike[str]] | None = None) -> Matrix:
    """The compatibility matrix (:class:`Matrix`): the shipped one, or the files (or directories) ``paths``.
    :class:`MatrixError` when a file is malformed or the files contradict each other."""
    return _load_matrix(None if paths is None else [os.fspath(p) for p in paths])

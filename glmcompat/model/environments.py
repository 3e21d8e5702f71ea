"""The environments a dependency file installs, each judged on its own (never a merge).

An environment is an :class:`Environment` record (it caches as JSON through :meth:`Environment.to_json` and
:meth:`Environment.from_json`; see :mod:`glmcompat.readers.formats`). This module holds what every format shares:
the marker environments (Linux x86_64 and Linux aarch64, each for every Python minor the file allows; ``platform``
says which machine, and the name ends with it), a marker evaluator that understands uv's conflict encoding
(``extra == 'extra-7-nemo-rl-sglang'`` against the *set* of extras and groups a uv.lock environment enables), and
the flat builder for formats whose entries carry their own markers (requirements files, pylock.toml, pdm.lock, ...).
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from glmcompat.model.errors import LockFormatError
from glmcompat.model.platforms import PLATFORM_NAME, PLATFORMS, marker_env
from glmcompat.model.shapes import fields, is_str, str_list, str_map

PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14")
BUILT_FROM_SOURCE = frozenset({"git", "path", "directory", "editable", "url"})


class MarkedEntry(Protocol):
    """What the flat builder reads of a dependency file's entry (:class:`glmcompat.readers.formats.common.Entry`)."""

    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str | None: ...
    @property
    def marker(self) -> str | None: ...
    @property
    def source(self) -> str: ...
    @property
    def spec(self) -> str | None: ...
    @property
    def constraint(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Environment:
    """One environment a dependency file installs.

    ``name``: "extra sglang, Python 3.12, Linux x86_64" ("" when the file has only one); ``also``: the names of
    the environments that install the same set on the same machine (merged into this one). ``platform``: the
    machine (``x86_64`` | ``aarch64``). ``packages``: canonical name -> exact version, what installs there;
    ``sources``: name -> source kind, only for those not from a registry; ``unpinned``: name -> specifier, named
    without an exact pin; ``overrides``: name -> specifier, uv override-dependencies (deliberate);
    ``missing_wheels``: name -> version (uv.lock, and the locks that list each package's files): no wheel for the
    machine and Python, and no sdist; ``glibc``: name ->
    the lowest glibc its wheels for the machine need (uv.lock only; above manylinux2014's 2.17, without an sdist)."""

    name: str = ""
    platform: str = "x86_64"
    packages: Mapping[str, str] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)
    unpinned: Mapping[str, str] = field(default_factory=dict)
    overrides: Mapping[str, str] = field(default_factory=dict)
    missing_wheels: Mapping[str, str] = field(default_factory=dict)
    also: tuple[str, ...] = ()
    glibc: Mapping[str, str] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        """Every name this environment stands for, its own first ("" included: a file's only environment)."""
        return (self.name, *self.also)

    def same_set(self, other: Environment) -> bool:
        """Whether ``other`` installs the same on the same machine (so the two are judged as one)."""
        return (self.platform == other.platform and self.packages == other.packages and self.sources == other.sources
                and self.unpinned == other.unpinned and self.missing_wheels == other.missing_wheels)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the parsed-lock cache (``missing_wheels`` and ``also`` only when not empty)."""
        out: dict[str, Any] = {"name": self.name, "platform": self.platform, "packages": dict(self.packages),
                               "sources": dict(self.sources), "unpinned": dict(self.unpinned),
                               "overrides": dict(self.overrides)}
        if self.missing_wheels:
            out["missing_wheels"] = dict(self.missing_wheels)
        if self.also:
            out["also"] = list(self.also)
        if self.glibc:
            out["glibc"] = dict(self.glibc)
        return out

    @classmethod
    def from_json(cls, raw: Any) -> Environment:
        """The environment :meth:`to_json` wrote; ValueError for any other shape (a cache miss)."""
        if not fields(raw, {"name": is_str, "platform": is_str, "packages": str_map, "sources": str_map,
                            "unpinned": str_map, "overrides": str_map},
                      {"missing_wheels": str_map, "also": str_list, "glibc": str_map}):
            raise ValueError("not a stored environment")
        return cls(raw["name"], raw["platform"], raw["packages"], raw["sources"], raw["unpinned"], raw["overrides"],
                   raw.get("missing_wheels") or {}, tuple(raw.get("also") or ()), raw.get("glibc") or {})


def python_envs(requires_python: str | None, machine: str = "x86_64",
                pythons: Sequence[str] = PYTHONS) -> list[dict[str, str]]:
    """One marker environment per Python minor that ``requires_python`` allows (the lowest patch
    release it allows in that minor), on Linux ``machine``."""
    try:
        spec = SpecifierSet(requires_python.replace(" ", "")) if requires_python else SpecifierSet()
    except InvalidSpecifier:
        spec = SpecifierSet()
    envs = []
    for py in pythons:
        full = next((f"{py}.{micro}" for micro in range(0, 40) if spec.contains(f"{py}.{micro}", prereleases=True)), None)
        if full is not None:
            envs.append(marker_env(py, machine, full))
    if not envs:  # a requires-python no listed Python meets: judge the newest, rather than nothing
        py = pythons[-1]
        envs.append(marker_env(py, machine))
    return envs


def env_label(env: Mapping[str, str]) -> str:
    return f"Python {env['python_version']}, {PLATFORM_NAME.get(env['platform_machine'], env['platform_machine'])}"


# Parsed markers and their verdicts, kept for the process by the marker's text and the environment's content (pure
# answers of those): a process that reads many locks (the API, the suite's in-process checks of edited copies of one
# lock) asks the same few hundred markers of the same environments again at every read; bounded, emptied when full
_MARKERS: dict[str, Marker] = {}
_VERDICTS: dict[tuple[str, tuple[tuple[str, str], ...], frozenset[str]], bool] = {}
MAX_KEPT = 65_536


class MarkerEvaluator:
    """Evaluates PEP 508 markers with ``extra`` bound to a *set* (uv's conflict-aware markers name
    every enabled extra and group, encoded as ``extra-<len>-<package>-<extra>``), on packaging's public
    API: ``Marker.evaluate_prepared`` with ``extra`` a set of names (packaging 26.4), where ``extra == X``
    is membership and ``extra != X`` its negation. Parsed markers, the prepared environments and the
    verdicts are memoised per (marker, environment ``env_id``, enabled set): a lock's walk asks the same
    few hundred markers again for every package that names them; the parsed markers and the verdicts also for
    the process, by the environment's content (:data:`_VERDICTS`).

    A marker that cannot be decided in an environment (a comparison the specification leaves
    undefined, a variable the environment lacks) is false there."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._envs: dict[tuple[int, frozenset[str]], dict[str, Any]] = {}
        self._verdicts: dict[tuple[str, int, frozenset[str]], bool] = {}
        self._env_keys: dict[int, tuple[tuple[str, str], ...]] = {}  # env_id -> the environment's content

    def parse(self, marker: str) -> Marker:
        m = _MARKERS.get(marker)
        if m is None:
            try:
                m = Marker(marker)
            except (InvalidMarker, TypeError, RecursionError):
                raise LockFormatError(f"invalid marker {marker!r}", path=self.path) from None
            if len(_MARKERS) >= MAX_KEPT:
                _MARKERS.clear()
            _MARKERS[marker] = m
        return m

    def evaluate(self, marker: str | None, env: Mapping[str, str], active: Iterable[str] = (), env_id: int = 0) -> bool:
        if not marker:
            return True
        enabled = active if isinstance(active, frozenset) else frozenset(active)
        key = (marker, env_id, enabled)
        verdict = self._verdicts.get(key)
        if verdict is None:
            env_key = self._env_keys.get(env_id)
            if env_key is None:
                env_key = self._env_keys[env_id] = tuple(sorted(env.items()))
            kept = (marker, env_key, enabled)
            verdict = _VERDICTS.get(kept)
            if verdict is None:
                m = self.parse(marker)
                prepared = self._envs.get((env_id, enabled))
                if prepared is None:
                    # read as given (no value of this host fills a gap); extra: the enabled set, canonical
                    # as packaging compares extras (PEP 685), or "" when none is enabled
                    prepared = self._envs[(env_id, enabled)] = {
                        **env, "extra": frozenset(canonicalize_name(x) for x in enabled) if enabled else ""}
                try:
                    verdict = bool(m.evaluate_prepared(prepared))
                except (UndefinedComparison, UndefinedEnvironmentName):
                    verdict = False
                if len(_VERDICTS) >= MAX_KEPT:
                    _VERDICTS.clear()
                _VERDICTS[kept] = verdict
            self._verdicts[key] = verdict
        return verdict


def flat_environments(path: str, entries: Sequence[MarkedEntry], requires_python: str | None,
                      overrides: Mapping[str, str] | None = None,
                      platforms: Sequence[str] = PLATFORMS,
                      wheels: Mapping[str, Sequence[str]] | None = None) -> list[Environment]:
    """Environments of a file whose entries carry their own markers: one per platform and Python minor
    (merged when equal on the same platform; see :func:`by_platform`). Constraint entries narrow a
    package something else names and install nothing; an entry named without an exact pin is recorded
    as unpinned unless a constraint pins it. ``wheels``: ``name==version`` -> the wheel file names the file lists for
    a package it lists no sdist for: a package whose wheels are all for Windows or macOS is one of those systems' (a
    lock for several, whose entries do not all carry their markers: poetry's ``pywin32``) and installs nothing on
    Linux; one with Linux wheels, none of which fits the machine and Python, is in ``missing_wheels``."""
    ev = MarkerEvaluator(path)
    found: dict[str, list[Environment]] = {}
    i = 0
    for machine in platforms:
        found[machine] = _flat_for(ev, entries, requires_python, overrides, machine, i, wheels or {})
        i += len(PYTHONS) + 1
    return by_platform(found)


def _flat_for(ev: MarkerEvaluator, entries: Sequence[MarkedEntry], requires_python: str | None,
              overrides: Mapping[str, str] | None, machine: str, first_id: int,
              wheels: Mapping[str, Sequence[str]]) -> list[Environment]:
    from glmcompat.model.wheeltags import wheel_fits  # lazy: packaging.tags, only for files that list their wheels

    out: list[Environment] = []
    for i, env in enumerate(python_envs(requires_python, machine), start=first_id):
        packages: dict[str, str] = {}
        sources: dict[str, str] = {}
        unpinned: dict[str, str] = {}
        constraints: dict[str, str] = {}
        missing: dict[str, str] = {}
        for e in entries:
            if not ev.evaluate(e.marker, env, env_id=i):
                continue
            if e.constraint:
                if e.version is not None:
                    constraints[e.name] = e.version
                continue
            if e.source != "registry":
                sources[e.name] = e.source
            if e.version is not None:
                listed = wheels.get(f"{e.name}=={e.version}") if e.source == "registry" else None
                if listed and not any(linux_wheel(w) for w in listed):
                    continue  # wheels for Windows or macOS alone (pywin32): a package of those systems, not of Linux
                packages[e.name] = e.version
                if listed and not any(wheel_fits(w, machine, env["python_version"]) for w in listed):
                    missing[e.name] = e.version
            elif e.name not in packages:
                unpinned[e.name] = e.spec or ""
        for name in list(unpinned):
            if name in constraints:
                packages[name] = constraints[name]
                del unpinned[name]
        merge(out, Environment(env_label(env), machine, dict(sorted(packages.items())), dict(sorted(sources.items())),
                               dict(sorted(unpinned.items())), dict(overrides or {}), dict(sorted(missing.items()))))
    return out


def linux_wheel(wheel: str) -> bool:
    """Whether a wheel's platform tags name Linux (any machine) or none (``any``)."""
    tags = wheel[:-4].rsplit("-", 1)[-1].split(".") if wheel.endswith(".whl") else ["any"]
    return any(t == "any" or "linux" in t for t in tags)


def by_platform(found: Mapping[str, list[Environment]]) -> list[Environment]:
    """The environments of every platform, named. A platform on which the file installs nothing (every
    entry's marker excludes it: ``platform_machine == 'x86_64'``) is left out while another platform
    installs something: such a file does not serve that machine, and a check says so rather than judging
    an empty set. A platform whose Pythons all install the same set is one environment named after the
    platform ("Linux aarch64"); a file with one environment in all has one, unnamed."""
    def installs(envs: list[Environment]) -> bool:
        return any(e.packages or e.unpinned for e in envs)

    keep = [p for p, envs in found.items() if installs(envs)] or [next(iter(found))]
    out: list[Environment] = []
    for p in keep:
        envs = found[p]
        if len(envs) == 1 and len(keep) > 1:
            envs = [replace(envs[0], name=PLATFORM_NAME.get(p, p), also=())]
        out.extend(envs)
    if len(out) == 1:  # the same set on every Python of the one platform served: nothing to name
        out[0] = replace(out[0], name="", also=())
    return out


def merge(out: list[Environment], env: Environment) -> None:
    """Append ``env`` unless an environment of the same platform with the same content is there (then add
    its name). Environments of two platforms never merge: they are judged with different facts."""
    for i, o in enumerate(out):
        if o.same_set(env):
            out[i] = replace(o, also=(*o.also, env.name))
            return
    out.append(env)

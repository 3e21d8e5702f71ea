"""The environments a dependency file installs, each judged on its own (never a merge).

An environment is a plain dict (it caches as JSON; see :mod:`glmcompat.readers.formats`):
``{"name", "platform", "packages", "sources", "unpinned", "overrides"}``. This module holds what every
format shares: the marker environments (Linux x86_64 and Linux aarch64, each for every Python minor the
file allows; ``platform`` says which machine, and the name ends with it), a marker
evaluator that understands uv's conflict encoding (``extra == 'extra-7-nemo-rl-sglang'`` against
the *set* of extras and groups a uv.lock environment enables), and the flat builder for formats
whose entries carry their own markers (requirements files, pylock.toml, pdm.lock, ...).
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from glmcompat.model.errors import LockFormatError
from glmcompat.model.platforms import PLATFORM_NAME, PLATFORMS, marker_env

PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14")


def python_envs(requires_python: str | None, machine: str = "x86_64",
                pythons: Sequence[str] = PYTHONS) -> list[dict[str, str]]:
    """One marker environment per Python minor that ``requires_python`` allows (the lowest patch
    release it allows in that minor), on Linux ``machine``."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

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


class MarkerEvaluator:
    """Evaluates PEP 508 markers with ``extra`` bound to a *set* (uv's conflict-aware markers name
    every enabled extra and group, encoded as ``extra-<len>-<package>-<extra>``), on packaging's public
    API: ``Marker.evaluate_prepared`` with ``extra`` a set of names (packaging 26.4), where ``extra == X``
    is membership and ``extra != X`` its negation. Parsed markers, the prepared environments and the
    verdicts are memoised per (marker, environment ``env_id``, enabled set): a lock's walk asks the same
    few hundred markers again for every package that names them.

    A marker that cannot be decided in an environment (a comparison the specification leaves
    undefined, a variable the environment lacks) is false there."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._parsed: dict[str, Any] = {}
        self._envs: dict[tuple[int, frozenset[str]], dict[str, Any]] = {}
        self._verdicts: dict[tuple[str, int, frozenset[str]], bool] = {}

    def parse(self, marker: str) -> Any:
        m = self._parsed.get(marker)
        if m is None:
            from packaging.markers import InvalidMarker, Marker

            try:
                m = self._parsed[marker] = Marker(marker)
            except (InvalidMarker, TypeError, RecursionError):
                raise LockFormatError(f"invalid marker {marker!r}", path=self.path) from None
        return m

    def evaluate(self, marker: str | None, env: Mapping[str, str], active: Iterable[str] = (), env_id: int = 0) -> bool:
        if not marker:
            return True
        enabled = active if isinstance(active, frozenset) else frozenset(active)
        key = (marker, env_id, enabled)
        verdict = self._verdicts.get(key)
        if verdict is None:
            m = self.parse(marker)
            prepared = self._envs.get((env_id, enabled))
            if prepared is None:
                from packaging.utils import canonicalize_name

                # read as given (no value of this host fills a gap); extra: the enabled set, canonical
                # as packaging compares extras (PEP 685), or "" when none is enabled
                prepared = self._envs[(env_id, enabled)] = {
                    **env, "extra": frozenset(canonicalize_name(x) for x in enabled) if enabled else ""}
            from packaging.markers import UndefinedComparison, UndefinedEnvironmentName

            try:
                verdict = bool(m.evaluate_prepared(prepared))
            except (UndefinedComparison, UndefinedEnvironmentName):
                verdict = False
            self._verdicts[key] = verdict
        return verdict


def env_platform(env: Mapping[str, Any]) -> str:
    """The machine an environment is for (environments cached before platforms were read: x86_64)."""
    return str(env.get("platform") or "x86_64")


def flat_environments(path: str, entries: Sequence[Any], requires_python: str | None,
                      overrides: Mapping[str, str] | None = None,
                      platforms: Sequence[str] = PLATFORMS) -> list[dict[str, Any]]:
    """Environments of a file whose entries carry their own markers: one per platform and Python minor
    (merged when equal on the same platform; see :func:`by_platform`). Constraint entries narrow a
    package something else names and install nothing; an entry named without an exact pin is recorded
    as unpinned unless a constraint pins it."""
    ev = MarkerEvaluator(path)
    found: dict[str, list[dict[str, Any]]] = {}
    i = 0
    for machine in platforms:
        found[machine] = _flat_for(ev, entries, requires_python, overrides, machine, i)
        i += len(PYTHONS) + 1
    return by_platform(found)


def _flat_for(ev: MarkerEvaluator, entries: Sequence[Any], requires_python: str | None,
              overrides: Mapping[str, str] | None, machine: str, first_id: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, env in enumerate(python_envs(requires_python, machine), start=first_id):
        packages: dict[str, str] = {}
        sources: dict[str, str] = {}
        unpinned: dict[str, str] = {}
        constraints: dict[str, str] = {}
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
                packages[e.name] = e.version
            elif e.name not in packages:
                unpinned[e.name] = e.spec or ""
        for name in list(unpinned):
            if name in constraints:
                packages[name] = constraints[name]
                del unpinned[name]
        env_dict = {"name": env_label(env), "platform": machine, "packages": dict(sorted(packages.items())),
                    "sources": dict(sorted(sources.items())), "unpinned": dict(sorted(unpinned.items())),
                    "overrides": dict(overrides or {})}
        merge(out, env_dict)
    return out


def by_platform(found: Mapping[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The environments of every platform, named. A platform on which the file installs nothing (every
    entry's marker excludes it: ``platform_machine == 'x86_64'``) is left out while another platform
    installs something: such a file does not serve that machine, and a check says so rather than judging
    an empty set. A platform whose Pythons all install the same set is one environment named after the
    platform ("Linux aarch64"); a file with one environment in all has one, unnamed."""
    def installs(envs: list[dict[str, Any]]) -> bool:
        return any(e["packages"] or e["unpinned"] for e in envs)

    keep = [p for p, envs in found.items() if installs(envs)] or [next(iter(found))]
    out: list[dict[str, Any]] = []
    for p in keep:
        envs = found[p]
        if len(envs) == 1 and len(keep) > 1:
            envs[0]["name"] = PLATFORM_NAME.get(p, p)
            envs[0].pop("also", None)
        out.extend(envs)
    if len(out) == 1:  # the same set on every Python of the one platform served: nothing to name
        out[0]["name"] = ""
        out[0].pop("also", None)
    return out


def merge(out: list[dict[str, Any]], env: dict[str, Any]) -> None:
    """Append ``env`` unless an environment of the same platform with the same content is there (then add
    its name). Environments of two platforms never merge: they are judged with different facts."""
    for o in out:
        if env_platform(o) == env_platform(env) and o["packages"] == env["packages"] \
                and o["sources"] == env["sources"] and o["unpinned"] == env["unpinned"] \
                and o.get("missing_wheels") == env.get("missing_wheels"):
            o.setdefault("also", []).append(env["name"])
            return
    out.append(env)

"""The environments a dependency file installs, each judged on its own (never a merge).

An environment is a plain dict (it caches as JSON; see :mod:`glmcompat.lockfiles`):
``{"name", "packages", "sources", "unpinned", "overrides"}``. This module holds what every format
shares: the marker environments (Linux x86_64 for each Python minor the file allows), a marker
evaluator that understands uv's conflict encoding (``extra == 'extra-7-nemo-rl-sglang'`` against
the *set* of extras and groups a uv.lock environment enables), and the flat builder for formats
whose entries carry their own markers (requirements files, pylock.toml, pdm.lock, ...).
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .errors import LockFormatError

PLATFORM_ENV = {
    "sys_platform": "linux",
    "platform_system": "Linux",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "platform_release": "",
    "platform_version": "",
    "implementation_version": "",
}
PLATFORM_NAME = {"x86_64": "Linux x86_64", "aarch64": "Linux aarch64"}
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
            envs.append({**PLATFORM_ENV, "platform_machine": machine, "python_version": py,
                         "python_full_version": full, "extra": ""})
    if not envs:  # a requires-python no listed Python meets: judge the newest, rather than nothing
        py = pythons[-1]
        envs.append({**PLATFORM_ENV, "platform_machine": machine, "python_version": py,
                     "python_full_version": py + ".0", "extra": ""})
    return envs


def env_label(env: Mapping[str, str]) -> str:
    return f"Python {env['python_version']}, {PLATFORM_NAME.get(env['platform_machine'], env['platform_machine'])}"


class MarkerEvaluator:
    """Evaluates PEP 508 markers with ``extra`` bound to a *set* (uv's conflict-aware markers name
    every enabled extra and group, encoded as ``extra-<len>-<package>-<extra>``). Parsed markers and
    the verdicts of their parts that do not mention ``extra`` are memoised."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._parsed: dict[str, Any] = {}
        self._plain: dict[tuple[int, str], bool] = {}

    def parse(self, marker: str) -> Any:
        m = self._parsed.get(marker)
        if m is None:
            from packaging.markers import InvalidMarker, Marker

            try:
                m = self._parsed[marker] = Marker(marker)._markers
            except (InvalidMarker, TypeError, RecursionError):
                raise LockFormatError(f"invalid marker {marker!r}", path=self.path) from None
        return m

    def evaluate(self, marker: str | None, env: Mapping[str, str], active: Iterable[str] = (), env_id: int = 0) -> bool:
        if not marker:
            return True
        return self._eval(self.parse(marker), env, frozenset(active), env_id)

    def _eval(self, markers: list[Any], env: Mapping[str, str], active: frozenset[str], env_id: int) -> bool:
        from packaging.markers import _evaluate_markers  # type: ignore[attr-defined]

        groups: list[list[bool]] = [[]]
        for item in markers:
            if isinstance(item, list):
                groups[-1].append(self._eval(item, env, active, env_id))
            elif isinstance(item, tuple):
                lhs, op, rhs = item
                if type(lhs).__name__ == "Variable" and lhs.value == "extra" or \
                        type(rhs).__name__ == "Variable" and rhs.value == "extra":
                    value = rhs.value if type(lhs).__name__ == "Variable" else lhs.value
                    if op.value == "==":
                        groups[-1].append(value in active)
                    elif op.value == "!=":
                        groups[-1].append(value not in active)
                    else:
                        groups[-1].append(False)
                else:
                    key = (env_id, f"{lhs.value}{op.value}{rhs.value}|{type(lhs).__name__}")
                    r = self._plain.get(key)
                    if r is None:
                        try:
                            r = self._plain[key] = bool(_evaluate_markers([item], dict(env)))
                        except Exception:  # an undefined comparison (e.g. a version op on a non-version)
                            r = self._plain[key] = False
                    groups[-1].append(r)
            elif item == "or":
                groups.append([])
        return any(all(g) for g in groups)


def flat_environments(path: str, entries: Sequence[Any], requires_python: str | None,
                      overrides: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Environments of a file whose entries carry their own markers: one per Python minor (merged
    when equal). Constraint entries narrow a package something else names and install nothing; an
    entry named without an exact pin is recorded as unpinned unless a constraint pins it."""
    ev = MarkerEvaluator(path)
    out: list[dict[str, Any]] = []
    for i, env in enumerate(python_envs(requires_python)):
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
        env_dict = {"name": env_label(env), "packages": dict(sorted(packages.items())),
                    "sources": dict(sorted(sources.items())), "unpinned": dict(sorted(unpinned.items())),
                    "overrides": dict(overrides or {})}
        merge(out, env_dict)
    if len(out) == 1:  # the same set on every Python: one environment, nothing to name
        out[0]["name"] = ""
        out[0].pop("also", None)
    return out


def merge(out: list[dict[str, Any]], env: dict[str, Any]) -> None:
    """Append ``env`` unless an environment with the same content is there (then add its name)."""
    for o in out:
        if o["packages"] == env["packages"] and o["sources"] == env["sources"] and o["unpinned"] == env["unpinned"]:
            o.setdefault("also", []).append(env["name"])
            return
    out.append(env)

"""The nearest safe set: the resolver ``lock`` uses, asked to move as few of the user's pins as it can, by the
smallest steps.

An unsafe set is a set of exact pins. The search keeps every pin of the coupled core (:data:`CORE`) but ``k`` of them,
for ``k`` = 0, 1, 2, ...: the kept ones are roots ``name==version``, the moved ones roots ``name`` whose candidates
are tried nearest to the user's version first (then the resolver's own rules: the matrix prunes what cannot run on
the target, kernels bind torch, an engine's Requires-Dist binds the rest, so an engine kept is an engine honoured).
The first ``k`` with a set that ``accept`` takes wins; among its sets, the one with the smallest moves (how many
releases each package moved, summed). A moved kernel may also change name (sgl-kernel -> sglang-kernel, a ``[[rename]]``
row). Every candidate comes from the :class:`~glmcompat.decide.resolver.Source`, so each pin exists on its index for the
machine and Python asked. No safe set at all: :class:`Blocked` names the user's pin that blocks and its least change
(the nearest version of it with which a safe set exists). Pure: no I/O beyond the source's answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import resolvelib
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from glmcompat.decide.resolver import (
    MAX_ROUNDS,
    Cand,
    Provider,
    Request,
    Source,
    project_roots,
)
from glmcompat.decide.stacks import CORE, ENGINES
from glmcompat.matrix.view import Facts
from glmcompat.model.errors import EnvironmentFailure, GlmcompatError
from glmcompat.model.names import canonicalize
from glmcompat.model.platforms import check_platform

MAX_MOVED = 4  # at most this many of the user's pins move; past it, the search says which pin blocks
MAX_TRIES = 160  # resolutions tried in all (each is cheap once the source's answers are memoised)


@dataclass(frozen=True)
class Found:
    """A safe set the search found: ``pins`` (the resolver's core, user's names and what the resolver added),
    ``moved`` (the user's names whose version changed or which were replaced), ``renamed`` (old -> new name),
    ``overridden`` (an engine's pin the set overrides -> why), ``cost`` (releases moved, summed)."""

    pins: dict[str, str]
    moved: tuple[str, ...]
    renamed: dict[str, str] = field(default_factory=dict)
    overridden: dict[str, str] = field(default_factory=dict)
    cost: int = 0


@dataclass(frozen=True)
class Blocked:
    """No safe set keeps ``package``==``version`` (the user's pin); ``least`` is the nearest version with which one
    exists ("" when none does), ``why`` one clause."""

    package: str
    version: str
    least: str = ""
    why: str = ""


def _public(v: str) -> str:
    try:
        return Version(v).public
    except InvalidVersion:
        return v


class NearProvider(Provider):
    """A :class:`Provider` whose candidates for the moved packages come nearest to the user's version first (then
    newer before older at the same distance), so the first safe set is the one with the smallest moves."""

    near: dict[str, Version]

    def find_matches(self, identifier: str, requirements: Any, incompatibilities: Any) -> list[Cand]:
        out = super().find_matches(identifier, requirements, incompatibilities)
        at = self.near.get(identifier)
        if at is None or not out:
            return out
        order = self.versions(identifier)
        rank = {v: i for i, v in enumerate(order)}
        here = _position(order, at)
        return sorted(out, key=lambda c: (abs(rank.get(c.version, here) - here), c.version < at))


def _position(order: Sequence[Version], at: Version) -> int:
    """Where ``at`` sits in ``order`` (newest first): its index, else where it would be."""
    for i, v in enumerate(order):
        if v <= at:
            return i
    return len(order)


def _distance(provider: Provider, name: str, old: str, new: str) -> int:
    order = provider.versions(name)
    try:
        a, b = Version(old), Version(new)
    except InvalidVersion:
        return 1
    return abs(_position(order, a) - _position(order, b))


def _weight(name: str) -> int:
    """How costly moving ``name`` is: an engine most (everything else is built around it), then torch."""
    return 3 if name in ENGINES else 2 if name == "torch" else 1


def _subsets(names: Sequence[str], k: int) -> Iterator[tuple[str, ...]]:
    subs = list(combinations(names, k))
    subs.sort(key=lambda s: (sum(_weight(n) for n in s), s))
    yield from subs


@dataclass
class Search:
    """One search over one machine's source. ``accept(set)`` is the proof: the whole set the user would get (their
    packages with the pins changed; None for a package taken out) passes every check the caller judges."""

    facts: Facts
    source: Source
    target: str
    model: str | None
    packages: Mapping[str, str]
    accept: Callable[[dict[str, str | None]], bool]
    python: str = "3.11"
    origin: str = "your file"
    loose: frozenset[str] = frozenset()  # names the user did not pin exactly (a lock's resolved choice): free to move
    tries: int = 0
    tried: dict[tuple[tuple[str, str], ...], Found | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.packages = {canonicalize(k): v for k, v in self.packages.items()}
        self.core = {n: _public(v) for n, v in self.packages.items() if n in CORE}
        self.row = self.facts.target(self.target)
        # the source's machine, judged as asked even where the target never ships (a library caller's x86_64 for
        # sm121): whether that machine serves the target is the caller's verdict, the search only looks for a set
        self.machine = check_platform(self.source.machine)
        # a project the set may move to under its other name; not a rename with checkers: its old name is no longer
        # what an install brings (flashinfer's was never on the default index), so a set holding it is no remedy
        self.renames = {r.old: r.new for r in self.facts.rows("rename") if not r.checkers}
        self.renames.update({new: old for old, new in list(self.renames.items())})
        self.departs = self._departs()

    def _departs(self) -> dict[str, str]:
        """The user's pins that already depart from an engine's exact pin in their set (an override where the set was
        made: transformers 5.2.0 under sglang 0.5.9's ==4.57.1): kept, they stay overrides; moved, the engine's pin
        binds again. name -> the engine's pin it overrides."""
        out: dict[str, str] = {}
        for e in ENGINES:
            ev = self.core.get(e)
            if not ev:
                continue
            try:
                reqs = self.source.requires(e, ev)
            except EnvironmentFailure:
                raise
            except GlmcompatError:
                continue
            for raw in reqs:
                head = raw.split(";")[0].strip()
                for n, v in self.core.items():
                    name = canonicalize(head.split("=")[0].split("<")[0].split(">")[0].split("[")[0].strip())
                    if name == n and "==" in head and head.split("==", 1)[1].strip() != v and n != e:
                        out[n] = f"{e} {ev} requires {head}"
        return out

    # -- one resolution ---------------------------------------------------------------------------
    def _resolve(self, pinned: Mapping[str, str], moved: Mapping[str, str], leave: bool = True) -> Found | None:
        """The safe set with ``pinned`` (name -> version) kept and ``moved`` (name as asked -> the user's version)
        free, nearest first (``leave``: each to another version than the user's); None when the resolver finds none or
        ``accept`` refuses it."""
        key = tuple(sorted(pinned.items())) + tuple(sorted((f"~{n}", v) for n, v in moved.items())) + ((("", ""),) if leave else ())
        if key in self.tried:
            return self.tried[key]
        self.tries += 1
        found = self.tried[key] = self._resolve_once(pinned, moved, leave)
        return found

    def _resolve_once(self, pinned: Mapping[str, str], moved: Mapping[str, str], leave: bool) -> Found | None:
        # a moved pin moves: its own version is no candidate (kept, it is a smaller ``k``, tried before), so a set the
        # proof refuses at that version (a probe-proven break the resolver does not prune) is not found again
        reqs = tuple(f"{n}=={v}" for n, v in sorted(pinned.items())) + tuple(
            f"{n}!={_public(v)}" if leave and n in self.core and n not in self.loose and _public(v) == self.core[n] else n
            for n, v in sorted(moved.items()))
        req = Request("", self.row, self.model, reqs, python=self.python, platform=self.machine, origin=self.origin)
        try:
            roots, names, _prefer, overrides, model_reqs = project_roots(self.facts, req)
        except EnvironmentFailure:
            raise  # the index cannot be read: no search at all, said once by the caller
        except GlmcompatError:
            return None
        kept_overrides = {n: f"=={v}" for n, v in pinned.items() if n in self.departs}
        provider = NearProvider(self.facts, self.source, target=self.row, names=names,
                                overrides={**overrides, **kept_overrides}, model_reqs={**model_reqs, **kept_overrides}, python=self.python, platform=self.machine, project=True)
        provider.near = {}
        for asked, old in moved.items():
            try:
                provider.near[asked] = Version(old)
            except InvalidVersion:
                pass
        try:
            result = resolvelib.Resolver(provider, resolvelib.BaseReporter()).resolve(roots, max_rounds=MAX_ROUNDS)
        except (resolvelib.ResolutionImpossible, resolvelib.ResolutionTooDeep):
            return None
        except EnvironmentFailure:
            raise
        except GlmcompatError:
            return None
        pins = {n: str(c.version) for n, c in result.mapping.items() if not n.startswith("<")}
        renamed = {self.renames[n]: n for n in moved if n not in self.core and self.renames.get(n) in self.core}
        new_set: dict[str, str | None] = dict(self.packages)
        for old in renamed:
            new_set[old] = None
        for n, v in pins.items():
            if _public(str(new_set.get(n) or "")) != v:
                new_set[n] = v
        if not self.accept(new_set):
            return None
        changed = tuple(n for n in self.core if n in renamed or pins.get(n, self.core[n]) != self.core[n])
        cost = sum(_distance(provider, n, self.core[n], pins[n]) * _weight(n) for n in changed if n in pins)
        cost += sum(30 for _ in renamed)  # another project is the biggest move of all
        overridden = {dep: why for (n, v, dep), why in sorted(provider.overridden.items()) if pins.get(n) == v}
        for n in pinned:
            if n in self.departs:
                overridden[n] = f"{n} {pinned[n]} kept from {self.origin}, overriding {self.departs[n]}"
        return Found(dict(sorted(pins.items())), changed, renamed, overridden, cost)

    # -- the search -------------------------------------------------------------------------------
    def run(self) -> Found | Blocked | None:
        """The nearest safe set; a :class:`Blocked` when one of the user's pins keeps every set unsafe; None when no
        set of the core is safe at all (or the search ran out of tries)."""
        names = sorted(self.core)
        if not names:
            return None
        pinned = [n for n in names if n not in self.loose]
        free = tuple(n for n in names if n in self.loose)
        for k in range(0, min(MAX_MOVED, len(pinned)) + 1):
            best: Found | None = None
            for sub0 in _subsets(pinned, k):
                if self.tries >= MAX_TRIES:
                    break
                sub = tuple(sub0) + free
                for moved in self._movings(sub):
                    kept = {n: self.core[n] for n in names if n not in sub}
                    got = self._resolve(kept, moved)
                    if got is not None and (best is None or got.cost < best.cost):
                        best = got
            if best is not None:
                return best
            if self.tries >= MAX_TRIES:
                break
        return self._blocked(names)

    def _movings(self, sub: Sequence[str]) -> Iterator[dict[str, str]]:
        """The ways to free ``sub``: each under its own name, then each renamed project under its other name."""
        yield {n: self.core[n] for n in sub}
        alt = {(self.renames[n] if n in self.renames and self.renames[n] not in self.core else n): self.core[n]
               for n in sub}
        if set(alt) != set(sub):
            yield alt

    def _blocked(self, names: Sequence[str]) -> Blocked | None:
        """Which pin keeps every set unsafe: free every pin and see which of the user's is the one the nearest set
        must change; its least change is that set's version."""
        if self.tries >= MAX_TRIES + 20:
            return None
        everything = self._resolve({}, {n: self.core[n] for n in names}, leave=False)
        if everything is None:
            return None
        for n in sorted(everything.moved, key=lambda n: (-_weight(n), n)):
            return Blocked(n, self.core[n], everything.pins.get(n, ""), "no safe set of the core keeps it")
        return None


@dataclass(frozen=True)
class MatrixSource:
    """The matrix as a :class:`~glmcompat.decide.resolver.Source`, for a remedy with no index (the library's
    ``check_versions`` and ``check``, offline): the releases its rows name on ``platform`` (torch builds, kernels, the
    torch family's pairs, ``[[release]]`` rows) and the user's own ``known`` versions; the requirements its
    ``[[release]]`` and ``[[requires]]`` rows record. What the matrix does not record is no candidate, so a set found
    here is one the rules judge on evidence; the index (:class:`glmcompat.edges.sources.IndexSource`) finds more."""

    facts: Facts
    platform_: str = "x86_64"
    known: Mapping[str, str] = field(default_factory=dict)

    @property
    def machine(self) -> str:
        return self.platform_

    def versions(self, name: str) -> list[str]:
        f = self.facts
        out: set[str] = {v for r in f.rows("torch") for v in r.versions} if name == "torch" else set()
        out.update(v for r in f.rows("kernel") if r.package == name for v in r.versions)
        out.update(v for r in f.rows("family") if r.package == name for v in r.pairs)
        out.update(r.version for r in f.rows("release") if r.package == name)
        if name in self.known:
            out.add(_public(self.known[name]))
        return sorted(out, key=_key)

    def requires(self, name: str, version: str) -> list[str]:
        out = [q for r in self.facts.rows("release") if r.package == name and r.version == version for q in r.requires]
        for r in self.facts.rows("requires"):
            try:
                if r.package == name and SpecifierSet(r.versions).contains(version, prereleases=True):
                    out.append(r.requires)
            except InvalidSpecifier:
                continue
        return out

    def unavailable(self, name: str) -> dict[str, list[str]]:
        return {}

    def platform(self) -> str:
        return f"the matrix's releases for Linux {self.platform_}"


def _key(v: str) -> tuple[int, Version | str]:
    try:
        return (1, Version(v))
    except InvalidVersion:
        return (0, v)


def search(facts: Facts, source: Source, *, target: str, model: str | None, packages: Mapping[str, str],
           accept: Callable[[dict[str, str | None]], bool], python: str = "3.11",
           origin: str = "your file", loose: frozenset[str] = frozenset()) -> tuple[Found | Blocked | None, int]:
    """The nearest safe set of ``packages`` for ``target`` on ``source``'s machine, and how many resolutions it took."""
    s = Search(facts, source, target, model, packages, accept, python, origin, loose)
    return s.run(), s.tries


__all__ = ["MAX_MOVED", "Blocked", "Found", "MatrixSource", "NearProvider", "Search", "search"]

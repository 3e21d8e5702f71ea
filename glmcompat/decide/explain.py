"""Why a resolution fails, and why a newer release is not in the chosen set: derived from the resolver's
structured causes and rendered uv-style ("Because ..., and ..., we can conclude that ...", then one hint).

This is the edge of the decision layer: :mod:`glmcompat.decide.resolver` resolves and raises
:class:`~glmcompat.decide.resolver.Unresolvable` with the causes unrendered (the requirements, each
with its :class:`~glmcompat.decide.resolver.Why`, the matrix's :class:`~glmcompat.decide.resolver.Ruled`
verdicts, resolvelib's causes); this module derives a :class:`Skip` from them and renders it, and
:func:`resolve` raises :class:`~glmcompat.model.errors.UnsafeError` with the text as its message and
the :class:`Skip` as its structured cause. Decisions look at kinds, never at the rendered text.

* **Skip reasons are derived, not guessed**: :func:`skip_reasons` explains each newer release the
  resolution left out by the first clause that rules it out (a root requirement, the chosen set's
  pin, the matrix, one of its own requirements), checking with a resolution pinned to it that the
  conclusion holds, and offers one remedy.
* **A failure names its first cause**: a package the roots ask for that no admissible release
  satisfies, else why each release of the package the set is built around (the engine) fails,
  else resolvelib's causes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import resolvelib
from packaging.version import Version

from glmcompat.decide.resolver import (
    ASKED,
    BUILT,
    DECLARED,
    DRIVER,
    FAMILY,
    IS_ABI,
    KERNELS,
    LINKS,
    MODEL,
    NO_CODE,
    OVERRIDE,
    RENAMED,
    ROOT_KINDS,
    SAME,
    STACK,
    TARGET,
    TARGET_NEEDS,
    USER,
    Outcome,
    Provider,
    Req,
    Request,
    Ruled,
    Source,
    Unresolvable,
    Why,
    is_pseudo,
    make_provider,
    parse_spec,
    root_requirements,
    run,
    served_elsewhere,
    solve,
)
from glmcompat.decide.stacks import ENGINES, stack_engine
from glmcompat.matrix.view import Facts
from glmcompat.model import gpu
from glmcompat.model.errors import UnsafeError
from glmcompat.model.findings import Cause, cite, dedupe


@dataclass(frozen=True)
class Noted:
    """A premise with the qualification a derivation adds to it ("(and 3 older release(s) likewise)")."""

    premise: Req | Ruled
    note: str


# One premise of a derivation: a requirement (who asks, on what grounds: its Why), a matrix verdict, one of those
# qualified, or a statement this module derived (worded here, where all the text is).
Premise = Req | Ruled | Noted | str


def render(p: Premise) -> str:
    """A premise as its clause: the one formatter (requirements by :func:`clause`, verdicts by :func:`ruled_clause`)."""
    if isinstance(p, Req):
        return clause(p)
    if isinstance(p, Ruled):
        return ruled_clause(p)
    if isinstance(p, Noted):
        return render(p.premise) + p.note
    return p


@dataclass(frozen=True)
class Skip(Cause):
    """Why a release is not in the chosen set, or why no safe set exists: a derivation and one remedy.

    ``kind``: ``root`` (a requirement of yours, the model's or the target's), ``pinned`` (the chosen
    set pins otherwise and no release of the pinning package allows it), ``ruled-out`` (the matrix),
    ``conflict`` (one of its requirements cannot be met), ``preference`` (a safe set with it exists;
    the upgrade prefers another), ``abi`` (a kernel built against another torch than yours).
    ``subject``: the package whose trouble it is. ``premises``: the derivation as data (uv's derivation tree,
    flattened; resolvelib's requirement information), from which :func:`skip` renders ``clauses``.
    """

    premises: tuple[Premise, ...] = ()

    def text(self, sep: str = " ") -> str:
        return f"{self.because()}{sep}hint: {self.remedy}"


def skip(kind: str, subject: str, premises: Iterable[Premise], conclusion: str, remedy: str,
         evidence: tuple[tuple[str, str], ...] = ()) -> Skip:
    """A :class:`Skip` from its premises, rendered once into its clauses."""
    ps = tuple(premises)
    return Skip(kind, subject, tuple(render(p) for p in ps), conclusion, remedy, evidence, ps)


def clause(r: Req) -> str:
    """The clause requirement ``r`` contributes to an explanation, from its :class:`Why` (who asks, on what
    grounds): the one place a requirement's reason becomes text."""
    w = r.why
    if w.kind == USER:
        return f"{w.pkg} requires {r.name}{r.spec}" if w.pkg else f"you require {r.show()}"
    if w.kind == STACK:
        return f"stack {w.pkg} asks for {r.name}"
    if w.kind == ASKED:
        return f"{r.name} {w.asked} is asked for" if w.asked else f"{r.show()} is asked for"
    if w.kind == DECLARED:
        return f"{w.parent} requires {r.show()}"
    if w.kind == MODEL:
        said = f" ({w.evidence}: {cite(w.source)})" if w.evidence or w.source else ""
        return f"model {w.pkg} needs {r.name}{w.asked}{said}"
    if w.kind == TARGET:
        return f"{w.pkg} needs {r.name}{w.asked} ({w.reason})"
    if w.kind == OVERRIDE:
        return w.reason
    if w.kind == RENAMED:
        return f"{w.parent} and {w.asked} are one project under two names (only one of them can be installed)"
    if w.kind == SAME:
        return f"{w.parent} and {w.asked} must be the same version when both are installed"
    if w.kind == IS_ABI:
        return f"{w.parent} is that ABI"
    if w.kind == LINKS:
        if w.pkg == "torch":
            return f"{w.parent}'s default wheel is built for CUDA {w.asked}"
        return f"{w.parent} links the CUDA {w.asked} runtime"
    if w.kind == BUILT:
        return f"{w.parent} was built against torch {w.asked} (evidence {w.evidence}: `{cite(w.source)}`)"
    if w.kind == FAMILY:
        return f"{w.parent} was built for torch{w.asked} (evidence {w.evidence}: {w.parent}'s torch requirement)"
    return f"{r.show()} is required ({w.kind} {w.parent})"


def ruled_clause(r: Ruled) -> str:
    """The clause a matrix verdict contributes (why ``r.name`` ``r.version`` is never offered): the one place it
    becomes text."""
    what = r.wheel or f"{r.name} {r.version}"
    if r.kind == NO_CODE and r.cpu_only:
        return (f"you lock for {r.target} on {r.platform}, and {what} is a CPU-only build (no CUDA, no GPU code; "
                f"evidence {r.evidence})")
    if r.kind == NO_CODE:
        shown = ", ".join(r.codes) or "no GPU code"
        where = (f"which runs only on compute capability {' or '.join(r.runs_on)}" if r.runs_on else
                 "which runs on no known target")
        near = gpu.parse_code(r.arch_specific) if r.arch_specific else None
        note = f" ({r.arch_specific} is arch-specific: {near.major}.{near.minor} only)" if near else ""
        return f"you lock for {r.target} (compute capability {r.capability}), and {what} carries {shown}, {where}{note}"
    if r.kind == TARGET_NEEDS:
        return f"{r.target} needs {r.name}{r.spec} ({r.reason})"
    if r.kind == DRIVER:
        return (f"the machine's NVIDIA driver is {r.driver}, and {what} is built for CUDA {r.cuda}, which needs driver "
                f">= {r.needs}")
    lacks = {"build": f"for {what} (CUDA runtime, GPU code)", "family": f"for the torch {r.name} {r.version} was built for",
             "jit": f"that {r.name} {r.version} is free of the torch C++ ABI"}  # what the matrix lacks, by r.missing
    return "the matrix has no evidence " + lacks.get(r.missing, f"for {what} (the torch it was built against)")


def resolve(facts: Facts, source: Source, req: Request, *, provider: Provider | None = None) -> Outcome:
    """Resolve the core (:func:`glmcompat.decide.resolver.solve`); when no safe set exists, raise
    :class:`UnsafeError` whose message is the uv-style derivation and whose ``causes`` hold it structured."""
    try:
        return solve(facts, source, req, provider=provider)
    except Unresolvable as e:
        why = failure(e.provider, req, e.requirements, e.roots)
        raise UnsafeError(why.text("\n"), causes=(why,)) from None


def _span(versions: Sequence[Version | str]) -> str:
    vs = sorted({Version(str(v)) for v in versions})
    if not vs:
        return ""
    return str(vs[0]) if len(vs) == 1 else f"{vs[0]} .. {vs[-1]}"


class Explainer:
    """Derives why ``name==version`` cannot be (or is not) part of the set: the first clause that
    rules it out, checked against a resolution pinned to it (memoised)."""

    def __init__(self, provider: Provider, roots: list[Req], chosen: Mapping[str, str] | None = None) -> None:
        self.p = provider
        self.roots = roots
        self.chosen = {n: Version(v) for n, v in (chosen or {}).items()}
        self.t = provider.target.name
        self._feasible: dict[tuple[str, str], dict[str, str] | Exception] = {}
        self._memo: dict[tuple[str, str, bool], Skip | None] = {}
        self._asked = {r.name for r in roots if r.why.kind in (USER, STACK)}

    # -- helpers ----------------------------------------------------------------------------------
    def roots_on(self, name: str) -> list[Req]:
        return [r for r in self.roots if r.name == name]

    def fitting(self, name: str, extra: Iterable[Req] = ()) -> list[Version]:
        """Releases of ``name`` the matrix admits that every root requirement (and ``extra``) accepts."""
        reqs = self.roots_on(name) + list(extra)
        return [v for v in self.p.versions(name) if all(r.ok(v) for r in reqs) and self.p.ruled(name, str(v)) is None]

    def pinned_run(self, name: str, version: str) -> dict[str, str] | Exception:
        """The set a resolution pinned to ``name==version`` finds, or the exception it fails with."""
        key = (name, version)
        if key not in self._feasible:
            roots = [r for r in self.roots if not (r.name == name and r.why.kind == STACK)]
            roots.append(Req(name, parse_spec(f"=={version}"), Why(ASKED, asked=version)))
            try:
                res = run(self.p, roots)
                self._feasible[key] = {n: str(c.version) for n, c in res.mapping.items() if not is_pseudo(n)}
            except (resolvelib.ResolutionImpossible, resolvelib.ResolutionTooDeep) as e:
                self._feasible[key] = e
        return self._feasible[key]

    def _ruled_skip(self, r: Ruled) -> Skip:
        return skip("ruled-out", r.name, (r,), f"{r.name} {r.version} cannot be used on {self.t}", r.remedy)

    def _parents_excluding(self, name: str, versions: Sequence[Version]) -> list[tuple[str, Req]]:
        """(chosen package, its requirement) pairs of the chosen set that accept none of ``versions``
        of ``name``, the package the set is built around (sglang) first."""
        out = []
        for parent, pv in self.chosen.items():
            if parent == name:
                continue
            for r in self.p.dependencies(parent, str(pv)):
                if r.name == name and not any(r.ok(v) for v in versions):
                    out.append((parent, r))
                    break
        out.sort(key=lambda pr: _authority(self.p, pr[0]))
        return out

    def _allowing(self, parent: str, name: str, versions: Sequence[Version]) -> list[Version]:
        """Releases of ``parent`` that fit and would take one of ``versions`` of ``name``: they require
        ``name`` and accept one of them (or, when the roots ask for ``name`` themselves, do not require it)."""
        out = []
        for x in self.fitting(parent):
            on = [r for r in self.p.dependencies(parent, str(x)) if r.name == name]
            if (on or name in self._asked) and any(all(r.ok(v) for r in on) for v in versions):
                out.append(x)
        return out

    # -- the derivation ---------------------------------------------------------------------------
    def why_not(self, name: str, version: str, depth: int = 0, *, pinned_check: bool = True) -> Skip | None:
        """Why ``name==version`` is not in the set; None when nothing rules it out."""
        key = (name, version, pinned_check)
        if key not in self._memo:
            self._memo[key] = None  # a cycle reads "nothing found"
            self._memo[key] = self._why_not(name, Version(version), depth, pinned_check)
        return self._memo[key]

    def _why_not(self, name: str, v: Version, depth: int, pinned_check: bool) -> Skip | None:
        vs = str(v)
        # 1. A requirement of yours, the model's or the target's.
        for r in self.roots_on(name):
            if not r.ok(v):
                return skip("root", name, (r,), f"{name} {vs} is ruled out", _root_remedy(r))
        # 2. The chosen set pins otherwise, and no release of the pinning package would take it.
        for parent, r in self._parents_excluding(name, [v]):
            if not self._allowing(parent, name, [v]):
                return self._pinned(name, vs, parent, r, f"{name} {vs}")
        # 3. The matrix.
        ruled = self.p.ruled(name, vs)
        if ruled is not None:
            return self._ruled_skip(ruled)
        # 4. One of its own requirements that nothing can meet (first in METADATA order).
        own = self._own_requirements(name, v)
        if own is not None:
            return own
        if not pinned_check:
            return None
        # 5. The whole set, pinned to it: if it resolves, a preference kept the chosen release.
        found = self.pinned_run(name, vs)
        if isinstance(found, dict):
            return self._preference(name, vs, found)
        if depth < 3:
            # ... else the pinning package's releases that would take it all fail,
            for parent, r in self._parents_excluding(name, [v]):
                chain = self._via_parent(name, [v], f"{name} {vs}", parent, r, depth)
                if chain is not None:
                    return skip(chain.kind, chain.subject, chain.premises, f"{name} {vs} cannot join the set", chain.remedy)
            # ... or one of its requirements excludes the chosen release, and every release that
            # meets it is ruled out in turn.
            for r in self.p.dependencies(name, vs):
                have = self.chosen.get(r.name)
                if is_pseudo(r.name) or have is None or r.ok(have):
                    continue
                fit = self.fitting(r.name, [r])
                what = (f"a {r.name} release it accepts ({', '.join(map(str, fit))})" if len(fit) > 1 else
                        f"{r.name} {fit[0]}" if fit else r.show())
                for parent, pr in self._parents_excluding(r.name, fit):
                    sub: Skip | None
                    if not self._allowing(parent, r.name, fit):
                        sub = self._pinned(r.name, what, parent, pr, what)
                    else:
                        sub = self._via_parent(r.name, fit, what, parent, pr, depth)
                    if sub is not None:
                        return skip("conflict", sub.subject, (r, *sub.premises), f"{name} {vs} cannot join the set", sub.remedy)
        causes = list(found.causes) if isinstance(found, resolvelib.ResolutionImpossible) else []
        return _from_causes(self.p, causes, f"{name} {vs} cannot join the set", name, type(found).__name__)

    def _pinned(self, name: str, vs: str, parent: str, r: Req, what: str) -> Skip:
        others = [x for x in self.fitting(parent) if x != self.chosen.get(parent)]
        clauses: list[Premise] = [r]
        if others:
            clauses.append(f"no other {parent} release that fits ({_span(others)}) takes {what}")
        remedy = f"{name} follows {parent}'s pin: it takes a newer {parent} release that allows {what} (none on the index yet)"
        newer = _newer_elsewhere(self.p, parent, self.chosen.get(parent))
        if newer is not None:  # newer releases exist, without a wheel this interpreter installs: say so
            clauses.append(newer[0])
            remedy = f"{name} follows {parent}'s pin: {newer[1]}"
        return skip("pinned", name, clauses, f"{what} cannot join the set", remedy)

    def _via_parent(self, name: str, versions: Sequence[Version], what: str, parent: str, r: Req, depth: int) -> Skip | None:
        """``what`` needs one of the ``parent`` releases that would take it; each of them fails."""
        allowing = self._allowing(parent, name, versions)
        subs = [self.why_not(parent, str(x), depth + 1) for x in allowing]
        if not allowing or any(s is None or s.kind == "preference" for s in subs):
            return None
        sub = subs[0]
        assert sub is not None
        head = f"only {parent} {_span(allowing)} would take {what} ({clause(r)})"
        return skip("conflict", sub.subject, (head, *sub.premises), f"{what} cannot join the set", sub.remedy)

    def _own_requirements(self, name: str, v: Version) -> Skip | None:
        """The first requirement of ``name==v`` that no admissible release can meet next to its other
        requirements and the roots (one level deep: pseudo-packages included)."""
        vs = str(v)
        deps = self.p.dependencies(name, vs)
        direct: dict[str, list[Req]] = {}
        for r in deps:
            direct.setdefault(r.name, []).append(r)
        for r in deps:
            if is_pseudo(r.name):
                clash = self._pseudo_clash(r, name, direct)
                if clash is not None:
                    return skip("conflict", clash[0], clash[1], f"{name} {vs} cannot be used", clash[2])
                continue
            q = r.name
            reqs = self.roots_on(q) + direct.get(q, [])
            listed = [x for x in self.p.versions(q) if r.ok(x)]
            if not listed:
                elsewhere = _unavailable(self.p, q, [r])
                if elsewhere is not None:  # on the index, but without a wheel for this machine (or only as an sdist)
                    return skip("conflict", q, (r, elsewhere[0]), f"{name} {vs} cannot be used", elsewhere[1])
                return skip("conflict", q, (r, f"no {q} release on the index satisfies {r.show()}"),
                            f"{name} {vs} cannot be used", f"{name} {vs} needs a {q} release the index does not have")
            both = [x for x in listed if all(o.ok(x) for o in reqs)]
            if not both:
                other = next(o for o in reqs if not any(o.ok(x) for x in listed))
                return skip("conflict", q, (r, other), f"{name} {vs} cannot be used", _root_remedy(other))
            admitted = [x for x in both if self.p.ruled(q, str(x)) is None]
            if not admitted:
                ruled = self.p.ruled(q, str(both[0]))
                assert ruled is not None
                more = f" (and {len(both) - 1} older {q} release(s) likewise)" if len(both) > 1 else ""
                return skip("conflict", q, (r, Noted(ruled, more)), f"{name} {vs} cannot be used", ruled.remedy)
            viable = [x for x in admitted if self._candidate_clash(q, x, name, direct) is None]
            if not viable:
                clash = self._candidate_clash(q, admitted[0], name, direct)
                assert clash is not None
                return skip("conflict", clash[0], (r, *clash[1]), f"{name} {vs} cannot be used", clash[2])
        return None

    def _candidate_clash(self, q: str, x: Version, parent: str, direct: dict[str, list[Req]]) -> tuple[str, tuple[Premise, ...], str] | None:
        """Whether candidate ``q==x`` clashes with what ``parent`` requires directly (or the roots)."""
        for d in self.p.dependencies(q, str(x)):
            if is_pseudo(d.name):
                clash = self._pseudo_clash(d, parent, direct)
                if clash is not None:
                    return clash
                continue
            reqs = self.roots_on(d.name) + direct.get(d.name, [])
            if not reqs:
                continue
            dom = [y for y in self.p.versions(d.name) if all(o.ok(y) for o in reqs)]
            if dom and not any(d.ok(y) for y in dom):
                forced = next((o for o in reqs if not any(d.ok(y) for y in self.p.versions(d.name) if o.ok(y))), reqs[0])
                return (d.name, (d, forced), f"{forced.why.parent or 'the set'} and {q} {x} do not fit together")
        return None

    def _pseudo_clash(self, d: Req, parent: str, direct: dict[str, list[Req]]) -> tuple[str, tuple[Premise, ...], str] | None:
        """Whether pseudo requirement ``d`` (of ``parent`` or one of its direct dependencies) meets no
        value that a package certainly in the set (a direct dependency of ``parent``, or one the roots
        ask for) can provide."""
        assert d.exact is not None
        forced: dict[str, list[Req]] = {}
        for r in self.roots:
            if r.name in self._asked or r.why.kind == ASKED or r.name == parent:
                forced.setdefault(r.name, []).append(r)
        for n, rs in direct.items():
            forced.setdefault(n, []).extend(rs)
        for f, reqs in forced.items():
            if is_pseudo(f) or f == d.why.pkg:
                continue
            dom = [y for y in self.p.versions(f) if all(o.ok(y) for o in reqs) and self.p.ruled(f, str(y)) is None]
            values: set[str] = set()
            always = bool(dom)
            for y in dom:
                emitted = [e for e in self.p.dependencies(f, str(y)) if e.name == d.name]
                if not emitted:
                    always = False
                    break
                for e in emitted:
                    values |= set(e.exact or ())
            if not always or values & d.exact:
                continue
            src = next((o for o in reqs if o.why.kind in ROOT_KINDS), reqs[0])
            clauses: list[Premise] = [d, src]
            if d.why.kind == SAME:
                want = sorted(d.exact, key=Version)[0]
                listed = {str(y) for y in self.p.versions(f)}
                clauses.append(f"no {f} {want} is on the index" if want not in listed else f"{f} {want} is ruled out")
                remedy = (_root_remedy(src) if src.why.kind == USER else
                          f"{d.why.pkg} {d.why.ver} needs {f} {want}, which the index does not have")
            elif d.why.kind == RENAMED:
                remedy = _root_remedy(src) if src.why.kind == USER else f"{d.why.parent} and {f} cannot be installed together"
            else:
                shown = next(e for e in self.p.dependencies(f, str(dom[0])) if e.name == d.name)
                clauses.append(Noted(shown, f" (and every other {f} release that fits, likewise)" if len(dom) > 1 else ""))
                remedy = _root_remedy(src) if src.why.kind == USER else f"{d.why.parent} and {f} {_span(dom)} do not fit together"
            return (f, tuple(clauses), remedy)
        return None

    def _preference(self, name: str, vs: str, found: dict[str, str]) -> Skip:
        """``name==vs`` resolves; say which preference kept the chosen release instead."""
        chosen = {n: str(v) for n, v in self.chosen.items()}
        by = self.p.preferred_by.get(name)
        older = sorted((n for n, v in found.items() if n in chosen and n != name and Version(v) < Version(chosen[n])),
                       key=lambda n: _authority(self.p, n))
        if by is not None and chosen.get(name) == by[1] and not older:
            parents = [f"{p} {v}" for p, v in chosen.items() if p != name and
                       any(r.name == name and not r.pinned for r in self.p.dependencies(p, v))]
            left = f"{parents[0]} leaves {name} open, and " if parents else ""
            return skip("preference", name,
                        (f"{left}stack {by[0]} (known to work on {self.t}) pins {name} {by[1]}",),
                        f"the upgrade prefers {name} {by[1]}; {name} {vs} resolves too",
                        f"`--with {name}=={vs}` takes it")
        if older:
            n = older[0]
            clauses: list[Premise] = [r for r in self.p.dependencies(n, chosen[n]) if r.name == name and not r.ok(Version(vs))]
            clauses.append(f"a safe set with {name} {vs} exists, but it needs {n} {found[n]} instead of {chosen[n]}")
            clauses += [r for r in self.p.dependencies(n, found[n]) if r.name == name and r.why.kind == OVERRIDE]
            return skip("preference", n, clauses, f"the upgrade prefers the newer {n}", f"`--with {name}=={vs}` gives that set")
        return skip("preference", name, (f"a safe set with {name} {vs} exists",),
                    f"the resolution preferred {name} {chosen.get(name, '?')}", f"`--with {name}=={vs}` takes it")


def _authority(provider: Provider, name: str) -> tuple[bool, int, str]:
    """Sort key: the package the set is built around (the engine) first, then by resolution rank, reversed."""
    return (name not in ENGINES, -provider.rank(name), name)


def _root_remedy(r: Req) -> str:
    if r.why.kind == USER and r.why.pkg:  # a project's own requirement (why.pkg: its file)
        return f"relax {r.name}{r.spec} in {r.why.pkg}"
    if r.why.kind == USER:
        return f"relax or drop `--with {r.name}{r.spec}`"
    if r.why.kind == MODEL:
        return f"the model {r.why.pkg} needs {r.name}{r.spec}; serve another model or use a release that knows it"
    if r.why.kind == TARGET:
        return f"{r.why.pkg} needs {r.name}{r.spec}"
    return f"choose another {r.name}"


def _from_causes(provider: Provider, causes: Sequence[Any], conclusion: str, subject: str, what: str) -> Skip:
    """A derivation from resolvelib's ``causes`` (the fallback when no single clause explains it); ``what``
    names the failure when there are none."""
    clauses: list[Premise] = []
    said: set[str] = set()

    def add(p: Premise) -> None:
        text = render(p)
        if text not in said:
            said.add(text)
            clauses.append(p)

    for c in causes:
        r: Req = c.requirement
        if r.why.kind == DECLARED and c.parent is not None:  # resolvelib's parent: the candidate that asked
            r = Req(r.name, r.spec, Why(DECLARED, c.parent.name, str(c.parent.version)), r.exact, r.also)
        add(r)
        pruned = provider.pruned.get(r.name)
        if pruned and not is_pseudo(r.name):
            reason = max(pruned.items(), key=lambda kv: Version(kv[0]))[1]
            add(f"the matrix rules out {len(pruned)} {r.name} release(s) (e.g. {ruled_clause(reason)})")
    if not clauses:
        clauses = [f"the requirements conflict ({what})"]
    return skip("conflict", subject, clauses[:6], conclusion, f"`glmcompat upgrade --target {provider.target.name}` shows what does resolve")


def failure(provider: Provider, req: Request, causes: Iterable[Any], roots: list[Req] | None = None) -> Skip:
    """Why no safe set of the core exists, as a :class:`Skip` whose conclusion says so: the ABI story when you
    require a torch the stack's kernel was not built against, else the first failure of the roots or of the
    package the set is built around, else resolvelib's ``causes``."""
    facts = provider.facts  # the lock's platform's view
    t = provider.target
    stack = facts.stack(req.stack) if not req.origin else None
    roots = roots if roots is not None else root_requirements(facts, req)[0]
    # The pins the set is built around: the stack's, or the project's own exact pins.
    pins = dict(stack.pins) if stack is not None else {
        r.name: s.version for r in roots if r.why.kind == USER for s in r.spec if s.operator == "==" and "*" not in s.version}
    kind, subject = "abi", "torch"
    clauses: list[Premise] = []
    evidence: list[tuple[str, str]] = []  # in full, for --json and -v; a clause cites only the probe
    hint = ""
    torch_req = next((r for r in roots if r.name == "torch" and r.why.kind == USER), None)
    if torch_req is not None:
        # The ABI story first: the stack's kernel, the torch it was built for, and whether any kernel
        # release built for the requested torch carries code for the target.
        for kp in sorted((set(provider.names) & provider.kernel_names) - set(ENGINES)):
            pin = pins.get(kp)
            row = facts.kernel(kp, pin) if pin else None
            if row is not None and not torch_req.ok(Version(row.torch)):
                exact = next((s.version for s in torch_req.spec if s.operator == "==" and "*" not in s.version), None)
                plat = "" if provider.machine == "x86_64" else f" --platform {provider.machine}"
                probe = f"glmcompat abi {kp}=={pin}{plat} --torch {exact}" if exact else cite(row.source)
                clauses.append(f"{kp} {pin} was built against torch {row.torch} (evidence {row.evidence}: `{probe}`) "
                               f"and you require {torch_req.show()}")
                evidence.append((row.evidence, row.source))
            fam = set(KERNELS) if kp in KERNELS else {kp}
            built = [(v, r) for v, r in facts.kernels_of(fam) if torch_req.ok(Version(r.torch))]
            runnable = [v for v, r in built if r.sass is None or
                        gpu.runnable(list(r.sass) + list(r.ptx or []), provider.capability)]
            if not runnable and kp in KERNELS:
                clauses.append(f"no kernel release built against {torch_req.show()} carries code for {t.name}"
                               + (f" (only {', '.join(v for v, _ in built)}, which do not run there)" if built else ""))
                break
        if clauses and stack is not None:
            hint = (f"keep torch=={stack.pins.get('torch')} (the stack's pin), or run "
                    f"`glmcompat upgrade --target {t.name}` for the newest safe set")
        elif clauses:
            kern = next((k for k in sorted(set(provider.names) & provider.kernel_names) if k in pins), None)
            row = facts.kernel(kern, pins[kern]) if kern is not None else None
            hint = (f"in {req.origin}, require torch=={row.torch} (the torch {kern} {pins[kern]} was built against)"
                    if row is not None and kern is not None else f"relax {torch_req.show()} in {req.origin}")
    if not clauses:
        sub = _root_failure(provider, roots) or _top_failure(provider, roots)
        if sub is None:
            sub = _from_causes(provider, list(causes), "", "", "ResolutionImpossible")
        kind, subject = sub.kind, sub.subject
        clauses = list(sub.premises)
        hint = sub.remedy
        engine = stack_engine(stack) if stack is not None else next((e for e in ENGINES if e in provider.names), "")
        wanted = next((r for r in roots if r.name == engine and r.why.kind == MODEL), None)
        yours = any(r.name == engine and r.why.kind == USER for r in roots)
        if wanted is not None and req.model and not yours and sub.subject == engine and sub.kind in ("root", "ruled-out"):
            # No release of the engine that knows the model fits: say which other engine serves it.
            elsewhere = served_elsewhere(facts, facts.model(req.model), engine, t.name, provider.machine)
            if elsewhere:
                hint = f"no {engine} release that serves model {req.model} ({engine}{wanted.spec}) fits here; {elsewhere}"
    return skip(kind, subject, clauses or ["the requirements conflict"],
                f"no safe set of the core exists for {t.name} ({req.subject}{', model ' + req.model if req.model else ''})",
                hint or (f"run `glmcompat upgrade --target {t.name} --stack {req.stack}` to see the newest safe set"
                         if stack is not None else f"relax the core requirements in {req.origin}"), dedupe(evidence))


def explain(provider: Provider, req: Request, causes: Iterable[Any], roots: list[Req] | None = None) -> str:
    """:func:`failure` rendered: "Because ..., and ..., we can conclude that ..." then, on its own line, one hint."""
    return failure(provider, req, causes, roots).text("\n")


def _root_failure(provider: Provider, roots: list[Req]) -> Skip | None:
    """A package the roots ask for that no admissible release satisfies (yours first)."""
    order = sorted({r.name for r in roots if not is_pseudo(r.name)},
                   key=lambda n: (not any(r.why.kind == USER for r in roots if r.name == n), n))
    for name in order:
        reqs = [r for r in roots if r.name == name]
        yours = [r for r in reqs if r.why.kind == USER]
        if yours and not any(all(r.ok(v) for r in yours) for v in provider.versions(name)):
            elsewhere = _unavailable(provider, name, yours)
            if elsewhere:  # what you ask for is on the index only as an sdist or for other platforms
                return skip("root", name, (*yours, elsewhere[0]), "", elsewhere[1])
        listed = [v for v in provider.versions(name) if all(r.ok(v) for r in reqs)]
        admitted = [v for v in listed if provider.ruled(name, str(v)) is None]
        if admitted:
            continue
        head: list[Premise] = [r for r in reqs if r.why.kind != STACK] or [reqs[0]]
        if not listed:
            elsewhere = _unavailable(provider, name, reqs)
            if elsewhere:
                return skip("root", name, (*head, elsewhere[0]), "", elsewhere[1])
            return skip("root", name, (*head, f"no {name} release on the index satisfies them"), "",
                        _root_remedy(next((r for r in reqs if r.why.kind == USER), reqs[0])))
        ruled = provider.ruled(name, str(listed[0]))
        assert ruled is not None
        more = f" (and {len(listed) - 1} older release(s) likewise)" if len(listed) > 1 else ""
        return skip("ruled-out", name, (*head, Noted(ruled, more)), "", ruled.remedy)
    return None


def _newer_elsewhere(provider: Provider, name: str, chosen: Version | None) -> tuple[str, str] | None:
    """(clause, remedy) when releases of ``name`` newer than ``chosen`` are on the index with no wheel for this
    interpreter and platform (sglang 0.5.22 and 0.5.23 ship cp311 .. cp313 wheels, none for CPython 3.10)."""
    there = {Version(v): files for v, files in provider.source.unavailable(name).items()
             if chosen is None or Version(v) > chosen}
    if not there:
        return None
    vs = sorted(there)
    files = there[vs[-1]]
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    where = provider.source.platform()
    listed = ", ".join(map(str, vs[-3:])) + (f" and {len(vs) - 3} older" if len(vs) > 3 else "")

    pys = sorted({(int(m.group(1)), int(m.group(2))) for f in files for m in [re.search(r"-cp(\d)(\d+)-", f)] if m})
    use = f"`--python {pys[0][0]}.{pys[0][1]}` (its oldest wheel's Python)" if pys else "a Python it has a wheel for"
    return (f"the newer {name} {listed} {'is' if len(vs) == 1 else 'are'} on the index with no wheel for {where} "
            f"({name} {vs[-1]}: only {shown})",
            f"{name} {vs[-1]} ships no wheel for {where}: resolve with {use} to reach it")


def _unavailable(provider: Provider, name: str, reqs: list[Req]) -> tuple[str, str] | None:
    """(clause, remedy) when the releases ``reqs`` ask for are on the index without a wheel for this
    interpreter and platform (sdists, other platforms): a lock never builds from source."""
    source = provider.source
    there = {v: files for v, files in source.unavailable(name).items() if all(r.ok(Version(v)) for r in reqs)}
    if not there:
        return None
    v = max(there, key=Version)
    files = there[v]
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    where = source.platform()
    more = f" (nor {len(there) - 1} other release(s) it allows)" if len(there) > 1 else ""
    return (f"{name} {v} has no wheel for {where} on the index{more}, only {shown}, and a lock never builds from source",
            f"choose a {name} release with a wheel for {where}")


def _top_failure(provider: Provider, roots: list[Req]) -> Skip | None:
    """Why each release of the package the set is built around (the engine) fails, newest first."""
    names = [r.name for r in roots if r.why.kind in (STACK, USER) and not is_pseudo(r.name)]
    if not names:
        return None
    top = next((e for e in ENGINES if e in names), names[0])
    ex = Explainer(provider, roots)
    cands = ex.fitting(top)
    if not cands:
        return None
    skips = [(v, ex.why_not(top, str(v), pinned_check=False)) for v in cands]
    first = skips[0][1]
    if first is None:
        return None
    clauses = list(first.premises)
    rest = skips[1:]
    if rest:
        same = [v for v, s in rest if s is not None and s.kind == first.kind and
                (s.subject == first.subject or {s.subject, first.subject} <= set(KERNELS))]
        other = [(v, s) for v, s in rest if v not in same]
        if same:
            what = {"ruled-out": "is ruled out the same way", "conflict": "fails the same way"}.get(first.kind, "fails the same way")
            if first.kind == "conflict" and provider.pruned.get(first.subject) and first.subject in provider.kernel_names:
                what = f"requires a kernel release ({' or '.join(sorted(set(KERNELS)))}) that cannot run on {provider.target.name} either"
            elif first.kind == "conflict":
                # Name what they pin instead (vllm releases each pin their own torch).
                pins = sorted({Version(sp.version) for v in same for r in provider.dependencies(top, str(v))
                               if r.name == first.subject and r.why.kind == DECLARED for sp in r.spec if sp.operator == "=="})
                if pins:
                    shown = ", ".join(map(str, pins[:-1])) + (" or " if len(pins) > 1 else "") + str(pins[-1])
                    what += f" (each pins {first.subject} {shown})"
            clauses.append(f"every older {top} release that fits ({_span(same)}) {what}")
        for v, s in other[:2]:
            clauses.append(f"{top} {v}: " + (s.clauses[0] if s is not None else "does not resolve"))
    return skip(first.kind, first.subject, clauses, "", first.remedy)


def skip_reasons(facts: Facts, source: Source, req: Request, outcome: Outcome, limit: int = 3) -> dict[str, dict[str, Skip | str]]:
    """For each package of the chosen set, the newer releases the resolution skipped, each with a
    :class:`Skip` (a ``"..."`` entry counts the ones beyond ``limit``)."""
    provider, roots = outcome.provider, outcome.roots
    if provider is None:
        provider, roots = make_provider(facts, source, req)
    ex = Explainer(provider, roots, outcome.pins)
    out: dict[str, dict[str, Skip | str]] = {}
    for name in sorted(outcome.pins):
        chosen = Version(outcome.pins[name])
        newer = [v for v in provider.versions(name) if v > chosen]
        for v in newer[:limit]:
            s = ex.why_not(name, str(v))
            out.setdefault(name, {})[str(v)] = s if s is not None else skip(
                "preference", name, (f"{name} {v} fits on its own",), f"the resolution preferred {name} {chosen}",
                f"`--with {name}=={v}` takes it")
        if len(newer) > limit:
            out.setdefault(name, {})["..."] = f"{len(newer) - limit} more newer release(s) not examined"
    return out


def skipped_newer(facts: Facts, source: Source, req: Request, outcome: Outcome, limit: int = 3) -> dict[str, dict[str, str]]:
    """:func:`skip_reasons` as one line of text per skipped release."""
    return {n: {v: (s.text() if isinstance(s, Skip) else s) for v, s in d.items()}
            for n, d in skip_reasons(facts, source, req, outcome, limit).items()}


__all__ = ["Explainer", "Noted", "Premise", "Skip", "clause", "explain", "failure", "render", "resolve", "ruled_clause", "skip", "skip_reasons", "skipped_newer"]

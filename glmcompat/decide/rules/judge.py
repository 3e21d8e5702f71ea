"""Run every rule of the registry over one set on one target: findings merged, sorted, errors only where proven."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from packaging.version import Version

from glmcompat.matrix.rows import Stack, Target
from glmcompat.matrix.view import Facts
from glmcompat.model.findings import SEVERITIES, Finding, NameVersion
from glmcompat.model.names import canonicalize
from glmcompat.decide.rules.context import Context, _ev
from glmcompat.decide.rules.registry import RULES
from glmcompat.decide.rules.implied import Implied, resolve_named

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.model.machine import Machine
    from glmcompat.model.artifacts import ArtifactFacts
    from glmcompat.matrix.schema import Matrix
    from glmcompat.model.environments import Environment


def evaluate(
    packages: Mapping[str, str],
    *,
    target: Target | str,
    model: str | None = None,
    matrix: Facts | Matrix,
    allow_unknown: bool = False,
    env: Environment | None = None,
    no_isolation: frozenset[str] | None = None,
    resolved_at_install: bool = False,
    implied: Mapping[str, Implied] | None = None,
    machine: Machine | None = None,
    artifacts: Mapping[tuple[str, str], ArtifactFacts] | None = None,
) -> list[Finding]:
    """Run every rule; findings sorted errors first, then by rule and packages (deterministic).

    ``packages`` maps distribution names to versions; ``target`` is the target's row (a command's
    :class:`~glmcompat.decide.plan.LockPlan` holds it) or, for a library caller, its name; ``matrix`` is a :class:`Facts` or
    a :class:`~glmcompat.matrix.schema.Matrix` (the caller loads it: nothing here reads a file). ``env`` is an environment of a
    dependency file (:mod:`glmcompat.readers.formats`): where each package comes from, what is unpinned, the
    lock's overrides. ``implied``: the packages of a resolved-at-install file that the installer adds, each with its
    version, why and the evidence (:func:`resolve_named`). ``machine``: the machine judged (its driver, glibc; None:
    not judged).
    """
    facts = matrix if isinstance(matrix, Facts) else matrix.view()  # a Matrix: its typed-row view
    pkgs = {canonicalize(k): v for k, v in packages.items()}
    ctx = Context(pkgs, target if isinstance(target, Target) else facts.target(target), facts, model, allow_unknown)
    if env is not None:
        ctx.sources = dict(env.sources)
        ctx.unpinned = dict(env.unpinned)
        ctx.overrides = dict(env.overrides)
        ctx.glibc = dict(env.glibc)
    ctx.no_isolation = no_isolation
    ctx.host = machine
    ctx.artifacts = artifacts or {}
    implied = dict(implied or {})
    if resolved_at_install:
        implied, ctx.unpinned = resolve_named(ctx.packages, ctx.unpinned, facts)
        ctx.packages.update({n: v for n, (v, _, _) in implied.items()})
    if model is not None:
        facts.model(model)  # unknown model: InputError before any rule runs
    found: list[Finding] = []
    for rule in RULES:
        found.extend(rule.check(ctx))
    if implied:
        found = [_with_implied(f, implied) for f in found]
    found = [_unproven(f) for f in found]
    # one finding per (rule, severity, packages, message): rows that say the same thing pool their evidence
    merged: dict[tuple[str, str, tuple[NameVersion, ...], str], Finding] = {}
    for f in found:
        key = (f.rule, f.severity, f.packages, f.message)
        if key in merged:
            g = merged[key]
            ev = g.evidence + tuple(e for e in f.evidence if e not in g.evidence)
            merged[key] = replace(g, evidence=ev)
        else:
            merged[key] = f
    return sorted(merged.values(), key=lambda f: (SEVERITIES.index(f.severity), f.rule, f.pins, f.message))


def _unproven(f: Finding) -> Finding:
    """An error whose only evidence is documentation is a warning: only proven facts make an error."""
    if f.severity != "error" or not f.evidence or any(k != "documentation" for k, _ in f.evidence):
        return f
    return replace(f, severity="warning", message=f"{f.message} (documented, not proven: no probe or upstream fix shows "
                   "a break)", remedy=f"run `glmcompat verify` on the target GPU to prove it runs, or {f.remedy}")


def _with_implied(f: Finding, implied: Mapping[str, tuple[str, str, tuple[tuple[str, str], ...]]]) -> Finding:
    """``f`` saying which of its packages the file does not pin itself, and why that version installs."""
    why = [(n, implied[n]) for name, ver in f.packages for n in [canonicalize(name)]
           if n in implied and (name, ver) == (n, implied[n][0])]
    if not why:
        return f
    note = "; ".join(w for _, (_, w, _) in why)
    ev = f.evidence + tuple(e for _, (_, _, evs) in why for e in evs if e not in f.evidence)
    return replace(f, message=f"{f.message} (the file does not pin {', '.join(n for n, _ in why)}: {note})", evidence=ev)


def stack_findings(stack: Stack, packages: Mapping[str, str]) -> list[Finding]:
    """The named stack's pins that ``packages`` does not carry."""
    out = []
    for name, ver in sorted(stack.pins.items()):
        have = packages.get(name)
        if have is None or Version(Version(have).public) != Version(ver):
            out.append(Finding(rule="stack", severity="error", packages=((name, have or ""),),
                               message=f"stack {stack.name!r} pins {name}=={ver}, the lock has {have or 'none'}",
                               evidence=_ev(stack), remedy=f"pin {name}=={ver}"))
    return out

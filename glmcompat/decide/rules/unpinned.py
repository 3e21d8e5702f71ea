"""(j) A coupled package named without an exact pin: the installer picks the release."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from glmcompat.model.findings import Finding
from glmcompat.decide.rules.context import Context, Rule, _best_kernel
from glmcompat.decide.rules.implied import _known_releases


def rule_unpinned(ctx: Context) -> list[Finding]:
    """(j) A coupled package named without an exact pin: the installer picks the release."""
    out: list[Finding] = []
    coupled = ctx.facts.kernel_packages() | ctx.facts.family_packages() | {"torch"}
    for name in sorted(coupled & ctx.unpinned.keys()):
        spec = ctx.unpinned[name]
        pin = _pin_for(ctx, name, spec)
        remedy = (f"pin {pin}, then re-run `glmcompat check`" if pin else
                  f"pin {name} to one exact release (the matrix knows none that {name}{spec} admits), "
                  "then re-run `glmcompat check`")
        out.append(Finding(rule="unpinned", severity="warning", packages=((name, ""),),
                           message=f"{name} is not pinned ({name}{spec or ' with no version'}): the installer picks the "
                           "release, and nothing ties it to the torch beside it", evidence=(), remedy=remedy))
    return out


def _anchor_torch(ctx: Context) -> tuple[str, str] | None:
    """(torch, why) the pins of an unpinned coupled package should follow: the set's torch, else the torch a
    compiled extension in the set was built against, else the exact torch a family pin in the set names."""
    torch = ctx.packages.get("torch")
    if torch is not None:
        return Version(torch).public, ""  # the set's own: no need to say why
    for k in sorted(ctx.facts.kernel_packages() & ctx.packages.keys()):
        row = ctx.facts.kernel(k, ctx.packages[k])
        if row is not None:
            return row.torch, f"the torch {k} {ctx.packages[k]} was built against"
    for fam in sorted(ctx.facts.family_packages() & ctx.packages.keys()):
        found = ctx.facts.family(fam, ctx.packages[fam])
        if found is not None and found[0].startswith("==") and "*" not in found[0] and "," not in found[0]:
            return found[0][2:], f"the torch {fam} {ctx.packages[fam]} was built for"
    return None


def _pin_for(ctx: Context, name: str, spec: str) -> str | None:
    """The exact pin to suggest for an unpinned coupled package, with why: what follows the torch the set is
    anchored to (:func:`_anchor_torch`; for torch itself, that torch; for a family package, its release built
    for it; for a kernel, its release built against it), else the newest release the matrix knows that ``spec``
    admits; None when there is none."""
    try:
        asked = SpecifierSet(spec or "")
    except ValueError:
        return None

    def ok(v: str) -> bool:
        return asked.contains(Version(v).public, prereleases=True)

    anchor = _anchor_torch(ctx)
    if anchor is not None:
        torch, why = anchor
        if name == "torch" and ok(torch):
            return f"torch=={torch} ({why})"
        if name in ctx.facts.family_packages():
            good = ctx.facts.family_for_torch(name, torch)
            if good and ok(good):
                return f"{name}=={good} (the release built for torch {torch}{', ' + why if why else ''})"
        if name in ctx.facts.kernel_packages():
            best = _best_kernel(ctx, name, torch)
            if best is not None and best[0] == name and ok(best[1]):
                return f"{name}=={best[1]} (built against torch {torch}{', ' + why if why else ''})"
    known = sorted(v for v in _known_releases(ctx.facts, name) if not v.is_prerelease and ok(str(v)))
    if not known:
        return None
    return f"{name}=={known[-1]} (the newest release the matrix knows" + (f" that {name}{spec} admits)" if spec else ")")


RULE = Rule(id='unpinned', family='unpinned', check=rule_unpinned, reads=('kernel', 'family', 'torch', 'release'), evidence=(),
            remedy='pin', doc='a coupled package named without an exact pin',
            names=('torch',))

"""(k) An engine release's own pins (its METADATA). A pin that couples a compiled package to torch"""

from __future__ import annotations

import re
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from glmcompat.model.findings import Finding
from glmcompat.model.names import canonicalize
from glmcompat.decide.rules.context import Context, Rule, _ev


def rule_release_pins(ctx: Context) -> list[Finding]:
    """(k) An engine release's own pins (its METADATA). A pin that couples a compiled package to torch
    is the abi/family rules' job (a break); a pin on a pure-Python package the set departs from was
    overridden on purpose (uv ``override-dependencies``; no installer produces it otherwise): a warning
    that names the override."""
    out: list[Finding] = []
    kernels = ctx.facts.kernel_packages()
    for row in ctx.facts.rows("release"):
        pkg = row.package
        if pkg == "torch":
            continue  # torch's own pins on what it was built with: the torch-pins rule, an error
        have = ctx.packages.get(pkg)
        if have is None or Version(Version(have).public) != Version(row.version):
            continue
        covered = {canonicalize(re.split(r"[<>=!~ ;\[]", r.requires.strip(), maxsplit=1)[0])
                   for r in ctx.facts.rows("requires") if r.package == pkg
                   and SpecifierSet(r.versions).contains(Version(have).public, prereleases=True)}
        for req in row.requires:
            from packaging.requirements import InvalidRequirement, Requirement  # lazy: keeps `check --help` light

            try:
                parsed = Requirement(req)
            except InvalidRequirement:
                continue  # validated when the matrix loads
            dep, spec = canonicalize(parsed.name), str(parsed.specifier)
            if not spec or dep not in ctx.packages or ctx.built_from_source(dep) or dep in covered:
                continue  # unpinned, absent, built here, or judged by a [[requires]] row
            if dep == "torch" and pkg in kernels:
                continue  # the abi rule judges a compiled engine against its torch
            dv = ctx.packages[dep]
            if SpecifierSet(spec).contains(Version(dv).public, prereleases=True):
                continue
            how = (f"the lock overrides it with {dep}{ctx.overrides[dep] or ' (any version)'}" if dep in ctx.overrides
                   else "the set departs from it (an override where the lock was made, or an install without dependency checks)")
            out.append(Finding(rule="override", severity="warning", packages=((pkg, have), ctx.pin(dep)),
                               message=f"{pkg} {have} requires {dep}{spec}, and {dep} {dv} is in the set: {how}",
                               evidence=_ev(row),
                               remedy=f"keep it only if {pkg} {have} is proven to run with {dep} {dv} (`glmcompat verify`)"))
    return out


RULE = Rule(id='override', family='overrides', check=rule_release_pins, reads=('release', 'requires'), evidence=('metadata',),
            remedy='override', doc="an engine release's own pins the set departs from",
            names=('torch',))

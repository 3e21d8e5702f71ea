"""(g) Fixes a target needs (sglang >= 0.5.9 on sm_120) and release-level requirements."""

from __future__ import annotations

import re
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from glmcompat.model.findings import Finding
from glmcompat.model.names import canonicalize
from glmcompat.decide.rules.context import Context, Rule, _ev


def rule_target_requirements(ctx: Context) -> list[Finding]:
    """(g) Fixes a target needs (sglang >= 0.5.9 on sm_120) and release-level requirements."""
    out: list[Finding] = []
    for tr in ctx.facts.target_requirements(ctx.target.name):
        ver = ctx.packages.get(tr.package)
        if ver is None or SpecifierSet(tr.specifier).contains(Version(ver).public, prereleases=True):
            continue
        msg = f"{tr.package} {ver} lacks what {ctx.target.name} needs: {tr.reason}"
        if tr.failure:
            msg += f" (symptom: '{tr.failure}')"
        out.append(Finding(rule="target-fix", severity="error", packages=((tr.package, ver),), message=msg,
                           evidence=_ev(tr),
                           remedy=f"pin {tr.package}{tr.specifier}"))
    for row in ctx.facts.rows("requires"):
        ver = ctx.packages.get(row.package)
        if ver is None or not SpecifierSet(row.versions).contains(Version(ver).public, prereleases=True):
            continue
        # A matrix requirement is "name<specifier>" (validated on load; no extras or markers used).
        m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$", row.requires)
        assert m is not None
        req_name, spec = canonicalize(m.group(1)), m.group(2).strip()
        have = ctx.packages.get(req_name)
        if have is None or SpecifierSet(spec).contains(Version(have).public, prereleases=True):
            continue
        out.append(Finding(rule="requires", severity="error", packages=((row.package, ver), (req_name, have)),
                           message=f"{row.package} {ver} refuses to start with {req_name} {have}: it requires {req_name}{spec}",
                           evidence=_ev(row), remedy=f"pin {req_name}{spec}"))
    return out


RULE = Rule(id='target-fix', family='target_fix', check=rule_target_requirements, reads=('target_fix', 'requires'), evidence=('upstream-fix', 'metadata'),
            remedy='pin', doc='releases that lack a fix the target needs, and requirements of one package on another', ids=('target-fix', 'requires'),
            names=('sglang',))

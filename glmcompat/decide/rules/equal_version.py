"""(c) Packages that must carry the same version (flashinfer-cubin == flashinfer-python)."""

from __future__ import annotations

from packaging.version import Version

from glmcompat.model.findings import Finding
from glmcompat.decide.rules.context import Context, Rule, _ev


def rule_equal_version(ctx: Context) -> list[Finding]:
    """(c) Packages that must carry the same version (flashinfer-cubin == flashinfer-python)."""
    out: list[Finding] = []
    for row in ctx.facts.rows("equal_version"):
        a, b = row.packages
        if a in ctx.packages and b in ctx.packages and Version(ctx.packages[a]) != Version(ctx.packages[b]):
            out.append(Finding(rule="equal-version", severity="error", packages=(ctx.pin(a), ctx.pin(b)),
                               message=f"{b} {ctx.packages[b]} does not match {a} {ctx.packages[a]}; their versions must be equal",
                               evidence=_ev(row), remedy=f"pin {b}=={ctx.packages[a]}"))
    return out


RULE = Rule(id='equal-version', family='equal_version', check=rule_equal_version, reads=('equal_version',), evidence=('upstream-fix', 'metadata'),
            remedy='pin', doc='packages that must carry the same version',
            names=('flashinfer-cubin', 'flashinfer-python'))

"""(h) Tracked compiled packages built from source (git, path, sdist): the ABI and CUDA rules do not"""

from __future__ import annotations


from glmcompat.model.findings import Finding
from glmcompat.decide.rules.context import Context, Rule


def rule_source_build(ctx: Context) -> list[Finding]:
    """(h) Tracked compiled packages built from source (git, path, sdist): the ABI and CUDA rules do not
    apply (the build links whatever torch it finds), and their GPU code cannot be known statically."""
    out: list[Finding] = []
    tracked = ctx.facts.kernel_packages() | ctx.facts.family_packages() | {"torch"}
    torch = ctx.packages.get("torch")
    for name in sorted(tracked & ctx.packages.keys()):
        if not ctx.built_from_source(name):
            continue
        kind = ctx.sources[name]
        if name == "torch":
            how = "torch itself is built from source here"
        elif ctx.no_isolation is not None and name in ctx.no_isolation:
            how = f"built without build isolation, so against torch {torch} in this environment" if torch else \
                "built without build isolation, against the torch of the build machine"
        elif ctx.no_isolation is not None:
            how = "built in an isolated build environment, against whatever torch that environment resolves"
        else:
            how = "built against the torch present when it is built"
        out.append(Finding(rule="source-build", severity="warning", packages=(ctx.pin(name),),
                           message=f"{name} {ctx.packages[name]} comes from a {kind} source and is compiled at install time "
                           f"({how}); its ABI and GPU code cannot be judged from the lock",
                           evidence=(), remedy="run `glmcompat verify` in the built environment on the target GPU"))
    return out


RULE = Rule(id='source-build', family='source_build', check=rule_source_build, reads=(), evidence=(),
            remedy='verify', doc='a package compiled at install time cannot be judged from the lock',
            names=('torch',))

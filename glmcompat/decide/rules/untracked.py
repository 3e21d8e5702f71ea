"""(i) Compiled torch extensions outside the tracked set: a warning that points at verify, saying which"""

from __future__ import annotations

import re
from packaging.version import Version

from glmcompat.model.findings import Finding, NameVersion
from glmcompat.model.names import local_cuda
from glmcompat.decide.rules import artifacts
from glmcompat.decide.rules.context import Context, Rule, _ev, label_torch


def rule_untracked_compiled(ctx: Context) -> list[Finding]:
    """(i) Compiled torch extensions outside the tracked set: a warning that points at verify, saying which
    torch (and CUDA) its build label names when that differs from the set's: an unproven pairing, not a proven
    break (glmcompat records no facts about these packages, so it never calls them unsafe on its own)."""
    out: list[Finding] = []
    torch = ctx.packages.get("torch")
    tcuda = ctx.facts.torch_cuda(torch) if torch is not None and not ctx.built_from_source("torch") else None
    for row in ctx.facts.rows("compiled"):
        for name in sorted(set(row.packages) & ctx.packages.keys()):
            ver = ctx.packages[name]
            if artifacts.judged_torch(ctx, name):
                continue  # its own bytes were compared with this torch: the artifact rule
            local = Version(ver).local or ""
            named = label_torch(local)
            lcuda = local_cuda(ver)
            if ctx.built_from_source(name):
                what = f"is built from source ({ctx.sources[name]}) against the torch present at build time"
                named = lcuda = None
            elif named:
                cu = re.match(r"cu(\d+)", local)
                shown = (cu.group(1) if cu and len(cu.group(1)) <= 2 else lcuda) if lcuda else None
                what = f"was built for torch {named}" + (f" and CUDA {shown}" if shown else "") + f" (its local label +{local})"
            else:
                what = "is a compiled torch extension whose build torch glmcompat does not track"
            packages: tuple[NameVersion, ...] = (ctx.pin(name),)
            note = ""
            if torch is not None and named:
                tv, nv = Version(Version(torch).public), Version(named)
                if nv.release != tv.release[:len(nv.release)]:
                    note = "; a build for another torch may not load next to this one (an unproven pairing)"
                    packages = (ctx.pin(name), ctx.pin("torch"))
            if tcuda and lcuda and lcuda.split(".")[0] != tcuda.split(".")[0]:
                note += f"; its label's CUDA {lcuda.split('.')[0]} is not torch's CUDA {tcuda.split('.')[0]}"
                packages = (ctx.pin(name), ctx.pin("torch"))
            out.append(Finding(rule="untracked", severity="warning", packages=packages,
                               message=f"{name} {ver} {what}" + (f", next to torch {torch}" if torch else "") + note,
                               evidence=_ev(row), remedy="run `glmcompat verify` on the target GPU to prove it loads"))
    return out


RULE = Rule(id='untracked', family='untracked', check=rule_untracked_compiled, reads=('compiled', 'torch'), evidence=('documentation',),
            remedy='verify', doc='compiled torch extensions outside the tracked set, with their build label',
            names=('torch',))

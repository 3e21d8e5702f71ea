"""(f) The model type needs a transformers (and sglang) that knows it."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from glmcompat.model.findings import Finding
from glmcompat.decide.rules.context import Context, Rule, _ev


def rule_model(ctx: Context) -> list[Finding]:
    """(f) The model type needs a transformers (and sglang) that knows it."""
    if ctx.model is None:
        return []
    row = ctx.facts.model(ctx.model)
    out: list[Finding] = []
    checks = [("transformers", row.transformers)]
    for engine, need in (("sglang", row.sglang), ("vllm", row.vllm)):
        if need:
            checks.append((engine, need))
    # An engine release that carries its own config class for the model type (its [[model]] row's sglang_config /
    # vllm_config) loads it without transformers knowing it.
    own_config = [e for e in ("sglang", "vllm") if row.config_in(e) and e in ctx.packages
                  and SpecifierSet(row.config_in(e) or "").contains(Version(ctx.packages[e]).public, prereleases=True)]
    for name, spec in checks:
        if name == "transformers" and own_config:
            continue
        ver = ctx.packages.get(name)
        if ver is None:
            if name == "transformers":
                out.append(Finding(rule="model", severity="error", packages=(),
                                   message=f"model type {ctx.model!r} needs transformers{spec}, and transformers is not in the set",
                                   evidence=_ev(row), remedy=f"add transformers{spec}"))
            continue
        if SpecifierSet(spec).contains(Version(ver).public, prereleases=True):
            continue
        msg = f"{name} {ver} does not know model type {ctx.model!r}: it needs {name}{spec}"
        if name == "transformers" and row.failure:
            msg += f" (loading the model raises {row.failure})"
        remedy = f"pin {name}{spec}"
        engines = [e for e in ("sglang", "vllm") if e in ctx.packages]
        if name == "transformers" and engines:
            remedy += f" (as an override of {' and '.join(engines)}'s own transformers pin)"
        out.append(Finding(rule="model", severity="error", packages=((name, ver),), message=msg, evidence=_ev(row),
                           remedy=remedy))
    return out


RULE = Rule(id='model', family='model', check=rule_model, reads=('model',), evidence=('upstream-fix', 'metadata'),
            remedy='pin', doc='the model type is known to the engine and transformers in the set',
            names=('sglang', 'transformers', 'vllm'))

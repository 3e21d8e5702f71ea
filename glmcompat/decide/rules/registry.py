"""The registry of the check's rules: one line per rule, in the order they run. check, verify, explain and the docs
read this table; adding a rule is one module in this package (its ``check`` and its ``RULE``) and one line here."""

from __future__ import annotations

from glmcompat.decide.rules import abi, cuda, equal_version, family, gpu_code, model, overrides, source_build, target_fix
from glmcompat.decide.rules import artifacts, driver, glibc, nonnvidia, torchpins, unpinned, untracked
from glmcompat.decide.rules.context import Rule

RULES: tuple[Rule, ...] = (
    abi.RULE,
    family.RULE,
    equal_version.RULE,
    gpu_code.RULE,
    cuda.RULE,
    driver.RULE,
    glibc.RULE,
    model.RULE,
    target_fix.RULE,
    source_build.RULE,
    untracked.RULE,
    unpinned.RULE,
    overrides.RULE,
    torchpins.RULE,
    nonnvidia.RULE,
    artifacts.RULE,
)


def by_id(rule_id: str) -> Rule:
    """The rule that reports ``rule_id`` (a Finding.rule)."""
    for r in RULES:
        if rule_id in r.reports:
            return r
    raise KeyError(rule_id)

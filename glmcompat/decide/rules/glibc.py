"""A wheel that needs a newer glibc than the machine's (rule ``glibc``): pure, from what a lock's reader found of its
wheels (:attr:`glmcompat.model.environments.Environment.glibc`: the lowest glibc each package's wheels for the
machine need) and the machine's glibc (:class:`glmcompat.model.machine.Machine`)."""

from __future__ import annotations

from collections.abc import Mapping

from glmcompat.decide.rules.context import Context, Rule
from glmcompat.model.findings import Finding
from glmcompat.model.machine import Machine, glibc_key, manylinux


def check(packages: Mapping[str, str], floors: Mapping[str, str], machine: Machine | None) -> list[Finding]:
    """An error for each package whose wheels need a newer glibc than the machine's, naming both (nothing where the
    machine names no glibc)."""
    if machine is None or machine.glibc is None:
        return []
    have = glibc_key(machine.glibc)
    out = []
    for name in sorted(floors):
        need = floors[name]
        if name not in packages or glibc_key(need) <= have:
            continue
        out.append(Finding(
            rule="glibc", severity="error", packages=((name, packages[name]),),
            message=(f"{name} {packages[name]}'s wheels for this machine need glibc >= {need} ({manylinux(need)}), but "
                     f"the machine's glibc is {machine.glibc} ({machine.glibc_from.show()}): the installer finds no wheel "
                     "it can install"),
            evidence=(("metadata", f"the wheel file names the lock lists for {name} {packages[name]}"),),
            remedy=(f"run it on a machine with glibc >= {need}, or pin a {name} release with wheels for "
                    f"{manylinux(machine.glibc)} or older")))
    return out


def rule_glibc(ctx: Context) -> list[Finding]:
    """No wheel of the set needs a newer glibc than the machine's."""
    return check(ctx.packages, ctx.glibc, ctx.host)


RULE = Rule(id="glibc", family="glibc", check=rule_glibc, reads=("uv.lock wheel names",), evidence=("metadata",),
            remedy="replace", doc="no wheel needs a newer glibc than the machine's")

__all__ = ["RULE", "check", "rule_glibc"]

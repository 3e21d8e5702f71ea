"""One remedy for an unsafe set: the pins of one consistent safe core, from the matrix alone (offline).

A set that fails the check usually fails several rules at once (torch 2.10.0 next to sgl-kernel 0.3.21,
torchvision 0.24.1 and torchaudio 2.9.1 breaks three pairs), and each finding's own hint pulls its own way. The
remedy here is one set: torch at a version one of the set's compiled packages was built against (the kernels and
vLLM first: they are the hardest to change, and the set is built around them), or the set's own torch, and every
torch family package present at the release built for that torch. The first such set that the rules accept
(:func:`glmcompat.decide.rules.evaluate`, no errors) is the remedy; None when none is.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from glmcompat.decide.rules import torchpins
from glmcompat.decide.rules import evaluate
from glmcompat.decide import cudadriver
from glmcompat.matrix.view import Facts
from glmcompat.model.names import canonicalize

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.model.environments import Environment
    from glmcompat.model.machine import Machine
    from glmcompat.readers.formats.common import Lock


def torch_candidates(packages: Mapping[str, str], facts: Facts) -> list[str]:
    """The torch versions to try, in order: each compiled package's build torch (kernels and engines before the
    rest), then the set's own torch."""
    out: list[str] = []
    for name in sorted(packages):
        k = facts.kernel(name, packages[name])
        if k is not None and name != "torch" and k.torch not in out:
            out.append(k.torch)
    own = packages.get("torch")
    if own and own.split("+")[0] not in out:
        out.append(own.split("+")[0])
    return out


def one_safe_set(packages: Mapping[str, str], target: str, model: str | None, facts: Facts,
                 env: Environment | None = None, machine: Machine | None = None) -> dict[str, str] | None:
    """The core pins of one safe set next to ``packages`` (name -> version: torch, the torch family packages present
    and the compiled packages that anchor it), or None when no torch the matrix knows makes it safe. ``machine``: its
    driver must run the set (the newest torch it runs is tried too)."""
    pkgs = {canonicalize(k): v for k, v in packages.items()}
    family = sorted(n for n in facts.family_packages() if n in pkgs)
    candidates = torch_candidates(pkgs, facts)
    if machine is not None and machine.driver is not None:
        older = cudadriver.older_torch(facts.target(target), machine.driver, facts)
        if older is not None and older not in candidates:
            candidates.append(older)
    for torch in candidates:
        pinned = torchpins.pinned_by(facts, torch)  # what torch's own pins choose follows torch: left to the installer
        trial = {n: v for n, v in pkgs.items() if n not in pinned}
        trial["torch"] = torch
        ok = True
        for name in family:
            v = _kept(facts, name, pkgs[name], torch) or facts.family_for_torch(name, torch)
            if v is None:
                ok = False
                break
            trial[name] = v
        if not ok:
            continue
        if not any(f.severity == "error" for f in evaluate(trial, target=target, model=model, matrix=facts, env=env,
                                                           machine=machine)):
            anchors = [n for n in pkgs if n != "torch" and facts.kernel(n, pkgs[n]) is not None]
            keep = {n: pkgs[n] for n in anchors} | {n: trial[n] for n in family}
            changed = {n: v for n, v in trial.items() if pkgs.get(n, "").split("+")[0] != v or n == "torch"}
            return dict(sorted({**keep, **changed}.items()))
    return None


def _kept(facts: Facts, name: str, version: str, torch: str) -> str | None:
    """``version`` itself when it already pairs with ``torch`` (its recorded torch requirement admits it and no
    probe proves a break): the least change keeps what an engine pins (sglang 0.5.9: torchcodec==0.8.0)."""
    try:
        public = Version(version).public
        found = facts.family(name, public)
        if found is None or not SpecifierSet(found[0]).contains(torch, prereleases=True):
            return None
    except (InvalidVersion, InvalidSpecifier):
        return None
    verdict = facts.abi_verdict(name, public, torch)
    return public if verdict is None or verdict.compatible else None


__all__ = ["for_lock", "one_safe_set", "torch_candidates"]


def for_lock(lock: Lock, target: str, model: str | None, facts: Facts, platforms: Collection[str] | None = None,
             machine: Machine | None = None) -> dict[str, str] | None:
    """:func:`one_safe_set` for the first environment of ``lock`` (a :class:`~glmcompat.readers.formats.common.Lock` with its
    ``sets``) that fails the check on ``target``: None when none fails or no safe set is found."""
    for env in lock.sets:
        if platforms is not None and env.platform not in platforms:
            continue
        f = facts.on(env.platform)
        if not any(x.severity == "error" for x in evaluate(env.packages, target=target, model=model, matrix=f, env=env,
                                                           machine=machine)):
            continue
        return one_safe_set(env.packages, target, model, f, env, machine)
    return None

"""A lock judged per environment on each platform its target ships on."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from packaging.version import Version

from glmcompat.matrix.rows import Stack, Target
from glmcompat.matrix.view import Facts
from glmcompat.model.errors import InputError
from glmcompat.model.findings import SEVERITIES, Finding
from glmcompat.model.platforms import PLATFORM_NAME, check_platform, products_on, target_platforms
from glmcompat.decide.rules import nonnvidia, torchpins
from glmcompat.decide.rules.artifacts import on_machine
from glmcompat.decide.rules.context import _ev
from glmcompat.decide.rules.judge import evaluate, stack_findings
from glmcompat.decide.rules.implied import RESOLVED_AT_INSTALL, Implied, resolve_named, unsatisfiable

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.model.machine import Machine
    from glmcompat.model.artifacts import ArtifactFacts
    from glmcompat.model.environments import Environment
    from glmcompat.readers.formats.common import Lock


def evaluate_lock(lock: Lock, target: Target | str, model: str | None, facts: Facts, allow_unknown: bool,
                  stack: Stack | None = None, no_isolation: frozenset[str] | None = None,
                  platforms: Sequence[str] | None = None, machine: Machine | None = None,
                  artifacts: Mapping[tuple[str, ...], ArtifactFacts] | None = None) -> list[Finding]:
    """Findings for every environment the lock installs on the platforms the target ships on (sm90:
    Linux x86_64 for H100/H200 and Linux aarch64 for GH200; sm121: aarch64 only), each judged on its own
    with the facts about that platform's wheels (:meth:`Facts.on`); a finding that holds in several
    environments is reported once, naming them.

    Where the lock serves the target on one of its platforms, an environment of another that cannot run
    a GPU stack -- a package without a wheel for that machine (and no sdist), no torch, or a CPU-only torch
    (torch's default aarch64 wheels up to 2.10.0) -- is not judged: one warning per platform says "this lock
    does not serve sm90 on aarch64 (GH200): ...", as does a platform the lock installs nothing on. On a
    target that ships on x86_64 and aarch64, an aarch64 build the matrix holds no evidence for is a warning
    (unknown), not an error; a proven break is an error on every platform. Where the lock serves none of the
    target's platforms, everything is judged and a platform with nothing installed is an error.
    ``platforms`` (e.g. ``["aarch64"]``) judges only those, strictly: nothing is excused or downgraded. ``target`` is
    the target's row (a command's :class:`~glmcompat.decide.plan.LockPlan` holds it) or, for a library caller, its name.
    """

    trow = target if isinstance(target, Target) else facts.target(target)
    tname = trow.name
    ships = target_platforms(trow)
    if platforms is not None:
        chosen = [check_platform(p) for p in platforms]
        for p in chosen:
            if p not in ships:
                raise InputError(f"target {tname} never ships on {p} ({_where(trow, ships, products_on)})")
        judged = [p for p in ships if p in chosen]
    else:
        judged = ships

    def names_of(env: Environment) -> list[str]:
        return [n for n in env.names if n]

    envs = [e for e in lock.sets if e.platform in judged]
    implied: list[Mapping[str, Implied]] = [{} for _ in envs]
    if lock.kind in RESOLVED_AT_INSTALL:
        for i, e in enumerate(envs):
            envs[i], implied[i] = _installed(e, facts.on(e.platform), lock.meta.get("index_pins", {}))
    lock_has_torch = any("torch" in e.packages for e in lock.sets)
    reasons: dict[int, tuple[str, tuple[tuple[str, str], ...]]] = {}
    for i, env in enumerate(envs):
        cannot = _cannot_serve(env, facts.on(env.platform), lock_has_torch, on_machine(artifacts, env.platform))
        if cannot is not None:
            reasons[i] = cannot
    present = {e.platform for e in envs}
    served = [p for p in judged if any(e.platform == p and i not in reasons for i, e in enumerate(envs))]
    lenient = platforms is None and bool(served)
    extra: list[Finding] = []
    for p in judged:
        prods = ", ".join(products_on(trow, p))
        ev = (_ships_ev(tname, prods, p),)
        if p not in present:
            if lenient:
                extra.append(Finding(
                    rule="platform", severity="warning", packages=(),
                    message=f"this lock does not serve {tname} on {p} ({prods}): it installs nothing "
                    f"on {PLATFORM_NAME.get(p, p)} (its environments or markers leave that machine out)", evidence=ev,
                    remedy=f"judged on {', '.join(served)} only; lock for {PLATFORM_NAME.get(p, p)} too if {prods} must run it"))
            else:
                only = "the only platform" if len(judged) == 1 else "a platform"
                extra.append(Finding(
                    rule="platform", severity="error", packages=(),
                    message=f"this lock installs nothing on {PLATFORM_NAME.get(p, p)}, {only} {tname} "
                    f"ships on ({prods})", evidence=ev,
                    remedy=f"lock for {PLATFORM_NAME.get(p, p)} (uv `environments` / `required-environments`)"))
    excused: set[int] = set()
    if lenient:
        for p in judged:
            idx = [i for i in reasons if envs[i].platform == p]
            if not idx:
                continue
            excused.update(idx)
            prods = ", ".join(products_on(trow, p))
            why = list(dict.fromkeys(reasons[i][0] for i in idx))
            evidence = (_ships_ev(tname, prods, p),) + tuple(
                dict.fromkeys(e for i in idx for e in reasons[i][1]))
            every = len(idx) == sum(1 for e in envs if e.platform == p)
            judged_on = [q for q in served if q != p or not every]
            extra.append(Finding(
                rule="platform", severity="warning", packages=(),
                message=f"this lock does not serve {tname} on {p} ({prods}) in {'its' if every else 'some of its'} {p} "
                "environments: " + "; ".join(why[:3]) + (f"; and {len(why) - 3} more" if len(why) > 3 else ""),
                evidence=evidence,
                remedy=("those environments are not judged" + (f" (the lock is judged on {', '.join(judged_on)})" if every else "")
                 + f"; to run on {prods}, lock a CUDA torch and {p} wheels of every package there"),
                environments=tuple(n for i in idx for n in names_of(envs[i]))))
    extra.extend(_foreign_stack(lock, envs, judged, tname, facts))
    if not lenient:
        extra.extend(_uninstallable(lock, envs, judged, tname))
    # On a target that ships on x86_64 and aarch64, the matrix's evidence is about x86_64 wheels first: an
    # aarch64 build it holds no row for is a warning there (unknown), not an error, unless asked for strictly.
    secondary = {"aarch64"} if lenient and "x86_64" in served else set()
    where: dict[Finding, list[str]] = {}
    probes: dict[Finding, str] = {}
    total = 0
    for i, env in enumerate(envs):
        if i in excused:
            continue
        pkgs = env.packages
        m = env.platform
        mfacts = facts.on(m)
        found = evaluate(pkgs, target=trow, model=model, matrix=mfacts, allow_unknown=allow_unknown or m in secondary,
                         env=env, no_isolation=no_isolation, implied=implied[i], machine=machine,
                         artifacts=on_machine(artifacts, m))
        if stack is not None:
            found.extend(stack_findings(stack, pkgs))
        if lock.kind in RESOLVED_AT_INSTALL:
            found.extend(unsatisfiable(pkgs, implied[i], mfacts, lock.meta.get("index_pins", {}), env.sources))
        elif m == "x86_64" and lock.kind in torchpins.SINGLE_PLATFORM_LOCKS:
            found.extend(torchpins.missing_from_lock(dict(pkgs), mfacts, dict(env.sources), dict(env.overrides)))
        names = names_of(env)
        total += len(names)
        for f in found:
            # one finding for every environment it holds in, whichever machine's probe reproduces it (the
            # x86_64 one, without --platform, where it holds there too)
            key = replace(f, probe="")
            lst = where.setdefault(key, [])
            lst.extend(n for n in names if n not in lst)
            if f.probe and (key not in probes or "--platform" in probes[key] and "--platform" not in f.probe):
                probes[key] = f.probe
    out = list(extra)
    for f, names in where.items():
        envs_of = () if not names or len(names) == total else tuple(names)
        out.append(replace(f, environments=envs_of, probe=probes.get(f, "")))
    return sorted(out, key=lambda f: (SEVERITIES.index(f.severity), f.rule, f.pins, f.message))


def _uninstallable(lock: Lock, envs: Sequence[Environment], judged: Sequence[str], tname: str) -> list[Finding]:
    """Where nothing is excused (no platform of the target is served, or the platforms were named): each judged
    platform on which the lock installs in none of its environments -- a package listing only wheels that fit another
    machine (or no Python the lock allows), and no sdist: a pip-made pylock of Windows wheels -- is an error naming them
    and the wheels listed. A lock that installs on one Python of the platform is not (the Pythons a lock without
    ``requires-python`` is judged on are the ones it might meet, not ones it claims). The rules still judge what those
    environments name, as if it installed."""
    out: list[Finding] = []
    listed = lock.meta.get("wheels_only", {})
    for p in judged:
        on = [e for e in envs if e.platform == p]
        idx = [e for e in on if e.missing_wheels]
        if not idx or len(idx) < len(on):
            continue
        missing = dict(sorted({n: v for e in idx for n, v in e.missing_wheels.items()}.items()))
        first = "torch" if "torch" in missing else next(iter(missing))
        shown = [first, *[n for n in missing if n != first][:2]]
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        wheels = listed.get(f"{first}=={missing[first]}", [])
        what = f" ({first} lists only {', '.join(wheels[:3])}{' …' if len(wheels) > 3 else ''})" if wheels else ""
        plat = PLATFORM_NAME.get(p, p)
        remedy = _relock(lock, p, f"choose releases of {', '.join(shown)} that publish {plat} wheels, or lock for {plat} "
                         "(uv `environments`)")
        out.append(Finding(
            rule="platform", severity="error", packages=tuple((n, missing[n]) for n in shown),
            message=f"this lock cannot install on {plat}, where {tname} runs: "
            + ", ".join(f"{n} {missing[n]}" for n in shown) + more
            + f" ha{'s' if len(missing) == 1 else 've'} no wheel for {plat} and its Python in the lock, and no sdist{what}",
            evidence=(("metadata", f"{lock.path}: the wheel file names it lists for {first} {missing[first]}"),),
            remedy=remedy))
    return out


def _relock(lock: Lock, platform: str, otherwise: str) -> str:
    """The remedy of a lock that does not install on ``platform``: a pylock (made for one machine) is made again for
    it; any other lock takes ``otherwise``."""
    if lock.kind != "pylock.toml":
        return otherwise
    return (f"lock for {PLATFORM_NAME.get(platform, platform)}: `uv pip compile requirements.in --python-platform "
            f"{platform}-unknown-linux-gnu -o pylock.toml` (or `pip lock` run on that machine)")


def _foreign_stack(lock: Lock, envs: Sequence[Environment], judged: Sequence[str], tname: str,
                   facts: Facts) -> list[Finding]:
    """torch, or a package of its family or a kernel, that the lock lists with wheels for Windows or macOS alone and
    no sdist (a pip-made pylock of Windows wheels): nothing installs it on Linux, where the target runs -- an error on
    each judged platform where no environment installs it otherwise (another entry of it with Linux wheels)."""
    from glmcompat.model.environments import linux_wheel  # lazy: judging a lock that lists its wheels only

    tracked = facts.kernel_packages() | facts.family_packages() | {"torch"}
    out: list[Finding] = []
    for key, wheels in lock.meta.get("wheels_only", {}).items():
        name, _, version = key.partition("==")
        if name not in tracked or any(linux_wheel(w) for w in wheels):
            continue
        for p in judged:
            if any(name in e.packages for e in envs if e.platform == p):
                continue
            plat = PLATFORM_NAME.get(p, p)
            out.append(Finding(
                rule="platform", severity="error", packages=((name, version),),
                message=f"{name} {version} cannot install on {plat}, where {tname} runs: the lock lists only wheels for "
                f"other systems ({', '.join(wheels[:3])}{' …' if len(wheels) > 3 else ''}) and no sdist",
                evidence=(("metadata", f"{lock.path}: the wheel file names it lists for {name} {version}"),),
                remedy=_relock(lock, p, f"lock {name} for {plat} (a release and index that publish {plat} wheels of it)")))
    return out


def _installed(env: Environment, facts: Facts, index_pins: Mapping[str, list[str]] | None = None
               ) -> tuple[Environment, dict[str, Implied]]:
    """An environment of a resolved-at-install file with what the installer must add (:func:`resolve_named`, with the
    pins read from the index: ``Lock.meta["index_pins"]``), and those packages with why they install."""
    implied, left = resolve_named(env.packages, env.unpinned, facts, index_pins)
    if not implied:
        return env, {}
    return replace(env, packages={**env.packages, **{n: v for n, (v, _, _) in implied.items()}}, unpinned=left), implied


def _ships_ev(tname: str, prods: str, platform: str) -> tuple[str, str]:
    verb = "ships" if "," not in prods else "ship"
    return ("metadata", f"glmcompat/matrix/data/targets.toml [[target]] {tname}: {prods} {verb} on {platform}")


def _where(trow: Target, ships: list[str], products_on: Callable[[Target, str], list[str]]) -> str:
    return "; ".join(f"{', '.join(products_on(trow, p))} on {p}" for p in ships)


def _cannot_serve(env: Environment, facts: Facts, lock_has_torch: bool,
                  artifacts: Mapping[tuple[str, str], ArtifactFacts] | None = None
                  ) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """(why, evidence) an environment cannot run a GPU stack on its machine; None: it can, as far as the lock
    and the matrix show. A package without a wheel for the machine (and no sdist), no torch while the lock
    has one elsewhere, or a torch build without CUDA (``+cpu``; torch's default aarch64 wheels to 2.10.0)."""
    machine = env.platform
    missing = env.missing_wheels
    if missing:
        shown = ", ".join(f"{n} {v}" for n, v in list(missing.items())[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        return (f"{shown}{more} ha{'s' if len(missing) == 1 and not more else 've'} no Linux {machine} wheel in the "
                "lock (and no sdist)", ())
    torch = env.packages.get("torch")
    if torch is None:
        return ("it installs no torch", ()) if lock_has_torch else None
    from glmcompat.model.environments import BUILT_FROM_SOURCE  # lazy: start-up path (the fast path imports rules)

    if env.sources.get("torch") in BUILT_FROM_SOURCE:
        return None
    vendor = nonnvidia.vendor_of("torch", torch)
    if vendor is not None:
        return (f"torch {torch} is a build for {vendor} GPUs, not for this target (it cannot run on NVIDIA GPUs)",
                (("metadata", f"the local label of torch {torch}"),))
    code = facts.gpu_code("torch", torch)
    if code is not None and not code[0] and not code[1]:
        what = "the +cpu build" if Version(torch).local == "cpu" else f"its default {machine} wheel"
        return f"torch {torch} is a CPU-only build ({what}: no libtorch_cuda.so)", _ev(code[2])
    read = (artifacts or {}).get(("torch", torch))
    if code is None and read is not None and read.read and read.cpu_only:  # no row: the wheel's own file list
        return (f"torch {torch} is a CPU-only build (its default {machine} wheel: no libtorch_cuda.so)",
                (("abi-probe", f"{read.artifact}: its file list has no torch/lib/libtorch_cuda.so"),))
    return None

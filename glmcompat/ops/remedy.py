"""The one remedy of an unsafe dependency file: found by the resolver, proven, then described as typed hints.

:func:`for_lock` runs :mod:`glmcompat.decide.remedysearch` on the machine of the first environment that fails, over
the package index (or any :class:`~glmcompat.decide.resolver.Source` a caller hands in: a recorded snapshot in tests),
and accepts a set only when it passes the rules for **every** target and environment judged. Before a set is returned
each changed pin is looked up on the index for every machine judged (the resolver's candidates exist on the searched
machine by construction). The command it proposes never writes over the file it reads; the file each pin lives in
is named (an ``-r`` include, not the top file blindly). What cannot be read (the index) is a warning naming the
command that would check it, never a remedy made up without it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from glmcompat.decide.remedysearch import Blocked, Found, search
from glmcompat.decide.rules import evaluate_lock
from glmcompat.decide.rules.torchpins import exact_pins
from glmcompat.decide.stacks import CORE, ENGINES
from glmcompat.matrix.view import Facts
from glmcompat.model.errors import GlmcompatError
from glmcompat.model.findings import Finding
from glmcompat.model.hints import Hint, Remedy
from glmcompat.model.names import canonicalize
from glmcompat.model.platforms import target_platforms

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.decide.resolver import Source
    from glmcompat.model.environments import Environment
    from glmcompat.readers.formats.common import Lock
    from glmcompat.model.machine import Machine

FAMILY_LABELLED = ("torch", "torchvision", "torchaudio")  # the builds a local label names (+cu128, +cpu, +rocm6.4)
_CUDA_LABEL = re.compile(r"cu\d+")

SourceFor = Callable[[str], "Source"]
"""The source of a machine (``x86_64``, ``aarch64``): the index's wheels for it."""


@dataclass(frozen=True)
class RemedyOutcome:
    """What :func:`for_lock` found: the remedy (None: none found), a warning when it could not search (the index
    unreachable), and how many resolutions the search took."""

    remedy: Remedy | None
    warning: str = ""
    tries: int = 0


def _label(v: str) -> str:
    try:
        return Version(v).local or ""
    except InvalidVersion:
        return ""


def _public(v: str) -> str:
    try:
        return Version(v).public
    except InvalidVersion:
        return v


def _judged(lock: Lock, targets: Sequence[str], facts: Facts, platforms: Sequence[str] | None) -> list[Environment]:
    """The environments ``check`` judges: those of ``platforms`` (--platform), else of every machine a target ships on."""
    machines = set(platforms) if platforms is not None else {p for t in targets for p in target_platforms(facts.target(t))}
    return [e for e in lock.sets if e.platform in machines]


def with_pins(env: Environment, new: Mapping[str, str | None]) -> Environment:
    """``env`` with ``new``'s pins written in (None: taken out)."""
    pkgs = dict(env.packages)
    for n, v in new.items():
        if v is None:
            pkgs.pop(n, None)
        elif n in pkgs or n in CORE:
            pkgs[n] = v
    return replace(env, packages=pkgs, unpinned={k: s for k, s in env.unpinned.items() if k not in new})


def judge_all(lock: Lock, targets: Sequence[str], model: str | None, facts: Facts, new: Mapping[str, str | None],
              platforms: Sequence[str] | None = None, machine: Machine | None = None) -> bool:
    """Whether ``lock`` with ``new``'s pins written into every environment passes ``check`` for every target: the
    same judgement (:func:`glmcompat.decide.rules.evaluate_lock`), so what it excuses (an aarch64 environment of a
    lock made for x86_64) it excuses here too, and nothing else."""
    trial = replace(lock, sets=tuple(with_pins(e, new) for e in lock.sets))
    return not any(f.severity == "error" for t in targets
                   for f in evaluate_lock(trial, t, model, facts, False, None, None, platforms, machine=machine))


Judge = Callable[[Mapping[str, "str | None"]], bool]
"""Whether the file with these pins written in (None: taken out) passes the check: the proof of a remedy."""


def for_lock(lock: Lock, targets: Sequence[str], model: str | None, facts: Facts, source_for: SourceFor, *,
             platforms: Sequence[str] | None = None, findings: Sequence[Finding] = (), kind: str = "",
             path: Path | None = None, index_hint: str = "", machine: Machine | None = None,
             judge: Judge | None = None) -> RemedyOutcome:
    """The one remedy for ``lock`` on every target of ``targets`` (None when no environment fails), proven on the
    ``machine`` judged (its NVIDIA driver and glibc) as the verdict was. ``judge``: the proof, where the verdict was not
    ``check``'s on the whole file (:func:`judge_all`): the library's ``check_versions`` judges one set on the machine
    it names."""
    envs = _judged(lock, targets, facts, platforms) if judge is None else list(lock.sets)
    if judge is None:
        failing = {n for t in targets for f in evaluate_lock(lock, t, model, facts, False, None, None, platforms,
                                                             machine=machine)
                   if f.severity == "error" for n in (f.environments or ("",))}
    else:
        failing = set() if judge({}) else {""}
    if not failing:
        return RemedyOutcome(None)
    bad = next((e for e in envs if set(e.names) & failing or "" in failing), envs[0] if envs else None)
    if bad is None:
        return RemedyOutcome(None)
    labels = {n: _label(v) for n, v in bad.packages.items() if n in FAMILY_LABELLED and _label(v)}
    proof: Judge = judge if judge is not None else (
        lambda new: judge_all(lock, targets, model, facts, new, platforms, machine))

    def builds(new: Mapping[str, str | None]) -> list[tuple[dict[str, str | None], dict[str, str]]]:
        """The builds to try for ``new``: the user's CUDA build labels kept (``+cu128`` stays), then the default
        builds (a ``+cpu``, ROCm, XPU or wrong-CUDA build moves to the CUDA build the index serves by default), each
        with what torch's own pins make follow it (returned apart, to be said apart)."""
        out: list[dict[str, str | None]] = []
        if labels and all(_CUDA_LABEL.fullmatch(x) for x in labels.values()):
            out.append({n: (f"{v}+{labels[n]}" if v is not None and n in labels and "+" not in v else v)
                        for n, v in new.items()})
        out.append({**{n: _public(v) for n, v in bad.packages.items() if n in labels},
                    **{n: (_public(v) if v is not None and n in labels else v) for n, v in new.items()}})
        return [(b, torch_follows(b, bad.packages, facts)) for b in out]

    def chosen(new: Mapping[str, str | None]) -> tuple[dict[str, str | None], dict[str, str]] | None:
        return next(((b, f) for b, f in builds(new) if proof({**b, **f})), None)

    try:
        src = source_for(bad.platform)
        found, tries = search(facts, src, target=targets[0], model=model, packages=dict(bad.packages),
                              accept=lambda new: chosen(new) is not None,
                              origin=str(path.name) if path else "your file",
                              loose=frozenset(n for n in bad.unpinned if n in CORE))
    except GlmcompatError as e:
        return RemedyOutcome(None, f"no remedy computed: the package index could not be read ({e}); run `glmcompat check` "
                             "again where the index is reachable (or pass --index-url)")
    if found is None:
        return RemedyOutcome(None, f"no safe set found within {tries} resolution(s) of the core on the index", tries)
    core = {n: v for n, v in bad.packages.items() if n in CORE}
    where = _where(lock, path)
    if isinstance(found, Blocked):
        h = Hint("blocked", found.package, found.version, found.least, reason=found.why)
        return RemedyOutcome(Remedy({}, (h,), where={found.package: where.get(found.package, "")}), tries=tries)
    # every changed pin exists on the index for every other machine judged
    others = sorted({e.platform for e in envs} - {bad.platform})
    for m in others:
        try:
            osrc = source_for(m)
            for n in found.moved:
                v = found.pins.get(found.renamed.get(n, n))
                name = found.renamed.get(n, n)
                if v and v not in {_public(x) for x in osrc.versions(name)}:
                    return RemedyOutcome(None, f"the nearest safe set pins {name}=={v}, which has no wheel for Linux {m} on "
                                         "the index; no remedy printed", tries)
        except GlmcompatError as e:
            return RemedyOutcome(None, f"no remedy computed: the {m} wheels could not be read ({e})", tries)
    got = chosen(_new_set(found, core))
    if got is None:  # pragma: no cover - the search accepted this very set
        return RemedyOutcome(None, "the nearest safe set did not pass the check again; no remedy printed", tries)
    new, follows = got
    kept = {n: x for n, x in labels.items() if _label(str(new.get(n) or "")) == x}
    relabelled = {n: x for n, x in labels.items() if n not in kept and new.get(n) is not None}
    changes = _hints(found, core, new, facts, src, findings, kept, index_hint, model) + tuple(
        Hint("pin", n, bad.packages[n], str(new[n]), "", f"the +{x} build cannot run on {targets[0]}: the default "
             "(CUDA) build of the same release can; a local label outranks no label, so take out "
             f"{index_hint or 'the index that serves the +' + x + ' builds'} too") for n, x in sorted(relabelled.items())
        if n in bad.packages and _public(str(new[n])) == _public(bad.packages[n])) + tuple(
        Hint("pin", n, bad.packages.get(n, ""), v, "", f"torch {_public(str(new.get('torch')))} pins {n}=={v} exactly "
             "(its METADATA Requires-Dist)") for n, v in sorted(follows.items()))
    safe = {n: v for n, v in sorted({**new, **follows}.items())}
    indexes = {n: index_hint for n in kept if index_hint and safe.get(n)}
    proved = (f"checked: {', '.join(targets)}, {len(envs)} environment(s); each pin on the index for "
              f"{', '.join(sorted({e.platform for e in envs}))}")
    if kept:  # a CUDA variant keeps its label; the index that serves it is named, not read
        proved += (f"; the +{'/+'.join(sorted(set(kept.values())))} builds from "
                   f"{index_hint or 'the index your file names for them'} (not read: `uv pip compile` checks them)")
    return RemedyOutcome(Remedy(safe, changes, indexes, _command(kind, path, targets), where, proved), tries=tries)


def torch_follows(new: Mapping[str, str | None], packages: Mapping[str, str], facts: Facts) -> dict[str, str]:
    """What follows the remedy's torch (moved or kept): each package of the set that torch's default wheel pins exactly
    (triton, nvidia-*), at that pin, where the set has another version (its [[release]] row, read from torch's
    METADATA); nothing for a build other than the default wheel's, which pins its own."""
    torch = new.get("torch") or packages.get("torch")
    if not torch or "torch" not in packages or not _default_build(facts, torch):
        return {}
    out: dict[str, str] = {}
    for dep, pin in exact_pins(facts, torch).items():
        have = packages.get(dep)
        cur = new.get(dep, have)  # the set's own version, unless the remedy already moved it
        if have is not None and cur is not None and _public(cur) == _public(have) and _public(have) != pin:
            out[dep] = pin
    return out


def _default_build(facts: Facts, torch: str) -> bool:
    """Whether ``torch`` is the default wheel's build, whose pins the [[release]] rows record (as the torch-pins rule)."""
    label = _label(torch)
    row = facts.torch_build(_public(torch)) if label else None
    return not label or (row is not None and bool(row.cuda) and label == "cu" + (row.cuda or "").replace(".", ""))


def _new_set(found: Found, core: Mapping[str, str]) -> dict[str, str | None]:
    """The core as the remedy has it: every core pin of the user's set (kept or changed), None for one replaced by
    another name, and what the resolver added."""
    out: dict[str, str | None] = {}
    for n, v in core.items():
        out[n] = None if n in found.renamed else found.pins.get(n, _public(v))
    for n, v in found.pins.items():
        if n not in out:
            out[n] = v
    return out


def _requires(src: Source, name: str, version: str) -> list[str]:
    try:
        return src.requires(name, version)
    except GlmcompatError:
        return []


def _hints(found: Found, core: Mapping[str, str], new: Mapping[str, str | None], facts: Facts, src: Source,
           findings: Sequence[Finding], labels: Mapping[str, str], index_hint: str, model: str | None) -> tuple[Hint, ...]:
    """One :class:`Hint` per change, each with why: the error it clears, else what binds it to the rest of the set."""
    errors = [f for f in findings if f.severity == "error"]
    engines = {e: v for e in ENGINES if (v := new.get(e))}
    out: list[Hint] = []
    order = sorted(new, key=lambda n: (n not in found.moved and n not in found.renamed, n in core, n))
    for n in order:
        v = new[n]
        old = _public(core.get(n, ""))
        idx = index_hint if n in labels else ""
        if n in found.renamed:
            nn = found.renamed[n]
            out.append(Hint("replace", n, core[n], str(new.get(nn) or ""), idx,
                            _reason(n, old, facts, errors, engines, src, new, model), replaced_by=nn))
            continue
        if v is None or (old and _public(v) == old) or any(n == r for r in found.renamed.values()):
            continue
        out.append(Hint("pin", n, core.get(n, ""), v, idx, _reason(n, v, facts, errors, engines, src, new, model)))
    for dep, why in found.overridden.items():
        out.append(Hint("override", dep, to=str(new.get(dep) or ""), reason=why))
    return tuple(out)


def _reason(name: str, to: str, facts: Facts, errors: Sequence[Finding], engines: Mapping[str, str], src: Source,
            new: Mapping[str, str | None], model: str | None) -> str:
    """Why ``name`` moves: the error of the user's set that names it, else the pin that binds it."""
    for e, ev in engines.items():
        if e == name:
            continue
        for raw in _requires(src, e, ev):
            head = raw.split(";")[0].strip()
            if canonicalize(head.split("=")[0].split("<")[0].split(">")[0].split("[")[0].strip()) == name and "==" in head:
                return f"{e} {ev} requires {head}"
    pub = _public(to)
    k = facts.kernel(name, pub) if name != "torch" else None
    if k is not None and k.torch and new.get("torch") and _public(str(new["torch"])) == k.torch:
        return f"built against torch {k.torch}"
    fam = facts.family(name, pub)
    if fam is not None and new.get("torch"):
        return f"built for torch{fam[0]}"
    for f in errors:
        if any(p == name for p, _ in f.packages):
            msg = f.message.split(": ", 1)[0] if len(f.message) > 140 else f.message
            return f"was: {msg}"
    if name == "transformers" and model:
        return f"knows model {model}"
    return "moves with the rest of the set"


def _where(lock: Lock, path: Path | None) -> dict[str, str]:
    """The file each core pin lives in (``-r`` includes named), for the hook and the hint."""
    out: dict[str, str] = {}
    for e in getattr(lock, "entries", ()):
        name = canonicalize(e.name)
        if name in CORE and e.version is not None and not e.constraint:
            where = e.origin or (path.name if path else "")
            out[name] = f"{where}:{e.line}" if where and e.line else where
    return out


def _command(kind: str, path: Path | None, targets: Sequence[str]) -> str:
    """The one command that writes the pins, never over its own input; "" when the pins are edited by hand."""
    if path is None:
        return ""
    t = " ".join(f"--target {x}" for x in targets)
    if kind == "requirements.txt" and path.suffix == ".txt":
        src = path.with_suffix(".in")
        if src.is_file() and src.resolve() != path.resolve():
            return f"pin them in {src.name}, then `glmcompat lock {src.name} -o {path.name} {t}`"
    if kind == "uv.lock" or path.name in ("uv.lock", "pyproject.toml"):
        return f"pin them in pyproject.toml, then `glmcompat lock {t}` (it relocks uv.lock)"
    return ""


_PROPOSED = re.compile(r"(?:install|pin|use)\s+([A-Za-z0-9._-]+)==([A-Za-z0-9.+!-]+)")


def engine_override_note(remedy: str, packages: Mapping[str, str], facts: Facts) -> str:
    """``remedy`` with what it overrides said: a hint that proposes ``X==V`` where an engine of the set (its
    [[release]] row: the wheel's Requires-Dist) pins X to another version gets "(overrides sglang 0.5.10's pin
    torchao==0.9.0)", so following it blindly is a deliberate override, never a surprise."""
    notes: list[str] = []
    for name, version in _PROPOSED.findall(remedy):
        dep = canonicalize(name)
        for e in ENGINES:
            ev = packages.get(e)
            if not ev:
                continue
            for row in facts.rows("release"):
                if row.package != e or row.version != _public(ev):
                    continue
                for raw in row.requires:
                    m = re.match(r"([A-Za-z0-9._-]+)\s*==\s*([^;,\s]+)", raw)
                    if m and canonicalize(m.group(1)) == dep and m.group(2) != version:
                        notes.append(f"overrides {e} {ev}'s pin {dep}=={m.group(2)}")
    return remedy + (f" ({'; '.join(dict.fromkeys(notes))})" if notes else "")


def safe_set_json(r: Remedy | None) -> dict[str, str | None] | None:
    """``check --json``'s ``safe_set``: name -> version, None for a package the remedy removes or replaces."""
    if r is None or not r.safe_set:
        return None
    return dict(r.safe_set)


__all__ = ["Judge", "RemedyOutcome", "SourceFor", "engine_override_note", "for_lock", "judge_all", "safe_set_json"]


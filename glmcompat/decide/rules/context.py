"""What a rule reads: the :class:`Context` of one set on one target, the :class:`Rule` record the registry
lists, and the helpers several rules share (evidence of a row, the torch to probe against, the best kernel)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from packaging.version import Version

from glmcompat.matrix.rows import Fact, Target
from glmcompat.matrix.view import Facts
from glmcompat.model import gpu
from glmcompat.model.artifacts import ArtifactFacts
from glmcompat.model.findings import Finding, NameVersion
from glmcompat.model.machine import Machine


def _ev(row: Fact | None) -> tuple[tuple[str, str], ...]:
    return ((row.evidence, row.source),) if row is not None else ()


def _pair_ev(row: Fact, name: str, version: str, spec: str) -> tuple[tuple[str, str], ...]:
    """The evidence of one pair of a [[family]] row: the row covers many releases, so its source is prefixed
    with the pair it proves here (``torchvision 0.24.1: torch==2.9.1``)."""
    return ((row.evidence, f"{name} {Version(version).public}: torch{spec}; {row.source}"),)


@dataclass
class Context:
    packages: dict[str, str]  # canonical name -> version (local label kept)
    target: Target
    facts: Facts
    model: str | None = None
    allow_unknown: bool = False
    sources: dict[str, str] = field(default_factory=dict)  # name -> source kind, for those not from an index
    unpinned: dict[str, str] = field(default_factory=dict)  # name -> specifier, named without an exact pin
    overrides: dict[str, str] = field(default_factory=dict)  # uv override-dependencies: deliberate departures
    no_isolation: frozenset[str] | None = None  # packages built without build isolation (None: not known)
    host: Machine | None = None  # the machine judged: its NVIDIA driver, glibc (None: not named, not judged)
    glibc: dict[str, str] = field(default_factory=dict)  # name -> the lowest glibc its wheels need (uv.lock)
    artifacts: Mapping[tuple[str, str], ArtifactFacts] = field(default_factory=dict)  # read from the bytes (ops.artifacts)

    def built_from_source(self, name: str) -> bool:
        from glmcompat.model.environments import BUILT_FROM_SOURCE  # lazy: start-up path (the fast path imports rules)

        return self.sources.get(name) in BUILT_FROM_SOURCE

    def prebuilt(self, names: set[str]) -> list[tuple[str, str]]:
        """(name, version) of the set's packages among ``names``, sorted, but those built from source and all of them
        beside a torch built from source: built against the torch beside them, or unknowable statically
        (rule_source_build warns)."""
        if "torch" in self.packages and self.built_from_source("torch"):
            return []
        return [(n, self.packages[n]) for n in sorted(names & self.packages.keys()) if not self.built_from_source(n)]

    @property
    def capability(self) -> tuple[int, int]:
        return gpu.parse_capability(self.target.compute_capability)

    def pin(self, name: str) -> NameVersion:
        return name, self.packages[name]

    @property
    def machine(self) -> str:
        """The machine whose wheels are judged (the platform of the facts' view)."""
        return self.facts.platform

    def probe_command(self, kind: str, name: str, version: str, option: str) -> str:
        """The ``glmcompat abi|arch`` command that probes ``name`` ``version``'s wheel for this machine."""
        plat = "" if self.machine == "x86_64" else f" --platform {self.machine}"
        return f"glmcompat {kind} {name}=={Version(version).public}{plat} {option}"

    def unknown(self, packages: tuple[NameVersion, ...], message: str, *, probe: str | None = None,
                remedy: str | None = None) -> Finding:
        """A fact the matrix lacks: an error (fail closed) unless --allow-unknown. The remedy is running
        ``probe`` (a glmcompat command that records the evidence), or ``remedy`` as given."""
        if probe is not None:
            remedy = (f"run `{probe}` to probe it and record the evidence" if self.allow_unknown
                      else f"run `{probe}` to probe it and record the evidence, or pass --allow-unknown")
        return Finding(
            rule="unknown",
            severity="warning" if self.allow_unknown else "error",
            packages=packages,
            message=message + (" (no evidence in the matrix)" if self.allow_unknown
                               else " (no evidence in the matrix; failing closed)"),
            remedy=remedy or "",
        )


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of the check, as the registry lists it (:data:`glmcompat.decide.rules.registry.RULES`): what it
    is called, what it reads, the evidence it needs and the kind of remedy it gives, beside its check."""

    id: str  # the Finding.rule it reports (the first of ``ids`` where it reports several)
    family: str  # the family of breaks it judges (the module it lives in)
    check: Callable[[Context], list[Finding]]
    reads: tuple[str, ...]  # the matrix tables and facts it reads (Facts.rows names, or a view method)
    evidence: tuple[str, ...]  # the kinds of evidence its errors cite (model.findings.EvidenceKind)
    remedy: str  # the kind of remedy it gives: "pin", "replace", "probe", "verify", "target", "override", "none"
    doc: str  # one line for the docs
    ids: tuple[str, ...] = ()  # every Finding.rule it can report, where more than ``id``
    # the packages its check (and the helpers it calls) reads by name, canonical: with the words of the matrix's
    # rows, what a stored verdict depends on (glmcompat.decide.reads.NAMED, the start-up path's projection)
    names: tuple[str, ...] = ()

    @property
    def reports(self) -> tuple[str, ...]:
        return self.ids or (self.id,)


def _probe_torch(ctx: Context) -> str:
    """The torch to probe an extension against: the set's, else the newest release the matrix records."""
    torch = ctx.packages.get("torch")
    if torch is not None:
        return Version(torch).public
    return str(max(Version(v) for t in ctx.facts.rows("torch") for v in t.versions))


def _probed(ctx: Context, rule: str, name: str, ver: str, *, severity: str, built: str, unknown: str,
            example: bool = False) -> list[Finding]:
    """The findings on ``name`` ``ver`` where no matrix row says what torch it was built for: its ABI probe against the
    set's torch decides (none where it loads; ``severity`` where symbols it needs are missing, with the first as an
    example where ``example``); without a probe, an unknown (``unknown``) naming the probe to run."""
    torch = ctx.packages.get("torch")
    verdict = ctx.facts.abi_verdict(name, ver, torch) if torch else None
    if verdict is not None and verdict.compatible:
        return []  # probed: every torch symbol it needs is exported by this torch
    a = ctx.artifacts.get((name, ver))
    if verdict is None and torch is not None and a is not None and a.read and (
            Version(torch).public in a.torch_missing or a.torch_needs == 0):
        return []  # judged from its own bytes against this torch: the artifact rule says what is missing, if anything
    if verdict is not None and torch is not None:
        t = Version(torch).public
        syms = verdict.symbols if example else ()
        return [Finding(rule=rule, severity=severity, packages=(ctx.pin(name), ctx.pin("torch")),
                        message=f"torch {t} breaks {name} {ver}: {verdict.missing} undefined symbol(s) it needs are "
                        "missing" + (f" (e.g. {syms[0]})" if syms else ""), evidence=_ev(verdict),
                        remedy=f"use a {name} release {built} torch {t}",
                        probe=ctx.probe_command("abi", name, ver, f"--torch {t}"))]
    return [ctx.unknown((ctx.pin(name),), unknown, probe=ctx.probe_command("abi", name, ver, f"--torch {_probe_torch(ctx)}"))]


def _torch_pins(ctx: Context, torch: str) -> str:
    """'torch==2.9.1 and torchvision==0.24.1' — torch plus the family releases built for it."""
    pins = [f"torch=={torch}"]
    for fam in sorted(ctx.facts.family_packages()):
        if fam in ctx.packages:
            v = ctx.facts.family_for_torch(fam, torch)
            if v:
                pins.append(f"{fam}=={v}")
    return ", ".join(pins[:-1]) + (" and " if len(pins) > 1 else "") + pins[-1]


def _best_kernel(ctx: Context, name: str, torch: str | None = None) -> tuple[str, str, str] | None:
    """(package, version, built-against torch) of the newest release of ``name`` — or of its renamed
    successor (sgl-kernel -> sglang-kernel) — whose GPU code runs on the target, built against ``torch``
    when given. Releases whose GPU code is not recorded count only when ``torch`` narrows the choice."""
    family = {"sgl-kernel", "sglang-kernel"} if name in ("sgl-kernel", "sglang-kernel") else {name}
    best: tuple[Version, tuple[str, str, str]] | None = None
    for v, row in ctx.facts.kernels_of(family):
        if torch is not None and Version(row.torch) != Version(torch):
            continue
        if row.sass is None:
            if torch is None:
                continue
        elif not gpu.runnable(row.sass + (row.ptx or ()), ctx.capability):
            continue
        if best is None or Version(v) > best[0]:
            best = (Version(v), (row.package, v, row.torch))
    return best[1] if best else None


_LABEL_TORCH = re.compile(r"torch(\d+)(?:\.(\d+))?(?:\.(\d+))?")


def label_torch(local: str) -> str | None:
    """The torch release a build label names: ``cu128torch2.11`` -> '2.11', ``cu12torch2.6cxx11abiFALSE`` ->
    '2.6', and the dotless form ``cu129torch2100`` -> '2.10.0' (major, then minor, then a one-digit patch:
    ``torch280`` -> '2.8.0', ``torch28`` -> '2.8'). None when it names none."""
    m = _LABEL_TORCH.search(local.replace("_", "."))
    if not m:
        return None
    if m.group(2) is not None:
        return ".".join(g for g in m.groups() if g is not None)
    d = m.group(1)
    if len(d) < 2:
        return None
    major, rest = d[0], d[1:]
    return f"{major}.{rest}" if len(rest) == 1 else f"{major}.{rest[:-1]}.{rest[-1]}"

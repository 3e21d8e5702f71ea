"""What a resolution of the core is made of, as data: the :class:`Source` protocol (where candidates come from), the
requirements (:class:`Req`, each with its :class:`Why`), the candidates (:class:`Cand`), why the matrix rules one out
(:class:`Ruled`) and the names of the pseudo-packages the matrix adds. The provider (:mod:`glmcompat.decide.resolver`,
which also holds what it chose, :class:`~glmcompat.decide.resolver.Outcome`), the roots (:mod:`glmcompat.decide.roots`) and the explanations
(:mod:`glmcompat.decide.explain`) share it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Protocol

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from glmcompat.model.errors import InputError


KERNELS = ("sgl-kernel", "sglang-kernel")
TORCH_ABI = "<torch-abi>"
CUDA = "<cuda-runtime>"
MAX_ROUNDS = 2000



def same_version(a: str, b: str) -> str:
    """The pseudo-package that holds ``a`` and ``b`` at one version when both are in the set."""
    return f"<same-version:{a},{b}>"


def one_of(old: str, new: str) -> str:
    """The pseudo-package that keeps a renamed project from being installed under both names."""
    return f"<one-of:{old},{new}>"


def is_pseudo(name: str) -> bool:
    return name.startswith("<")


class Source(Protocol):
    """Everything the resolver (:class:`Provider`, :func:`make_provider`) and its explanations
    (:mod:`glmcompat.decide.explain`) ask of where candidates come from: the index
    (:class:`glmcompat.edges.sources.IndexSource`), a recorded snapshot of it (``RecordedSource``), a recorder or a
    progress display wrapping either. Names are canonical, versions as the index spells them. The resolver memoises
    every answer it gets, so a source needs to answer each question only once to be fast."""

    @property
    def machine(self) -> str:
        """The Linux machine (``x86_64``, ``aarch64``) whose wheels are the candidates. Free: asked once, before
        resolving, to refuse a request for another machine."""
        ...

    def versions(self, name: str) -> list[str]:
        """The releases of ``name`` that have a wheel this interpreter and machine can install (before the source's
        cut-off, yanked ones left out), in any order; ``[]`` for an unknown project. Costs the project's page (one
        request) the first time it is asked for a name."""
        ...

    def requires(self, name: str, version: str) -> list[str]:
        """The Requires-Dist of the wheel ``name==version`` installs here (a release :meth:`versions` listed), as
        PEP 508 strings with their markers. May cost one METADATA read (a PEP 658 file, or range reads of the
        wheel) per release; the resolver asks only for the releases it tries."""
        ...

    def unavailable(self, name: str) -> dict[str, list[str]]:
        """The releases of ``name`` on the index with no wheel this interpreter and machine can install:
        ``{version: the files they do have}`` (sdists, other platforms' wheels), never candidates; ``{}`` when the
        source does not know. Asked only to explain a failure; after :meth:`versions`, free."""
        ...

    def platform(self) -> str:
        """The interpreter and machine the wheels are for, in words (``CPython 3.11 on Linux x86_64``), for
        explanations. Free."""
        ...


# ------------------------------------------------------------------------------------------------
# Structured causes
# ------------------------------------------------------------------------------------------------

# Who asks for a requirement (Why.kind). Root kinds have no parent candidate.
USER = "user"  # --with REQ
STACK = "stack"  # the stack lists the package
MODEL = "model"  # the model needs it (transformers / sglang that know the model type)
TARGET = "target"  # a target requirement (a fix the GPU needs)
ASKED = "asked"  # a pinned sub-resolution: "if NAME==V were chosen"
ROOT_KINDS = frozenset({USER, STACK, MODEL, TARGET, ASKED})
DECLARED = "declared"  # the parent's METADATA Requires-Dist
OVERRIDE = "override"  # a stack override replaced the parent's pin for the model
BUILT = "built-against"  # a kernel's build torch (<torch-abi>)
IS_ABI = "is-abi"  # torch V provides <torch-abi> V
LINKS = "links-cuda"  # the CUDA runtime a wheel links (<cuda-runtime>)
FAMILY = "family"  # torchvision / torchaudio: the torch a release was built for
SAME = "same-version"  # two packages that must share a version when both are in the set
RENAMED = "renamed"  # one project under two names: at most one of them in the set

# Why the matrix rules a candidate out (Ruled.kind).
NO_EVIDENCE = "no-evidence"
NO_CODE = "no-code"
TARGET_NEEDS = "target-needs"
DRIVER = "driver"  # built for a CUDA the machine's NVIDIA driver cannot run


@dataclass(frozen=True)
class Why:
    """Who asks for a requirement and on what grounds, as data (resolvelib's ``RequirementInformation``: the
    requirement is the :class:`Req` that carries it, its parent ``pkg`` ``ver``); the provider builds no prose:
    :func:`glmcompat.decide.explain.clause` is the one place a requirement becomes a clause."""

    kind: str
    pkg: str = ""  # the parent package, stack, model type, target name or (USER) the project file
    ver: str = ""  # the parent's version
    asked: str = ""  # what the parent asks for as it wrote it: a specifier, a torch or CUDA version, the other package
    reason: str = ""  # the reason the matrix or the stack override states, quoted as is
    evidence: str = ""  # the evidence kind behind it (``probe``, ``metadata`` ...)
    source: str = ""  # where that evidence is

    @property
    def parent(self) -> str:
        return f"{self.pkg} {self.ver}".strip()


@dataclass(frozen=True)
class Req:
    name: str
    spec: SpecifierSet
    why: Why = Why(STACK)
    exact: frozenset[str] | None = None  # pseudo requirements: any of these exact values
    also: frozenset[str] = frozenset()  # versions allowed beyond ``spec`` (probed ABI-compatible)
    pinned: bool = field(init=False, compare=False, repr=False, default=False)
    _seen: dict[Version, bool] = field(init=False, compare=False, repr=False, default_factory=dict)  # ok() answers

    def __post_init__(self) -> None:
        object.__setattr__(self, "pinned", self.exact is not None or any(s.operator in ("==", "===") for s in self.spec))

    def ok(self, version: Version) -> bool:
        seen = self._seen
        hit = seen.get(version)
        if hit is None:
            if self.exact is not None:
                hit = str(version) in self.exact
            else:
                hit = self.spec.contains(version, prereleases=True) or (bool(self.also) and str(version) in self.also)
            seen[version] = hit
        return hit

    def show(self) -> str:
        if self.exact is not None:
            vals = " or ".join(sorted(self.exact, key=Version))
            return f"{_pseudo_label(self.name)} {vals}"
        extra = sorted((v for v in self.also if not self.spec.contains(v, prereleases=True)), key=Version)
        if extra:
            return f"{self.name}{self.spec} (or {' or '.join(extra)}, which an ABI probe found compatible)"
        return f"{self.name}{self.spec}"


def _pseudo_label(name: str) -> str:
    if name.startswith("<same-version:"):
        a, b = name[len("<same-version:"):-1].split(",")
        return f"one version of {a} and {b}:"
    if name.startswith("<one-of:"):
        a, b = name[len("<one-of:"):-1].split(",")
        return f"only one of {a} and {b}:"
    return {TORCH_ABI: "the torch ABI of", CUDA: "CUDA runtime"}.get(name, name)



@cache
def parse_requirement(raw: str) -> Requirement | None:
    try:
        return Requirement(raw)
    except InvalidRequirement:
        return None


@cache
def parse_spec(text: str) -> SpecifierSet:
    """A specifier set, parsed once per text."""
    return SpecifierSet(text)


def contains(spec: SpecifierSet, version: Version) -> bool:
    return spec.contains(version, prereleases=True)


@dataclass(frozen=True)
class Cand:
    name: str
    version: Version

    def __str__(self) -> str:
        return f"{self.name}=={self.version}"


@dataclass(frozen=True)
class Ruled:
    """Why the matrix rules ``name==version`` out before resolving, as data (:func:`glmcompat.decide.explain.ruled_clause`
    renders it): NO_EVIDENCE says which fact is ``missing``; NO_CODE the ``codes`` the release carries (none for a
    ``cpu_only`` build), the capabilities they run on and the ``target``'s; TARGET_NEEDS the target's ``spec`` and
    ``reason``."""

    kind: str  # NO_EVIDENCE, NO_CODE, TARGET_NEEDS or DRIVER
    name: str
    version: str
    remedy: str
    codes: tuple[str, ...] = ()
    wheel: str = ""  # how the clause names the release ("torch 2.9.1's default wheel"); "" names it "NAME VERSION"
    missing: str = ""  # NO_EVIDENCE: "build" (torch), "kernel", "family" or "jit"
    target: str = ""
    capability: str = ""  # the target's compute capability
    runs_on: tuple[str, ...] = ()  # NO_CODE: the capabilities of known targets that ``codes`` run on
    arch_specific: str = ""  # NO_CODE: the target major's arch-specific code it carries (sm_90a), if any
    cpu_only: bool = False  # NO_CODE: a CPU-only build (``platform``, ``evidence``)
    platform: str = ""
    evidence: str = ""
    spec: str = ""  # TARGET_NEEDS
    reason: str = ""
    cuda: str = ""  # DRIVER: the CUDA the release is built for, the driver it needs and the machine's
    needs: str = ""
    driver: str = ""


def pin_override(name: str, version: str, dep: str, spec: SpecifierSet, model_spec: SpecifierSet,
                 by: str = "stack override") -> str | None:
    """Why ``name==version``'s exact pin ``dep<spec>`` is overridden to the model's ``model_spec``, or None when a
    pinned version serves the model (or ``spec`` pins nothing)."""
    pinned = [s.version for s in spec if s.operator == "=="]
    if not pinned or any(model_spec.contains(p, prereleases=True) for p in pinned):
        return None
    return (f"{name} {version} pins {dep}{spec}, which does not know the model; "
            f"overridden to {dep}{model_spec} ({by})")

def parse_cutoff(text: str | None) -> str | None:
    """An exclude-newer value as ``YYYY-MM-DDTHH:MM:SS`` (UTC): an RFC 3339 timestamp or a date
    (midnight UTC). InputError otherwise."""
    if not text:
        return None
    s = text.strip()
    if re.fullmatch(r"\d{4}-\d\d-\d\d", s):
        return s + "T00:00:00"
    m = re.fullmatch(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d(?::\d\d)?)(?:\.\d+)?(Z|[+-]00:?00)?", s)
    if not m:
        raise InputError(f"exclude-newer: expected a date (2026-11-29) or an RFC 3339 UTC timestamp, got {text!r}")
    hms = m.group(2) if len(m.group(2)) == 8 else m.group(2) + ":00"
    return f"{m.group(1)}T{hms}"


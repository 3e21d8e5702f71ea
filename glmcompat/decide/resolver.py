"""Resolve the ABI-coupled core with resolvelib against the matrix (the algorithm does no I/O).

The core: torch, torchvision, torchaudio, sgl-kernel / sglang-kernel, xformers, flashinfer-python /
-cubin, transformers, and the serving engine, sglang or vllm. Candidates come from a :class:`Source`
(versions and Requires-Dist; the index in production, a recorded JSON file in tests).

* **The package set comes from the wheels.** A stack names its engine (``engine``, default sglang);
  with the engine in the stack, the engine is the root and every other core package enters through
  the chosen release's own Requires-Dist (sglang 0.5.16 and later no longer require flashinfer-cubin,
  so a newer sglang is never held back by a frozen list; each vllm release pins torch, torchvision,
  torchaudio and flashinfer exactly). Stacks without their engine ask for their listed packages.
  vllm is itself a compiled torch extension: the matrix's ``[[kernel]]`` rows give the torch it was
  built against, its CUDA runtime and its GPU code, as for sgl-kernel.
* **The matrix prunes before resolving**: a candidate without evidence, or whose GPU code cannot
  run on the target, is never offered, so a target nothing runs on fails in a few rounds instead
  of a search through every combination.
* **The matrix adds what upstream metadata does not say** as requirements on *pseudo-packages*: the
  torch a kernel was built against (``<torch-abi>``), the CUDA runtime it links (``<cuda-runtime>``)
  and versions that must be equal when both packages are in the set (flashinfer-python and
  flashinfer-cubin: ``<same-version:...>``) or that are one project under two names (sgl-kernel and
  sglang-kernel: ``<one-of:...>``), so a clash is explained like any other conflict.
* **Causes are structured.** Every requirement carries a :class:`Why` (who asks, on what evidence)
  and every pruned candidate a :class:`Ruled`; decisions look at their kinds, never at prose.
* **Explanations live in** :mod:`glmcompat.decide.explain`: :func:`solve` raises :class:`Unresolvable`
  with the structured causes (the provider, the roots, resolvelib's requirement causes), and the
  explain module derives and renders them ("Because ..., we can conclude that ..."), as it does the
  skip reasons of ``glmcompat upgrade``. This module never imports it.

Dependencies, Requires-Dist parses, matrix verdicts and pinned sub-resolutions are memoised on
the :class:`Provider`, so explaining a dozen skipped releases costs little more than the resolution.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Protocol

import resolvelib
from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from glmcompat.decide import cudadriver
from glmcompat.decide.stacks import CORE, ENGINES, lock_platform, stack_engine
from glmcompat.matrix.rows import ModelSupport
from glmcompat.matrix.view import Facts
from glmcompat.model import gpu
from glmcompat.model.errors import InputError, UnsafeError
from glmcompat.model.findings import Cause
from glmcompat.model.names import canonicalize, normalize_version
from glmcompat.model.numbers import check_digits
from glmcompat.model.platforms import PLATFORM_NAME, marker_env

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


_NAME = re.compile(r"\s*[A-Za-z0-9][A-Za-z0-9._-]*")


@cache
def _requirement(raw: str) -> Requirement | None:
    try:
        return Requirement(raw)
    except InvalidRequirement:
        return None


@cache
def parse_spec(text: str) -> SpecifierSet:
    """A specifier set, parsed once per text."""
    return SpecifierSet(text)


def _contains(spec: SpecifierSet, version: Version) -> bool:
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


@dataclass
class Outcome:
    """What the resolver chose, and for each package the newer versions it skipped and why."""

    pins: dict[str, str]
    overridden: dict[str, str]  # package -> why an upstream pin on it was overridden
    skipped: dict[str, dict[str, str]] = field(default_factory=dict)
    provider: Provider | None = field(default=None, repr=False, compare=False)
    roots: list[Req] = field(default_factory=list, repr=False, compare=False)


# ------------------------------------------------------------------------------------------------
# The provider
# ------------------------------------------------------------------------------------------------


class Provider(resolvelib.AbstractProvider):  # type: ignore[type-arg]
    """Answers resolvelib's five questions from the source and the matrix, memoising every answer:
    ``find_matches`` lists versions (one index page per package), ``get_dependencies`` reads one
    METADATA per candidate, once."""

    def __init__(self, facts: Facts, source: Source, *, target: str, names: Sequence[str] = (),
                 prefer: Mapping[str, str] | None = None, upgrade: bool = False, overrides: Mapping[str, str] | None = None,
                 model_reqs: Mapping[str, str] | None = None, python: str = "3.11", platform: str | None = None,
                 project: bool = False, driver: str | None = None) -> None:
        self.machine = lock_platform(facts, target, platform)
        self.facts = facts = facts.on(self.machine)  # every matrix answer is about this machine's wheels
        self.source = source
        self.target = facts.target(target)
        self.capability = gpu.parse_capability(self.target.compute_capability)
        self.names = set(names)  # the stack's packages and --with (for explanations)
        self.prefer = dict(prefer or {})
        self.upgrade = upgrade
        self.overrides = dict(overrides or {})
        self.model_reqs = dict(model_reqs or {})
        self.project = project  # a user's project (its overrides are for the model, not a stack's)
        self.driver = driver  # the machine's NVIDIA driver (None: not judged)
        self.env = marker_env(python, self.machine)
        self.pruned: dict[str, dict[str, Ruled]] = {}
        self.overridden: dict[tuple[str, str, str], str] = {}  # (candidate, its version, dep) -> why
        self.preferred_by: dict[str, tuple[str, str]] = {}  # package -> (known-good stack, version) that ordered it
        self._versions: dict[str, list[Version]] = {}
        self._version_set: dict[str, frozenset[Version]] = {}
        self._deps: dict[tuple[str, str], tuple[Req, ...]] = {}
        self._ruled: dict[tuple[str, str], Ruled | None] = {}
        self._markers: dict[str, bool] = {}
        self._matches: dict[tuple[str, frozenset[int], frozenset[Version]], tuple[tuple[Req, ...], list[Cand]]] = {}
        self.kernel_names = facts.kernel_packages() | set(KERNELS)
        self._family_names = facts.family_packages()
        self._equal = [tuple(e.packages) for e in facts.rows("equal_version")]
        self._renamed = [(r.old, r.new) for r in facts.rows("rename")]
        tname = self.target.name
        # Known-good stacks for this target: when a parent leaves a package open, their pin is preferred.
        self._known = [s for s in facts.rows("stack") if tname in s.targets]
        self.calls = {"dependencies": 0, "computed": 0}

    # -- resolvelib API ---------------------------------------------------------------------------
    def identify(self, requirement_or_candidate: Req | Cand) -> str:
        return requirement_or_candidate.name

    def get_preference(self, identifier: str, resolutions: Any, candidates: Any, information: Any, backtrack_causes: Any) -> Any:
        infos = list(information[identifier])
        pinned = any(r.pinned for r, _ in infos)
        asked = any(p is None and r.why.kind in (USER, ASKED) for r, p in infos)
        if self.project:  # a project's own exact pins first: they decide the rest (sgl-kernel==0.3.21 -> its torch)
            return (not is_pseudo(identifier), not asked, not pinned, self.rank(identifier), identifier)
        return (not is_pseudo(identifier), not asked, self.rank(identifier), not pinned, identifier)

    def rank(self, name: str) -> int:
        return 0 if name == "torch" else 1 if name in self.kernel_names else 2 if name in self._family_names else 3

    def find_matches(self, identifier: str, requirements: Mapping[str, Iterator[Req]], incompatibilities: Mapping[str, Iterator[Cand]]) -> list[Cand]:
        reqs = list(requirements[identifier])
        bad = {c.version for c in incompatibilities[identifier]}
        if is_pseudo(identifier):
            values: set[Version] = set()
            for r in reqs:
                values |= {Version(v) for v in (r.exact or ())}
            return [Cand(identifier, v) for v in sorted(values, reverse=True) if v not in bad and all(r.ok(v) for r in reqs)]
        # Keyed by the requirements' identities: each is memoised with its candidate's dependencies,
        # and the entry holds them, so an id is never reused for another requirement.
        key = (identifier, frozenset(map(id, reqs)), frozenset(bad))
        hit = self._matches.get(key)
        if hit is None:
            hit = self._matches[key] = (tuple(reqs), self._match(identifier, reqs, bad))
        out = list(hit[1])
        if self.project:
            out = self._narrowed(identifier, out, requirements)
        pref = self._preferred(identifier, reqs)
        if pref is not None:
            pv = Version(pref)
            out.sort(key=lambda c: c.version != pv)  # stable: the rest stay newest first
        return out

    def _narrowed(self, name: str, out: list[Cand], requirements: Mapping[str, Iterator[Req]]) -> list[Cand]:
        """What the torch ABI already required tells without a METADATA read: a torch outside it cannot be chosen
        (its own ``<torch-abi>`` is its version), and a torch family release built for a torch inside it is tried
        first. Costs nothing when no kernel has asked yet."""
        try:
            abi = [r.exact for r in requirements[TORCH_ABI] if r.exact is not None]
        except KeyError:
            return out
        if not abi:
            return out
        allowed = frozenset.intersection(*map(frozenset, abi))
        if name == "torch":
            return [c for c in out if normalize_version(str(c.version)) in allowed]
        if name in self._family_names:
            def fits(c: Cand) -> bool:
                fam = self.facts.family(name, str(c.version))
                return fam is not None and any(parse_spec(fam[0]).contains(t, prereleases=True) for t in allowed)
            return sorted(out, key=lambda c: not fits(c))  # stable: newest first within each group
        return out

    def _match(self, name: str, reqs: list[Req], bad: set[Version]) -> list[Cand]:
        versions = self.versions(name)
        for r in reqs:  # an exact pin narrows the scan to one release
            if r.exact is None and len(r.spec) == 1 and not r.also:
                s = next(iter(r.spec))
                if s.operator == "==" and "*" not in s.version:
                    pv = Version(s.version)
                    versions = [pv] if pv in self._version_set[name] else []
                    break
        out = []
        for v in versions:
            if bad and v in bad:
                continue
            for r in reqs:
                if not r.ok(v):
                    break
            else:
                if self.ruled(name, str(v)) is None:
                    out.append(Cand(name, v))
        return out

    def is_satisfied_by(self, requirement: Req, candidate: Cand) -> bool:
        return requirement.ok(candidate.version)

    def get_dependencies(self, candidate: Cand) -> list[Req]:
        if is_pseudo(candidate.name):
            return []
        return list(self.dependencies(candidate.name, str(candidate.version)))

    def _preferred(self, name: str, reqs: list[Req]) -> str | None:
        """The version to try first: the stack's pin (plain lock), or under --upgrade the pin of a
        known-good stack for this target whose parent release leaves ``name`` open."""
        if not self.upgrade:
            return self.prefer.get(name)
        if any(r.pinned for r in reqs):
            return None
        for r in reqs:
            if r.why.kind != DECLARED:
                continue
            for s in self._known:
                pins = s.pins
                if name in pins and r.why.pkg in pins and normalize_version(pins[r.why.pkg]) == normalize_version(r.why.ver):
                    self.preferred_by[name] = (s.name, pins[name])
                    return str(pins[name])
        return None

    # -- versions and the matrix's verdicts -------------------------------------------------------
    def versions(self, name: str) -> list[Version]:
        """Final releases of ``name`` on the source, newest first."""
        if name not in self._versions:
            vs = []
            for v in self.source.versions(name):
                try:
                    ver = Version(v)
                except InvalidVersion:
                    continue
                if not ver.is_prerelease and not ver.local:
                    vs.append(ver)
            self._versions[name] = sorted(vs, reverse=True)
            self._version_set[name] = frozenset(vs)
        return self._versions[name]

    def ruled(self, name: str, version: str) -> Ruled | None:
        """Why the matrix rules ``name==version`` out for the target (memoised), or None."""
        key = (name, version)
        if key not in self._ruled:
            r = self._rule(name, version)
            self._ruled[key] = r
            if r is not None:
                self.pruned.setdefault(name, {})[version] = r
        return self._ruled[key]

    def runs_on(self, codes: Iterable[str]) -> list[str]:
        """Compute capabilities of the matrix's targets that any of ``codes`` runs on."""
        codes = list(codes)
        caps = {t.compute_capability for t in self.facts.rows("target")
                if gpu.runnable(codes, gpu.parse_capability(t.compute_capability))}
        return sorted(caps, key=Version)

    def _no_code(self, name: str, v: str, codes: list[str]) -> Ruled:
        near = [c for c in codes if gpu.parse_code(c).major == self.capability[0] and gpu.parse_code(c).suffix == "a"]
        return Ruled(NO_CODE, name, v, self.code_remedy(name), tuple(codes),
                     wheel="" if self.machine == "x86_64" else self._wheel_of(name, v), target=self.target.name,
                     capability=self.target.compute_capability, runs_on=tuple(self.runs_on(codes)),
                     arch_specific=near[-1] if near else "")

    def code_remedy(self, name: str) -> str:
        """One remedy for "no GPU code for the target": the releases that do run there, or that none does."""
        t, cc = self.target.name, self.target.compute_capability
        fam = set(KERNELS) if name in KERNELS else {name}
        on = "" if self.machine == "x86_64" else f" ({self.machine} wheels)"
        known: dict[str, dict[Version, bool]] = {}  # package -> {release: runs on the target}
        if name == "torch":
            for row in self.facts.rows("torch"):
                if not row.variant:
                    ok = bool(gpu.runnable(list(row.sass) + list(row.ptx or []), self.capability))
                    known.setdefault("torch", {}).update(dict.fromkeys(map(Version, row.versions), ok))
            pkg = "torch"
        else:
            for v, krow in self.facts.kernels_of(fam):
                if krow.sass is not None:
                    ok = bool(gpu.runnable(list(krow.sass) + list(krow.ptx or []), self.capability))
                    known.setdefault(krow.package, {})[Version(v)] = ok
            pkg = " / ".join(sorted(fam))
        runs = _runs_text(known)
        if runs:
            return f"{runs[0]}{on} carr{'ies' if runs[1] == 1 else 'y'} GPU code that runs on {t}"
        major, minor = self.capability
        codes = [f"sm_{major}{minor}a"] + [f"sm_{major}{x}{f}" for x in range(minor + 1) for f in ("", "f")]
        return (f"no {pkg} release{on} in the matrix carries GPU code that runs on {t} (compute capability {cc}), so nothing "
                f"that needs {'it' if ' / ' not in pkg else 'them'} runs there: that takes a build with "
                f"{', '.join(codes[:-1])} or {codes[-1]} SASS, or PTX")

    def _wheel_of(self, name: str, v: str) -> str:
        """How a release's wheel is named in a clause: ``torch 2.9.1's default wheel`` on x86_64, ``torch 2.9.1's
        default Linux aarch64 wheel`` elsewhere (the aarch64 wheels are separate builds)."""
        plat = "" if self.machine == "x86_64" else f" {PLATFORM_NAME[self.machine]}"
        return f"{name} {v}'s{' default' if name == 'torch' else ''}{plat} wheel"

    def _record_remedy(self, name: str, v: str) -> str:
        if self.machine == "x86_64":
            return f"`glmcompat matrix refresh --package {name}` records {name} {v}"
        return (f"`glmcompat arch {name}=={v} --platform {self.machine}` (and `glmcompat abi` with `--platform {self.machine}`) "
                f"read its {self.machine} wheel; record the result in glmcompat/matrix/data/aarch64.toml")

    def _rule(self, name: str, v: str) -> Ruled | None:
        t = self.target.name
        if self.driver is not None and (name == "torch" or name in self.kernel_names):
            b = cudadriver.build_of(name, v, self.facts)
            if b is not None and not cudadriver.runs(b.cuda, self.driver, self.facts):
                need = cudadriver.needs(b.cuda, self.facts)[0]
                return Ruled(DRIVER, name, v, f"install NVIDIA driver >= {need}, or use a release built for an older CUDA",
                             wheel=self._wheel_of(name, v), cuda=b.cuda, needs=need, driver=self.driver)
        if name == "torch":
            tb = self.facts.torch_build(v)
            if tb is None:
                return Ruled(NO_EVIDENCE, name, v, self._record_remedy(name, v), wheel=self._wheel_of(name, v), missing="build")
            if not tb.cuda and not tb.variant:
                return Ruled(NO_CODE, name, v, self.code_remedy(name), (), wheel=self._wheel_of(name, v), target=t,
                             cpu_only=True, platform=PLATFORM_NAME[self.machine], evidence=tb.evidence)
            sass, ptx, _ = self.facts.gpu_code("torch", v) or ([], [], None)
            if not gpu.runnable(list(sass) + list(ptx), self.capability):
                return self._no_code(name, v, list(sass) + list(ptx))
        elif name in self.kernel_names:
            k = self.facts.kernel(name, v)
            if k is None:
                return Ruled(NO_EVIDENCE, name, v, self._record_remedy(name, v), missing="kernel",
                             wheel="" if self.machine == "x86_64" else self._wheel_of(name, v))
            found = self.facts.gpu_code(name, v)
            if k.sass is not None and found is not None:
                codes = list(found[0]) + list(found[1])
                if not gpu.runnable(codes, self.capability):
                    return self._no_code(name, v, codes)
        elif name in self._family_names:
            if self.facts.family(name, v) is None:
                return Ruled(NO_EVIDENCE, name, v, f"`glmcompat matrix refresh --package {name}` records {name} {v}",
                             missing="family")
        elif name in ("flashinfer-python", "flashinfer-cubin"):
            if self.facts.jit(name, v) is None:
                return Ruled(NO_EVIDENCE, name, v, f"`glmcompat matrix refresh --package {name}` records {name} {v}",
                             missing="jit")
        for r in self.facts.target_requirements(t):
            if r.package == name and not _contains(parse_spec(r.specifier), Version(v)):
                return Ruled(TARGET_NEEDS, name, v, f"use {name}{r.specifier} on {t}", target=t, spec=r.specifier,
                             reason=r.reason)
        return None

    # -- dependencies -----------------------------------------------------------------------------
    def _override(self, name: str, version: str, dep: str, spec: SpecifierSet, model_spec: SpecifierSet) -> str | None:
        """Why ``name==version``'s requirement ``dep<spec>`` is overridden to the model's ``model_spec``
        (the stack allows it), or None when the requirement can serve the model: an exact pin that the
        model's specifier does not contain (sglang 0.5.9's transformers==4.57.1), or a range that no
        release on the index shares with it (vllm 0.16.0's transformers<5,>=4.56.0 against >=5.2.0)."""
        by = "for the model" if self.project else "stack override"
        if any(s.operator == "==" for s in spec):
            return pin_override(name, version, dep, spec, model_spec, by)
        if not spec or any(spec.contains(v, prereleases=True) and model_spec.contains(v, prereleases=True)
                           for v in self.versions(dep)):
            return None
        return (f"{name} {version} requires {dep}{spec}, which excludes every {dep} release that knows the model; "
                f"overridden to {dep}{model_spec} ({by})")

    def dependencies(self, name: str, version: str) -> tuple[Req, ...]:
        """What ``name==version`` requires of the core (METADATA plus the matrix), memoised."""
        self.calls["dependencies"] += 1
        key = (name, normalize_version(version))
        deps = self._deps.get(key)
        if deps is None:
            self.calls["computed"] += 1
            deps = self._deps[key] = tuple(self._dependencies(name, key[1]))
        return deps

    def _marker_ok(self, raw: str, marker: Marker) -> bool:
        ok = self._markers.get(raw)
        if ok is None:
            ok = self._markers[raw] = bool(marker.evaluate(self.env))
        return ok

    def _dependencies(self, name: str, version: str) -> Iterator[Req]:
        for raw in self.source.requires(name, version):
            m = _NAME.match(raw)
            if m is None or canonicalize(m.group(0)) not in CORE:
                continue  # most of a wheel's Requires-Dist: not worth a full parse
            r = _requirement(raw)
            if r is None:
                continue
            dep = str(canonicalize_name(r.name))
            if dep not in CORE:
                continue
            if r.marker is not None and not self._marker_ok(raw, r.marker):
                continue
            if dep in self.overrides and dep in self.model_reqs:
                model_spec = parse_spec(self.model_reqs[dep])
                why = self._override(name, version, dep, r.specifier, model_spec)
                if why is not None:
                    self.overridden[(name, version, dep)] = why
                    yield Req(dep, model_spec, Why(OVERRIDE, name, version, reason=why))
                    continue
            # What METADATA declares, the installer enforces: a probe that finds another torch ABI-compatible does
            # not make the pair installable (torchvision 0.29.2 declares torch>=2.14.0; uv and pip refuse 2.13.0)
            yield Req(dep, r.specifier, Why(DECLARED, name, version))
        # What the package is (its name, its version's twin) before what it was built against.
        for old, new in self._renamed:
            if name in (old, new):
                other = new if name == old else old
                yield Req(one_of(old, new), SpecifierSet(),
                          Why(RENAMED, name, version, other),
                          exact=frozenset({"0" if name == old else "1"}))
        if name == "torch":
            tb = self.facts.torch_build(version)
            yield Req(TORCH_ABI, SpecifierSet(), Why(IS_ABI, name, version), exact=frozenset({version}))
            if tb is not None and tb.cuda:
                yield Req(CUDA, SpecifierSet(), Why(LINKS, name, version, tb.cuda),
                          exact=frozenset({tb.cuda.split(".")[0]}))
        k = self.facts.kernel(name, version)
        if k is not None and name != "torch":
            if k.on_mismatch == "error":
                ok = {normalize_version(k.torch)} | self.facts.compatible_torches(name, version)
                yield Req(TORCH_ABI, SpecifierSet(), Why(BUILT, name, version, k.torch, evidence=k.evidence,
                                                                 source=k.source),
                          exact=frozenset(ok))
            if k.cuda:
                major = k.cuda.split(".")[0]
                yield Req(CUDA, SpecifierSet(), Why(LINKS, name, version, major),
                          exact=frozenset({major}))
        fam = self.facts.family(name, version)
        if fam is not None:
            # a pair read from METADATA binds as METADATA does; an inferred one (torchaudio 2.11.0 declares no torch)
            # yields to the torches a probe found it loads next to
            probed = frozenset() if fam[1].evidence == "metadata" else frozenset(self.facts.compatible_torches(name, version))
            yield Req("torch", parse_spec(fam[0]), Why(FAMILY, name, version, fam[0], evidence=fam[1].evidence),
                      also=probed)
        for a, b in self._equal:
            if name in (a, b):
                other = b if name == a else a
                yield Req(same_version(a, b), SpecifierSet(),
                          Why(SAME, name, version, other),
                          exact=frozenset({version}))


def _runs_text(known: Mapping[str, Mapping[Version, bool]]) -> tuple[str, int] | None:
    """(text, how many releases) naming the releases that run: per package ``torch 2.11.0 .. 2.15.0`` when every
    recorded release in between runs too (and there are three or more), else its newest three; None when none runs."""
    parts: list[str] = []
    count = 0
    for pkg in sorted(known):
        items = sorted(known[pkg].items())
        runs = [v for v, ok in items if ok]
        if not runs:
            continue
        count += len(runs)
        lo, hi = runs[0], runs[-1]
        if len(runs) >= 3 and all(ok for v, ok in items if lo <= v <= hi):
            parts.append(f"{pkg} {lo} .. {hi}")
        else:
            parts.append(", ".join(f"{pkg} {v}" for v in runs[-3:]))
    return (", ".join(parts), count) if parts else None


# ------------------------------------------------------------------------------------------------
# Entry point
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    stack: str
    target: str
    model: str | None = None
    with_: tuple[str, ...] = ()
    upgrade: bool = False
    python: str = "3.11"
    platform: str | None = None  # the machine the lock is for; None: the target's default (glmcompat.ops.lockgen.lock_platform)
    # Project mode (``glmcompat lock`` in a user's project): ``stack`` is "" and ``with_`` holds the project's own
    # requirements on the core, read from ``origin`` (the file named in explanations: "pyproject.toml requires ...").
    origin: str = ""
    prefer: tuple[tuple[str, str], ...] = ()  # project mode: the versions to try first (the existing lock's)
    driver: str | None = None  # the machine's NVIDIA driver: a release built for a CUDA it cannot run is never offered

    @property
    def subject(self) -> str:
        """What the set is for, in explanations: ``stack NAME`` or ``project FILE``."""
        return f"project {self.origin}" if self.origin else f"stack {self.stack}"


def root_requirements(facts: Facts, req: Request) -> tuple[list[Req], list[str], dict[str, str], dict[str, str], dict[str, str]]:
    """(root requirements, the stack's and --with's core names, preferences, overrides, model requirements).

    With its engine (sglang or vllm) in the stack, the engine is the only package the stack asks for:
    the chosen release's Requires-Dist brings in the rest (its kernel package, flashinfer-cubin or not,
    torchvision...). A model the engine is not known to serve is an :class:`UnsafeError` that names
    the stacks of the other engine that do serve it.
    """
    if req.origin:
        return project_roots(facts, req)
    stack = facts.stack(req.stack)
    engine = stack_engine(stack)
    tname = facts.target(req.target).name
    names = list(stack.pins)
    roots: list[Req] = []
    with_names: set[str] = set()
    for raw in req.with_:
        r = _requirement(check_digits(raw, "--with"))
        if r is None:
            raise InputError(f"--with: invalid requirement {raw!r}")
        name = str(canonicalize_name(r.name))
        if name not in CORE:
            raise InputError(f"--with: {name!r} is not in the coupled core ({', '.join(CORE)}); "
                             "add other packages to the generated pyproject.toml")
        # only a name and a version specifier are kept: anything else would be dropped without a word
        if r.extras:
            raise InputError(f"--with {raw!r}: extras ({', '.join(sorted(r.extras))}) are not kept in a stack lock "
                             f"(its pins are plain name==version); pass --with '{r.name}{r.specifier}', and require "
                             "the extra in your project (`glmcompat lock` in project mode keeps it)")
        if r.url:
            raise InputError(f"--with {raw!r}: a URL requirement; a stack lock resolves the core from the index "
                             f"(pin a version: --with '{r.name}==VERSION'; a local build belongs in your project's "
                             "pyproject.toml, locked in project mode)")
        if r.marker:
            raise InputError(f"--with {raw!r}: a marker ({r.marker}) is not kept in a stack lock; the lock is made "
                             f"for one target and platform (pass --with '{r.name}{r.specifier}')")
        roots.append(Req(name, r.specifier, Why(USER)))
        with_names.add(name)
        if name not in names:
            names.append(name)
    asked = [engine] if engine in names else names
    for n in asked:
        if n not in with_names:
            roots.append(Req(n, SpecifierSet(), Why(STACK, stack.name)))
    model_reqs = _model_and_target_roots(facts, req, tname, [engine] if engine in names else [], roots)
    return roots, names, dict(stack.pins), dict(stack.overrides), model_reqs


def _model_and_target_roots(facts: Facts, req: Request, tname: str, engines: list[str], roots: list[Req]) -> dict[str, str]:
    """Append to ``roots`` what the model needs (transformers that knows it; each of ``engines`` at a release that
    serves it, else the :func:`_unserved` error) and the target's own requirements on packages already asked for;
    returns the model's requirements by package."""
    model_reqs: dict[str, str] = {}
    if req.model:
        m = facts.model(req.model)
        model_reqs["transformers"] = m.transformers
        roots.append(Req("transformers", parse_spec(m.transformers),
                         Why(MODEL, req.model, asked=m.transformers, evidence=m.evidence, source=m.source)))
        for engine in engines:
            spec = m.for_engine(engine)
            if not spec:
                raise _unserved(facts, m, engine, tname, lock_platform(facts, tname, req.platform))
            model_reqs[engine] = spec
            roots.append(Req(engine, parse_spec(spec), Why(MODEL, req.model, asked=spec)))
    for tr in facts.target_requirements(tname):
        if tr.package in [r.name for r in roots]:
            roots.append(Req(tr.package, parse_spec(tr.specifier),
                             Why(TARGET, tname, asked=tr.specifier, reason=tr.reason)))
    return model_reqs


def project_roots(facts: Facts, req: Request) -> tuple[list[Req], list[str], dict[str, str], dict[str, str], dict[str, str]]:
    """:func:`root_requirements` for a user's project: every core requirement the project declares is a root
    (several for one name narrow it together), nothing else is added -- a project that uses torch and a kernel
    gets no engine. With a model, transformers must know it, and each engine the project uses must serve it;
    an engine's own exact transformers pin that does not know the model is overridden (as for a stack)."""
    tname = facts.target(req.target).name
    roots: list[Req] = []
    names: list[str] = []
    for raw in req.with_:
        r = _requirement(check_digits(raw, str(req.origin)))
        if r is None:
            raise InputError(f"{req.origin}: invalid requirement {raw!r}")
        name = str(canonicalize_name(r.name))
        if name not in CORE:
            continue
        roots.append(Req(name, r.specifier, Why(USER, req.origin)))
        if name not in names:
            names.append(name)
    engines = [e for e in ENGINES if e in names]
    model_reqs = _model_and_target_roots(facts, req, tname, engines, roots)
    overrides = {"transformers": model_reqs["transformers"]} if req.model and engines else {}
    return roots, names, _built_for_preferences(facts, roots, dict(req.prefer)), overrides, model_reqs


def _built_for_preferences(facts: Facts, roots: list[Req], prefer: dict[str, str]) -> dict[str, str]:
    """The versions to try first: where the project pins a compiled package exactly (sgl-kernel==0.3.21), the torch
    it was built against and the torch family releases built for that torch (what else could be chosen fails), then
    the existing lock's versions. Only an order: every candidate stays possible."""
    exact = {r.name: s.version for r in roots if r.why.kind == USER for s in r.spec
             if s.operator == "==" and "*" not in s.version}
    out = dict(prefer)
    if "torch" in exact:
        return out
    for name in sorted(exact):
        k = facts.kernel(name, exact[name]) if name != "torch" else None
        if k is None or k.on_mismatch != "error":
            continue
        out["torch"] = k.torch
        for fam in facts.family_packages():
            v = facts.family_for_torch(fam, k.torch)
            if v is not None and fam not in exact:
                out[fam] = v
        break
    return out


def pin_override(name: str, version: str, dep: str, spec: SpecifierSet, model_spec: SpecifierSet,
                 by: str = "stack override") -> str | None:
    """Why ``name==version``'s exact pin ``dep<spec>`` is overridden to the model's ``model_spec``, or None when a
    pinned version serves the model (or ``spec`` pins nothing)."""
    pinned = [s.version for s in spec if s.operator == "=="]
    if not pinned or any(model_spec.contains(p, prereleases=True) for p in pinned):
        return None
    return (f"{name} {version} pins {dep}{spec}, which does not know the model; "
            f"overridden to {dep}{model_spec} ({by})")


def served_elsewhere(facts: Facts, model: ModelSupport, engine: str, target: str, platform: str = "x86_64") -> str:
    """Which other engine serves the model, and the stack to lock it with ("" when none does)."""
    mt = model.model_type
    others = []
    for e in ENGINES:
        if e == engine or not model.for_engine(e):
            continue
        stacks = [s for s in facts.rows("stack") if stack_engine(s) == e and mt in s.models]
        here = [s for s in stacks if target in s.targets]
        pick = (here or stacks)[:1]
        plat = "" if platform == "x86_64" else f" --platform {platform}"
        others.append(f"{e}{model.for_engine(e)} serves it" + (f" (stack {pick[0].name}: `glmcompat lock --stack {pick[0].name} "
                                                    f"--target {target}{plat}`)" if pick else ""))
    return "; ".join(others)


def _unserved(facts: Facts, model: ModelSupport, engine: str, target: str, platform: str = "x86_64") -> UnsafeError:
    """The model's [[model]] row names no release of ``engine``: one line that says which stacks of the other
    engines serve it, or that no engine release in the matrix does (nothing to lock)."""
    mt = model.model_type
    elsewhere = served_elsewhere(facts, model, engine, target, platform)
    if elsewhere:
        clause = f"no {engine} release in the matrix is known to serve model {mt} (its [[model]] row names none)"
        why = Cause("unserved", engine, (clause,), f"a {engine} stack has nothing to lock for model {mt}", elsewhere)
        return UnsafeError(f"{clause}; {elsewhere}", causes=(why,))
    clause = (f"no engine release in the matrix is known to serve model {mt} (its [[model]] row names no "
              f"{' or '.join(ENGINES)} release)")
    why = Cause("unserved", engine, (clause,), f"there is nothing to lock for model {mt}",
                f"record the {' or '.join(ENGINES)} releases that serve {mt} in its [[model]] row")
    return UnsafeError(f"{clause}: nothing to lock for it", causes=(why,))


def make_provider(facts: Facts, source: Source, req: Request) -> tuple[Provider, list[Req]]:
    roots, names, prefer, overrides, model_reqs = root_requirements(facts, req)
    machine = lock_platform(facts, req.target, req.platform)
    reads = source.machine
    if reads != machine:
        raise InputError(f"the source reads the {reads} wheels, and the request is for {machine}")
    # A project's --upgrade prefers nothing (the newest safe release first); a stack's prefers known-good pins.
    upgrade = req.upgrade and not req.origin
    provider = Provider(facts, source, target=req.target, names=names, prefer=prefer, upgrade=upgrade,
                        overrides=overrides, model_reqs=model_reqs, python=req.python, platform=machine,
                        project=bool(req.origin), driver=req.driver)
    return provider, roots


def run(provider: Provider, roots: list[Req]) -> Any:
    """One resolvelib resolution of ``roots`` (its result; resolvelib's exceptions pass through)."""
    return resolvelib.Resolver(provider, resolvelib.BaseReporter()).resolve(roots, max_rounds=MAX_ROUNDS)


class Unresolvable(UnsafeError):
    """No safe set of the core exists: what explains it, unrendered (the request, the provider with its
    memoised answers, the root requirements and resolvelib's causes, each a requirement and the candidate
    that asked for it). :func:`glmcompat.decide.explain.resolve` turns it into the uv-style derivation."""

    def __init__(self, req: Request, provider: Provider, roots: list[Req], causes: Iterable[Any]) -> None:
        self.request = req
        self.provider = provider
        self.roots = roots
        self.requirements = tuple(causes)
        super().__init__(f"no safe set of the core exists for {provider.target.name} ({req.subject}"
                         f"{', model ' + req.model if req.model else ''})")


def solve(facts: Facts, source: Source, req: Request, *, provider: Provider | None = None) -> Outcome:
    """Resolve the core; raise :class:`Unresolvable` (structured, not yet explained) when impossible.
    :func:`glmcompat.decide.explain.resolve` is this with the explanation."""
    own, roots = make_provider(facts, source, req)
    provider = provider or own
    try:
        result = run(provider, roots)
    except resolvelib.ResolutionImpossible as e:
        raise Unresolvable(req, provider, roots, e.causes) from None
    except resolvelib.ResolutionTooDeep:
        raise UnsafeError(f"the core could not be resolved for {req.target} within {MAX_ROUNDS} rounds") from None
    pins = {n: str(c.version) for n, c in result.mapping.items() if not is_pseudo(n)}
    # Only overrides of candidates in the result count (backtracking may have tried others).
    overridden = {dep: why for (n, v, dep), why in sorted(provider.overridden.items()) if pins.get(n) == v}
    return Outcome(dict(sorted(pins.items())), overridden, provider=provider, roots=roots)


# ------------------------------------------------------------------------------------------------
# Sources
# ------------------------------------------------------------------------------------------------


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


__all__ = ["CORE", "Cand", "Outcome", "Provider", "Req", "Request", "Ruled", "Source", "Unresolvable", "Why",
           "make_provider", "parse_cutoff", "parse_spec", "project_roots", "root_requirements", "run", "served_elsewhere", "solve"]

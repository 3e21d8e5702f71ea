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
* **Skip reasons are derived, not guessed**: :func:`skip_reasons` explains each newer release the
  resolution left out by the first clause that rules it out (a root requirement, the chosen set's
  pin, the matrix, one of its own requirements), checking with a resolution pinned to it that the
  conclusion holds, and offers one remedy.

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

from glmcompat.decide.stacks import ENGINES, lock_platform, stack_engine
from glmcompat.matrix.view import Facts
from glmcompat.model import gpu
from glmcompat.model.errors import InputError, UnsafeError
from glmcompat.model.names import canonicalize, normalize_version
from glmcompat.model.platforms import PLATFORM_NAME, marker_env

CORE = ("torch", "torchvision", "torchaudio", "sgl-kernel", "sglang-kernel", "flashinfer-python",
        "flashinfer-cubin", "transformers", "sglang", "vllm", "xformers")
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
    """Where candidates come from. ``versions`` is cheap; ``requires`` may read a wheel's METADATA."""

    def versions(self, name: str) -> list[str]: ...

    def requires(self, name: str, version: str) -> list[str]: ...


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


@dataclass(frozen=True)
class Why:
    """Who asks for a requirement and on what evidence. ``text`` is the rendered clause (display only)."""

    kind: str
    pkg: str = ""  # the parent package, stack, model type or target name
    ver: str = ""  # the parent's version
    text: str = ""

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

    def says(self) -> str:
        """The clause this requirement contributes to an explanation."""
        w = self.why
        if w.text:
            return w.text
        if w.kind == USER:
            return f"you require {self.show()}"
        if w.kind == STACK:
            return f"stack {w.pkg} asks for {self.name}"
        if w.kind == ASKED:
            return f"{self.show()} is asked for"
        if w.kind == DECLARED:
            return f"{w.parent} requires {self.show()}"
        return f"{self.show()} is required ({w.kind} {w.parent})"


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
def _spec(text: str) -> SpecifierSet:
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
    """Why the matrix rules ``name==version`` out before resolving."""

    kind: str  # NO_EVIDENCE, NO_CODE or TARGET_NEEDS
    name: str
    version: str
    text: str
    remedy: str
    codes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Skip:
    """Why a release is not in the chosen set: a uv-style derivation and one remedy.

    ``kind``: ``root`` (a requirement of yours, the model's or the target's), ``pinned`` (the chosen
    set pins otherwise and no release of the pinning package allows it), ``ruled-out`` (the matrix),
    ``conflict`` (one of its requirements cannot be met), ``preference`` (a safe set with it exists;
    the upgrade prefers another). ``subject``: the package whose trouble it is.
    """

    kind: str
    subject: str
    clauses: tuple[str, ...]
    conclusion: str
    remedy: str

    def because(self) -> str:
        return f"Because {', and '.join(self.clauses)}, we can conclude that {self.conclusion}."

    def text(self) -> str:
        return f"{self.because()} hint: {self.remedy}"

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "subject": self.subject, "because": list(self.clauses),
                "conclusion": self.conclusion, "reason": self.because(), "remedy": self.remedy}


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
                 model_reqs: Mapping[str, str] | None = None, python: str = "3.11", platform: str | None = None) -> None:
        self.machine = lock_platform(facts, target, platform)
        self.facts = facts = facts.on(self.machine)  # every matrix answer is about this machine's wheels
        self.source = source
        self.target = facts.target(target)
        self.capability = gpu.parse_capability(self.target["compute_capability"])
        self.names = set(names)  # the stack's packages and --with (for explanations)
        self.prefer = dict(prefer or {})
        self.upgrade = upgrade
        self.overrides = dict(overrides or {})
        self.model_reqs = dict(model_reqs or {})
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
        self._kernel_names = facts.kernel_packages() | set(KERNELS)
        self._family_names = facts.family_packages()
        self._equal = [tuple(e["packages"]) for e in facts.rows("equal_version")]
        self._renamed = [(r["old"], r["new"]) for r in facts.rows("rename")]
        tname = self.target["name"]
        # Known-good stacks for this target: when a parent leaves a package open, their pin is preferred.
        self._known = [s for s in facts.rows("stack") if tname in s.get("targets", ())]
        self.calls = {"dependencies": 0, "computed": 0}

    # -- resolvelib API ---------------------------------------------------------------------------
    def identify(self, requirement_or_candidate: Req | Cand) -> str:
        return requirement_or_candidate.name

    def get_preference(self, identifier: str, resolutions: Any, candidates: Any, information: Any, backtrack_causes: Any) -> Any:
        infos = list(information[identifier])
        pinned = any(r.pinned for r, _ in infos)
        asked = any(p is None and r.why.kind in (USER, ASKED) for r, p in infos)
        return (not is_pseudo(identifier), not asked, self._rank(identifier), not pinned, identifier)

    def _rank(self, name: str) -> int:
        return 0 if name == "torch" else 1 if name in self._kernel_names else 2 if name in self._family_names else 3

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
        pref = self._preferred(identifier, reqs)
        if pref is not None:
            pv = Version(pref)
            out.sort(key=lambda c: c.version != pv)  # stable: the rest stay newest first
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
                pins = s["pins"]
                if name in pins and r.why.pkg in pins and normalize_version(pins[r.why.pkg]) == normalize_version(r.why.ver):
                    self.preferred_by[name] = (s["name"], pins[name])
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
        caps = {t["compute_capability"] for t in self.facts.rows("target")
                if gpu.runnable(codes, gpu.parse_capability(t["compute_capability"]))}
        return sorted(caps, key=Version)

    def _no_code(self, name: str, v: str, codes: list[str]) -> Ruled:
        t, cc = self.target["name"], self.target["compute_capability"]
        caps = self.runs_on(codes)
        shown = ", ".join(codes) or "no GPU code"
        where = f"which runs only on compute capability {' or '.join(caps)}" if caps else "which runs on no known target"
        near = [c for c in codes if gpu.parse_code(c).major == self.capability[0] and gpu.parse_code(c).suffix == "a"]
        note = f" ({near[-1]} is arch-specific: {gpu.parse_code(near[-1]).major}.{gpu.parse_code(near[-1]).minor} only)" if near else ""
        what = f"{name} {v}" if self.machine == "x86_64" else self._wheel_of(name, v)
        return Ruled(NO_CODE, name, v, f"you lock for {t} (compute capability {cc}), and {what} carries {shown}, {where}{note}",
                     self.code_remedy(name), tuple(codes))

    def code_remedy(self, name: str) -> str:
        """One remedy for "no GPU code for the target": the releases that do run there, or that none does."""
        t, cc = self.target["name"], self.target["compute_capability"]
        fam = set(KERNELS) if name in KERNELS else {name}
        on = "" if self.machine == "x86_64" else f" ({self.machine} wheels)"
        known: dict[str, dict[Version, bool]] = {}  # package -> {release: runs on the target}
        if name == "torch":
            for row in self.facts.rows("torch"):
                if not row.get("variant"):
                    ok = gpu.runnable(list(row["sass"]) + list(row.get("ptx") or []), self.capability)
                    known.setdefault("torch", {}).update(dict.fromkeys(map(Version, row["versions"]), ok))
            pkg = "torch"
        else:
            for v, row in self.facts.kernels_of(fam):
                if row.get("sass") is not None:
                    ok = gpu.runnable(list(row["sass"]) + list(row.get("ptx") or []), self.capability)
                    known.setdefault(row["package"], {})[Version(v)] = ok
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
        t = self.target["name"]
        if name == "torch":
            tb = self.facts.torch_build(v)
            if tb is None:
                return Ruled(NO_EVIDENCE, name, v, f"the matrix has no evidence for {self._wheel_of(name, v)} (CUDA runtime, GPU code)",
                             self._record_remedy(name, v))
            if not tb.get("cuda") and not tb.get("variant"):
                return Ruled(NO_CODE, name, v, f"you lock for {t} on {PLATFORM_NAME[self.machine]}, and {self._wheel_of(name, v)} is a "
                             f"CPU-only build (no CUDA, no GPU code; evidence {tb['evidence']})", self.code_remedy(name), ())
            sass, ptx, _ = self.facts.gpu_code("torch", v) or ([], [], None)
            if not gpu.runnable(list(sass) + list(ptx), self.capability):
                return self._no_code(name, v, list(sass) + list(ptx))
        elif name in self._kernel_names:
            k = self.facts.kernel(name, v)
            if k is None:
                what = f"{name} {v}" if self.machine == "x86_64" else self._wheel_of(name, v)
                return Ruled(NO_EVIDENCE, name, v, f"the matrix has no evidence for {what} (the torch it was built against)",
                             self._record_remedy(name, v))
            found = self.facts.gpu_code(name, v)
            if k.get("sass") is not None and found is not None:
                codes = list(found[0]) + list(found[1])
                if not gpu.runnable(codes, self.capability):
                    return self._no_code(name, v, codes)
        elif name in self._family_names:
            if self.facts.family(name, v) is None:
                return Ruled(NO_EVIDENCE, name, v, f"the matrix has no evidence for the torch {name} {v} was built for",
                             f"`glmcompat matrix refresh --package {name}` records {name} {v}")
        elif name in ("flashinfer-python", "flashinfer-cubin"):
            if self.facts.jit(name, v) is None:
                return Ruled(NO_EVIDENCE, name, v, f"the matrix has no evidence that {name} {v} is free of the torch C++ ABI",
                             f"`glmcompat matrix refresh --package {name}` records {name} {v}")
        for r in self.facts.target_requirements(t):
            if r["package"] == name and not _contains(_spec(r["specifier"]), Version(v)):
                return Ruled(TARGET_NEEDS, name, v, f"{t} needs {name}{r['specifier']} ({r['reason']})",
                             f"use {name}{r['specifier']} on {t}")
        return None

    # -- dependencies -----------------------------------------------------------------------------
    def _override(self, name: str, version: str, dep: str, spec: SpecifierSet, model_spec: SpecifierSet) -> str | None:
        """Why ``name==version``'s requirement ``dep<spec>`` is overridden to the model's ``model_spec``
        (the stack allows it), or None when the requirement can serve the model: an exact pin that the
        model's specifier does not contain (sglang 0.5.9's transformers==4.57.1), or a range that no
        release on the index shares with it (vllm 0.16.0's transformers<5,>=4.56.0 against >=5.2.0)."""
        pinned = [s.version for s in spec if s.operator == "=="]
        if pinned:
            if any(model_spec.contains(p, prereleases=True) for p in pinned):
                return None
            return (f"{name} {version} pins {dep}{spec}, which does not know the model; "
                    f"overridden to {dep}{model_spec} (stack override)")
        if not spec or any(spec.contains(v, prereleases=True) and model_spec.contains(v, prereleases=True)
                           for v in self.versions(dep)):
            return None
        return (f"{name} {version} requires {dep}{spec}, which excludes every {dep} release that knows the model; "
                f"overridden to {dep}{model_spec} (stack override)")

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
                model_spec = _spec(self.model_reqs[dep])
                why = self._override(name, version, dep, r.specifier, model_spec)
                if why is not None:
                    self.overridden[(name, version, dep)] = why
                    yield Req(dep, model_spec, Why(OVERRIDE, name, version, why))
                    continue
            also = frozenset(self.facts.compatible_torches(name, version)) if dep == "torch" else frozenset()
            yield Req(dep, r.specifier, Why(DECLARED, name, version), also=also)
        # What the package is (its name, its version's twin) before what it was built against.
        for old, new in self._renamed:
            if name in (old, new):
                other = new if name == old else old
                yield Req(one_of(old, new), SpecifierSet(),
                          Why(RENAMED, name, version, f"{name} {version} and {other} are one project under two names "
                                                      f"(only one of them can be installed)"),
                          exact=frozenset({"0" if name == old else "1"}))
        if name == "torch":
            tb = self.facts.torch_build(version)
            yield Req(TORCH_ABI, SpecifierSet(), Why(IS_ABI, name, version, f"torch {version} is that ABI"), exact=frozenset({version}))
            if tb:
                yield Req(CUDA, SpecifierSet(), Why(LINKS, name, version, f"torch {version}'s default wheel is built for CUDA {tb['cuda']}"),
                          exact=frozenset({tb["cuda"].split(".")[0]}))
        k = self.facts.kernel(name, version)
        if k is not None and name != "torch":
            if k.get("on_mismatch", "error") == "error":
                ok = {normalize_version(k["torch"])} | self.facts.compatible_torches(name, version)
                yield Req(TORCH_ABI, SpecifierSet(), Why(BUILT, name, version,
                          f"{name} {version} was built against torch {k['torch']} (evidence {k['evidence']}: {k['source']})"),
                          exact=frozenset(ok))
            if k.get("cuda"):
                major = k["cuda"].split(".")[0]
                yield Req(CUDA, SpecifierSet(), Why(LINKS, name, version, f"{name} {version} links the CUDA {major} runtime"),
                          exact=frozenset({major}))
        fam = self.facts.family(name, version)
        if fam is not None:
            yield Req("torch", _spec(fam[0]), Why(FAMILY, name, version, f"{name} {version} was built for torch{fam[0]} ({fam[1]['source']})"),
                      also=frozenset(self.facts.compatible_torches(name, version)))
        for a, b in self._equal:
            if name in (a, b):
                other = b if name == a else a
                yield Req(same_version(a, b), SpecifierSet(),
                          Why(SAME, name, version, f"{name} {version} and {other} must be the same version when both are installed"),
                          exact=frozenset({version}))


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


def root_requirements(facts: Facts, req: Request) -> tuple[list[Req], list[str], dict[str, str], dict[str, str], dict[str, str]]:
    """(root requirements, the stack's and --with's core names, preferences, overrides, model requirements).

    With its engine (sglang or vllm) in the stack, the engine is the only package the stack asks for:
    the chosen release's Requires-Dist brings in the rest (its kernel package, flashinfer-cubin or not,
    torchvision...). A model the engine is not known to serve is an :class:`UnsafeError` that names
    the stacks of the other engine that do serve it.
    """
    stack = facts.stack(req.stack)
    engine = stack_engine(stack)
    tname = facts.target(req.target)["name"]
    names = list(stack["pins"])
    roots: list[Req] = []
    with_names: set[str] = set()
    for raw in req.with_:
        r = _requirement(raw)
        if r is None:
            raise InputError(f"--with: invalid requirement {raw!r}")
        name = str(canonicalize_name(r.name))
        if name not in CORE:
            raise InputError(f"--with: {name!r} is not in the coupled core ({', '.join(CORE)}); "
                             "add other packages to the generated pyproject.toml")
        roots.append(Req(name, r.specifier, Why(USER, text=f"you require {name}{r.specifier}")))
        with_names.add(name)
        if name not in names:
            names.append(name)
    asked = [engine] if engine in names else names
    for n in asked:
        if n not in with_names:
            roots.append(Req(n, SpecifierSet(), Why(STACK, stack["name"])))
    model_reqs: dict[str, str] = {}
    if req.model:
        m = facts.model(req.model)
        model_reqs["transformers"] = m["transformers"]
        roots.append(Req("transformers", _spec(m["transformers"]),
                         Why(MODEL, req.model, text=f"model {req.model} needs transformers{m['transformers']} ({m['source']})")))
        if engine in names:
            spec = m.get(engine)
            if not spec and any(m.get(e) for e in ENGINES):
                raise UnsafeError(_unserved(facts, m, engine, tname, lock_platform(facts, tname, req.platform)))
            if not spec:
                raise UnsafeError(f"no engine release in the matrix is known to serve model {req.model} (its [[model]] row "
                                  f"names no {' or '.join(ENGINES)} release): nothing to lock for it")
            model_reqs[engine] = spec
            roots.append(Req(engine, _spec(spec), Why(MODEL, req.model, text=f"model {req.model} needs {engine}{spec}")))
    for tr in facts.target_requirements(tname):
        if tr["package"] in [r.name for r in roots]:
            roots.append(Req(tr["package"], _spec(tr["specifier"]),
                             Why(TARGET, tname, text=f"{tname} needs {tr['package']}{tr['specifier']} ({tr['reason']})")))
    return roots, names, dict(stack["pins"]), dict(stack.get("overrides") or {}), model_reqs


def _served_elsewhere(facts: Facts, model: Mapping[str, Any], engine: str, target: str, platform: str = "x86_64") -> str:
    """Which other engine serves the model, and the stack to lock it with ("" when none does)."""
    mt = model["model_type"]
    others = []
    for e in ENGINES:
        if e == engine or not model.get(e):
            continue
        stacks = [s for s in facts.rows("stack") if stack_engine(s) == e and mt in s.get("models", ())]
        here = [s for s in stacks if target in s["targets"]]
        pick = (here or stacks)[:1]
        plat = "" if platform == "x86_64" else f" --platform {platform}"
        others.append(f"{e}{model[e]} serves it" + (f" (stack {pick[0]['name']}: `glmcompat lock --stack {pick[0]['name']} "
                                                    f"--target {target}{plat}`)" if pick else ""))
    return "; ".join(others)


def _unserved(facts: Facts, model: Mapping[str, Any], engine: str, target: str, platform: str = "x86_64") -> str:
    """One line: the model's [[model]] row names no release of ``engine``; which stacks of the other engines serve it."""
    return (f"no {engine} release in the matrix is known to serve model {model['model_type']} (its [[model]] row "
            f"names none); " + _served_elsewhere(facts, model, engine, target, platform))


def make_provider(facts: Facts, source: Source, req: Request) -> tuple[Provider, list[Req]]:
    roots, names, prefer, overrides, model_reqs = root_requirements(facts, req)
    machine = lock_platform(facts, req.target, req.platform)
    reads = getattr(source, "machine", "x86_64")
    if reads != machine:
        raise InputError(f"the source reads the {reads} wheels, and the request is for {machine}")
    provider = Provider(facts, source, target=req.target, names=names, prefer=prefer, upgrade=req.upgrade,
                        overrides=overrides, model_reqs=model_reqs, python=req.python, platform=machine)
    return provider, roots


def _run(provider: Provider, roots: list[Req]) -> Any:
    return resolvelib.Resolver(provider, resolvelib.BaseReporter()).resolve(roots, max_rounds=MAX_ROUNDS)


def resolve(facts: Facts, source: Source, req: Request, *, provider: Provider | None = None) -> Outcome:
    """Resolve the core; raise :class:`UnsafeError` with a uv-style derivation when impossible."""
    own, roots = make_provider(facts, source, req)
    provider = provider or own
    try:
        result = _run(provider, roots)
    except resolvelib.ResolutionImpossible as e:
        raise UnsafeError(explain(facts, provider, req, e.causes, roots)) from None
    except resolvelib.ResolutionTooDeep:
        raise UnsafeError(f"the core could not be resolved for {req.target} within {MAX_ROUNDS} rounds") from None
    pins = {n: str(c.version) for n, c in result.mapping.items() if not is_pseudo(n)}
    # Only overrides of candidates in the result count (backtracking may have tried others).
    overridden = {dep: why for (n, v, dep), why in sorted(provider.overridden.items()) if pins.get(n) == v}
    return Outcome(dict(sorted(pins.items())), overridden, provider=provider, roots=roots)


# ------------------------------------------------------------------------------------------------
# Explanations
# ------------------------------------------------------------------------------------------------


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


def _span(versions: Sequence[Version | str]) -> str:
    vs = sorted({Version(str(v)) for v in versions})
    if not vs:
        return ""
    return str(vs[0]) if len(vs) == 1 else f"{vs[0]} .. {vs[-1]}"


class Explainer:
    """Derives why ``name==version`` cannot be (or is not) part of the set: the first clause that
    rules it out, checked against a resolution pinned to it (memoised)."""

    def __init__(self, provider: Provider, roots: list[Req], chosen: Mapping[str, str] | None = None) -> None:
        self.p = provider
        self.roots = roots
        self.chosen = {n: Version(v) for n, v in (chosen or {}).items()}
        self.t = provider.target["name"]
        self._feasible: dict[tuple[str, str], dict[str, str] | Exception] = {}
        self._memo: dict[tuple[str, str, bool], Skip | None] = {}
        self._asked = {r.name for r in roots if r.why.kind in (USER, STACK)}

    # -- helpers ----------------------------------------------------------------------------------
    def roots_on(self, name: str) -> list[Req]:
        return [r for r in self.roots if r.name == name]

    def fitting(self, name: str, extra: Iterable[Req] = ()) -> list[Version]:
        """Releases of ``name`` the matrix admits that every root requirement (and ``extra``) accepts."""
        reqs = self.roots_on(name) + list(extra)
        return [v for v in self.p.versions(name) if all(r.ok(v) for r in reqs) and self.p.ruled(name, str(v)) is None]

    def pinned_run(self, name: str, version: str) -> dict[str, str] | Exception:
        """The set a resolution pinned to ``name==version`` finds, or the exception it fails with."""
        key = (name, version)
        if key not in self._feasible:
            roots = [r for r in self.roots if not (r.name == name and r.why.kind == STACK)]
            roots.append(Req(name, _spec(f"=={version}"), Why(ASKED, text=f"{name} {version} is asked for")))
            try:
                res = _run(self.p, roots)
                self._feasible[key] = {n: str(c.version) for n, c in res.mapping.items() if not is_pseudo(n)}
            except (resolvelib.ResolutionImpossible, resolvelib.ResolutionTooDeep) as e:
                self._feasible[key] = e
        return self._feasible[key]

    def _ruled_skip(self, r: Ruled) -> Skip:
        return Skip("ruled-out", r.name, (r.text,), f"{r.name} {r.version} cannot be used on {self.t}", r.remedy)

    def _parents_excluding(self, name: str, versions: Sequence[Version]) -> list[tuple[str, Req]]:
        """(chosen package, its requirement) pairs of the chosen set that accept none of ``versions``
        of ``name``, the package the set is built around (sglang) first."""
        out = []
        for parent, pv in self.chosen.items():
            if parent == name:
                continue
            for r in self.p.dependencies(parent, str(pv)):
                if r.name == name and not any(r.ok(v) for v in versions):
                    out.append((parent, r))
                    break
        out.sort(key=lambda pr: _authority(self.p, pr[0]))
        return out

    def _allowing(self, parent: str, name: str, versions: Sequence[Version]) -> list[Version]:
        """Releases of ``parent`` that fit and would take one of ``versions`` of ``name``: they require
        ``name`` and accept one of them (or, when the roots ask for ``name`` themselves, do not require it)."""
        out = []
        for x in self.fitting(parent):
            on = [r for r in self.p.dependencies(parent, str(x)) if r.name == name]
            if (on or name in self._asked) and any(all(r.ok(v) for r in on) for v in versions):
                out.append(x)
        return out

    # -- the derivation ---------------------------------------------------------------------------
    def why_not(self, name: str, version: str, depth: int = 0, *, pinned_check: bool = True) -> Skip | None:
        """Why ``name==version`` is not in the set; None when nothing rules it out."""
        key = (name, version, pinned_check)
        if key not in self._memo:
            self._memo[key] = None  # a cycle reads "nothing found"
            self._memo[key] = self._why_not(name, Version(version), depth, pinned_check)
        return self._memo[key]

    def _why_not(self, name: str, v: Version, depth: int, pinned_check: bool) -> Skip | None:
        vs = str(v)
        # 1. A requirement of yours, the model's or the target's.
        for r in self.roots_on(name):
            if not r.ok(v):
                return Skip("root", name, (r.says(),), f"{name} {vs} is ruled out", _root_remedy(r))
        # 2. The chosen set pins otherwise, and no release of the pinning package would take it.
        for parent, r in self._parents_excluding(name, [v]):
            if not self._allowing(parent, name, [v]):
                return self._pinned(name, vs, parent, r, f"{name} {vs}")
        # 3. The matrix.
        ruled = self.p.ruled(name, vs)
        if ruled is not None:
            return self._ruled_skip(ruled)
        # 4. One of its own requirements that nothing can meet (first in METADATA order).
        own = self._own_requirements(name, v)
        if own is not None:
            return own
        if not pinned_check:
            return None
        # 5. The whole set, pinned to it: if it resolves, a preference kept the chosen release.
        found = self.pinned_run(name, vs)
        if isinstance(found, dict):
            return self._preference(name, vs, found)
        if depth < 3:
            # ... else the pinning package's releases that would take it all fail,
            for parent, r in self._parents_excluding(name, [v]):
                chain = self._via_parent(name, [v], f"{name} {vs}", parent, r, depth)
                if chain is not None:
                    return Skip(chain.kind, chain.subject, chain.clauses, f"{name} {vs} cannot join the set", chain.remedy)
            # ... or one of its requirements excludes the chosen release, and every release that
            # meets it is ruled out in turn.
            for r in self.p.dependencies(name, vs):
                have = self.chosen.get(r.name)
                if is_pseudo(r.name) or have is None or r.ok(have):
                    continue
                fit = self.fitting(r.name, [r])
                what = (f"a {r.name} release it accepts ({', '.join(map(str, fit))})" if len(fit) > 1 else
                        f"{r.name} {fit[0]}" if fit else r.show())
                for parent, pr in self._parents_excluding(r.name, fit):
                    sub: Skip | None
                    if not self._allowing(parent, r.name, fit):
                        sub = self._pinned(r.name, what, parent, pr, what)
                    else:
                        sub = self._via_parent(r.name, fit, what, parent, pr, depth)
                    if sub is not None:
                        return Skip("conflict", sub.subject, (r.says(),) + sub.clauses, f"{name} {vs} cannot join the set", sub.remedy)
        return _from_causes(self.p, found, f"{name} {vs} cannot join the set", name)

    def _pinned(self, name: str, vs: str, parent: str, r: Req, what: str) -> Skip:
        others = [x for x in self.fitting(parent) if x != self.chosen.get(parent)]
        clauses = [r.says()]
        if others:
            clauses.append(f"no other {parent} release that fits ({_span(others)}) takes {what}")
        return Skip("pinned", name, tuple(clauses), f"{what} cannot join the set",
                    f"{name} follows {parent}'s pin: it takes a newer {parent} release that allows {what} (none on the index yet)")

    def _via_parent(self, name: str, versions: Sequence[Version], what: str, parent: str, r: Req, depth: int) -> Skip | None:
        """``what`` needs one of the ``parent`` releases that would take it; each of them fails."""
        allowing = self._allowing(parent, name, versions)
        subs = [self.why_not(parent, str(x), depth + 1) for x in allowing]
        if not allowing or any(s is None or s.kind == "preference" for s in subs):
            return None
        sub = subs[0]
        assert sub is not None
        head = f"only {parent} {_span(allowing)} would take {what} ({r.says()})"
        return Skip("conflict", sub.subject, (head,) + sub.clauses, f"{what} cannot join the set", sub.remedy)

    def _own_requirements(self, name: str, v: Version) -> Skip | None:
        """The first requirement of ``name==v`` that no admissible release can meet next to its other
        requirements and the roots (one level deep: pseudo-packages included)."""
        vs = str(v)
        deps = self.p.dependencies(name, vs)
        direct: dict[str, list[Req]] = {}
        for r in deps:
            direct.setdefault(r.name, []).append(r)
        for r in deps:
            if is_pseudo(r.name):
                clash = self._pseudo_clash(r, name, direct)
                if clash is not None:
                    return Skip("conflict", clash[0], clash[1], f"{name} {vs} cannot be used", clash[2])
                continue
            q = r.name
            reqs = self.roots_on(q) + direct.get(q, [])
            listed = [x for x in self.p.versions(q) if r.ok(x)]
            if not listed:
                elsewhere = _unavailable(self.p, q, [r])
                if elsewhere is not None:  # on the index, but without a wheel for this machine (or only as an sdist)
                    return Skip("conflict", q, (r.says(), elsewhere[0]), f"{name} {vs} cannot be used", elsewhere[1])
                return Skip("conflict", q, (r.says(), f"no {q} release on the index satisfies {r.show()}"),
                            f"{name} {vs} cannot be used", f"{name} {vs} needs a {q} release the index does not have")
            both = [x for x in listed if all(o.ok(x) for o in reqs)]
            if not both:
                other = next(o for o in reqs if not any(o.ok(x) for x in listed))
                return Skip("conflict", q, (r.says(), other.says()), f"{name} {vs} cannot be used", _root_remedy(other))
            admitted = [x for x in both if self.p.ruled(q, str(x)) is None]
            if not admitted:
                ruled = self.p.ruled(q, str(both[0]))
                assert ruled is not None
                more = f" (and {len(both) - 1} older {q} release(s) likewise)" if len(both) > 1 else ""
                return Skip("conflict", q, (r.says(), ruled.text + more), f"{name} {vs} cannot be used", ruled.remedy)
            viable = [x for x in admitted if self._candidate_clash(q, x, name, direct) is None]
            if not viable:
                clash = self._candidate_clash(q, admitted[0], name, direct)
                assert clash is not None
                return Skip("conflict", clash[0], (r.says(),) + clash[1], f"{name} {vs} cannot be used", clash[2])
        return None

    def _candidate_clash(self, q: str, x: Version, parent: str, direct: dict[str, list[Req]]) -> tuple[str, tuple[str, ...], str] | None:
        """Whether candidate ``q==x`` clashes with what ``parent`` requires directly (or the roots)."""
        for d in self.p.dependencies(q, str(x)):
            if is_pseudo(d.name):
                clash = self._pseudo_clash(d, parent, direct)
                if clash is not None:
                    return clash
                continue
            reqs = self.roots_on(d.name) + direct.get(d.name, [])
            if not reqs:
                continue
            dom = [y for y in self.p.versions(d.name) if all(o.ok(y) for o in reqs)]
            if dom and not any(d.ok(y) for y in dom):
                forced = next((o for o in reqs if not any(d.ok(y) for y in self.p.versions(d.name) if o.ok(y))), reqs[0])
                return (d.name, (d.says(), forced.says()), f"{forced.why.parent or 'the set'} and {q} {x} do not fit together")
        return None

    def _pseudo_clash(self, d: Req, parent: str, direct: dict[str, list[Req]]) -> tuple[str, tuple[str, ...], str] | None:
        """Whether pseudo requirement ``d`` (of ``parent`` or one of its direct dependencies) meets no
        value that a package certainly in the set (a direct dependency of ``parent``, or one the roots
        ask for) can provide."""
        assert d.exact is not None
        forced: dict[str, list[Req]] = {}
        for r in self.roots:
            if r.name in self._asked or r.why.kind == ASKED or r.name == parent:
                forced.setdefault(r.name, []).append(r)
        for n, rs in direct.items():
            forced.setdefault(n, []).extend(rs)
        for f, reqs in forced.items():
            if is_pseudo(f) or f == d.why.pkg:
                continue
            dom = [y for y in self.p.versions(f) if all(o.ok(y) for o in reqs) and self.p.ruled(f, str(y)) is None]
            values: set[str] = set()
            always = bool(dom)
            for y in dom:
                emitted = [e for e in self.p.dependencies(f, str(y)) if e.name == d.name]
                if not emitted:
                    always = False
                    break
                for e in emitted:
                    values |= set(e.exact or ())
            if not always or values & d.exact:
                continue
            src = next((o for o in reqs if o.why.kind in ROOT_KINDS), reqs[0])
            clauses = [d.says(), src.says()]
            if d.name.startswith("<same-version:"):
                want = sorted(d.exact, key=Version)[0]
                listed = {str(y) for y in self.p.versions(f)}
                clauses.append(f"no {f} {want} is on the index" if want not in listed else f"{f} {want} is ruled out")
                remedy = (_root_remedy(src) if src.why.kind == USER else
                          f"{d.why.pkg} {d.why.ver} needs {f} {want}, which the index does not have")
            elif d.name.startswith("<one-of:"):
                remedy = _root_remedy(src) if src.why.kind == USER else f"{d.why.parent} and {f} cannot be installed together"
            else:
                shown = next(e for e in self.p.dependencies(f, str(dom[0])) if e.name == d.name)
                clauses.append(shown.says() + (f" (and every other {f} release that fits, likewise)" if len(dom) > 1 else ""))
                remedy = _root_remedy(src) if src.why.kind == USER else f"{d.why.parent} and {f} {_span(dom)} do not fit together"
            return (f, tuple(clauses), remedy)
        return None

    def _preference(self, name: str, vs: str, found: dict[str, str]) -> Skip:
        """``name==vs`` resolves; say which preference kept the chosen release instead."""
        chosen = {n: str(v) for n, v in self.chosen.items()}
        by = self.p.preferred_by.get(name)
        older = sorted((n for n, v in found.items() if n in chosen and n != name and Version(v) < Version(chosen[n])),
                       key=lambda n: _authority(self.p, n))
        if by is not None and chosen.get(name) == by[1] and not older:
            parents = [f"{p} {v}" for p, v in chosen.items() if p != name and
                       any(r.name == name and not r.pinned for r in self.p.dependencies(p, v))]
            left = f"{parents[0]} leaves {name} open, and " if parents else ""
            return Skip("preference", name,
                        (f"{left}stack {by[0]} (known to work on {self.t}) pins {name} {by[1]}",),
                        f"the upgrade prefers {name} {by[1]}; {name} {vs} resolves too",
                        f"`--with {name}=={vs}` takes it")
        if older:
            n = older[0]
            clauses = [r.says() for r in self.p.dependencies(n, chosen[n]) if r.name == name and not r.ok(Version(vs))]
            clauses.append(f"a safe set with {name} {vs} exists, but it needs {n} {found[n]} instead of {chosen[n]}")
            clauses += [r.says() for r in self.p.dependencies(n, found[n]) if r.name == name and r.why.kind == OVERRIDE]
            return Skip("preference", n, tuple(clauses), f"the upgrade prefers the newer {n}", f"`--with {name}=={vs}` gives that set")
        return Skip("preference", name, (f"a safe set with {name} {vs} exists",),
                    f"the resolution preferred {name} {chosen.get(name, '?')}", f"`--with {name}=={vs}` takes it")


def _authority(provider: Provider, name: str) -> tuple[bool, int, str]:
    """Sort key: the package the set is built around (the engine) first, then by resolution rank, reversed."""
    return (name not in ENGINES, -provider._rank(name), name)


def _root_remedy(r: Req) -> str:
    if r.why.kind == USER:
        return f"relax or drop `--with {r.name}{r.spec}`"
    if r.why.kind == MODEL:
        return f"the model {r.why.pkg} needs {r.name}{r.spec}; serve another model or use a release that knows it"
    if r.why.kind == TARGET:
        return f"{r.why.pkg} needs {r.name}{r.spec}"
    return f"choose another {r.name}"


def _from_causes(provider: Provider, failure: Any, conclusion: str, subject: str) -> Skip:
    """A derivation from resolvelib's causes (the fallback when no single clause explains it)."""
    clauses: list[str] = []
    for c in getattr(failure, "causes", []) or []:
        r: Req = c.requirement
        s = r.says()
        if r.why.kind == DECLARED and c.parent is not None:
            s = f"{c.parent.name} {c.parent.version} requires {r.show()}"
        if s not in clauses:
            clauses.append(s)
        pruned = provider.pruned.get(r.name)
        if pruned and not is_pseudo(r.name):
            reason = max(pruned.items(), key=lambda kv: Version(kv[0]))[1]
            t = f"the matrix rules out {len(pruned)} {r.name} release(s) (e.g. {reason.text})"
            if t not in clauses:
                clauses.append(t)
    if not clauses:
        clauses = [f"the requirements conflict ({type(failure).__name__})"]
    return Skip("conflict", subject, tuple(clauses[:6]), conclusion, f"`glmcompat upgrade --target {provider.target['name']}` shows what does resolve")


def explain(facts: Facts, provider: Provider, req: Request, causes: Iterable[Any], roots: list[Req] | None = None) -> str:
    """A uv-style derivation: "Because ..., and ..., we can conclude that ..." then one hint."""
    facts = provider.facts  # the lock's platform's view
    t = provider.target
    stack = facts.stack(req.stack)
    roots = roots if roots is not None else root_requirements(facts, req)[0]
    clauses: list[str] = []
    hint = ""
    torch_req = next((r for r in roots if r.name == "torch" and r.why.kind == USER), None)
    if torch_req is not None:
        # The ABI story first: the stack's kernel, the torch it was built for, and whether any kernel
        # release built for the requested torch carries code for the target.
        for kp in sorted((set(provider.names) & provider._kernel_names) - set(ENGINES)):
            pin = stack["pins"].get(kp)
            row = facts.kernel(kp, pin) if pin else None
            if row is not None and not torch_req.ok(Version(row["torch"])):
                clauses.append(f"{kp} {pin} was built against torch {row['torch']} (evidence {row['evidence']}: {row['source']}) "
                               f"and you require {torch_req.show()}")
            fam = set(KERNELS) if kp in KERNELS else {kp}
            built = [(v, r) for v, r in facts.kernels_of(fam) if torch_req.ok(Version(r["torch"]))]
            runnable = [v for v, r in built if r.get("sass") is None or
                        gpu.runnable(list(r["sass"]) + list(r.get("ptx") or []), provider.capability)]
            if not runnable and kp in KERNELS:
                clauses.append(f"no kernel release built against {torch_req.show()} carries code for {t['name']}"
                               + (f" (only {', '.join(v for v, _ in built)}, which do not run there)" if built else ""))
                break
        if clauses:
            hint = (f"keep torch=={stack['pins'].get('torch')} (the stack's pin), or run "
                    f"`glmcompat upgrade --target {t['name']}` for the newest safe set")
    if not clauses:
        skip = _root_failure(provider, roots) or _top_failure(provider, roots)
        if skip is None:
            skip = _from_causes(provider, _Causes(list(causes)), "", "")
        clauses = list(skip.clauses)
        hint = skip.remedy
        engine = stack_engine(stack)
        wanted = next((r for r in roots if r.name == engine and r.why.kind == MODEL), None)
        yours = any(r.name == engine and r.why.kind == USER for r in roots)
        if wanted is not None and req.model and not yours and skip.subject == engine and skip.kind in ("root", "ruled-out"):
            # No release of the engine that knows the model fits: say which other engine serves it.
            elsewhere = _served_elsewhere(facts, facts.model(req.model), engine, t["name"], provider.machine)
            if elsewhere:
                hint = f"no {engine} release that serves model {req.model} ({engine}{wanted.spec}) fits here; {elsewhere}"
    body = ", and ".join(clauses) if clauses else "the requirements conflict"
    text = (f"Because {body}, we can conclude that no safe set of the core exists for {t['name']} "
            f"(stack {req.stack}{', model ' + req.model if req.model else ''}).")
    return text + "\nhint: " + (hint or f"run `glmcompat upgrade --target {t['name']} --stack {req.stack}` to see the newest safe set")


@dataclass
class _Causes:
    causes: list[Any]


def _root_failure(provider: Provider, roots: list[Req]) -> Skip | None:
    """A package the roots ask for that no admissible release satisfies (yours first)."""
    order = sorted({r.name for r in roots if not is_pseudo(r.name)},
                   key=lambda n: (not any(r.why.kind == USER for r in roots if r.name == n), n))
    for name in order:
        reqs = [r for r in roots if r.name == name]
        yours = [r for r in reqs if r.why.kind == USER]
        if yours and not any(all(r.ok(v) for r in yours) for v in provider.versions(name)):
            elsewhere = _unavailable(provider, name, yours)
            if elsewhere:  # what you ask for is on the index only as an sdist or for other platforms
                return Skip("root", name, tuple(r.says() for r in yours) + (elsewhere[0],), "", elsewhere[1])
        listed = [v for v in provider.versions(name) if all(r.ok(v) for r in reqs)]
        admitted = [v for v in listed if provider.ruled(name, str(v)) is None]
        if admitted:
            continue
        head = [r.says() for r in reqs if r.why.kind != STACK] or [reqs[0].says()]
        if not listed:
            elsewhere = _unavailable(provider, name, reqs)
            if elsewhere:
                return Skip("root", name, tuple(head) + (elsewhere[0],), "", elsewhere[1])
            return Skip("root", name, tuple(head) + (f"no {name} release on the index satisfies them",), "",
                        _root_remedy(next((r for r in reqs if r.why.kind == USER), reqs[0])))
        ruled = provider.ruled(name, str(listed[0]))
        assert ruled is not None
        more = f" (and {len(listed) - 1} older release(s) likewise)" if len(listed) > 1 else ""
        return Skip("ruled-out", name, tuple(head) + (ruled.text + more,), "", ruled.remedy)
    return None


def _unavailable(provider: Provider, name: str, reqs: list[Req]) -> tuple[str, str] | None:
    """(clause, remedy) when the releases ``reqs`` ask for are on the index without a wheel for this
    interpreter and platform (sdists, other platforms): a lock never builds from source."""
    source = provider.source
    get = getattr(source, "unavailable", None)
    if get is None:
        return None
    there = {v: files for v, files in get(name).items() if all(r.ok(Version(v)) for r in reqs)}
    if not there:
        return None
    v = max(there, key=Version)
    files = there[v]
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    where = getattr(source, "platform", lambda: "this platform")()
    more = f" (nor {len(there) - 1} other release(s) it allows)" if len(there) > 1 else ""
    return (f"{name} {v} has no wheel for {where} on the index{more}, only {shown}, and a lock never builds from source",
            f"choose a {name} release with a wheel for {where}")


def _top_failure(provider: Provider, roots: list[Req]) -> Skip | None:
    """Why each release of the package the set is built around (the engine) fails, newest first."""
    names = [r.name for r in roots if r.why.kind in (STACK, USER) and not is_pseudo(r.name)]
    if not names:
        return None
    top = next((e for e in ENGINES if e in names), names[0])
    ex = Explainer(provider, roots)
    cands = ex.fitting(top)
    if not cands:
        return None
    skips = [(v, ex.why_not(top, str(v), pinned_check=False)) for v in cands]
    first = skips[0][1]
    if first is None:
        return None
    clauses = list(first.clauses)
    rest = skips[1:]
    if rest:
        same = [v for v, s in rest if s is not None and s.kind == first.kind and
                (s.subject == first.subject or {s.subject, first.subject} <= set(KERNELS))]
        other = [(v, s) for v, s in rest if v not in same]
        if same:
            what = {"ruled-out": "is ruled out the same way", "conflict": "fails the same way"}.get(first.kind, "fails the same way")
            if first.kind == "conflict" and provider.pruned.get(first.subject) and first.subject in provider._kernel_names:
                what = f"requires a kernel release ({' or '.join(sorted(set(KERNELS)))}) that cannot run on {provider.target['name']} either"
            elif first.kind == "conflict":
                # Name what they pin instead (vllm releases each pin their own torch).
                pins = sorted({Version(sp.version) for v in same for r in provider.dependencies(top, str(v))
                               if r.name == first.subject and r.why.kind == DECLARED for sp in r.spec if sp.operator == "=="})
                if pins:
                    shown = ", ".join(map(str, pins[:-1])) + (" or " if len(pins) > 1 else "") + str(pins[-1])
                    what += f" (each pins {first.subject} {shown})"
            clauses.append(f"every older {top} release that fits ({_span(same)}) {what}")
        for v, s in other[:2]:
            clauses.append(f"{top} {v}: " + (s.clauses[0] if s is not None else "does not resolve"))
    return Skip(first.kind, first.subject, tuple(clauses), "", first.remedy)


def skip_reasons(facts: Facts, source: Source, req: Request, outcome: Outcome, limit: int = 3) -> dict[str, dict[str, Skip | str]]:
    """For each package of the chosen set, the newer releases the resolution skipped, each with a
    :class:`Skip` (a ``"..."`` entry counts the ones beyond ``limit``)."""
    provider, roots = outcome.provider, outcome.roots
    if provider is None:
        provider, roots = make_provider(facts, source, req)
    ex = Explainer(provider, roots, outcome.pins)
    out: dict[str, dict[str, Skip | str]] = {}
    for name in sorted(outcome.pins):
        chosen = Version(outcome.pins[name])
        newer = [v for v in provider.versions(name) if v > chosen]
        for v in newer[:limit]:
            s = ex.why_not(name, str(v))
            out.setdefault(name, {})[str(v)] = s if s is not None else Skip(
                "preference", name, (f"{name} {v} fits on its own",), f"the resolution preferred {name} {chosen}",
                f"`--with {name}=={v}` takes it")
        if len(newer) > limit:
            out.setdefault(name, {})["..."] = f"{len(newer) - limit} more newer release(s) not examined"
    return out


def skipped_newer(facts: Facts, source: Source, req: Request, outcome: Outcome, limit: int = 3) -> dict[str, dict[str, str]]:
    """:func:`skip_reasons` as one line of text per skipped release."""
    return {n: {v: (s.text() if isinstance(s, Skip) else s) for v, s in d.items()}
            for n, d in skip_reasons(facts, source, req, outcome, limit).items()}


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


__all__ = ["CORE", "Cand", "Explainer", "Outcome", "Provider", "Req",
           "Request", "Ruled", "Skip", "Why", "explain", "parse_cutoff", "resolve", "skip_reasons", "skipped_newer"]

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
from typing import Any

import resolvelib
from packaging.markers import Marker
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from glmcompat.decide import cudadriver
from glmcompat.decide.resolution import (  # the vocabulary the provider answers in
    ASKED, BUILT, CUDA, DECLARED, DRIVER, FAMILY, IS_ABI, KERNELS, LINKS, MAX_ROUNDS, MODEL, NO_CODE, NO_EVIDENCE,
    OVERRIDE, RENAMED, ROOT_KINDS, SAME, STACK, TARGET, TARGET_NEEDS, TORCH_ABI, USER, Cand, Req, Ruled, Source, Why,
    contains, is_pseudo, one_of, parse_cutoff, parse_requirement, parse_spec, pin_override, same_version
)
from glmcompat.decide.roots import Request, project_roots, root_requirements, served_elsewhere
from glmcompat.decide.stacks import CORE, default_platform
from glmcompat.matrix.rows import Target
from glmcompat.matrix.view import Facts
from glmcompat.model import gpu
from glmcompat.model.errors import InputError, UnsafeError
from glmcompat.model.names import canonicalize, normalize_version
from glmcompat.model.platforms import PLATFORM_NAME, marker_env

_NAME = re.compile(r"\s*[A-Za-z0-9][A-Za-z0-9._-]*")

# ------------------------------------------------------------------------------------------------
# The provider
# ------------------------------------------------------------------------------------------------


class Provider(resolvelib.AbstractProvider):  # type: ignore[type-arg]
    """Answers resolvelib's five questions from the source and the matrix, memoising every answer:
    ``find_matches`` lists versions (one index page per package), ``get_dependencies`` reads one
    METADATA per candidate, once."""

    def __init__(self, facts: Facts, source: Source, *, target: Target, names: Sequence[str] = (),
                 prefer: Mapping[str, str] | None = None, upgrade: bool = False, overrides: Mapping[str, str] | None = None,
                 model_reqs: Mapping[str, str] | None = None, python: str = "3.11", platform: str | None = None,
                 project: bool = False, driver: str | None = None) -> None:
        self.machine = platform or default_platform(target)
        self.facts = facts = facts.on(self.machine)  # every matrix answer is about this machine's wheels
        self.source = source
        self.target = target
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
        self._runs_on: dict[tuple[str, ...], list[str]] = {}
        self._code_remedy: dict[str, str] = {}
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
        """Compute capabilities of the matrix's targets that any of ``codes`` runs on (memoised: every release a
        target rules out for its GPU code asks, and most releases carry one of a few code lists)."""
        key = tuple(codes)
        hit = self._runs_on.get(key)
        if hit is None:
            caps = {t.compute_capability for t in self.facts.rows("target")
                    if gpu.runnable(key, gpu.parse_capability(t.compute_capability))}
            hit = self._runs_on[key] = sorted(caps, key=Version)
        return list(hit)

    def _no_code(self, name: str, v: str, codes: list[str]) -> Ruled:
        near = [c for c in codes if gpu.parse_code(c).major == self.capability[0] and gpu.parse_code(c).suffix == "a"]
        return Ruled(NO_CODE, name, v, self.code_remedy(name), tuple(codes),
                     wheel="" if self.machine == "x86_64" else self._wheel_of(name, v), target=self.target.name,
                     capability=self.target.compute_capability, runs_on=tuple(self.runs_on(codes)),
                     arch_specific=near[-1] if near else "")

    def code_remedy(self, name: str) -> str:
        """One remedy for "no GPU code for the target": the releases that do run there, or that none does (memoised:
        it reads every release of the package's rows, and each ruled-out release asks)."""
        hit = self._code_remedy.get(name)
        if hit is None:
            hit = self._code_remedy[name] = self._code_remedy_of(name)
        return hit

    def _code_remedy_of(self, name: str) -> str:
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
            if r.package == name and not contains(parse_spec(r.specifier), Version(v)):
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
            r = parse_requirement(raw)
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


@dataclass
class Outcome:
    """What the resolver chose, and for each package the newer versions it skipped and why."""

    pins: dict[str, str]
    overridden: dict[str, str]  # package -> why an upstream pin on it was overridden
    skipped: dict[str, dict[str, str]] = field(default_factory=dict)
    provider: Provider | None = field(default=None, repr=False, compare=False)
    roots: list[Req] = field(default_factory=list, repr=False, compare=False)


def make_provider(facts: Facts, source: Source, req: Request) -> tuple[Provider, list[Req]]:
    roots, names, prefer, overrides, model_reqs = root_requirements(facts, req)
    machine = req.arch
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
        raise UnsafeError(f"the core could not be resolved for {req.target.name} within {MAX_ROUNDS} rounds") from None
    pins = {n: str(c.version) for n, c in result.mapping.items() if not is_pseudo(n)}
    # Only overrides of candidates in the result count (backtracking may have tried others).
    overridden = {dep: why for (n, v, dep), why in sorted(provider.overridden.items()) if pins.get(n) == v}
    return Outcome(dict(sorted(pins.items())), overridden, provider=provider, roots=roots)


# The vocabulary (:mod:`glmcompat.decide.resolution`) and the roots (:mod:`glmcompat.decide.roots`) are named here too:
# what a caller of the resolver reads beside it.
__all__ = ["ASKED", "BUILT", "CORE", "CUDA", "DECLARED", "DRIVER", "FAMILY", "IS_ABI", "KERNELS", "LINKS", "MAX_ROUNDS",
           "MODEL", "NO_CODE", "NO_EVIDENCE", "OVERRIDE", "RENAMED", "ROOT_KINDS", "SAME", "STACK", "TARGET", "TARGET_NEEDS",
           "TORCH_ABI", "USER", "Cand", "Outcome", "Provider", "Req", "Request", "Ruled", "Source", "Unresolvable", "Why",
           "is_pseudo", "make_provider", "one_of", "parse_cutoff", "parse_spec", "pin_override", "project_roots",
           "root_requirements", "run", "same_version", "served_elsewhere", "solve"]

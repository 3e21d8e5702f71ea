"""Resolve the ABI-coupled core with resolvelib against the matrix (the algorithm does no I/O).

The core: torch, torchvision, torchaudio, sgl-kernel / sglang-kernel, flashinfer-python / -cubin,
transformers, sglang. Candidates come from a :class:`Source` (versions and Requires-Dist; the index
in production, a recorded JSON file in tests); the matrix prunes them (no evidence, no GPU code for
the target) and adds what upstream metadata does not say: the torch a kernel was built against and
the CUDA runtime it links. Those two are *pseudo-packages* (``<torch-abi>``, ``<cuda-runtime>``), so a
clash is explained like any other conflict.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import resolvelib
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from . import gpu
from .errors import InputError, UnsafeError
from .facts import Facts

CORE = ("torch", "torchvision", "torchaudio", "sgl-kernel", "sglang-kernel", "flashinfer-python",
        "flashinfer-cubin", "transformers", "sglang")
TORCH_ABI = "<torch-abi>"
CUDA = "<cuda-runtime>"
GPU_TARGET = "<gpu-target>"  # values: compute capabilities ("12.0")
PSEUDO = (TORCH_ABI, CUDA, GPU_TARGET)


class Source(Protocol):
    """Where candidates come from. ``versions`` is cheap; ``requires`` may read a wheel's METADATA."""

    def versions(self, name: str) -> list[str]: ...

    def requires(self, name: str, version: str) -> list[str]: ...


# ------------------------------------------------------------------------------------------------
# Requirements and candidates
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Req:
    name: str
    spec: SpecifierSet
    why: str = ""  # the evidence behind a matrix-made requirement ("built against torch 2.9.1 ...")
    exact: frozenset[str] | None = None  # pseudo requirements: any of these exact values
    also: frozenset[str] = frozenset()  # versions allowed beyond ``spec`` (probed ABI-compatible)

    def ok(self, version: Version) -> bool:
        if self.exact is not None:
            return str(version) in self.exact
        return self.spec.contains(version, prereleases=True) or str(version) in self.also

    def show(self) -> str:
        if self.exact is not None:
            vals = " or ".join(sorted(self.exact, key=Version))
            return f"{_pseudo_label(self.name)} {vals}"
        return f"{self.name}{self.spec}"


def _pseudo_label(name: str) -> str:
    return {TORCH_ABI: "the torch ABI of", CUDA: "CUDA runtime", GPU_TARGET: "a GPU of compute capability"}.get(name, name)


@dataclass(frozen=True)
class Cand:
    name: str
    version: Version

    def __str__(self) -> str:
        return f"{self.name}=={self.version}"


@dataclass
class Outcome:
    """What the resolver chose, and for each package the newer versions it skipped and why."""

    pins: dict[str, str]
    overridden: dict[str, str]  # package -> why an upstream pin on it was overridden
    skipped: dict[str, dict[str, str]] = field(default_factory=dict)


# ------------------------------------------------------------------------------------------------
# The provider
# ------------------------------------------------------------------------------------------------


class Provider(resolvelib.AbstractProvider):  # type: ignore[type-arg]
    """Answers resolvelib's five questions; nothing more. Costs: ``find_matches`` lists versions
    (one index page per package, cached); ``get_dependencies`` reads one METADATA per candidate."""

    def __init__(self, facts: Facts, source: Source, *, target: str, names: Sequence[str],
                 prefer: Mapping[str, str], upgrade: bool, overrides: Mapping[str, str], model_reqs: Mapping[str, str],
                 python: str = "3.11") -> None:
        self.facts = facts
        self.source = source
        self.target = facts.target(target)
        self.capability = gpu.parse_capability(self.target["compute_capability"])
        self.names = set(names)
        self.prefer = dict(prefer)
        self.upgrade = upgrade
        self.overrides = dict(overrides)
        self.model_reqs = dict(model_reqs)
        self.env = {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
                    "implementation_name": "cpython", "platform_python_implementation": "CPython",
                    "python_version": python, "python_full_version": python + ".0", "extra": ""}
        self.pruned: dict[str, dict[str, str]] = {}
        self.overridden: dict[tuple[str, str, str], str] = {}  # (candidate, its version, dep) -> why
        self._versions: dict[str, list[Version]] = {}

    # -- resolvelib API ---------------------------------------------------------------------------
    def identify(self, requirement_or_candidate: Req | Cand) -> str:
        return requirement_or_candidate.name

    def get_preference(self, identifier: str, resolutions: Any, candidates: Any, information: Any, backtrack_causes: Any) -> Any:
        infos = list(information[identifier])
        pinned = any(r.exact is not None or any(s.operator in ("==", "===") for s in r.spec) for r, _ in infos)
        by_user = any(p is None and r.why.startswith("you") for r, p in infos)
        rank = 0 if identifier == "torch" else 1 if "kernel" in identifier else 2 if identifier in self.facts.family_packages() else 3
        return (identifier not in PSEUDO, not by_user, rank, not pinned, identifier)

    def find_matches(self, identifier: str, requirements: Mapping[str, Iterator[Req]], incompatibilities: Mapping[str, Iterator[Cand]]) -> list[Cand]:
        reqs = list(requirements[identifier])
        bad = {c.version for c in incompatibilities[identifier]}
        if identifier in PSEUDO:
            values: set[Version] = set()
            for r in reqs:
                values |= {Version(v) for v in (r.exact or ())}
            return [Cand(identifier, v) for v in sorted(values, reverse=True) if v not in bad and all(r.ok(v) for r in reqs)]
        out = [Cand(identifier, v) for v in self.versions(identifier)
               if v not in bad and all(r.ok(v) for r in reqs) and self.admissible(identifier, v)]
        pref = self.prefer.get(identifier)
        if pref is not None and not self.upgrade:
            pv = Version(pref)
            out.sort(key=lambda c: (c.version != pv, -_ord(c.version)))
        return out

    def is_satisfied_by(self, requirement: Req, candidate: Cand) -> bool:
        return requirement.ok(candidate.version)

    def get_dependencies(self, candidate: Cand) -> list[Req]:
        if candidate.name in PSEUDO:
            return []
        return list(self.dependencies(candidate.name, str(candidate.version)))

    # -- the matrix -------------------------------------------------------------------------------
    def versions(self, name: str) -> list[Version]:
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
        return self._versions[name]

    def admissible(self, name: str, v: Version) -> bool:
        """Whether the matrix has evidence that ``name==v`` can run on the target; records why not."""
        why = self._prune_reason(name, str(v), code=False)
        if why:
            self.pruned.setdefault(name, {})[str(v)] = why
            return False
        return True

    def _runs_on(self, name: str, version: str) -> frozenset[str] | None:
        """Compute capabilities of the matrix's targets that ``name==version``'s GPU code runs on."""
        if name != "torch":
            k = self.facts.kernel(name, version)
            if k is None or k.get("sass") is None:
                return None  # not a GPU-code package, or its code is not recorded
        found = self.facts.gpu_code(name, version)
        if found is None:
            return None
        codes = list(found[0]) + list(found[1])
        return frozenset(t["compute_capability"] for t in self.facts.rows("target")
                         if gpu.runnable(codes, gpu.parse_capability(t["compute_capability"])))

    def _prune_reason(self, name: str, v: str, code: bool = True) -> str | None:
        """Why the matrix rules ``name==v`` out; GPU code for the target only with ``code`` (the
        resolver itself leaves that to the <gpu-target> pseudo-requirement, so it is explained)."""
        t = self.target["name"]
        if name == "torch":
            if self.facts.torch_build(v) is None:
                return f"no evidence for torch {v}'s default wheel (CUDA, GPU code) in the matrix"
            sass, ptx, _ = self.facts.gpu_code("torch", v) or ([], [], None)
            if code and not gpu.runnable(list(sass) + list(ptx), self.capability):
                return f"torch {v} carries no GPU code that runs on {t}"
        elif name in self.facts.kernel_packages() or name in ("sgl-kernel", "sglang-kernel"):
            k = self.facts.kernel(name, v)
            if k is None:
                return f"no evidence for {name} {v} (the torch it was built against) in the matrix"
            if code and k.get("sass") is not None and not gpu.runnable(k["sass"] + (k.get("ptx") or []), self.capability):
                return f"{name} {v} carries {', '.join(k['sass'])}: none runs on {t}"
        elif name in self.facts.family_packages():
            if self.facts.family(name, v) is None:
                return f"no evidence for the torch {name} {v} was built for"
        elif name in ("flashinfer-python", "flashinfer-cubin"):
            if self.facts.jit(name, v) is None:
                return f"no evidence that {name} {v} is free of the torch C++ ABI"
        for r in self.facts.target_requirements(t):
            if r["package"] == name and not SpecifierSet(r["specifier"]).contains(v, prereleases=True):
                return f"{name} {v} lacks what {t} needs ({r['reason'].split(':')[0]})"
        for e in self.facts.rows("equal_version"):
            a, b = e["packages"]
            other = b if name == a else a if name == b else None
            if other is not None and other in self.names and Version(v) not in self.versions(other):
                return f"{name} {v} has no {other} {v} on the index (their versions must be equal)"
        return None

    def dependencies(self, name: str, version: str) -> Iterable[Req]:
        for raw in self.source.requires(name, version):
            try:
                r = Requirement(raw)
            except InvalidRequirement:
                continue
            dep = str(canonicalize_name(r.name))
            if dep not in CORE:
                continue
            if r.marker is not None and not r.marker.evaluate(self.env):
                continue
            if dep in self.overrides and dep in self.model_reqs:
                model_spec = SpecifierSet(self.model_reqs[dep])
                pinned = [s.version for s in r.specifier if s.operator == "=="]
                if pinned and not any(model_spec.contains(p, prereleases=True) for p in pinned):
                    self.overridden[(name, version, dep)] = (f"{name} {version} pins {dep}{r.specifier}, which does not know the model; "
                                            f"overridden to {dep}{model_spec} (stack override)")
                    yield Req(dep, model_spec, why="stack override for the model")
                    continue
            also = frozenset(self.facts.compatible_torches(name, version)) if dep == "torch" else frozenset()
            yield Req(dep, r.specifier, why=f"{name} {version} declares it (METADATA)", also=also)
        if name == "torch":
            tb = self.facts.torch_build(version)
            yield Req(TORCH_ABI, SpecifierSet(), exact=frozenset({str(Version(version))}), why=f"torch {version} is that ABI")
            if tb:
                yield Req(CUDA, SpecifierSet(), exact=frozenset({tb["cuda"].split(".")[0]}),
                          why=f"torch {version}'s default wheel is built for CUDA {tb['cuda']}")
        runs = self._runs_on(name, version)
        if runs is not None:
            sass, ptx, _ = self.facts.gpu_code(name, version) or ([], [], None)
            have = ", ".join(list(sass) + list(ptx)) or "no GPU code"
            yield Req(GPU_TARGET, SpecifierSet(), exact=runs, why=f"{name} {version} carries {have}")
        k = self.facts.kernel(name, version)
        if k is not None and name != "torch":
            if k.get("on_mismatch", "error") == "error":
                ok = {str(Version(k["torch"]))} | self.facts.compatible_torches(name, version)
                yield Req(TORCH_ABI, SpecifierSet(), exact=frozenset(ok),
                          why=f"{name} {version} was built against torch {k['torch']} (evidence {k['evidence']}: {k['source']})")
            if k.get("cuda"):
                yield Req(CUDA, SpecifierSet(), exact=frozenset({k["cuda"].split(".")[0]}),
                          why=f"{name} {version} links the CUDA {k['cuda'].split('.')[0]} runtime")
        fam = self.facts.family(name, version)
        if fam is not None:
            yield Req("torch", SpecifierSet(fam[0]), why=f"{name} {version} was built for torch{fam[0]} ({fam[1]['source']})",
                      also=frozenset(self.facts.compatible_torches(name, version)))
        for e in self.facts.rows("equal_version"):
            a, b = e["packages"]
            if name == a and b in self.names:
                yield Req(b, SpecifierSet(f"=={version}"), why=f"{b} must equal {a} ({e['source']})")


def _ord(v: Version) -> float:
    # a sortable number, newest first when negated (release tuple weighted)
    r = v.release + (0,) * (4 - len(v.release[:4]))
    return sum(x * 1000 ** (3 - i) for i, x in enumerate(r[:4])) + (v.post or 0) * 1e-3


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


def root_requirements(facts: Facts, req: Request) -> tuple[list[Req], list[str], dict[str, str], dict[str, str], dict[str, str]]:
    """(root requirements, core names, preferences, overrides, model requirements) for a request."""
    stack = facts.stack(req.stack)
    names = list(stack["pins"])
    roots: list[Req] = []
    with_names: set[str] = set()
    for raw in req.with_:
        try:
            r = Requirement(raw)
        except InvalidRequirement:
            raise InputError(f"--with: invalid requirement {raw!r}") from None
        name = str(canonicalize_name(r.name))
        if name not in CORE:
            raise InputError(f"--with: {name!r} is not in the coupled core ({', '.join(CORE)}); "
                             "add other packages to the generated pyproject.toml")
        roots.append(Req(name, r.specifier, why="you require it (--with)"))
        with_names.add(name)
        if name not in names:
            names.append(name)
    kernels = {k["package"] for k in facts.rows("kernel")} | {"sgl-kernel", "sglang-kernel"}
    for n in names:
        # With sglang in the stack its kernel package comes from sglang's own requirements (sgl-kernel
        # up to 0.5.9, sglang-kernel after): both ship the sgl_kernel module, so never ask for both.
        if n not in with_names and not (n in kernels and "sglang" in names):
            roots.append(Req(n, SpecifierSet(), why=f"stack {stack['name']}"))
    model_reqs: dict[str, str] = {}
    if req.model:
        m = facts.model(req.model)
        model_reqs["transformers"] = m["transformers"]
        roots.append(Req("transformers", SpecifierSet(m["transformers"]), why=f"model {req.model} ({m['source']})"))
        if m.get("sglang") and "sglang" in names:
            model_reqs["sglang"] = m["sglang"]
            roots.append(Req("sglang", SpecifierSet(m["sglang"]), why=f"model {req.model}"))
    target = facts.target(req.target)
    roots.append(Req(GPU_TARGET, SpecifierSet(), exact=frozenset({target["compute_capability"]}),
                     why=f"you lock for {target['name']}"))
    for tr in facts.target_requirements(target["name"]):
        if tr["package"] in names:
            roots.append(Req(tr["package"], SpecifierSet(tr["specifier"]), why=f"{req.target}: {tr['reason']}"))
    return roots, names, dict(stack["pins"]), dict(stack.get("overrides") or {}), model_reqs


def resolve(facts: Facts, source: Source, req: Request) -> Outcome:
    """Resolve the core; raise :class:`UnsafeError` with a uv-style derivation when impossible."""
    roots, names, prefer, overrides, model_reqs = root_requirements(facts, req)
    provider = Provider(facts, source, target=req.target, names=names, prefer=prefer, upgrade=req.upgrade,
                        overrides=overrides, model_reqs=model_reqs, python=req.python)
    resolver = resolvelib.Resolver(provider, resolvelib.BaseReporter())
    try:
        result = resolver.resolve(roots, max_rounds=2000)
    except resolvelib.ResolutionImpossible as e:
        raise UnsafeError(explain(facts, provider, req, e.causes)) from None
    except resolvelib.ResolutionTooDeep:
        raise UnsafeError(f"the core could not be resolved for {req.target} within 2000 rounds") from None
    pins = {n: str(c.version) for n, c in result.mapping.items() if n not in PSEUDO}
    # Only overrides of candidates in the result count (backtracking may have tried others).
    overridden = {dep: why for (n, v, dep), why in sorted(provider.overridden.items()) if pins.get(n) == v}
    return Outcome(dict(sorted(pins.items())), overridden)


def explain(facts: Facts, provider: Provider, req: Request, causes: Iterable[Any]) -> str:
    """A uv-style derivation: "Because ..., and ..., we can conclude that ..." then one hint."""
    t = provider.target
    stack = facts.stack(req.stack)
    clauses: list[str] = []
    user = [r for r in root_requirements(facts, req)[0] if r.why.startswith("you")]
    torch_req = next((r for r in user if r.name == "torch"), None)
    if torch_req is not None:
        # The ABI story first: the stack's kernel, the torch it was built for, and whether any kernel
        # release built for the requested torch carries code for the target.
        for kp in sorted(set(provider.names) & {k["package"] for k in facts.rows("kernel")}):
            pin = stack["pins"].get(kp)
            row = facts.kernel(kp, pin) if pin else None
            if row is not None and not torch_req.ok(Version(row["torch"])):
                clauses.append(f"{kp} {pin} was built against torch {row['torch']} (evidence {row['evidence']}: {row['source']}) "
                               f"and you require {torch_req.show()}")
            fam = {"sgl-kernel", "sglang-kernel"} if "kernel" in kp else {kp}
            built = [(v, r) for v, r in facts.kernels_of(fam) if torch_req.ok(Version(r["torch"]))]
            runnable = [v for v, r in built if r.get("sass") is None or
                        gpu.runnable(r["sass"] + (r.get("ptx") or []), provider.capability)]
            if not runnable and "kernel" in kp:
                clauses.append(f"no kernel release built against {torch_req.show()} carries code for {t['name']}"
                               + (f" (only {', '.join(v for v, _ in built)}, which do not run there)" if built else ""))
                break
    if not clauses:
        by_name: dict[str, list[str]] = {}
        for c in causes:
            r: Req = c.requirement
            if r.name == GPU_TARGET:
                caps = " or ".join(sorted(r.exact or (), key=Version))
                s = f"{r.why} (compute capability {caps})" if c.parent is None else f"{r.why}, which runs only on compute capability {caps}"
            elif c.parent is None:
                s = f"you require {r.show()}" if r.why.startswith("you") else f"{r.show()} is required ({r.why})"
            elif r.name in PSEUDO:
                s = r.why
            else:
                s = f"{c.parent} requires {r.show()}" + (f" ({r.why})" if r.why and "METADATA" not in r.why else "")
            lst = by_name.setdefault(r.name, [])
            if s not in lst and len(lst) < 2:
                lst.append(s)
        for name in sorted(by_name):
            clauses.extend(by_name[name])
            pruned = provider.pruned.get(name)
            if pruned:
                v, reason = max(pruned.items(), key=lambda kv: Version(kv[0]))
                clauses.append(f"the matrix rules out {len(pruned)} {name} release(s) (e.g. {reason})")
        clauses = clauses[:6]
    body = ", and ".join(clauses) if clauses else "the requirements conflict"
    text = (f"Because {body}, we can conclude that no safe set of the core exists for {t['name']} "
            f"(stack {req.stack}{', model ' + req.model if req.model else ''}).")
    if torch_req is not None:
        hint = (f"hint: keep torch=={stack['pins'].get('torch')} (the stack's pin), or run "
                f"`glmcompat upgrade --target {t['name']}` for the newest safe set")
    else:
        hint = f"hint: run `glmcompat upgrade --target {t['name']} --stack {req.stack}` to see the newest safe set"
    return text + "\n" + hint


def skipped_newer(facts: Facts, source: Source, req: Request, outcome: Outcome, limit: int = 3) -> dict[str, dict[str, str]]:
    """For each core package, the newer versions the resolution skipped, each with one line on why.

    No re-resolution: a newer version is explained by the matrix's pruning, by a requirement of a
    chosen package that excludes it, or by one of its own requirements that the chosen set (and the
    matrix: which torch each family release and kernel is built for) cannot meet.
    """
    roots, names, prefer, overrides, model_reqs = root_requirements(facts, req)
    probe = Provider(facts, source, target=req.target, names=names, prefer=prefer, upgrade=True,
                     overrides=overrides, model_reqs=model_reqs, python=req.python)
    chosen = {n: Version(v) for n, v in outcome.pins.items()}
    chosen_deps = {n: list(probe.dependencies(n, str(v))) for n, v in chosen.items()}
    out: dict[str, dict[str, str]] = {}
    for name in sorted(outcome.pins):
        newer = [v for v in probe.versions(name) if v > chosen[name]]
        for v in newer[:limit]:
            out.setdefault(name, {})[str(v)] = _why_not(facts, probe, name, v, chosen, chosen_deps, roots)
        if len(newer) > limit:
            out.setdefault(name, {})["..."] = f"{len(newer) - limit} more newer release(s) not examined"
    return out


def _why_not(facts: Facts, probe: Provider, name: str, v: Version, chosen: dict[str, Version],
             chosen_deps: dict[str, list[Req]], roots: list[Req]) -> str:
    pruned = probe._prune_reason(name, str(v))
    if pruned:
        return pruned
    for r in roots:
        if r.name == name and not r.ok(v):
            return f"{r.show()} is required ({r.why})"
    for other, deps in sorted(chosen_deps.items()):
        for r in deps:
            if r.name == name and not r.ok(v):
                return f"{other} {chosen[other]} requires {r.show()}"
    for r in probe.dependencies(name, str(v)):
        have = chosen.get(r.name)
        if r.name in PSEUDO or have is None or r.ok(have):
            continue
        need = r.show()
        cands = [x for x in probe.versions(r.name) if r.ok(x)]
        reasons = [probe._prune_reason(r.name, str(x)) for x in cands]
        if not cands:
            return f"it requires {need}, which no release on the index satisfies"
        if all(reasons):
            return f"it requires {need}: {reasons[0]}"
        if r.name == "torch":
            exact = [s.version for s in r.spec if s.operator == "=="]
            tv = exact[0] if exact else None
            for fam in sorted(facts.family_packages() & chosen.keys()):
                if tv and facts.family_for_torch(fam, tv) is None:
                    return f"it requires {need}, and no {fam} release is built for torch {tv} (the stack needs {fam})"
            if tv and probe._prune_reason("torch", tv):
                return f"it requires {need}: {probe._prune_reason('torch', tv)}"
        return f"it requires {need}, which conflicts with the chosen {r.name} {have}"
    return "safe on its own, but the newest safe set as a whole prefers the chosen version"


# ------------------------------------------------------------------------------------------------
# Sources
# ------------------------------------------------------------------------------------------------


class IndexSource:
    """Versions from the index's JSON simple API; Requires-Dist from each wheel's METADATA (range reads)."""

    def __init__(self, client: Any, *, python: str = "3.11", exclude_newer: str | None = None) -> None:
        self.client = client
        self.python = python
        self.cp = "cp" + python.replace(".", "")
        self.exclude_newer = exclude_newer
        self._projects: dict[str, Any] = {}
        self._by_version: dict[str, dict[str, list[Any]]] = {}
        self._tags: list[Any] | None = None

    def _project(self, name: str) -> Any:
        if name not in self._projects:
            self._projects[name] = self.client.project(name)
        return self._projects[name]

    def _wheels(self, name: str) -> dict[str, list[Any]]:
        """Installable wheels of ``name`` by normalized version (one pass over the project page)."""
        if name not in self._by_version:
            cutoff = self.exclude_newer.rstrip("Z")[:19] if self.exclude_newer else None
            groups: dict[str, list[Any]] = {}
            for f in self._project(name).files:
                if not f.is_wheel or f.yanked or f.version is None:
                    continue
                # RFC 3339 UTC timestamps compare as text once cut to whole seconds.
                if cutoff and f.upload_time is not None and f.upload_time[:19] > cutoff:
                    continue
                groups.setdefault(f.version, []).append(f)
            self._by_version[name] = groups
        return self._by_version[name]

    def versions(self, name: str) -> list[str]:
        return list(self._wheels(name))

    def requires(self, name: str, version: str) -> list[str]:
        from .index import iter_requires_dist, select_wheel, supported_tags

        files = self._wheels(name).get(str(Version(version)), [])
        if not files:
            return []
        if self._tags is None:
            self._tags = supported_tags(self.cp)
        wheel = select_wheel(files, self._tags) or files[0]
        return list(iter_requires_dist(self.client.wheel_metadata(wheel)))


class RecordedSource:
    """A frozen index recorded as JSON: {name: {"versions": [...], "requires": {version: [...]}}}."""

    def __init__(self, path: str | Path) -> None:
        self.data = json.loads(Path(path).read_text())

    def versions(self, name: str) -> list[str]:
        return list(self.data.get(name, {}).get("versions", []))

    def requires(self, name: str, version: str) -> list[str]:
        reqs = self.data.get(name, {}).get("requires", {})
        if version not in reqs:
            raise InputError(f"recorded index has no METADATA for {name}=={version}")
        return list(reqs[version])


class RecordingSource:
    """Wraps a source and keeps what was asked, to write a :class:`RecordedSource` file."""

    def __init__(self, inner: Source) -> None:
        self.inner = inner
        self.data: dict[str, dict[str, Any]] = {}

    def versions(self, name: str) -> list[str]:
        vs = self.inner.versions(name)
        self.data.setdefault(name, {"versions": [], "requires": {}})["versions"] = vs
        return vs

    def requires(self, name: str, version: str) -> list[str]:
        rs = self.inner.requires(name, version)
        self.data.setdefault(name, {"versions": [], "requires": {}})["requires"][version] = rs
        return rs

    def dump(self) -> str:
        return json.dumps(self.data, indent=1, sort_keys=True)


__all__ = ["CORE", "Cand", "IndexSource", "Outcome", "Provider", "RecordedSource", "RecordingSource", "Req", "Request",
           "explain", "resolve", "skipped_newer"]


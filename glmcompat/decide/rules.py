"""The check rules: a pure function from (installed packages, target, model, matrix) to findings.

Each rule is a small function ``rule(ctx) -> list[Finding]``; :func:`evaluate` runs them all and
sorts the result. Nothing here does I/O: ``glmcompat check`` feeds it a lockfile's packages,
``glmcompat verify`` the installed distributions, the resolver a candidate set.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from glmcompat.decide import artifacts, nonnvidia, torchpins
from glmcompat.matrix.rows import Fact, Stack, Target
from glmcompat.matrix.view import Facts
from glmcompat.model import gpu
from glmcompat.model.errors import InputError
from glmcompat.model.findings import SEVERITIES, Finding, NameVersion
from glmcompat.model.names import canonicalize, local_cuda
from glmcompat.model.platforms import PLATFORM_NAME, check_platform, products_on, target_platforms

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.model.artifacts import ArtifactFacts
    from glmcompat.model.environments import Environment
    from glmcompat.readers.formats.common import Lock


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
    artifacts: Mapping[tuple[str, str], ArtifactFacts] = field(default_factory=dict)  # read from the bytes (ops.artifacts)

    def built_from_source(self, name: str) -> bool:
        from glmcompat.model.environments import BUILT_FROM_SOURCE  # lazy: start-up path (the fast path imports rules)

        return self.sources.get(name) in BUILT_FROM_SOURCE

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


def _probe_torch(ctx: Context) -> str:
    """The torch to probe an extension against: the set's, else the newest release the matrix records."""
    torch = ctx.packages.get("torch")
    if torch is not None:
        return Version(torch).public
    return str(max(Version(v) for t in ctx.facts.rows("torch") for v in t.versions))


def _torch_pins(ctx: Context, torch: str) -> str:
    """'torch==2.9.1 and torchvision==0.24.1' — torch plus the family releases built for it."""
    pins = [f"torch=={torch}"]
    for fam in sorted(ctx.facts.family_packages()):
        if fam in ctx.packages:
            v = ctx.facts.family_for_torch(fam, torch)
            if v:
                pins.append(f"{fam}=={v}")
    return ", ".join(pins[:-1]) + (" and " if len(pins) > 1 else "") + pins[-1]


def rule_abi(ctx: Context) -> list[Finding]:
    """(a) A compiled extension next to a torch other than the one it was built against / probed with."""
    out: list[Finding] = []
    torch = ctx.packages.get("torch")
    for name in sorted(ctx.facts.kernel_packages() & ctx.packages.keys()):
        ver = ctx.packages[name]
        if ctx.built_from_source(name) or (torch is not None and ctx.built_from_source("torch")):
            continue  # built against the torch beside it, or unknowable statically: rule_source_build warns
        row = ctx.facts.kernel(name, ver)
        if row is None:
            verdict = ctx.facts.abi_verdict(name, ver, torch) if torch else None
            if verdict is not None and verdict.compatible:
                continue  # probed: every torch symbol it needs is exported by this torch
            if verdict is not None and torch is not None:
                out.append(Finding(rule="abi", severity=ctx.facts.mismatch_severity(name),
                                   packages=(ctx.pin(name), ctx.pin("torch")),
                                   message=f"torch {Version(torch).public} breaks {name} {ver}: {verdict.missing} undefined symbol(s) "
                                   "it needs are missing", evidence=_ev(verdict),
                                   remedy=f"use a {name} release built against torch {Version(torch).public}",
                                   probe=ctx.probe_command("abi", name, ver, f"--torch {Version(torch).public}")))
                continue
            cmd = ctx.probe_command("abi", name, ver, f"--torch {_probe_torch(ctx)}")
            out.append(ctx.unknown((ctx.pin(name),), f"{name} {ver} is a compiled torch extension the matrix does not know",
                                   probe=cmd))
            continue
        if torch is None:
            out.append(Finding(rule="abi", severity="error", packages=(ctx.pin(name),),
                               message=f"{name} {ver} is a compiled extension built against torch {row.torch}, and no torch is in the set",
                               evidence=_ev(row), remedy=f"add torch=={row.torch}"))
            continue
        tpub = Version(torch).public
        verdict = ctx.facts.abi_verdict(name, ver, torch)
        if verdict is not None and verdict.compatible:
            continue
        if verdict is None and ctx.facts.abi_equal(tpub, row.torch) is not None:
            continue  # the torch it was built against, or a release proven to export the same symbols
        sev = row.on_mismatch
        if verdict is not None:
            syms = verdict.symbols
            detail = f"{verdict.missing} undefined symbol(s) it needs are missing from torch {tpub}"
            if syms:
                detail += f" (e.g. {syms[0]})"
            msg = f"torch {tpub} breaks {name} {ver}: it was built against torch {row.torch} and {detail}"
            evidence = _ev(verdict) + _ev(row)
        else:
            msg = (f"{name} {ver} was built against torch {row.torch}, but torch {tpub} is in the set; "
                   f"a compiled extension only loads next to the torch whose C++ ABI it was built for")
            evidence = _ev(row)
        if row.consequence:
            msg += f"; if it fails to load, {row.consequence}"
        found = _best_kernel(ctx, name, tpub)
        alt = f"{found[0]}=={found[1]}" if found else None
        if sev == "warning":
            remedy = (f"nothing blocks the stack; to keep {name}'s compiled ops, install {alt}" if alt else
                      f"nothing blocks the stack; to keep {name}'s compiled ops, install a {name} built against torch {tpub}")
        else:
            remedy = f"pin {_torch_pins(ctx, row.torch)}"
            if alt:
                remedy += f", or use {alt} (built against torch {tpub})"
        out.append(Finding(rule="abi", severity=sev, packages=(ctx.pin(name), ctx.pin("torch")), message=msg,
                           evidence=evidence, remedy=remedy,
                           probe=ctx.probe_command("abi", name, ver, f"--torch {tpub}")))
    return out


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


def rule_family(ctx: Context) -> list[Finding]:
    """(b) torchvision / torchaudio against the torch they were built for."""
    out: list[Finding] = []
    torch = ctx.packages.get("torch")
    for name in sorted(ctx.facts.family_packages() & ctx.packages.keys()):
        ver = ctx.packages[name]
        if ctx.built_from_source(name) or (torch is not None and ctx.built_from_source("torch")):
            continue
        found = ctx.facts.family(name, ver)
        if found is None:
            verdict = ctx.facts.abi_verdict(name, ver, torch) if torch else None
            if verdict is not None and verdict.compatible:
                continue  # no METADATA pin, but probed: every torch symbol it needs is there
            if verdict is not None and torch is not None:
                syms = verdict.symbols
                out.append(Finding(rule="family", severity="error", packages=(ctx.pin(name), ctx.pin("torch")),
                                   message=f"torch {Version(torch).public} breaks {name} {ver}: {verdict.missing} undefined "
                                   f"symbol(s) it needs are missing" + (f" (e.g. {syms[0]})" if syms else ""),
                                   evidence=_ev(verdict),
                                   remedy=f"use a {name} release built for torch {Version(torch).public}",
                                   probe=ctx.probe_command("abi", name, ver, f"--torch {Version(torch).public}")))
                continue
            out.append(ctx.unknown((ctx.pin(name),), f"{name} {ver} has no recorded torch pairing",
                                   probe=ctx.probe_command("abi", name, ver, f"--torch {_probe_torch(ctx)}")))
            continue
        spec, row = found
        if torch is None:
            out.append(Finding(rule="family", severity="error", packages=(ctx.pin(name),),
                               message=f"{name} {ver} needs torch{spec}, and no torch is in the set",
                               evidence=_pair_ev(row, name, ver, spec), remedy=f"add torch{spec}"))
            continue
        tpub = Version(torch).public
        verdict = ctx.facts.abi_verdict(name, ver, torch)
        if SpecifierSet(spec).contains(tpub, prereleases=True):
            if verdict is not None and not verdict.compatible:
                # a probe-proven break wins over a METADATA range that admits this torch (torchaudio 2.11.1
                # declares torch>=2.11, yet needs stable-ABI functions torch 2.11.0 does not export)
                syms = verdict.symbols
                msg = (f"torch {tpub} breaks {name} {ver}: its METADATA admits it (torch{spec}), but "
                       f"{verdict.missing} undefined symbol(s) it needs are missing from torch {tpub}"
                       + (f" (e.g. {syms[0]})" if syms else ""))
                if row.failure:
                    msg += f"; importing it fails with {row.failure}"
                good = ctx.facts.family_for_torch(name, tpub)
                remedy = f"pin {name}=={good}" if good and good != Version(ver).public else \
                    f"use a {name} release built for torch {tpub}"
                if row.consequence:
                    msg += f"; {row.consequence}"
                out.append(Finding(rule="family", severity=row.on_mismatch, packages=(ctx.pin(name), ctx.pin("torch")),
                                   message=msg,
                                   evidence=_ev(verdict) + _pair_ev(row, name, ver, spec), remedy=remedy,
                                   probe=ctx.probe_command("abi", name, ver, f"--torch {tpub}")))
            continue
        if verdict is not None and verdict.compatible and row.evidence != "metadata":
            continue  # probed compatible with this torch, and no METADATA pin says otherwise (torchaudio 2.11.0)
        if verdict is not None:
            # outside the documented range and probe-proven broken: the probe is the evidence, not the table
            syms = verdict.symbols
            msg = (f"torch {tpub} breaks {name} {ver}: it was built for torch{spec} and {verdict.missing} undefined "
                   f"symbol(s) it needs are missing from torch {tpub}" + (f" (e.g. {syms[0]})" if syms else ""))
            if row.failure:
                msg += f"; importing it fails with {row.failure}"
            if row.consequence:
                msg += f"; {row.consequence}"
            good = ctx.facts.family_for_torch(name, tpub)
            out.append(Finding(rule="family", severity=row.on_mismatch, packages=(ctx.pin(name), ctx.pin("torch")),
                               message=msg, evidence=_ev(verdict) + _pair_ev(row, name, ver, spec),
                               remedy=f"pin {name}=={good}" if good else f"pin torch{spec}",
                               probe=ctx.probe_command("abi", name, ver, f"--torch {tpub}")))
            continue
        msg = f"{name} {ver} was built for torch{spec}, but torch {tpub} is in the set"
        if row.failure:
            msg += f"; importing it fails with {row.failure}"
        good = ctx.facts.family_for_torch(name, tpub)
        remedy = f"pin {name}=={good}" if good else f"pin torch{spec}"
        out.append(Finding(rule="family", severity="error", packages=(ctx.pin(name), ctx.pin("torch")), message=msg,
                           evidence=_pair_ev(row, name, ver, spec), remedy=remedy))
    return out


def rule_equal_version(ctx: Context) -> list[Finding]:
    """(c) Packages that must carry the same version (flashinfer-cubin == flashinfer-python)."""
    out: list[Finding] = []
    for row in ctx.facts.rows("equal_version"):
        a, b = row.packages
        if a in ctx.packages and b in ctx.packages and Version(ctx.packages[a]) != Version(ctx.packages[b]):
            out.append(Finding(rule="equal-version", severity="error", packages=(ctx.pin(a), ctx.pin(b)),
                               message=f"{b} {ctx.packages[b]} does not match {a} {ctx.packages[a]}; their versions must be equal",
                               evidence=_ev(row), remedy=f"pin {b}=={ctx.packages[a]}"))
    return out


def rule_gpu_code(ctx: Context) -> list[Finding]:
    """(d) Every GPU-code package carries SASS that runs on the target or PTX the driver can JIT for it."""
    out: list[Finding] = []
    t = ctx.target
    names = sorted((ctx.facts.kernel_packages() | {"torch"}) & ctx.packages.keys())
    for name in names:
        ver = ctx.packages[name]
        if ctx.built_from_source(name):
            continue  # its GPU code is whatever the build chose: rule_source_build warns
        if nonnvidia.vendor_of(name, ver) is not None:
            continue  # a ROCm/XPU build: glmcompat.decide.nonnvidia says it cannot run on NVIDIA GPUs
        code = ctx.facts.gpu_code(name, ver)
        if code is None:
            k = ctx.facts.kernel(name, ver) if name != "torch" else None
            if k is not None and k.sass is None:
                continue  # an extension whose GPU code is not curated (e.g. torchao): the abi rule covers it
            if name != "torch" and k is None:
                continue  # unknown kernel release: reported once, by the abi rule
            local = Version(ver).local
            if name == "torch" and local is not None:
                common = ctx.facts.torch_common_code(ver)
                if common is not None and gpu.runnable(common[0], ctx.capability):
                    continue  # every recorded build of this release runs there: so does this variant
            if name == "torch" and local is not None and ctx.facts.torch_build(Version(ver).public) is not None:
                cmd = (f"record a [[torch]] row with variant = \"{local}\" for torch {Version(ver).public} "
                       f"(its CUDA and GPU code from PyTorch's build configuration for that release), or pass --allow-unknown")
                msg = (f"the GPU code of torch {ver} (the +{local} build, from PyTorch's own index) is not recorded; "
                       f"its C++ ABI is torch {Version(ver).public}'s")
                out.append(ctx.unknown((ctx.pin(name),), msg, remedy=cmd))
                continue
            out.append(ctx.unknown((ctx.pin(name),), f"the GPU code of {name} {ver} is not recorded",
                                   probe=ctx.probe_command("arch", name, ver, f"--target {t.name}")))
            continue
        sass, ptx, row = code
        groups = getattr(row, "kernel_code", ())
        gaps = gpu.uncovered(groups, ctx.capability)  # kernels meant for newer GPUs with no code for this one
        if gpu.runnable(list(sass) + list(ptx), ctx.capability) and not gaps:
            continue
        have = ", ".join(list(sass) + list(ptx)) or "no GPU code at all (a CPU-only build)"
        msg = (f"{name} {ver} carries {have}; none of it runs on {t.name} (compute capability "
               f"{t.compute_capability}): SASS runs only on its own major with a minor at least its own "
               f"(sm_XYa: exactly X.Y), and there is no PTX to JIT")
        if gaps:
            g = gaps[0]
            msg = (f"{sum(x.kernels for x in gaps)} of the {sum(x.kernels for x in groups)} kernels of {name} {ver} "
                   f"have no code for {t.name} (compute capability {t.compute_capability}), e.g. {g.example}, "
                   f"which carries only {', '.join(g.code)}"
                   + (f"; its PTX ({', '.join(ptx)}) is that of other kernels" if ptx else ""))
        if name == "torch":
            remedy = "use a torch build with code for the target (see `glmcompat matrix show`)"
            for tr in ctx.facts.rows("torch"):
                if gpu.runnable(tr.sass + tr.ptx, ctx.capability):
                    cands = [v for v in tr.versions if Version(v) >= Version(Version(ver).public)]
                    if cands:
                        remedy = f"pin torch=={cands[0]} (default wheel, CUDA {tr.cuda}, carries code for {t.name})"
                        break
        else:
            found = _best_kernel(ctx, name)
            alt = f"{found[0]}=={found[1]} (built against torch {found[2]})" if found else None
            remedy = f"use {alt}" if alt else f"no known {name} release carries code for {t.name}: choose another target"
            if found and ctx.machine != "x86_64":
                code = ctx.facts.gpu_code(found[0], found[1])
                runs = [c for c in (list(code[0]) + list(code[1]) if code else []) if gpu.runs_on(c, ctx.capability)]
                if runs:
                    remedy = f"use {alt}: its Linux {ctx.machine} wheel carries {', '.join(runs)}, which runs on {t.name}"
        # a +cuXYZ torch comes from PyTorch's own index, which the probe does not read: its row is the evidence
        probe = "" if Version(ver).local else ctx.probe_command("arch", name, ver, f"--target {t.name}")
        out.append(Finding(rule="gpu-code", severity="error", packages=(ctx.pin(name),), message=msg,
                           evidence=_ev(row), remedy=remedy, probe=probe))
    return out


def rule_cuda(ctx: Context) -> list[Finding]:
    """(e) The CUDA runtime major of torch and of the kernel wheels agree (12 vs 13; +cuXYZ, +cpu count)."""
    out: list[Finding] = []
    torch = ctx.packages.get("torch")
    if torch is None:
        return out
    if ctx.built_from_source("torch") or nonnvidia.vendor_of("torch", torch) is not None:
        return out  # built here, or a ROCm/XPU build (glmcompat.decide.nonnvidia): no CUDA runtime to compare
    tcuda = ctx.facts.torch_cuda(torch)
    if tcuda is None:
        return out  # reported by the gpu-code rule as unknown
    tmajor = tcuda.split(".")[0] if tcuda else None
    for name in sorted(ctx.facts.kernel_packages() & ctx.packages.keys()):
        if ctx.built_from_source(name):
            continue
        row = ctx.facts.kernel(name, ctx.packages[name])
        kcuda = ctx.facts.kernel_cuda(name, ctx.packages[name])
        if row is None or not kcuda:
            continue
        kmajor = kcuda.split(".")[0]
        if tmajor == kmajor:
            continue
        what = f"CUDA {tcuda}" if tcuda else "no CUDA (a +cpu build)"
        sev = row.on_mismatch  # xformers/torchao only log and run without their ops
        msg = (f"{name} {ctx.packages[name]} links the CUDA {kmajor} runtime (libcudart.so.{kmajor}), "
               f"but torch {torch} is built for {what}")
        if sev == "warning" and row.consequence:
            msg += f"; its extension then fails to load and {row.consequence}"
        evidence = _ev(row) if kcuda == row.cuda else \
            (("metadata", f"the local label of {name} {ctx.packages[name]} (a CUDA {kcuda} build)"),)
        if tmajor and Version(ctx.packages[name]).local is None:
            remedy = (f"use a CUDA {tmajor} build of {name} {Version(ctx.packages[name]).public}, "
                      f"or a torch built for CUDA {kmajor}")
        else:
            remedy = f"pin torch=={row.torch} (built for CUDA {kmajor})"
            if ctx.machine != "x86_64" and ctx.facts.torch_cuda(row.torch) == "":
                m = ctx.machine
                remedy = (f"torch {row.torch}'s default Linux {m} wheel has no CUDA: use a CUDA {kmajor} build of "
                          f"torch {row.torch} for {m} (PyTorch's own index), or a release whose {m} wheel is one")
        probe = ctx.probe_command("abi", name, ctx.packages[name], f"--torch {Version(torch).public}") \
            if kcuda == row.cuda and Version(ctx.packages[name]).local is None else ""
        out.append(Finding(rule="cuda", severity=sev, packages=(ctx.pin(name), ctx.pin("torch")), message=msg,
                           evidence=evidence, remedy=remedy, probe=probe))
    for name in sorted(ctx.facts.family_packages() & ctx.packages.keys()):
        if ctx.built_from_source(name):
            continue
        ver = ctx.packages[name]
        found = ctx.facts.family_cuda(name, ver)
        if found is None:
            continue
        fmajor, frow = found
        if (fmajor or None) == (tmajor or None):  # the same CUDA major, or both CPU-only ("" and None: no CUDA)
            continue
        fam = ctx.facts.family(name, ver)
        if fam is not None and not SpecifierSet(fam[0]).contains(Version(torch).public, prereleases=True):
            continue  # built for another torch release: the family rule says so, with the same remedy
        what = f"CUDA {tcuda}" if tcuda else "no CUDA (a +cpu build)"
        links = f"links the CUDA {fmajor} runtime (libcudart.so.{fmajor})" if fmajor else "is a CPU-only build"
        msg = f"{name} {ver} {links}, but torch {torch} is built for {what}"
        if fam is not None and fam[1].failure:
            msg += f"; importing it fails with {fam[1].failure}"
        tlocal = Version(torch).local
        if Version(ver).local is None and tlocal:
            remedy = f"install {name}=={Version(ver).public}+{tlocal} (the build for torch's CUDA, from the same index as torch)"
        elif tlocal is None and Version(ver).local is None:
            good = ctx.facts.family_for_torch(name, torch)
            remedy = f"pin {name}=={good}" if good else f"use a {name} release built for torch {torch}"
        elif tlocal is None and tmajor:
            remedy = f"install {name}=={Version(ver).public} from the default index (its build for torch {torch}'s CUDA {tmajor})"
        else:
            remedy = f"use the {name} build for torch's CUDA ({'+' + tlocal if tlocal else 'CUDA ' + str(tmajor)})"
        tev = ctx.facts.torch_build(torch)
        evidence = _ev(frow) + (_ev(tev) if tev is not None and Version(torch).local is None else
                                (("metadata", f"the local label of torch {torch}"),))
        out.append(Finding(rule="cuda", severity="error", packages=(ctx.pin(name), ctx.pin("torch")), message=msg,
                           evidence=evidence, remedy=remedy))
    return out


def rule_model(ctx: Context) -> list[Finding]:
    """(f) The model type needs a transformers (and sglang) that knows it."""
    if ctx.model is None:
        return []
    row = ctx.facts.model(ctx.model)
    out: list[Finding] = []
    checks = [("transformers", row.transformers)]
    for engine, need in (("sglang", row.sglang), ("vllm", row.vllm)):
        if need:
            checks.append((engine, need))
    # An engine release that carries its own config class for the model type (its [[model]] row's sglang_config /
    # vllm_config) loads it without transformers knowing it.
    own_config = [e for e in ("sglang", "vllm") if row.config_in(e) and e in ctx.packages
                  and SpecifierSet(row.config_in(e) or "").contains(Version(ctx.packages[e]).public, prereleases=True)]
    for name, spec in checks:
        if name == "transformers" and own_config:
            continue
        ver = ctx.packages.get(name)
        if ver is None:
            if name == "transformers":
                out.append(Finding(rule="model", severity="error", packages=(),
                                   message=f"model type {ctx.model!r} needs transformers{spec}, and transformers is not in the set",
                                   evidence=_ev(row), remedy=f"add transformers{spec}"))
            continue
        if SpecifierSet(spec).contains(Version(ver).public, prereleases=True):
            continue
        msg = f"{name} {ver} does not know model type {ctx.model!r}: it needs {name}{spec}"
        if name == "transformers" and row.failure:
            msg += f" (loading the model raises {row.failure})"
        remedy = f"pin {name}{spec}"
        engines = [e for e in ("sglang", "vllm") if e in ctx.packages]
        if name == "transformers" and engines:
            remedy += f" (as an override of {' and '.join(engines)}'s own transformers pin)"
        out.append(Finding(rule="model", severity="error", packages=((name, ver),), message=msg, evidence=_ev(row),
                           remedy=remedy))
    return out


def rule_target_requirements(ctx: Context) -> list[Finding]:
    """(g) Fixes a target needs (sglang >= 0.5.9 on sm_120) and release-level requirements."""
    out: list[Finding] = []
    for tr in ctx.facts.target_requirements(ctx.target.name):
        ver = ctx.packages.get(tr.package)
        if ver is None or SpecifierSet(tr.specifier).contains(Version(ver).public, prereleases=True):
            continue
        msg = f"{tr.package} {ver} lacks what {ctx.target.name} needs: {tr.reason}"
        if tr.failure:
            msg += f" (symptom: '{tr.failure}')"
        out.append(Finding(rule="target-fix", severity="error", packages=((tr.package, ver),), message=msg,
                           evidence=_ev(tr),
                           remedy=f"pin {tr.package}{tr.specifier}"))
    for row in ctx.facts.rows("requires"):
        ver = ctx.packages.get(row.package)
        if ver is None or not SpecifierSet(row.versions).contains(Version(ver).public, prereleases=True):
            continue
        # A matrix requirement is "name<specifier>" (validated on load; no extras or markers used).
        m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$", row.requires)
        assert m is not None
        req_name, spec = canonicalize(m.group(1)), m.group(2).strip()
        have = ctx.packages.get(req_name)
        if have is None or SpecifierSet(spec).contains(Version(have).public, prereleases=True):
            continue
        out.append(Finding(rule="requires", severity="error", packages=((row.package, ver), (req_name, have)),
                           message=f"{row.package} {ver} refuses to start with {req_name} {have}: it requires {req_name}{spec}",
                           evidence=_ev(row), remedy=f"pin {req_name}{spec}"))
    return out


def rule_source_build(ctx: Context) -> list[Finding]:
    """(h) Tracked compiled packages built from source (git, path, sdist): the ABI and CUDA rules do not
    apply (the build links whatever torch it finds), and their GPU code cannot be known statically."""
    out: list[Finding] = []
    tracked = ctx.facts.kernel_packages() | ctx.facts.family_packages() | {"torch"}
    torch = ctx.packages.get("torch")
    for name in sorted(tracked & ctx.packages.keys()):
        if not ctx.built_from_source(name):
            continue
        kind = ctx.sources[name]
        if name == "torch":
            how = "torch itself is built from source here"
        elif ctx.no_isolation is not None and name in ctx.no_isolation:
            how = f"built without build isolation, so against torch {torch} in this environment" if torch else \
                "built without build isolation, against the torch of the build machine"
        elif ctx.no_isolation is not None:
            how = "built in an isolated build environment, against whatever torch that environment resolves"
        else:
            how = "built against the torch present when it is built"
        out.append(Finding(rule="source-build", severity="warning", packages=(ctx.pin(name),),
                           message=f"{name} {ctx.packages[name]} comes from a {kind} source and is compiled at install time "
                           f"({how}); its ABI and GPU code cannot be judged from the lock",
                           evidence=(), remedy="run `glmcompat verify` in the built environment on the target GPU"))
    return out


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


def rule_untracked_compiled(ctx: Context) -> list[Finding]:
    """(i) Compiled torch extensions outside the tracked set: a warning that points at verify, saying which
    torch (and CUDA) its build label names when that differs from the set's: an unproven pairing, not a proven
    break (glmcompat records no facts about these packages, so it never calls them unsafe on its own)."""
    out: list[Finding] = []
    torch = ctx.packages.get("torch")
    tcuda = ctx.facts.torch_cuda(torch) if torch is not None and not ctx.built_from_source("torch") else None
    for row in ctx.facts.rows("compiled"):
        for name in sorted(set(row.packages) & ctx.packages.keys()):
            ver = ctx.packages[name]
            if artifacts.judged_torch(ctx, name):
                continue  # its own bytes were compared with this torch: glmcompat.decide.artifacts
            local = Version(ver).local or ""
            named = label_torch(local)
            lcuda = local_cuda(ver)
            if ctx.built_from_source(name):
                what = f"is built from source ({ctx.sources[name]}) against the torch present at build time"
                named = lcuda = None
            elif named:
                cu = re.match(r"cu(\d+)", local)
                shown = (cu.group(1) if cu and len(cu.group(1)) <= 2 else lcuda) if lcuda else None
                what = f"was built for torch {named}" + (f" and CUDA {shown}" if shown else "") + f" (its local label +{local})"
            else:
                what = "is a compiled torch extension whose build torch glmcompat does not track"
            packages: tuple[NameVersion, ...] = (ctx.pin(name),)
            note = ""
            if torch is not None and named:
                tv, nv = Version(Version(torch).public), Version(named)
                if nv.release != tv.release[:len(nv.release)]:
                    note = "; a build for another torch may not load next to this one (an unproven pairing)"
                    packages = (ctx.pin(name), ctx.pin("torch"))
            if tcuda and lcuda and lcuda.split(".")[0] != tcuda.split(".")[0]:
                note += f"; its label's CUDA {lcuda.split('.')[0]} is not torch's CUDA {tcuda.split('.')[0]}"
                packages = (ctx.pin(name), ctx.pin("torch"))
            out.append(Finding(rule="untracked", severity="warning", packages=packages,
                               message=f"{name} {ver} {what}" + (f", next to torch {torch}" if torch else "") + note,
                               evidence=_ev(row), remedy="run `glmcompat verify` on the target GPU to prove it loads"))
    return out


def rule_unpinned(ctx: Context) -> list[Finding]:
    """(j) A coupled package named without an exact pin: the installer picks the release."""
    out: list[Finding] = []
    coupled = ctx.facts.kernel_packages() | ctx.facts.family_packages() | {"torch"}
    for name in sorted(coupled & ctx.unpinned.keys()):
        spec = ctx.unpinned[name]
        pin = _pin_for(ctx, name, spec)
        remedy = (f"pin {pin}, then re-run `glmcompat check`" if pin else
                  f"pin {name} to one exact release (the matrix knows none that {name}{spec} admits), "
                  "then re-run `glmcompat check`")
        out.append(Finding(rule="unpinned", severity="warning", packages=((name, ""),),
                           message=f"{name} is not pinned ({name}{spec or ' with no version'}): the installer picks the "
                           "release, and nothing ties it to the torch beside it", evidence=(), remedy=remedy))
    return out


def _anchor_torch(ctx: Context) -> tuple[str, str] | None:
    """(torch, why) the pins of an unpinned coupled package should follow: the set's torch, else the torch a
    compiled extension in the set was built against, else the exact torch a family pin in the set names."""
    torch = ctx.packages.get("torch")
    if torch is not None:
        return Version(torch).public, ""  # the set's own: no need to say why
    for k in sorted(ctx.facts.kernel_packages() & ctx.packages.keys()):
        row = ctx.facts.kernel(k, ctx.packages[k])
        if row is not None:
            return row.torch, f"the torch {k} {ctx.packages[k]} was built against"
    for fam in sorted(ctx.facts.family_packages() & ctx.packages.keys()):
        found = ctx.facts.family(fam, ctx.packages[fam])
        if found is not None and found[0].startswith("==") and "*" not in found[0] and "," not in found[0]:
            return found[0][2:], f"the torch {fam} {ctx.packages[fam]} was built for"
    return None


def _pin_for(ctx: Context, name: str, spec: str) -> str | None:
    """The exact pin to suggest for an unpinned coupled package, with why: what follows the torch the set is
    anchored to (:func:`_anchor_torch`; for torch itself, that torch; for a family package, its release built
    for it; for a kernel, its release built against it), else the newest release the matrix knows that ``spec``
    admits; None when there is none."""
    try:
        asked = SpecifierSet(spec or "")
    except ValueError:
        return None

    def ok(v: str) -> bool:
        return asked.contains(Version(v).public, prereleases=True)

    anchor = _anchor_torch(ctx)
    if anchor is not None:
        torch, why = anchor
        if name == "torch" and ok(torch):
            return f"torch=={torch} ({why})"
        if name in ctx.facts.family_packages():
            good = ctx.facts.family_for_torch(name, torch)
            if good and ok(good):
                return f"{name}=={good} (the release built for torch {torch}{', ' + why if why else ''})"
        if name in ctx.facts.kernel_packages():
            best = _best_kernel(ctx, name, torch)
            if best is not None and best[0] == name and ok(best[1]):
                return f"{name}=={best[1]} (built against torch {torch}{', ' + why if why else ''})"
    known = sorted(v for v in _known_releases(ctx.facts, name) if not v.is_prerelease and ok(str(v)))
    if not known:
        return None
    return f"{name}=={known[-1]} (the newest release the matrix knows" + (f" that {name}{spec} admits)" if spec else ")")


def rule_release_pins(ctx: Context) -> list[Finding]:
    """(k) An engine release's own pins (its METADATA). A pin that couples a compiled package to torch
    is the abi/family rules' job (a break); a pin on a pure-Python package the set departs from was
    overridden on purpose (uv ``override-dependencies``; no installer produces it otherwise): a warning
    that names the override."""
    out: list[Finding] = []
    kernels = ctx.facts.kernel_packages()
    for row in ctx.facts.rows("release"):
        pkg = row.package
        if pkg == "torch":
            continue  # torch's own pins on what it was built with: glmcompat.decide.torchpins, an error
        have = ctx.packages.get(pkg)
        if have is None or Version(Version(have).public) != Version(row.version):
            continue
        covered = {canonicalize(re.split(r"[<>=!~ ;\[]", r.requires.strip(), maxsplit=1)[0])
                   for r in ctx.facts.rows("requires") if r.package == pkg
                   and SpecifierSet(r.versions).contains(Version(have).public, prereleases=True)}
        for req in row.requires:
            from packaging.requirements import InvalidRequirement, Requirement  # lazy: keeps `check --help` light

            try:
                parsed = Requirement(req)
            except InvalidRequirement:
                continue  # validated when the matrix loads
            dep, spec = canonicalize(parsed.name), str(parsed.specifier)
            if not spec or dep not in ctx.packages or ctx.built_from_source(dep) or dep in covered:
                continue  # unpinned, absent, built here, or judged by a [[requires]] row
            if dep == "torch" and pkg in kernels:
                continue  # the abi rule judges a compiled engine against its torch
            dv = ctx.packages[dep]
            if SpecifierSet(spec).contains(Version(dv).public, prereleases=True):
                continue
            how = (f"the lock overrides it with {dep}{ctx.overrides[dep] or ' (any version)'}" if dep in ctx.overrides
                   else "the set departs from it (an override where the lock was made, or an install without dependency checks)")
            out.append(Finding(rule="override", severity="warning", packages=((pkg, have), ctx.pin(dep)),
                               message=f"{pkg} {have} requires {dep}{spec}, and {dep} {dv} is in the set: {how}",
                               evidence=_ev(row),
                               remedy=f"keep it only if {pkg} {have} is proven to run with {dep} {dv} (`glmcompat verify`)"))
    return out


# Files an installer resolves (pip, conda's pip section): what they name pulls in its own exact pins.
RESOLVED_AT_INSTALL = frozenset({"requirements.txt", "environment.yml"})
Implied = tuple[str, str, tuple[tuple[str, str], ...]]  # (version, why, evidence) of a package the installer adds


def _exact_pins(facts: Facts, name: str, version: str) -> list[tuple[str, str, Fact]]:
    """(dependency, exact version, row) for each exact pin the METADATA of ``name`` ``version`` declares, as the
    matrix records it: an engine release's Requires-Dist (``vllm 0.18.0``: ``torch==2.10.0``), a torch-family
    release's torch pin (``torchvision 0.24.1``: ``torch==2.9.1``)."""
    from packaging.requirements import InvalidRequirement, Requirement  # lazy: keeps `check --help` light

    pub = Version(Version(version).public)
    out: list[tuple[str, str, Fact]] = []
    for row in facts.rows("release"):
        if row.package != name or Version(row.version) != pub or name == "torch":  # torch's: torchpins judges them
            continue
        for req in row.requires:
            try:
                parsed = Requirement(req)
            except InvalidRequirement:
                continue
            specs = list(parsed.specifier)
            if len(specs) == 1 and specs[0].operator == "==" and not specs[0].version.endswith(".*"):
                out.append((canonicalize(parsed.name), specs[0].version, row))
    found = facts.family(name, version) if name in facts.family_packages() else None
    if found is not None:
        spec, frow = found
        if spec.startswith("==") and "*" not in spec and "," not in spec:
            out.append(("torch", spec[2:], frow))
    return out


def _known_releases(facts: Facts, name: str) -> set[Version]:
    """Every release of ``name`` the matrix holds a row for (torch builds, family pairs, kernels, engine releases)."""
    out: set[Version] = set()
    if name == "torch":
        out.update(Version(v) for t in facts.rows("torch") for v in t.versions)
    for f in facts.rows("family"):
        if f.package == name:
            out.update(Version(v) for v in f.pairs)
    for k in facts.rows("kernel"):
        if k.package == name:
            out.update(Version(v) for v in k.versions)
    out.update(Version(r.version) for r in facts.rows("release") if r.package == name)
    return out


def resolve_named(packages: Mapping[str, str], unpinned: Mapping[str, str], facts: Facts
                  ) -> tuple[dict[str, tuple[str, str, tuple[tuple[str, str], ...]]], dict[str, str]]:
    """What an installer puts in place of the packages a resolved-at-install file leaves open: (implied,
    still unpinned). ``implied`` maps a name to (version, why, evidence) for

    - a package the set does not pin but whose version another one's METADATA pins exactly (vLLM 0.18.0 pins
      torch==2.10.0; torchvision 0.24.1 pins torch==2.9.1), when what the file asks of it (if anything)
      admits that version: the installer has no other choice;
    - a wildcard pin (``torch==2.8.0.*``) that admits exactly one release the matrix knows: that release.

    Pins are followed to a fixed point (an engine pins torchvision, which pins torch). A wildcard that admits
    several known releases judges the newest and stays unpinned (the installer picks)."""
    implied: dict[str, tuple[str, str, tuple[tuple[str, str], ...]]] = {}
    have = dict(packages)
    left = dict(unpinned)
    changed = True
    while changed:
        changed = False
        for name, ver in sorted(have.items()):
            for dep, exact, row in _exact_pins(facts, name, ver):
                if dep in have:
                    continue
                asked = left.get(dep)
                try:
                    admits = not asked or SpecifierSet(asked).contains(exact, prereleases=True)
                except ValueError:
                    admits = False
                if not admits:
                    continue  # the installer cannot satisfy both: it fails, and nothing installs
                have[dep] = exact
                left.pop(dep, None)
                implied[dep] = (exact, f"{name} {ver} pins {dep}=={exact} exactly", _ev(row))
                changed = True
        for dep, asked in sorted(left.items()):
            specs = list(SpecifierSet(asked)) if asked else []
            if dep in have or len(specs) != 1 or specs[0].operator != "==" or not specs[0].version.endswith(".*"):
                continue
            match = sorted(v for v in _known_releases(facts, dep) if specs[0].contains(v, prereleases=False))
            if not match:
                continue
            have[dep] = str(match[-1])
            ev = (("metadata", f"{dep}{asked} admits {', '.join(map(str, match))} of the releases the matrix knows"),)
            implied[dep] = (str(match[-1]), f"{dep}{asked} is a wildcard pin of {dep} {match[-1]}"
                            + ("" if len(match) == 1 else " (the newest it admits)"), ev)
            if len(match) == 1:
                del left[dep]
            changed = True
    return implied, left


RULES: tuple[Callable[[Context], list[Finding]], ...] = (
    rule_abi,
    rule_family,
    rule_equal_version,
    rule_gpu_code,
    rule_cuda,
    rule_model,
    rule_target_requirements,
    rule_source_build,
    rule_untracked_compiled,
    rule_unpinned,
    rule_release_pins,
    torchpins.check,
    nonnvidia.check,
    artifacts.check,
)


def evaluate(
    packages: Mapping[str, str],
    *,
    target: str,
    model: str | None = None,
    matrix: Facts | Any | None = None,
    allow_unknown: bool = False,
    env: Environment | None = None,
    no_isolation: frozenset[str] | None = None,
    resolved_at_install: bool = False,
    implied: Mapping[str, Implied] | None = None,
    artifacts: Mapping[tuple[str, str], ArtifactFacts] | None = None,
) -> list[Finding]:
    """Run every rule; findings sorted errors first, then by rule and packages (deterministic).

    ``packages`` maps distribution names to versions; ``matrix`` is a :class:`Facts`, a
    :class:`~glmcompat.matrix.schema.Matrix`, or None for the shipped matrix. ``env`` is an environment of a
    dependency file (:mod:`glmcompat.readers.formats`): where each package comes from, what is unpinned, the
    lock's overrides. ``implied``: the packages of a resolved-at-install file that the installer adds, each with its
    version, why and the evidence (:func:`resolve_named`).
    """
    if matrix is None:
        from glmcompat.matrix.load import load_facts  # lazy: keeps `check --help` light

        facts = load_facts()
    elif isinstance(matrix, Facts):
        facts = matrix
    else:
        facts = matrix.view()  # a Matrix: its typed-row view
    pkgs = {canonicalize(k): v for k, v in packages.items()}
    ctx = Context(pkgs, facts.target(target), facts, model, allow_unknown)
    if env is not None:
        ctx.sources = dict(env.sources)
        ctx.unpinned = dict(env.unpinned)
        ctx.overrides = dict(env.overrides)
    ctx.no_isolation = no_isolation
    ctx.artifacts = artifacts or {}
    implied = dict(implied or {})
    if resolved_at_install:
        implied, ctx.unpinned = resolve_named(ctx.packages, ctx.unpinned, facts)
        ctx.packages.update({n: v for n, (v, _, _) in implied.items()})
    if model is not None:
        facts.model(model)  # unknown model: InputError before any rule runs
    found: list[Finding] = []
    for rule in RULES:
        found.extend(rule(ctx))
    if implied:
        found = [_with_implied(f, implied) for f in found]
    found = [_unproven(f) for f in found]
    # one finding per (rule, severity, packages, message): rows that say the same thing pool their evidence
    merged: dict[tuple[str, str, tuple[NameVersion, ...], str], Finding] = {}
    for f in found:
        key = (f.rule, f.severity, f.packages, f.message)
        if key in merged:
            g = merged[key]
            ev = g.evidence + tuple(e for e in f.evidence if e not in g.evidence)
            merged[key] = replace(g, evidence=ev)
        else:
            merged[key] = f
    return sorted(merged.values(), key=lambda f: (SEVERITIES.index(f.severity), f.rule, f.pins, f.message))


def _unproven(f: Finding) -> Finding:
    """An error whose only evidence is documentation is a warning: only proven facts make an error."""
    if f.severity != "error" or not f.evidence or any(k != "documentation" for k, _ in f.evidence):
        return f
    return replace(f, severity="warning", message=f"{f.message} (documented, not proven: no probe or upstream fix shows "
                   "a break)", remedy=f"run `glmcompat verify` on the target GPU to prove it runs, or {f.remedy}")


def _with_implied(f: Finding, implied: Mapping[str, tuple[str, str, tuple[tuple[str, str], ...]]]) -> Finding:
    """``f`` saying which of its packages the file does not pin itself, and why that version installs."""
    why = [(n, implied[n]) for name, ver in f.packages for n in [canonicalize(name)]
           if n in implied and (name, ver) == (n, implied[n][0])]
    if not why:
        return f
    note = "; ".join(w for _, (_, w, _) in why)
    ev = f.evidence + tuple(e for _, (_, _, evs) in why for e in evs if e not in f.evidence)
    return replace(f, message=f"{f.message} (the file does not pin {', '.join(n for n, _ in why)}: {note})", evidence=ev)


def stack_findings(stack: Stack, packages: Mapping[str, str]) -> list[Finding]:
    """The named stack's pins that ``packages`` does not carry."""
    out = []
    for name, ver in sorted(stack.pins.items()):
        have = packages.get(name)
        if have is None or Version(Version(have).public) != Version(ver):
            out.append(Finding(rule="stack", severity="error", packages=((name, have or ""),),
                               message=f"stack {stack.name!r} pins {name}=={ver}, the lock has {have or 'none'}",
                               evidence=_ev(stack), remedy=f"pin {name}=={ver}"))
    return out


def evaluate_lock(lock: Lock, target: str, model: str | None, facts: Any, allow_unknown: bool,
                  stack: Stack | None = None, no_isolation: frozenset[str] | None = None,
                  platforms: Any = None, artifacts: Mapping[tuple[str, str], ArtifactFacts] | None = None
                  ) -> list[Finding]:
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
    ``platforms`` (e.g. ``["aarch64"]``) judges only those, strictly: nothing is excused or downgraded.
    """

    if not isinstance(facts, Facts):
        facts = facts.view() if facts is not None and hasattr(facts, "view") else _shipped_facts()
    trow = facts.target(target)
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
            envs[i], implied[i] = _installed(e, facts.on(e.platform))
    lock_has_torch = any("torch" in e.packages for e in lock.sets)
    reasons: dict[int, tuple[str, tuple[tuple[str, str], ...]]] = {}
    for i, env in enumerate(envs):
        cannot = _cannot_serve(env, facts.on(env.platform), lock_has_torch)
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
        found = evaluate(pkgs, target=target, model=model, matrix=mfacts, allow_unknown=allow_unknown or m in secondary,
                         env=env, no_isolation=no_isolation, implied=implied[i],
                         artifacts=artifacts if m == "x86_64" else None)
        if stack is not None:
            found.extend(stack_findings(stack, pkgs))
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


def _installed(env: Environment, facts: Facts) -> tuple[Environment, dict[str, Implied]]:
    """An environment of a resolved-at-install file with what the installer must add (:func:`resolve_named`), and
    those packages with why they install."""
    implied, left = resolve_named(env.packages, env.unpinned, facts)
    if not implied:
        return env, {}
    return replace(env, packages={**env.packages, **{n: v for n, (v, _, _) in implied.items()}}, unpinned=left), implied


def _ships_ev(tname: str, prods: str, platform: str) -> tuple[str, str]:
    verb = "ships" if "," not in prods else "ship"
    return ("metadata", f"glmcompat/matrix/data/targets.toml [[target]] {tname}: {prods} {verb} on {platform}")


def _shipped_facts() -> Facts:
    from glmcompat.matrix.load import load_facts  # lazy: keeps `check --help` light

    return load_facts()


def _where(trow: Target, ships: list[str], products_on: Callable[[Target, str], list[str]]) -> str:
    return "; ".join(f"{', '.join(products_on(trow, p))} on {p}" for p in ships)


def _cannot_serve(env: Environment, facts: Facts, lock_has_torch: bool
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
    return None

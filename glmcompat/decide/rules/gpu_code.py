"""(d) GPU code: every GPU-code package carries SASS that runs on the target or PTX the driver can JIT."""

from __future__ import annotations

from packaging.version import Version

from glmcompat.model import gpu
from glmcompat.model.causes import Break
from glmcompat.model.findings import Finding
from glmcompat.decide.rules import nonnvidia
from glmcompat.decide.rules.context import Context, Rule, _best_kernel, _ev


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
            continue  # a ROCm/XPU build: the non-nvidia rule says it cannot run on NVIDIA GPUs
        code = ctx.facts.gpu_code(name, ver)
        if code is None:
            k = ctx.facts.kernel(name, ver) if name != "torch" else None
            if k is not None and k.sass is None:
                continue  # an extension whose GPU code is not curated (e.g. torchao): the abi rule covers it
            if name != "torch" and k is None:
                continue  # unknown kernel release: reported once, by the abi rule
            local = Version(ver).local
            if name == "torch" and local == "cf":
                # conda-forge's torch, its CUDA left to the solver: every CUDA build it made of the release runs there
                builds = ctx.facts.torch_forge_builds(ver)
                if builds and all(gpu.runnable(list(b.sass) + list(b.ptx), ctx.capability) for b in builds):
                    continue
            if name == "torch" and local is not None:
                common = ctx.facts.torch_common_code(ver)
                if common is not None and gpu.runnable(common[0], ctx.capability):
                    continue  # every recorded build of this release runs there: so does this variant
            if name == "torch" and local is not None and ctx.facts.torch_build(Version(ver).public) is not None:
                # a +cuXYZ.cf label is a conda-forge build (the conda reader's): its arch list is the feedstock's
                forge = local == "cf" or local.endswith(".cf")
                where = "conda-forge's pytorch-cpu-feedstock recipe" if forge else "PyTorch's build configuration"
                cmd = (f"record a [[torch]] row with variant = \"{local}\" for torch {Version(ver).public} "
                       f"(its CUDA and GPU code from {where} for that release), or pass --allow-unknown")
                built = "a conda-forge build" if forge else "from PyTorch's own index"
                msg = (f"the GPU code of torch {ver} (the +{local} build, {built}) is not recorded; "
                       f"its C++ ABI is torch {Version(ver).public}'s")
                out.append(ctx.unknown((ctx.pin(name),), msg, remedy=cmd))
                continue
            other = ctx.facts.other_build_code(name, ver) if name != "torch" else ""
            if other:  # a labelled build of a release whose index wheel is recorded: that wheel's code is not this
                # build's, and what cannot be read is a warning naming what was not checked, never an error nor a safe
                out.append(Finding(
                    rule="unknown", severity="warning", packages=(ctx.pin(name),),
                    message=(f"the GPU code of {name} {ver} is not recorded: the +{Version(ver).local} build is another "
                             f"build than the index's {name} {other} wheel, whose code the matrix records, so it was not "
                             f"checked for {t.name}"),
                    remedy=(f"run `glmcompat verify` where it is installed on the {t.name} GPU (its gpu-code probe reads "
                            f"the code each module of the +{Version(ver).local} build carries)")))
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
        if not sass and not ptx and name == "torch":  # a CPU-only torch: the vocabulary's sentence
            msg = (Break(rule="gpu-code", package=name, version=ver, built="cpu").sentence()
                   + f", so nothing of it runs on {t.name} (compute capability {t.compute_capability})")
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


RULE = Rule(id='gpu-code', family='gpu_code', check=rule_gpu_code, reads=('kernel', 'torch', 'target'), evidence=('arch-probe',),
            remedy='replace', doc='GPU code (SASS or PTX) that runs on the target', ids=('gpu-code', 'unknown'),
            names=('torch',))

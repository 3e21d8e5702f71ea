"""(e) The CUDA runtime major of torch and of the kernel wheels agree (12 vs 13; +cuXYZ, +cpu count)."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from glmcompat.model.findings import Finding
from glmcompat.decide.rules import nonnvidia
from glmcompat.decide.rules.context import Context, Rule, _ev


def rule_cuda(ctx: Context) -> list[Finding]:
    """(e) The CUDA runtime major of torch and of the kernel wheels agree (12 vs 13; +cuXYZ, +cpu count)."""
    out: list[Finding] = []
    torch = ctx.packages.get("torch")
    if torch is None:
        return out
    if ctx.built_from_source("torch") or nonnvidia.vendor_of("torch", torch) is not None:
        return out  # built here, or a ROCm/XPU build (the non-nvidia rule): no CUDA runtime to compare
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


RULE = Rule(id='cuda', family='cuda', check=rule_cuda, reads=('kernel', 'torch', 'cudart'), evidence=('abi-probe', 'metadata'),
            remedy='replace', doc="the CUDA runtime a kernel links against torch's",
            names=('torch',))

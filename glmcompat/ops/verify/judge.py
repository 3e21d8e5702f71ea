"""The judging of probe records against the device and the matrix (pure: records in, new records and findings
out): the device against the target and torch's GPU code (:func:`judge_device`), an extension's GPU code against the
capability (:func:`judge_gpu_code`), and the static verdicts against the dynamic probes (:func:`agreement_of`)."""

from __future__ import annotations

from dataclasses import replace
from fnmatch import fnmatchcase
from typing import cast

from glmcompat.matrix.rows import Target
from glmcompat.model import gpu
from glmcompat.model.findings import Finding
from glmcompat.model.outputs.probe import ProbeDoc
from glmcompat.model.outputs.verify import AgreementDoc
from glmcompat.ops.verify.records import AbiData, DeviceData, GpuCodeData, GpuCodeFile
from glmcompat.ops.verify.static import sgl_kernel_variant
from glmcompat.readers.elf import foreign_cuda_runtimes

# The extension distributions whose static verdicts are compared with the dynamic ones: the load
# (abi: symbols and CUDA runtime vs import:, load:, ops:) and the GPU code (gpu-code: vs smoke:<module>-*).
DYNAMIC_OF = {"torchvision": "torchvision", "torchaudio": "torchaudio", "sgl-kernel": "sgl_kernel",
              "sglang-kernel": "sgl_kernel", "torchao": "torchao", "vllm": "vllm"}


def read_files(probe: str, files: list[str]) -> tuple[tuple[str, str], ...]:
    """The evidence of a verdict on installed files: ``probe`` (``abi-probe``, ``arch-probe``) read them."""
    return ((probe, "installed files: " + ", ".join(files)),)



def cap_name(cap: tuple[int, int]) -> str:
    return f"sm_{cap[0]}{cap[1]}"



def static_load_verdict(abi: ProbeDoc) -> tuple[bool, list[str]]:
    """Whether an ``abi:`` probe's files should load into the installed torch, and why not.

    Two checks, either of which stops the dynamic loader: a torch symbol the installed torch does not
    define, and a CUDA runtime major that torch does not link (``libcudart.so.12`` next to a torch
    that links ``.so.13``: the image has no CUDA 12 runtime, so the load fails before any symbol).
    """
    data = cast(AbiData, abi.data or {})
    files = data.get("files") or []
    reasons = []
    gone = data.get("missing_files") or []
    if gone:
        reasons.append(f"half-installed: {', '.join(gone[:3])} listed in RECORD, not on disk")
    missing = sorted({s for e in files for s in e.get("missing", [])})
    if missing:
        reasons.append(f"{len(missing)} torch symbol(s) missing")
    torch_cudart = data.get("torch_cudart") or []
    if torch_cudart:
        theirs = foreign_cuda_runtimes({c for e in files for c in e.get("cudart", [])}, torch_cudart)
        if theirs:
            reasons.append(f"links {', '.join(theirs)}, torch links {', '.join(torch_cudart)}")
    return not reasons, reasons



def agreement_of(probes: list[ProbeDoc], by_id: dict[str, ProbeDoc]) -> list[AgreementDoc]:
    """Static vs dynamic verdicts per extension distribution, for each aspect that has both.

    ``load``: the ``abi:`` probe (symbols and CUDA runtime) against ``import:``, ``load:`` and ``ops:``.
    ``gpu-code``: the ``gpu-code:`` probe (the code of the modules that decide, against the device)
    against the smoke tests that launch the package's kernels (``smoke:<module>-*``).
    """
    out: list[AgreementDoc] = []
    for p in probes:
        d_ = cast(AbiData, p.data or {})
        if not p.id.startswith("abi:") or (p.status == "skipped" and not d_.get("missing_files")) \
                or not (d_.get("files") or d_.get("missing_files")):
            continue
        key = p.id[4:]
        mod = DYNAMIC_OF.get(key)
        if not mod:
            continue
        found = [by_id.get(f"{kind}:{mod}") for kind in ("import", "load", "ops")]
        dyn = [d for d in found if d is not None and d.status != "skipped"]
        if dyn:
            static_ok, reasons = static_load_verdict(p)
            dyn_ok = all(d.status == "passed" for d in dyn) and not any(d.warnings for d in dyn)
            out.append(AgreementDoc(package=key, aspect="load", static="compatible" if static_ok else "incompatible",
                                    dynamic="loads" if dyn_ok else "fails to load", reasons=tuple(reasons),
                                    probes=(p.id, *(d.id for d in dyn)), agree=static_ok == dyn_ok))
        gc = by_id.get(f"gpu-code:{key}")
        smoke = sorted((s for s in probes if s.id.startswith(f"smoke:{mod}-") and s.status != "skipped"),
                       key=lambda s: s.id)
        if gc and gc.status in ("passed", "warning", "failed") and smoke:
            static_ok = gc.status != "failed"
            dyn_ok = all(s.status == "passed" for s in smoke)
            reasons = [] if static_ok else [gc.summary or ""]
            out.append(AgreementDoc(package=key, aspect="gpu-code",
                                    static="compatible" if static_ok else "incompatible",
                                    dynamic="runs" if dyn_ok else "fails to run", reasons=tuple(reasons),
                                    probes=(gc.id, *(s.id for s in smoke)), agree=static_ok == dyn_ok))
    return out



def judge_device(dev: ProbeDoc, cap: tuple[int, int], target: Target | None) -> ProbeDoc:
    """The ``device`` record judged against ``target`` and torch's GPU code (a new record)."""
    d = cast(DeviceData, dict(dev.data or {}))
    problems = []
    if target is not None:
        tcap = gpu.parse_capability(target.compute_capability)
        d["target"] = target.name
        if tcap != cap:
            problems.append(f"device is {cap_name(cap)}, target is {cap_name(tcap)} ({target.name})")
        want = target.smem_per_block_optin
        have = d.get("smem_per_block_optin")
        d["target_smem_per_block_optin"] = want
        if want and have and have < want:
            problems.append(f"the device offers {have} bytes of shared memory per block (opt-in); kernels tuned "
                            f"for {target.name} expect {want}")
    archs = [a for a in d.get("torch_arch_list") or [] if a.startswith(("sm_", "compute_"))]
    runnable = []
    for a in archs:
        try:
            if gpu.runs_on(a, cap):
                runnable.append(a)
        except ValueError:
            pass
    if archs and not runnable:
        problems.append(f"torch carries GPU code for {', '.join(archs)}; none of it runs on {cap_name(cap)}")
    if problems:
        return replace(dev, data=d, status="failed", error="; ".join(problems), summary=problems[0])
    return replace(dev, data=d)



def judge_gpu_code(rec: ProbeDoc, cap: tuple[int, int] | None,
                    primary: tuple[str, ...] | list[str] = ()) -> tuple[ProbeDoc, list[Finding]]:
    """The GPU code of an extension's files against the capability: the judged record (a new one) and
    its findings.

    The files the package's loader picks (sgl_kernel: its ``sm90/`` or ``sm100/`` build) decide; of
    those, with ``primary`` patterns (the matrix's ``[[primary_modules]]``), only the matching ones
    decide and the rest are add-ons (vLLM's flash-attention, FlashMLA ...) whose missing code is a
    warning: the package runs, without that add-on, on this GPU.
    """
    key = rec.id.split(":", 1)[1]
    if cap is None:
        return replace(rec, status="skipped", summary="no GPU and no --target: nothing to judge the GPU code against"), []
    given = cast(GpuCodeData, rec.data or {})
    files = [f.copy() for f in given["files"]]
    findings: list[Finding] = []
    if any(f.get("variant") for f in files):
        want = sgl_kernel_variant(cap)
        loaded = [f for f in files if f.get("variant") == want] or files
    else:
        loaded = files
    deciding = [f for f in loaded if any(fnmatchcase(f["file"], pat) for pat in primary)] or loaded
    bad: list[GpuCodeFile] = []
    optional_bad: list[GpuCodeFile] = []
    for f in loaded:
        run = gpu.runnable(f["sass"] + f["ptx"], cap)
        f["runs"] = run
        f["decides"] = f in deciding
        if not run:
            (bad if f in deciding else optional_bad).append(f)
    ver = given["version"]
    error = rec.error
    if bad:
        f = bad[0]
        have = ", ".join(f["sass"] + f["ptx"])
        status = "failed"
        summary = f"{f['file']} carries no GPU code that runs on {cap_name(cap)}"
        error = (f"{f['file']} carries {have}; none of it runs on {cap_name(cap)} (a launch fails with: "
                 "no kernel image is available for execution on the device)")
        if len(bad) > 1:
            error += "; also " + ", ".join(x["file"] for x in bad[1:])
        findings.append(Finding(rule="gpu-code", severity="error", packages=((key, str(ver)),), message=error,
                                evidence=read_files("arch-probe", [x["file"] for x in bad]),
                                remedy=f"install a {key} build with SASS for {cap_name(cap)} (or PTX it can JIT)"))
    else:
        status = "passed"
        codes = sorted({c for f in deciding for c in f["runs"]})
        summary = f"{len(deciding)} file(s) carry code for {cap_name(cap)} ({', '.join(codes)})"
    if optional_bad:
        names = ", ".join(f"{f['file']} ({', '.join(f['sass'] + f['ptx'])})" for f in optional_bad)
        if status == "passed":
            status = "warning"
            summary += f"; {len(optional_bad)} optional module(s) carry none"
            error = f"optional modules with no GPU code for {cap_name(cap)}: {names}"
        findings.append(Finding(rule="gpu-code", severity="warning", packages=((key, str(ver)),),
                                message=f"{key}'s optional modules {names} carry no GPU code that runs on {cap_name(cap)}: "
                                f"{key} runs there without them (e.g. another attention backend)",
                                evidence=read_files("arch-probe", [x["file"] for x in optional_bad]),
                                remedy=f"nothing to do unless the feature is needed; a {key} build with SASS for "
                                f"{cap_name(cap)} would carry it"))
    data = GpuCodeData(**given)
    data["files"] = files
    data["judged_for"] = cap_name(cap)
    return replace(rec, status=status, summary=summary, error=error, data=data), findings

"""The report of one ``glmcompat verify`` run (pure: the probes' records and the matrix in, :class:`VerifyOutput`
out): the device and the target, the installation and the rules' findings for the target, the ABI and GPU code of the
extensions (judged in :mod:`.judge`), the known failure signatures in the probes' errors, sorted and counted."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import Any, cast

from glmcompat.decide.diagnose import Env, diagnose, extension_break, package_cause
from glmcompat.matrix.rows import Target
from glmcompat.matrix.view import Facts
from glmcompat.model import gpu
from glmcompat.model.findings import Finding, FindingDoc
from glmcompat.model.outputs.probe import STATUSES, ExplainedDoc, ProbeDoc
from glmcompat.model.outputs.verify import CountsDoc, VerifyOutput
from glmcompat.model.signatures import Hit, match_signatures, module_package
from glmcompat.ops.verify.driver import findings as driver_findings
from glmcompat.ops.verify.judge import agreement_of, judge_device, judge_gpu_code, read_files
from glmcompat.ops.verify.plan import Options
from glmcompat.ops.verify.records import (
    AbiData,
    DriverData,
    ExtensionData,
    ExtensionFailure,
    InstalledData,
    error_text,
)
from glmcompat.readers.elf import foreign_cuda_runtimes

KIND_ORDER = ["driver", "device", "gpu", "peer-access", "nccl-all-reduce", "installed", "abi", "gpu-code",
              "import", "extension", "load", "ops", "model", "smoke"]


def installed_rules(records: list[ProbeDoc], facts: Facts, model: str | None) -> list[ProbeDoc]:
    """The records, the ``installed`` one with the rules' findings on its distributions for every target of the
    matrix (``findings_by_target``, what :func:`assemble` picks from): evaluated here, with the matrix this process
    loaded, not in the probe process (which would import the rules and load the matrix again). Where they cannot be
    evaluated the probe failed, with the error."""
    out = []
    for rec in records:
        if rec.id == "installed" and rec.status == "passed":
            rec = _with_rules(rec, facts, model)
        out.append(rec)
    return out


def _with_rules(rec: ProbeDoc, facts: Facts, model: str | None) -> ProbeDoc:
    t0 = time.perf_counter() - (rec.seconds or 0.0)  # the probe's time: its own and the rules'
    data = cast(InstalledData, dict(rec.data or {}))
    try:
        from glmcompat.decide.rules import evaluate  # lazy: the rules failing to load fail this probe, not the run

        by_target: dict[str, list[dict[str, Any]]] = {}
        for t in facts.rows("target"):
            fs = evaluate(data.get("packages", {}), target=t.name, model=model, matrix=facts, allow_unknown=True)
            by_target[t.name] = [f.to_json() for f in fs]
    except Exception as e:  # noqa: BLE001
        error = error_text(e)
        return replace(rec, status="failed", summary=error.splitlines()[-1], error=error,
                       seconds=round(time.perf_counter() - t0, 3))
    return replace(rec, data={**data, "findings_by_target": by_target},
                   seconds=round(time.perf_counter() - t0, 3))


def assemble(records: list[ProbeDoc], facts: Facts, options: Options,
             explicit: Target | None) -> VerifyOutput:
    """The report on the probes' ``records``: each record that a verdict changes is a new one in the report,
    the records given are left as they are."""
    probes = list(records)
    at = {p.id: i for i, p in enumerate(probes)}  # the record each id names (the last of that id)
    by_id = {p.id: p for p in probes}

    def put(rec: ProbeDoc) -> None:
        probes[at[rec.id]] = by_id[rec.id] = rec

    findings: list[Finding] = []
    # -- the device ------------------------------------------------------------------------------
    dev = by_id.get("device")
    drv = by_id.get("driver")
    drv_data = cast(DriverData, (drv.data if drv else None) or {})
    device: dict[str, Any] | None = None
    if dev and dev.status == "passed":
        device = dict(dev.data or {})
    elif drv and drv.status == "passed" and drv_data.get("gpus"):
        gpus = drv_data["gpus"]
        g = gpus[min(int(os.environ.get("LOCAL_RANK", "0")) if options.distributed else 0, len(gpus) - 1)]
        device = {"index": g["index"], "name": g["name"], "capability": g["capability"], "source": "nvml"}
    if device is not None and drv and drv.status == "passed":
        device["driver"] = drv_data.get("driver")
        device.setdefault("cuda_driver", drv_data.get("cuda_driver"))
    cap = gpu.parse_capability(device["capability"]) if device else None
    # -- the target ------------------------------------------------------------------------------
    target: Target | None = explicit
    if target is None and device is not None and cap is not None:
        target = next((t for t in facts.rows("target") if gpu.parse_capability(t.compute_capability) == cap), None)
        if target is None:
            findings.append(Finding(rule="target", severity="warning", packages=(),
                                    message=f"the device's capability {device['capability']} is no "
                                    "target of the matrix: target-specific rules were not evaluated",
                                    remedy="pass --target to check against a known target"))
    if dev and dev.status == "passed" and cap is not None:
        put(judge_device(dev, cap, target))
    # -- no torch: there is no stack to verify (a skipped probe must not make that look fine) ---------
    imp = by_id.get("import:torch")
    if imp and imp.status == "skipped" and imp.absent == "torch":
        put(replace(imp, status="failed", summary="torch is not installed: there is no serving stack to verify"))
        findings.append(Finding(rule="import", severity="error", packages=(("torch", ""),),
                                message="torch is not installed in this environment",
                                remedy="install the locked stack, e.g. `uv pip sync locks/<stack>/<target>/requirements.txt`"))
    # -- (a) installed ---------------------------------------------------------------------------
    inst = by_id.get("installed")
    if inst and inst.status == "passed":
        data = cast(InstalledData, dict(inst.data or {}))
        by_t = {t: [Finding.from_json(f) for f in fs] for t, fs in data.pop("findings_by_target", {}).items()}
        summary = inst.summary or ""
        if target is not None:
            rule_f = by_t.get(target.name, [])
        else:
            lists = list(by_t.values())
            common = [f for f in lists[0] if all(f in rest for rest in lists[1:])] if lists else []
            rule_f = common
            summary += "; target-specific rules not evaluated (no GPU and no --target)"
        state = [Finding.from_json(f) for f in data.get("installation", [])]
        all_f = rule_f + state
        findings.extend(all_f)
        errs = sum(1 for f in all_f if f.severity == "error")
        warns = len(all_f) - errs
        summary = f"{summary}: {errs} error(s), {warns} warning(s) from the rules" + (
            f" for {target.name}" if target else "")
        status, error = inst.status, inst.error
        if errs:
            status = "failed"
            error = next(f for f in all_f if f.severity == "error").message
        elif warns:
            status = "warning"
            error = all_f[0].message
        put(replace(inst, data=data if inst.data is not None else None, summary=summary, status=status, error=error))
    findings.extend(driver_findings(by_id, facts, target))  # the driver NVML read vs every CUDA build installed
    env = _env(by_id, device)
    # -- (b) abi and gpu code --------------------------------------------------------------------
    judge_cap = cap if cap is not None else (gpu.parse_capability(explicit.compute_capability) if explicit else None)
    for i, p in enumerate(probes):
        pid = p.id
        abi = cast(AbiData, (p.data or {}) if pid.startswith("abi:") else {})
        if pid.startswith("abi:") and p.status == "failed" and abi.get("files"):
            key = pid[4:]
            row = facts.kernel(key, abi["version"])
            severity = row.on_mismatch if row is not None else "error"
            missing = [(e["file"], s, dm) for e in abi["files"]
                       for s, dm in zip(e["missing"], e["missing_demangled"], strict=False)]
            uniq = {s: dm for _, s, dm in missing}  # one count per symbol, however many files need it
            n_files = len({f for f, _, _ in missing})
            shown = "; ".join(list(uniq.values())[:3])
            msg = (f"{key} {abi['version']} needs {len(uniq)} torch symbol(s) that the installed torch "
                   f"{abi['torch']} does not define ({shown}{', ...' if len(uniq) > 3 else ''}"
                   f"{f'; in {n_files} files' if n_files > 1 else ''}): it was built "
                   "against another torch and its extension will not load")
            if row is not None and row.consequence:
                msg += f"; {row.consequence}"
            built = row.torch if row is not None else None
            remedy = (f"install the {key} built for torch {abi['torch']}, or pin torch=={built}" if built
                      else f"install the {key} built for torch {abi['torch']}")
            got = package_cause(key, env, facts, "needs torch symbols the installed torch does not define")
            if got is not None:
                remedy = got[1]
            findings.append(Finding(rule="abi", severity=severity,
                                    packages=((key, str(abi["version"])), ("torch", str(abi["torch"]))), message=msg,
                                    evidence=read_files("abi-probe", sorted({f for f, _, _ in missing})),
                                    remedy=remedy))
            if severity == "warning":
                p = replace(p, status="warning")
        if pid.startswith("gpu-code:") and p.status == "pending":
            key = pid.split(":", 1)[1]
            p, found = judge_gpu_code(p, judge_cap, facts.primary_modules(key))
            findings.extend(found)
        cudart = abi.get("torch_cudart")
        if cudart:
            theirs = foreign_cuda_runtimes({c for e in abi["files"] for c in e.get("cudart", [])}, cudart)
            if theirs:
                key = pid[4:]
                row = facts.kernel(key, abi["version"])
                severity = row.on_mismatch if row is not None else "error"
                which = sorted({e["file"] for e in abi["files"] if foreign_cuda_runtimes(e.get("cudart", []), cudart)})
                findings.append(Finding(rule="cuda", severity=severity,
                                        packages=((key, str(abi["version"])), ("torch", str(abi["torch"]))),
                                        message=f"{key} links {', '.join(theirs)} but torch links {', '.join(cudart)}: two CUDA "
                                        "runtime majors in one process", evidence=read_files("abi-probe", which),
                                        remedy=f"install the {key} built for torch {abi['torch']}"))
                # the loader stops at the missing runtime before any symbol: the static verdict says so too
                msg = (f"{which[0]} needs {', '.join(theirs)}; torch {abi['torch']} links "
                       f"{', '.join(cudart)} (a CUDA runtime this environment may not have)")
                if p.status == "passed":
                    p = replace(p, status="failed" if severity == "error" else "warning",
                                summary=f"{p.summary}, but it links {', '.join(theirs)} and torch links "
                                        f"{', '.join(cudart)}", error=msg)
                else:
                    p = replace(p, error=((p.error or "") + "\n" + msg).strip())
        if p is not probes[i]:
            probes[i] = p
            if at[pid] == i:
                by_id[pid] = p
    # -- extension modules of every other distribution ---------------------------------------------
    findings.extend(f for p in probes if p.id.startswith("extension:") for f in _extension_findings(p, env, facts))
    # -- static vs dynamic -----------------------------------------------------------------------
    agreement = agreement_of(probes, by_id)
    for a in agreement:
        if not a.agree:
            key = a.package
            what = ("loads" if a.aspect == "load" else "runs its kernels on this GPU")
            findings.append(Finding(rule="static-dynamic", severity="warning", packages=((key, ""),),
                                    message=f"the static {a.aspect} check says {key} is {a.static}"
                                    + (f" ({'; '.join(a.reasons)})" if a.reasons else "")
                                    + f" but it {a.dynamic}: "
                                    + ("a break the static checks cannot see (operator registration, layouts, "
                                       "Python-level behaviour) or a loader detail" if a.static == "compatible" else
                                       f"the static verdict was wrong, {key} {what}"),
                                    remedy="trust the dynamic probes; report the case so that the matrix records it"))
    # -- GPU presence ----------------------------------------------------------------------------
    gpu_probed = bool(dev and dev.status in ("passed", "failed", "warning"))
    if not gpu_probed and not options.no_gpu:
        why = (dev.summary if dev else None) or "no device probe"
        findings.append(Finding(rule="no-gpu", severity="error", packages=(),
                                message=f"no GPU was probed ({why}): the GPU probes were skipped, so "
                                "this run cannot pass", remedy="run where the GPU is, or pass --no-gpu to check only "
                                "what runs without one"))
    # -- known failure signatures ----------------------------------------------------------------
    sigs = facts.rows("signature")
    explained: dict[int, tuple[ExplainedDoc, ...]] = {}  # id() of a probe record -> the signatures its text shows
    for p in probes:
        if p.status not in ("failed", "warning"):
            continue
        text = "\n".join([p.error or "", p.summary or "", *(p.warnings or ())])
        hits = diagnose([_blame(h, p.id) for h in match_signatures(text, sigs)], env, facts)
        if hits:
            explained[id(p)] = tuple(ExplainedDoc(id=h.id, cause=h.cause, remedy=h.remedy, match=h.text,
                                                  package=h.package or None, version=h.version or None,
                                                  rule=h.rule or None, family=h.family or None) for h in hits)
    probes.sort(key=_sort_key)
    unique = sorted(dict.fromkeys(findings), key=lambda f: (f.severity != "error", f.rule, f.pins, f.message))
    failed = any(p.status == "failed" for p in probes)
    ok = not failed and not any(f.severity == "error" for f in unique)
    counts = {s: sum(1 for p in probes if p.status == s) for s in STATUSES}
    docs = tuple(replace(p, explained=explained[id(p)]) if id(p) in explained else p for p in probes)
    return VerifyOutput(ok=ok, target=target.name if target else None, device=device,
                        counts=CountsDoc(passed=counts["passed"], warning=counts["warning"], failed=counts["failed"],
                                         skipped=counts["skipped"]),
                        probes=docs, findings=tuple(FindingDoc.of(f) for f in unique), agreement=tuple(agreement))



def _sort_key(p: ProbeDoc) -> tuple[int, str]:
    kind = p.id.split(":", 1)[0]
    return (KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER), p.id)



def _extension_findings(p: ProbeDoc, env: Env, facts: Any) -> list[Finding]:
    """One error per cause among a distribution's extension modules that do not import (``extension:`` probe)."""
    d = cast(ExtensionData, p.data or {})
    dist, ver = p.id.split(":", 1)[1], str(d.get("version") or "")
    out = []
    by_kind: dict[str, list[ExtensionFailure]] = {}
    for f in d.get("failures") or []:
        by_kind.setdefault(f["kind"], []).append(f)
    for kind, fs in sorted(by_kind.items()):
        f = fs[0]
        where = f["file"] or f["module"]
        more = f" (and {len(fs) - 1} more)" if len(fs) > 1 else ""
        if kind == "numpy-abi":
            remedy = (f"install a {dist} release built against the installed NumPy's C ABI (`pip install -U {dist}`; "
                      "releases built for NumPy 2 load on 1.x and 2.x), or pin numpy<2")
        elif kind == "torch-symbol":
            remedy = f"install the {dist} built for the installed torch (or the torch it was built for)"
        elif kind == "missing-library":
            remedy = f"install what provides the library {dist} links (see its installation notes), or reinstall {dist}"
        else:
            remedy = f"reinstall {dist} built for this environment (`pip install --force-reinstall {dist}=={ver}`)"
        said = extension_break(kind, dist, ver, env, facts)  # the cause as check and explain name it
        out.append(Finding(rule=said.rule if said else "extension", severity="error", packages=((dist, ver),),
                           message=f"Because {where}{more} of {dist} {ver} does not import ({f['cause']}), "
                           f"we can conclude that {said.sentence() if said else dist + ' fails when it is imported in this environment'}",
                           evidence=(("import-probe", f"imported {f['module']}: {f['error'].splitlines()[0]}"),),
                           remedy=remedy))
    return out



def _blame(h: Hit, pid: str) -> Hit:
    """A probe's hit blames the probe's own package where its text names none (an import from a --path folder
    shows no site-packages path): ``import:torchvision`` -> torchvision, ``smoke:sgl_kernel-rmsnorm`` -> sgl-kernel.
    An ``extension:<distribution>`` probe names the distribution that owns the file, which a path cannot (the
    folder ``cuda/`` holds cuda-core's and cuda-bindings' modules): it is blamed whatever the text names."""
    if pid.startswith("extension:"):
        return replace(h, package=pid.split(":", 1)[1])
    if h.package or ":" not in pid:
        return h
    kind, rest = pid.split(":", 1)
    if kind not in ("import", "load", "ops", "smoke", "abi", "gpu-code"):
        return h
    mod = rest.split("-", 1)[0] if kind == "smoke" else rest
    return replace(h, package=mod if kind in ("abi", "gpu-code") else module_package(mod))



def _env(by_id: dict[str, ProbeDoc], device: dict[str, Any] | None) -> Env:
    """What the probes found of the environment, for the signatures' causes and remedies."""
    installed = by_id.get("installed")
    inst = cast(InstalledData, (installed.data if installed else None) or {})
    cuda = {}
    if device:
        if device.get("cuda_driver"):
            cuda["driver_cuda"] = str(device["cuda_driver"])
        if device.get("driver"):
            cuda["driver"] = str(device["driver"])
        if device.get("cuda_runtime"):
            cuda["torch_cuda"] = str(device["cuda_runtime"])
    half = inst.get("half_installed") or {}
    return Env(versions=dict(inst.get("packages") or {}), cuda=cuda,
               half_installed={k: list(h.get("files") or []) for k, h in half.items()},
               targets={k: str(h["where"]) for k, h in half.items() if h.get("where")},
               capability=str((device or {}).get("capability") or ""), where="environment")


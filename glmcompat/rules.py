"""The check rules: a pure function from (installed packages, target, model, matrix) to findings.

Each rule is a small function ``rule(ctx) -> list[Finding]``; :func:`evaluate` runs them all and
sorts the result. Nothing here does I/O: ``glmcompat check`` feeds it a lockfile's packages,
``glmcompat verify`` the installed distributions, the resolver a candidate set.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from . import gpu
from .facts import Facts, Row, canonicalize

SEVERITIES = ("error", "warning")


@dataclass(frozen=True, order=True)
class Finding:
    """One structured verdict: what is wrong, with which packages, the evidence and one remedy."""

    rule: str
    severity: str
    packages: tuple[str, ...]
    message: str
    evidence: tuple[tuple[str, str], ...] = ()  # (kind, source)
    remedy: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "packages": list(self.packages),
            "message": self.message,
            "evidence": [{"kind": k, "source": s} for k, s in self.evidence],
            "remedy": self.remedy,
        }


def _ev(row: Row | None) -> tuple[tuple[str, str], ...]:
    return ((row["evidence"], row["source"]),) if row else ()


@dataclass
class Context:
    packages: dict[str, str]  # canonical name -> version (local label kept)
    target: Row
    facts: Facts
    model: str | None = None
    allow_unknown: bool = False
    findings: list[Finding] = field(default_factory=list)

    @property
    def capability(self) -> tuple[int, int]:
        return gpu.parse_capability(self.target["compute_capability"])

    def pin(self, name: str) -> str:
        return f"{name}=={self.packages[name]}"

    def unknown(self, packages: tuple[str, ...], message: str, command: str) -> Finding:
        return Finding(
            rule="unknown",
            severity="warning" if self.allow_unknown else "error",
            packages=packages,
            message=message + " (no evidence in the matrix; failing closed)",
            remedy=f"run `{command}` to probe it and record the evidence, or pass --allow-unknown",
        )


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
        row = ctx.facts.kernel(name, ver)
        if row is None:
            verdict = ctx.facts.abi_verdict(name, ver, torch) if torch else None
            if verdict is not None and verdict["compatible"]:
                continue  # probed: every torch symbol it needs is exported by this torch
            if verdict is not None and torch is not None:
                out.append(Finding("abi", ctx.facts.mismatch_severity(name), (ctx.pin(name), ctx.pin("torch")),
                                   f"torch {Version(torch).public} breaks {name} {ver}: {verdict['missing']} undefined symbol(s) "
                                   "it needs are missing", _ev(verdict), f"use a {name} release built against torch {Version(torch).public}"))
                continue
            cmd = f"glmcompat abi {name}=={ver} --torch {Version(torch).public if torch else 'VER'}"
            out.append(ctx.unknown((ctx.pin(name),), f"{name} {ver} is a compiled torch extension the matrix does not know", cmd))
            continue
        if torch is None:
            out.append(Finding("abi", "error", (ctx.pin(name),),
                               f"{name} {ver} is a compiled extension built against torch {row['torch']}, and no torch is in the set",
                               _ev(row), f"add torch=={row['torch']}"))
            continue
        tpub = Version(torch).public
        verdict = ctx.facts.abi_verdict(name, ver, torch)
        if verdict is not None and verdict["compatible"]:
            continue
        if verdict is None and Version(tpub) == Version(row["torch"]):
            continue
        sev = row.get("on_mismatch") or "error"
        if verdict is not None:
            syms = verdict.get("symbols") or []
            detail = f"{verdict['missing']} undefined symbol(s) it needs are missing from torch {tpub}"
            if syms:
                detail += f" (e.g. {syms[0]})"
            msg = f"torch {tpub} breaks {name} {ver}: it was built against torch {row['torch']} and {detail}"
            evidence = _ev(verdict) + _ev(row)
        else:
            msg = (f"{name} {ver} was built against torch {row['torch']}, but torch {tpub} is in the set; "
                   f"a compiled extension only loads next to the torch whose C++ ABI it was built for")
            evidence = _ev(row)
        if row.get("consequence"):
            msg += f"; if it fails to load, {row['consequence']}"
        found = _best_kernel(ctx, name, tpub)
        alt = f"{found[0]}=={found[1]}" if found else None
        if sev == "warning":
            remedy = (f"nothing blocks the stack; to keep {name}'s compiled ops, install {alt}" if alt else
                      f"nothing blocks the stack; to keep {name}'s compiled ops, install a {name} built against torch {tpub}")
        else:
            remedy = f"pin {_torch_pins(ctx, row['torch'])}"
            if alt:
                remedy += f", or use {alt} (built against torch {tpub})"
        out.append(Finding("abi", sev, (ctx.pin(name), ctx.pin("torch")), msg, evidence, remedy))
    return out


def _best_kernel(ctx: Context, name: str, torch: str | None = None) -> tuple[str, str, str] | None:
    """(package, version, built-against torch) of the newest release of ``name`` — or of its renamed
    successor (sgl-kernel -> sglang-kernel) — whose GPU code runs on the target, built against ``torch``
    when given. Releases whose GPU code is not recorded count only when ``torch`` narrows the choice."""
    family = {"sgl-kernel", "sglang-kernel"} if name in ("sgl-kernel", "sglang-kernel") else {name}
    best: tuple[Version, tuple[str, str, str]] | None = None
    for v, row in ctx.facts.kernels_of(family):
        if torch is not None and Version(row["torch"]) != Version(torch):
            continue
        if row.get("sass") is None:
            if torch is None:
                continue
        elif not gpu.runnable(row["sass"] + (row.get("ptx") or []), ctx.capability):
            continue
        if best is None or Version(v) > best[0]:
            best = (Version(v), (row["package"], v, row["torch"]))
    return best[1] if best else None


def rule_family(ctx: Context) -> list[Finding]:
    """(b) torchvision / torchaudio against the torch they were built for."""
    out: list[Finding] = []
    torch = ctx.packages.get("torch")
    for name in sorted(ctx.facts.family_packages() & ctx.packages.keys()):
        ver = ctx.packages[name]
        found = ctx.facts.family(name, ver)
        if found is None:
            out.append(ctx.unknown((ctx.pin(name),), f"{name} {ver} has no recorded torch pairing",
                                   f"glmcompat abi {name}=={ver} --torch {Version(torch).public if torch else 'VER'}"))
            continue
        spec, row = found
        if torch is None:
            out.append(Finding("family", "error", (ctx.pin(name),), f"{name} {ver} needs torch{spec}, and no torch is in the set",
                               _ev(row), f"add torch{spec}"))
            continue
        tpub = Version(torch).public
        if SpecifierSet(spec).contains(tpub, prereleases=True):
            continue
        verdict = ctx.facts.abi_verdict(name, ver, torch)
        if verdict is not None and verdict["compatible"]:
            continue  # probed compatible with this torch (e.g. torchaudio 2.11's stable-ABI build)
        msg = f"{name} {ver} was built for torch{spec}, but torch {tpub} is in the set"
        if row.get("failure"):
            msg += f"; importing it fails with {row['failure']}"
        good = ctx.facts.family_for_torch(name, tpub)
        remedy = f"pin {name}=={good}" if good else f"pin torch{spec}"
        out.append(Finding("family", "error", (ctx.pin(name), ctx.pin("torch")), msg, _ev(row), remedy))
    return out


def rule_equal_version(ctx: Context) -> list[Finding]:
    """(c) Packages that must carry the same version (flashinfer-cubin == flashinfer-python)."""
    out: list[Finding] = []
    for row in ctx.facts.rows("equal_version"):
        a, b = row["packages"]
        if a in ctx.packages and b in ctx.packages and Version(ctx.packages[a]) != Version(ctx.packages[b]):
            out.append(Finding("equal-version", "error", (ctx.pin(a), ctx.pin(b)),
                               f"{b} {ctx.packages[b]} does not match {a} {ctx.packages[a]}; their versions must be equal",
                               _ev(row), f"pin {b}=={ctx.packages[a]}"))
    return out


def rule_gpu_code(ctx: Context) -> list[Finding]:
    """(d) Every GPU-code package carries SASS that runs on the target or PTX the driver can JIT for it."""
    out: list[Finding] = []
    t = ctx.target
    names = sorted((ctx.facts.kernel_packages() | {"torch"}) & ctx.packages.keys())
    for name in names:
        ver = ctx.packages[name]
        code = ctx.facts.gpu_code(name, ver)
        if code is None:
            k = ctx.facts.kernel(name, ver) if name != "torch" else None
            if k is not None and k.get("sass") is None:
                continue  # an extension whose GPU code is not curated (e.g. torchao): the abi rule covers it
            if name != "torch" and k is None:
                continue  # unknown kernel release: reported once, by the abi rule
            out.append(ctx.unknown((ctx.pin(name),), f"the GPU code of {name} {ver} is not recorded",
                                   f"glmcompat arch {name}=={ver} --target {t['name']}"))
            continue
        sass, ptx, row = code
        if gpu.runnable(list(sass) + list(ptx), ctx.capability):
            continue
        have = ", ".join(list(sass) + list(ptx)) or "no GPU code at all (a CPU-only build)"
        msg = (f"{name} {ver} carries {have}; none of it runs on {t['name']} (compute capability "
               f"{t['compute_capability']}): SASS runs only on its own major with a minor at least its own "
               f"(sm_XYa: exactly X.Y), and there is no PTX to JIT")
        if name == "torch":
            remedy = "use a torch build with code for the target (see `glmcompat matrix show`)"
            for tr in ctx.facts.rows("torch"):
                if gpu.runnable(tr["sass"] + (tr.get("ptx") or []), ctx.capability):
                    cands = [v for v in tr["versions"] if Version(v) >= Version(Version(ver).public)]
                    if cands:
                        remedy = f"pin torch=={cands[0]} (default wheel, CUDA {tr['cuda']}, carries code for {t['name']})"
                        break
        else:
            found = _best_kernel(ctx, name)
            alt = f"{found[0]}=={found[1]} (built against torch {found[2]})" if found else None
            remedy = f"use {alt}" if alt else f"no known {name} release carries code for {t['name']}: choose another target"
        out.append(Finding("gpu-code", "error", (ctx.pin(name),), msg, _ev(row), remedy))
    return out


def rule_cuda(ctx: Context) -> list[Finding]:
    """(e) The CUDA runtime major of torch and of the kernel wheels agree (12 vs 13; +cuXYZ, +cpu count)."""
    out: list[Finding] = []
    torch = ctx.packages.get("torch")
    if torch is None:
        return out
    tcuda = ctx.facts.torch_cuda(torch)
    if tcuda is None:
        return out  # reported by the gpu-code rule as unknown
    tmajor = tcuda.split(".")[0] if tcuda else None
    for name in sorted(ctx.facts.kernel_packages() & ctx.packages.keys()):
        row = ctx.facts.kernel(name, ctx.packages[name])
        if row is None or not row.get("cuda"):
            continue
        kmajor = row["cuda"].split(".")[0]
        if tmajor == kmajor:
            continue
        what = f"CUDA {tcuda}" if tcuda else "no CUDA (a +cpu build)"
        out.append(Finding("cuda", "error", (ctx.pin(name), ctx.pin("torch")),
                           f"{name} {ctx.packages[name]} links the CUDA {kmajor} runtime (libcudart.so.{kmajor}), "
                           f"but torch {torch} is built for {what}",
                           _ev(row), f"pin torch=={row['torch']} (built for CUDA {kmajor})"))
    return out


def rule_model(ctx: Context) -> list[Finding]:
    """(f) The model type needs a transformers (and sglang) that knows it."""
    if ctx.model is None:
        return []
    row = ctx.facts.model(ctx.model)
    out: list[Finding] = []
    checks = [("transformers", row["transformers"])]
    if row.get("sglang"):
        checks.append(("sglang", row["sglang"]))
    for name, spec in checks:
        ver = ctx.packages.get(name)
        if ver is None:
            if name == "transformers":
                out.append(Finding("model", "error", (), f"model type {ctx.model!r} needs transformers{spec}, and transformers is not in the set",
                                   _ev(row), f"add transformers{spec}"))
            continue
        if SpecifierSet(spec).contains(Version(ver).public, prereleases=True):
            continue
        msg = f"{name} {ver} does not know model type {ctx.model!r}: it needs {name}{spec}"
        if name == "transformers" and row.get("failure"):
            msg += f" (loading the model raises {row['failure']})"
        remedy = f"pin {name}{spec}"
        if name == "transformers" and "sglang" in ctx.packages:
            remedy += " (as an override of sglang's own transformers pin)"
        out.append(Finding("model", "error", (f"{name}=={ver}",), msg, _ev(row), remedy))
    return out


def rule_target_requirements(ctx: Context) -> list[Finding]:
    """(g) Fixes a target needs (sglang >= 0.5.9 on sm_120) and release-level requirements."""
    out: list[Finding] = []
    for row in ctx.facts.target_requirements(ctx.target["name"]):
        ver = ctx.packages.get(row["package"])
        if ver is None or SpecifierSet(row["specifier"]).contains(Version(ver).public, prereleases=True):
            continue
        msg = f"{row['package']} {ver} lacks what {ctx.target['name']} needs: {row['reason']}"
        if row.get("failure"):
            msg += f" (symptom: '{row['failure']}')"
        out.append(Finding("target-fix", "error", (f"{row['package']}=={ver}",), msg, _ev(row),
                           f"pin {row['package']}{row['specifier']}"))
    for row in ctx.facts.rows("requires"):
        ver = ctx.packages.get(row["package"])
        if ver is None or not SpecifierSet(row["versions"]).contains(Version(ver).public, prereleases=True):
            continue
        # A matrix requirement is "name<specifier>" (validated on load; no extras or markers used).
        m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$", row["requires"])
        assert m is not None
        req_name, spec = canonicalize(m.group(1)), m.group(2).strip()
        have = ctx.packages.get(req_name)
        if have is None or SpecifierSet(spec).contains(Version(have).public, prereleases=True):
            continue
        out.append(Finding("requires", "error", (f"{row['package']}=={ver}", f"{req_name}=={have}"),
                           f"{row['package']} {ver} refuses to start with {req_name} {have}: it requires {req_name}{spec}",
                           _ev(row), f"pin {req_name}{spec}"))
    return out


RULES: tuple[Callable[[Context], list[Finding]], ...] = (
    rule_abi,
    rule_family,
    rule_equal_version,
    rule_gpu_code,
    rule_cuda,
    rule_model,
    rule_target_requirements,
)


def evaluate(
    packages: Mapping[str, str],
    *,
    target: str,
    model: str | None = None,
    matrix: Facts | Any | None = None,
    allow_unknown: bool = False,
) -> list[Finding]:
    """Run every rule; findings sorted errors first, then by rule and packages (deterministic).

    ``packages`` maps distribution names to versions; ``matrix`` is a :class:`Facts`, a
    :class:`~glmcompat.matrix.Matrix`, or None for the shipped matrix.
    """
    if matrix is None:
        from .facts import load_facts

        facts = load_facts()
    elif isinstance(matrix, Facts):
        facts = matrix
    else:
        facts = Facts(matrix.plain())
    pkgs = {canonicalize(k): v for k, v in packages.items()}
    ctx = Context(pkgs, facts.target(target), facts, model, allow_unknown)
    if model is not None:
        facts.model(model)  # unknown model: InputError before any rule runs
    found: list[Finding] = []
    for rule in RULES:
        found.extend(rule(ctx))
    unique = sorted(set(found), key=lambda f: (SEVERITIES.index(f.severity), f.rule, f.packages, f.message))
    return unique


def stack_findings(stack: dict[str, Any], packages: dict[str, str]) -> list[Finding]:
    """The named stack's pins that ``packages`` does not carry."""
    out = []
    for name, ver in sorted(stack["pins"].items()):
        have = packages.get(name)
        if have is None or Version(Version(have).public) != Version(ver):
            out.append(Finding("stack", "error", (f"{name}=={have}" if have else name,),
                               f"stack {stack['name']!r} pins {name}=={ver}, the lock has {have or 'none'}",
                               ((stack["evidence"], stack["source"]),), f"pin {name}=={ver}"))
    return out


def evaluate_lock(lock: Any, target: str, model: str | None, facts: Any, allow_unknown: bool,
                  stack: dict[str, Any] | None = None) -> list[Finding]:
    """Findings for every package set the lock installs on the target platform (deduplicated)."""
    found: list[Finding] = []
    for pkgs in lock.sets:
        found.extend(evaluate(pkgs, target=target, model=model, matrix=facts, allow_unknown=allow_unknown))
        if stack is not None:
            found.extend(stack_findings(stack, pkgs))
    uniq: list[Finding] = []
    for f in found:
        if f not in uniq:
            uniq.append(f)
    return uniq

"""``glmcompat pip install`` and ``glmcompat pip constraints``: a guard between a person and the installer of a
live environment.

1. Read the environment's installed distributions and, among them, its coupled core (torch and its family, the
   kernels, flashinfer, xformers, torchao, vLLM, sglang, transformers: every package the matrix tracks).
2. Ask the real installer for its plan without changing anything, and judge the environment that plan would
   leave with the check rules (:func:`glmcompat.decide.rules.evaluate`) for the target.
3. Where that plan adds an error the environment does not already have, plan again under constraints that keep
   the installed core; where that plan is safe, it is the one installed, and the report says what changes and
   why. Where no safe plan exists, :class:`NoSafePlan` carries the uv-style derivation and one remedy, and
   nothing is changed.
4. A safe plan is installed under constraints that pin exactly what was judged (the core and every release the
   plan installs), so nothing else drifts; afterwards the environment is read again and compared with the plan.
"""

from __future__ import annotations

import os
import re
import tempfile
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from glmcompat.decide.rules import evaluate
from glmcompat.edges import installer as inst
from glmcompat.edges.nvml import gpus as nvml_gpus
from glmcompat.matrix.view import Facts
from glmcompat.model import gpu
from glmcompat.model.errors import InputError
from glmcompat.model.findings import Cause, Finding
from glmcompat.model.machine import Machine
from glmcompat.model.names import canonicalize, normalize_target
from glmcompat.readers.installed import InstalledEnvironment, read_environment

# -- the core ---------------------------------------------------------------------------------------


def core_names(facts: Facts) -> frozenset[str]:
    """Every package the matrix tracks: torch, its family, the kernels (vLLM, xformers and torchao among them),
    the JIT packages (flashinfer), the engines' releases, and transformers (the model table's)."""
    names = {"torch", "transformers"} | facts.family_packages() | facts.kernel_packages()
    names |= {canonicalize(r.package) for r in facts.rows("jit")}
    names |= {canonicalize(r.package) for r in facts.rows("release")}
    return frozenset(names)


def core_of(packages: Mapping[str, str], facts: Facts) -> dict[str, str]:
    """The installed core: the tracked packages among ``packages``, sorted."""
    tracked = core_names(facts)
    return {n: v for n, v in sorted(packages.items()) if n in tracked}


def pins(packages: Mapping[str, str]) -> list[str]:
    return [f"{n}=={v}" for n, v in sorted(packages.items())]


# -- the environment --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Live:
    """An environment as found and read: its interpreter and its distributions."""

    interp: inst.Interpreter
    env: InstalledEnvironment

    @property
    def packages(self) -> dict[str, str]:
        return self.env.versions()

    @property
    def direct(self) -> frozenset[str]:
        """The distributions installed from a URL, a folder or editable: a version pin cannot name them."""
        return frozenset(n for n, d in self.env.packages.items() if d.direct)

    @property
    def where(self) -> str:
        return f"{self.interp.prefix} (Python {self.interp.version}, found by {self.interp.found_by})"


def open_environment(python: str | None, cwd: Path) -> Live:
    """Find the environment (:func:`glmcompat.edges.installer.find_interpreter`) and read it."""
    path, how = inst.find_interpreter(python, cwd)
    interp = inst.inspect(path, how)
    return Live(interp, read_environment(interp.sites))


def constraints_text(live: Live, facts: Facts) -> str:
    """A constraints file that pins the installed core (for ``PIP_CONSTRAINT``, ``UV_CONSTRAINT`` or ``-c``)."""
    core = core_of(live.packages, facts)
    head = [f"# the coupled core installed in {live.interp.prefix}, pinned by `glmcompat pip constraints`:",
            "# use it as PIP_CONSTRAINT, UV_CONSTRAINT or -c so that no later install moves it"]
    if not core:
        head.append("# (no package the matrix tracks is installed there)")
    for n in sorted(live.direct & core.keys()):
        head.append(f"# {n} {core[n]} is installed from a URL or a folder, which a version pin cannot name: not pinned")
    return "\n".join(head + pins({n: v for n, v in core.items() if n not in live.direct})) + "\n"


# -- the target -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Targets:
    """The targets judged (canonical names; empty = none known) and where they came from, for the report."""

    names: tuple[str, ...]
    source: str
    model: str | None = None
    machine: Machine | None = None  # the machine the plan runs on (its NVIDIA driver; None: not judged)


def with_machine(targets: Targets, machine: Machine) -> Targets:
    """``targets`` judged on ``machine`` (its driver)."""
    return Targets(targets.names, targets.source, targets.model, machine)


def project_settings(cwd: Path) -> tuple[dict[str, Any], Path] | None:
    """``[tool.glmcompat]`` of the project around ``cwd`` and its pyproject.toml (None: no such table)."""
    return _project_settings(cwd)


def _project_settings(cwd: Path) -> tuple[dict[str, Any], Path] | None:
    """``[tool.glmcompat]`` of the nearest pyproject.toml at or above ``cwd`` (the project around it)."""
    for d in (cwd, *cwd.parents):
        pp = d / "pyproject.toml"
        if not pp.is_file():
            continue
        try:
            doc = tomllib.loads(pp.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"cannot read it ({e})", path=str(pp)) from None
        except tomllib.TOMLDecodeError as e:
            raise InputError(f"not valid TOML: {e}", path=str(pp)) from None
        tool = doc.get("tool", {})
        tool = tool.get("glmcompat") if isinstance(tool, dict) else None
        if tool is None:
            return None
        if not isinstance(tool, dict):
            raise InputError("[tool.glmcompat] must be a table", path=str(pp))
        return tool, pp
    return None


def find_targets(explicit: Sequence[str], model: str | None, cwd: Path, facts: Facts,
                 gpus: Callable[[], list[Any]] | None = None) -> Targets:
    """``--target`` (repeatable), else ``[tool.glmcompat] targets`` of the project around ``cwd``, else the
    target of the GPU that NVML reports; none when there is neither (the report says so)."""
    found = _project_settings(cwd)
    if explicit:
        m = model or (found[0].get("model") if found is not None else None)
        if m is not None and not isinstance(m, str):
            where = str(found[1]) if found is not None else None
            raise InputError(f"[tool.glmcompat] model must be a model_type string, not {m!r}"[:300], path=where)
        return Targets(tuple(facts.target(normalize_target(t)).name for t in explicit), "--target", m)
    if found is not None:
        tool, pp = found
        value = tool.get("targets", tool.get("target"))
        m = model or tool.get("model")
        if m is not None and not isinstance(m, str):
            raise InputError(f"[tool.glmcompat] model must be a model_type string, not {m!r}"[:300], path=str(pp))
        if value is not None:
            given = [value] if isinstance(value, str) else value
            if not isinstance(given, list) or not given or not all(isinstance(t, str) for t in given):
                raise InputError(f"[tool.glmcompat] targets must be a target name or a list of them, not {value!r}"[:300],
                                 path=str(pp))
            try:
                return Targets(tuple(facts.target(normalize_target(t)).name for t in given), f"[tool.glmcompat] of {pp}", m)
            except InputError as e:
                raise InputError(f"[tool.glmcompat] targets: {e.message}", path=str(pp)) from None
        model = m
    if gpus is None:
        gpus = nvml_gpus
    seen = gpus()
    if not seen:
        return Targets((), "no --target, no [tool.glmcompat] targets and no GPU seen by NVML", model)
    by_cap = {gpu.parse_capability(t.compute_capability): t.name for t in facts.rows("target")}
    names: list[str] = []
    for g in seen:
        t = by_cap.get(gpu.parse_capability(g.capability))
        if t is None:
            return Targets((), f"GPU {g.index} ({g.name}, capability {g.capability}) is no target of the matrix", model)
        if t not in names:
            names.append(t)
    shown = ", ".join(f"GPU {g.index} {g.name} ({g.capability})" for g in seen[:2]) + (" ..." if len(seen) > 2 else "")
    return Targets(tuple(names), f"NVML: {shown}", model)


# -- judging ----------------------------------------------------------------------------------------


def judge(packages: Mapping[str, str], targets: Targets, facts: Facts, allow_unknown: bool) -> list[Finding]:
    """The check rules' findings for ``packages`` on every target judged; with no target, the findings that hold
    on every target of the matrix (the target-specific rules are left out, and the report says so)."""
    names = list(targets.names) or [t.name for t in facts.rows("target")]
    per = [evaluate(packages, target=t, model=targets.model, matrix=facts, allow_unknown=allow_unknown,
                    machine=targets.machine if targets.names else None) for t in names]
    if targets.names:
        out: dict[Finding, None] = {}
        for found in per:
            out.update(dict.fromkeys(found))
        return sorted(out, key=_order)
    common = [f for f in per[0] if all(f in rest for rest in per[1:])] if per else []
    return sorted(common, key=_order)


def _order(f: Finding) -> tuple[int, str, tuple[str, ...], str]:
    return (0 if f.severity == "error" else 1, f.rule, f.pins, f.message)


def new_errors(before: Sequence[Finding], after: Sequence[Finding]) -> list[Finding]:
    """The errors of ``after`` that ``before`` does not have: what the plan would break (an environment already
    broken is not made the request's fault)."""
    had = {(f.rule, f.packages, f.message) for f in before if f.severity == "error"}
    return [f for f in after if f.severity == "error" and (f.rule, f.packages, f.message) not in had]


# -- the guard --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GuardRequest:
    requirements: tuple[str, ...]  # what the user asked for, as given (names with specifiers)
    installer_args: tuple[str, ...]  # passed to the installer as they are: the requirements, -r FILE, options
    python: str | None = None
    installer: str = "auto"
    dry_run: bool = False
    allow_unknown: bool = False


@dataclass
class GuardOutcome:
    live: Live
    targets: Targets
    installer: str
    core: dict[str, str]
    tracked: frozenset[str]
    plan: inst.Plan  # the installer's own plan
    broken_by_plan: list[Finding]  # the errors the installer's own plan would add
    chosen: inst.Plan | None = None  # the plan installed (None: nothing to do)
    constrained: bool = False  # the chosen plan is a re-plan: not the installer's own
    how: str = ""  # which re-plan ("keeping the installed core (...)", "moving the core to torch 2.11.0, ...")
    extra: tuple[str, ...] = ()  # requirements the re-plan adds to the request (the moved core's pins)
    warnings: list[Finding] = field(default_factory=list)
    already: list[Finding] = field(default_factory=list)  # errors the environment has before any change
    result: dict[str, str] = field(default_factory=dict)  # the environment as the chosen plan leaves it
    installed: bool = False
    after: dict[str, str] | None = None  # the environment as read again after the install
    drift: list[inst.Change] = field(default_factory=list)  # what the install did that the judged plan did not say


class NoSafePlan(Exception):
    """No plan that keeps the environment safe exists; ``cause`` is the derivation, ``outcome`` what was found."""

    def __init__(self, cause: Cause, outcome: GuardOutcome) -> None:
        self.cause = cause
        self.outcome = outcome
        super().__init__(cause.conclusion)


def because(cause: Cause) -> str:
    """The uv-style derivation of ``cause`` (:meth:`Cause.because`, as for the resolver's causes)."""
    return cause.because()


def _evidence(f: Finding) -> str:
    short = f.short_evidence()  # the probe that reproduces it, or its evidence's short form
    return f" (evidence {short[0]}: {short[1]})" if short else ""


def _asked(req: GuardRequest) -> str:
    shown = list(req.requirements) or ["the requirements given"]
    return ", ".join(shown)


def _derivation(req: GuardRequest, out: GuardOutcome, changes: Sequence[inst.Change], broken: Sequence[Finding],
                replans: Sequence[str]) -> Cause:
    core_moves = [c for c in changes if c.name in out.tracked]
    clauses = [f"you asked for {_asked(req)}"]
    if core_moves:
        clauses.append(f"{out.installer}'s plan for it changes the core ({'; '.join(c.shown() for c in core_moves)})")
    for f in broken[:2]:  # the first two: an ABI break usually comes with its CUDA-runtime twin
        installed_here = [pin for (name, ver), pin in zip(f.packages, f.pins, strict=True)
                          if name in out.core and out.core.get(name) == ver]
        held = f"{' and '.join(installed_here)} {'is' if len(installed_here) == 1 else 'are'} installed and " if installed_here else ""
        clauses.append(f"{held}{f.message}{_evidence(f)}")
    clauses.extend(replans)
    first = broken[0]
    subject = next((name for name in first.names if name in out.core), "")
    on = f" for {', '.join(out.targets.names)}" if out.targets.names else ""
    conclusion = f"no plan for {_asked(req)} keeps this environment safe{on}; nothing was changed"
    remedy = first.remedy or f"keep the installed core ({', '.join(pins(out.core))}), e.g. with `glmcompat pip constraints`"
    return Cause(first.rule, subject, tuple(clauses), conclusion, remedy)


def decide(req: GuardRequest, facts: Facts, targets: Targets, live: Live) -> GuardOutcome:
    """Plan and judge; re-plan under the installed core where the installer's own plan breaks it. Changes
    nothing. Raises :class:`NoSafePlan`, or the installer's failure for a request it cannot resolve."""
    installer = inst.choose(req.installer, live.interp)
    before = live.packages
    core = {n: v for n, v in core_of(before, facts).items() if n not in live.direct}
    tracked = core_names(facts)
    findings_before = judge(before, targets, facts, req.allow_unknown)
    first = inst.plan(installer, live.interp, req.installer_args, [], before)
    result = first.apply(before)
    broken = new_errors(findings_before, judge(result, targets, facts, req.allow_unknown))
    out = GuardOutcome(live, targets, installer, core, tracked, first, broken,
                  already=[f for f in findings_before if f.severity == "error"])
    chosen = first
    if broken:
        failed: list[str] = []
        for label, asks, keep in candidates(core, broken, before, result, facts):
            extra = pins(asks)
            with _constraints_file(pins(keep)) as cfile:
                try:
                    again = inst.plan(installer, live.interp, [*req.installer_args, *extra], [cfile], before)
                except inst.InstallerFailed as e:
                    failed.append(f"{label} leaves {installer} no plan ({_installer_reason(e.output) or f'exit {e.returncode}'})")
                    continue
            after = again.apply(before)
            still = new_errors(findings_before, judge(after, targets, facts, req.allow_unknown))
            if still:
                failed.append(f"{label}, {installer}'s plan still breaks it: {still[0].message}")
                continue
            chosen, result, out.constrained, out.how, out.extra = again, after, True, label, tuple(extra)
            break
        else:
            raise NoSafePlan(_derivation(req, out, first.changes, broken, failed), out)
    out.chosen = chosen if chosen.changes else None
    out.result = result
    old = {(f.rule, f.packages, f.message) for f in findings_before}
    out.warnings = [f for f in judge(result, targets, facts, req.allow_unknown)
                    if f.severity == "warning" and (f.rule, f.packages, f.message) not in old]
    return out


def candidates(core: Mapping[str, str], broken: Sequence[Finding], before: Mapping[str, str],
               planned: Mapping[str, str], facts: Facts) -> list[tuple[str, dict[str, str], dict[str, str]]]:
    """The re-plans to try, nearest first, as (what it does, requirements to add, constraints): keep the installed
    core; then, for each compiled extension the request brings in (or changes) that the plan leaves beside a torch
    other than the one it was built against, move torch to that one and its family (torchvision, torchaudio) to
    the releases built for it, keeping the rest of the core. Each is judged again; none is taken on trust."""
    out: list[tuple[str, dict[str, str], dict[str, str]]] = [
        (f"keeping the installed core ({', '.join(pins(core))})", {}, dict(core))]
    family = facts.family_packages()
    seen: set[str] = set()
    for f in broken:
        if f.rule != "abi":
            continue
        for name, ver in f.packages:
            if name == "torch" or planned.get(name) != ver or before.get(name) == ver:
                continue  # not an extension the request brings in
            row = facts.kernel(name, ver)
            if row is None or row.torch in seen or row.torch == planned.get("torch"):
                continue
            seen.add(row.torch)
            asks = {"torch": row.torch}
            for fam in sorted(family & planned.keys()):
                v = facts.family_for_torch(fam, row.torch)
                if v:
                    asks[fam] = v
            keep = {n: v for n, v in core.items() if n not in asks and n not in family and n != name}
            out.append((f"moving the core to torch {row.torch}, the torch {name} {ver} was built against "
                        f"({', '.join(pins(asks))})", asks, keep))
    return out


def carry_out(req: GuardRequest, out: GuardOutcome) -> GuardOutcome:
    """Install the chosen plan under constraints that pin exactly what was judged (the core as the plan leaves
    it and every release the plan installs), then read the environment again: ``after`` and ``drift``."""
    if out.chosen is None:
        return out
    keep = {n: v for n, v in out.result.items() if n in out.tracked and n not in out.live.direct}
    keep.update({c.name: c.new for c in out.chosen.changes if c.new is not None and not c.direct})
    with _constraints_file(pins(keep)) as cfile:
        try:
            inst.install(out.installer, out.live.interp, [*req.installer_args, *out.extra], [cfile])
        except inst.InstallerFailed as e:
            e.changed = tuple(diff(out.live.packages, read_environment(out.live.interp.sites).versions()))
            raise
    out.installed = True
    now = read_environment(out.live.interp.sites).versions()
    out.after = now
    out.drift = diff(out.result, now)
    return out


def _installer_reason(output: str) -> str:
    """The installer's reason on one line: uv's derivation without its own "Because ... we can conclude" frame."""
    lines = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    if not lines:
        return ""
    last = lines[-1].removeprefix("cause:").strip()
    m = re.match(r"Because (.*), we can conclude that (.*)\.$", last)
    reason = f"{m.group(1)}" if m else last
    return reason if len(reason) <= 300 else reason[:297] + "..."


def diff(old: Mapping[str, str], new: Mapping[str, str]) -> list[inst.Change]:
    """What differs between two environments' versions, by name."""
    names = sorted(set(old) | set(new))
    return [inst.Change(n, old.get(n), new.get(n)) for n in names if old.get(n) != new.get(n)]


class _constraints_file:
    """A temporary constraints file holding ``lines``, removed afterwards."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self.path = ""

    def __enter__(self) -> str:
        fd, self.path = tempfile.mkstemp(prefix="glmcompat-constraints-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write("".join(f"{line}\n" for line in self.lines))
        return self.path

    def __exit__(self, *exc: object) -> None:
        try:
            os.unlink(self.path)
        except OSError:
            pass


__all__ = ["Live", "NoSafePlan", "GuardOutcome", "GuardRequest", "Targets", "because", "constraints_text", "core_names",
           "core_of", "diff", "carry_out", "decide", "find_targets", "judge", "new_errors", "open_environment"]

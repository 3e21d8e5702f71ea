"""``glmcompat check PATH... --target T``: an offline verdict on a lock for a GPU target.

Hot path (a pre-commit hook runs it on every commit): imports stay light (no pydantic, no httpx),
the matrix comes from the validated-JSON cache and the lock from the content-hash cache.
"""

from __future__ import annotations

import os
import posixpath
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glmcompat.cli import fastpath
from glmcompat.cli.streams import stderr
from glmcompat.cli.commands._common import add_index_options, add_output_options, add_target_option, output, paint, parser
from glmcompat.cli.commands._machine import add_machine_options, machine_for
from glmcompat.decide import rules
from glmcompat.model.errors import EnvironmentFailure, InputError, LockFormatError, NoTarget
from glmcompat.model.findings import Finding, Printed, evidence_lines
from glmcompat.model.platforms import check_platform, target_platforms
from glmcompat.ops.checkfile import check_ships as _check_ships
from glmcompat.ops.checkfile import locate, no_isolation, unreadable_beside
from glmcompat.ops.checkfile import output_set_problems as _output_set_problems
from glmcompat.ops.checkfile import platform_setting as _platform_setting

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.matrix.rows import Target
    from glmcompat.model.machine import Machine
    from glmcompat.readers.formats.common import Lock

JSON_VERSION = 1


@dataclass
class Job:
    path: Path  # the lock to read
    targets: list[str]
    model: str | None
    shown: str  # how the path is named in output
    findings: dict[str, list[Finding]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    environments: int = 1
    platforms: list[str] | None = None  # --platform: only these machines' environments are judged
    targets_from: str | None = None  # the pyproject.toml whose [tool.glmcompat] named the targets (None: --target)
    remedy: Any = None  # the one remedy of an unsafe file (a model.hints.Remedy), for every target judged
    remedy_warning: str = ""  # why no remedy was computed (the index could not be read)
    packages: dict[str, str] = field(default_factory=dict)  # the first environment's set (engine pins a hint overrides)
    kind: str = ""  # the lock's kind (uv.lock, requirements.txt, ...)
    machine: Machine | None = None  # the machine judged (targets, driver, glibc, each with where it came from)
    rows: list[Target] = field(default_factory=list)  # the targets' rows, each looked up once (at the command's edge)

    def row(self, name: str) -> Target:
        """The row of the target judged under its canonical ``name``."""
        return next(r for r in self.rows if r.name == name)


def build_parser() -> Any:
    """The argument parser of this command (also what `glmcompat completion` reads)."""
    p = parser("check", "Check a lock (uv.lock, pylock.toml, pinned requirements.txt or a pyproject.toml's lock) "
                        "for a GPU target. Offline, except that the wheels of compiled packages the matrix has no row "
                        "for are read once each (stored by sha256; GLMCOMPAT_NO_ARTIFACTS=1: none is read or reported).")
    p.add_argument("paths", nargs="+", metavar="PATH")
    add_target_option(p, "GLMCOMPAT_TARGET, else [tool.glmcompat] targets of the pyproject.toml beside the lock")
    p.add_argument("--model", metavar="MODEL_TYPE",
                   help="HF model_type the stack must serve, e.g. glm_moe_dsa (default: GLMCOMPAT_MODEL, else "
                        "[tool.glmcompat] model)")
    p.add_argument("--platform", action="append", metavar="P",
                   help="judge only the environments of this machine (x86_64 or aarch64; repeatable), strictly: "
                        "nothing is excused (default: GLMCOMPAT_PLATFORM, else [tool.glmcompat] platform, else every "
                        "platform the target ships on)")
    p.add_argument("--stack", metavar="NAME", help="also require the named stack's pins")
    add_machine_options(p)
    p.add_argument("--allow-unknown", action="store_true", help="report combinations without evidence as warnings")
    p.add_argument("--against", metavar="REV", help="report only what changed since git revision REV made unsafe")
    p.add_argument("--matrix", action="append", metavar="PATH", help="matrix file or directory (repeatable)")
    p.add_argument("--json", action="store_true", help="versioned JSON on stdout")
    add_index_options(p)
    add_output_options(p)
    return p


def _parse(argv: Sequence[str]) -> Any:
    p = build_parser()
    return p.parse_args(list(argv))


def _hook_paths(paths: list[str]) -> tuple[list[str], list[str]]:
    """Bump mode (the pre-commit hook passes every changed ``.txt``/``.in``): (the files to judge, notes). A file
    that tracked requirements files include (``-r deps/gpu.txt``) is judged through the files that include it,
    at the top of the chain; any other file whose name is not a dependency file's is judged only if it reads as
    a requirements file with entries (a README.txt is skipped)."""
    from glmcompat.readers.formats import read_lock  # lazy: the engine: `check --help` stays light
    from glmcompat.readers.formats.registry import conventional  # lazy: the engine: `check --help` stays light

    out: list[str] = []
    notes: list[str] = []
    for raw in paths:
        p = Path(raw)
        if not p.is_file() or p.name == "pyproject.toml" or not p.name.lower().endswith((".txt", ".in")):
            out.append(raw)
            continue
        tops = _includers(p)
        if tops:
            out.extend(str(t) for t in tops)
            continue
        if conventional(p.name):
            out.append(raw)
            continue
        try:
            lock = read_lock(p)
        except InputError:
            notes.append(f"{raw}: not a requirements file; skipped")
            continue
        if lock.entries:
            out.append(raw)
        else:
            notes.append(f"{raw}: names no package; skipped")
    return list(dict.fromkeys(out)), notes


def _includers(path: Path) -> list[Path]:
    """The tracked requirements files of ``path``'s repository that include it (``-r``/``-c``, at any depth),
    keeping only those no other of them includes (the tops of the chains)."""
    import subprocess  # lazy: git, only for --against and the hook's includes

    from glmcompat.readers.formats import read_lock  # lazy: the engine: `check --help` stays light

    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=path.resolve().parent, capture_output=True,
                             text=True, check=True).stdout.strip()
        listed = subprocess.run(["git", "ls-files", "-z", "--", "*.txt", "*.in", "*.lock"], cwd=top,
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    target = path.resolve()
    found: dict[Path, set[Path]] = {}
    for rel in filter(None, listed.split("\0")):
        f = Path(top) / rel
        if f.resolve() == target or not f.is_file():
            continue
        try:
            lock = read_lock(f)
        except InputError:
            continue
        if lock.kind != "requirements.txt":
            continue
        incs = {(f.parent / inc).resolve() for inc in lock.meta.get("includes", ())}
        if target in incs:
            found[f.resolve()] = incs
    return sorted(f for f in found if not any(f in incs for g, incs in found.items() if g != f))


def _jobs(args: Any) -> list[Job]:
    jobs: list[Job] = []
    seen: set[Path] = set()
    for raw in args.paths:
        p = Path(raw)
        # the pyproject.toml beside the lock names what no flag does: the targets, the driver, the glibc
        lock, settings, settings_path = locate(raw, beside=not args.target or not args.driver or not args.glibc,
                                               needed=not args.target)
        key = lock.resolve()
        if key in seen:
            continue
        seen.add(key)
        machine = machine_for(args.target, args.driver, args.glibc, settings,
                              None if settings_path is None else str(settings_path))
        targets = list(machine.targets)
        if not targets:
            raise NoTarget(None if settings_path is None else str(settings_path))
        model = args.model or settings.get("model")
        shown = str(lock) if lock == p else f"{lock} (from {raw})"
        job = Job(lock, [str(t) for t in targets], model, shown, machine=machine)
        if machine.targets_from.origin == "pyproject":
            job.targets_from = str(settings_path)
        job.platforms = _platform_setting(lock, settings if p.name == "pyproject.toml" else None)
        jobs.append(job)
    return jobs


def _old_lock(path: Path, rev: str) -> Lock | None:
    """The lock at git revision ``rev`` (None when the file did not exist there)."""
    import subprocess  # lazy: git, only for --against and the hook's includes

    from glmcompat.readers.formats import read_text_lock  # lazy: the engine: `check --help` stays light
    from glmcompat.readers.formats.registry import detect_kind  # lazy: the engine: `check --help` stays light

    d = path.resolve().parent
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=d, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        raise InputError("--against needs a git repository", path=str(path)) from None
    rel = path.resolve().relative_to(Path(top).resolve()).as_posix()
    r = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd=top, capture_output=True, text=True)
    if r.returncode != 0:
        if rev == "HEAD":
            return None  # a repository without commits yet: everything is new
        raise InputError(f"unknown git revision {rev!r}", path=str(path))
    shown = subprocess.run(["git", "show", f"{rev}:{rel}"], cwd=top, capture_output=True)  # bytes: decoded as a file is
    if shown.returncode != 0:
        return None
    kind = detect_kind(path) or ""
    if kind == "requirements.txt" and _at_revision_includes(shown.stdout):
        return _old_requirements(Path(top), rev, rel, shown.stdout)
    return read_text_lock(f"{rev}:{rel}", kind, shown.stdout)  # "": sniffed from the content


def _at_revision_includes(data: bytes) -> list[str]:
    from glmcompat.readers.formats.requirements import include_targets  # lazy: the engine: `check --help` stays light

    return include_targets(data.decode("utf-8", "replace"))


def _old_requirements(top: Path, rev: str, rel: str, data: bytes) -> Lock:
    """A requirements file at ``rev`` with every file it includes as it was at ``rev`` too (never the work
    tree's): the files are copied out of git into a private directory at their places in the repository and
    read there; messages name them ``REV:path``."""
    import subprocess  # lazy: git, only for --against and the hook's includes
    import tempfile  # lazy: git, only for --against and the hook's includes

    with tempfile.TemporaryDirectory(prefix="glmcompat-rev-") as tmp:
        root = Path(tmp)
        todo, seen = [(rel, data)], {rel}
        while todo and len(seen) <= 256:
            name, body = todo.pop()
            dest = root / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(body)
            for inc in _at_revision_includes(body):
                child = posixpath.normpath(posixpath.join(posixpath.dirname(name), inc))
                if child in seen or child.startswith("../") or posixpath.isabs(child):
                    continue
                seen.add(child)
                got = subprocess.run(["git", "show", f"{rev}:{child}"], cwd=top, capture_output=True)
                if got.returncode == 0:
                    todo.append((child, got.stdout))
        prefix = str(root) + os.sep
        try:
            lock = _read_at(root / rel)
        except LockFormatError as e:
            where = (e.path or str(root / rel)).replace(prefix, f"{rev}:")
            raise LockFormatError(e.message.replace(prefix, f"{rev}:"), path=where, line=e.line) from None

        return replace(lock, path=f"{rev}:{rel}")


def _read_at(path: Path) -> Lock:
    from glmcompat.readers.formats import read_bytes, with_sets  # lazy: the engine: `check --help` stays light
    from glmcompat.readers.formats.common import decode_text  # lazy: the engine: `check --help` stays light
    from glmcompat.readers.formats.requirements import (
        parse_requirements,  # lazy: the engine: `check --help` stays light
    )

    return with_sets(parse_requirements(path, decode_text(path, read_bytes(path))))


def _bump_findings(old: Lock, new: Lock, new_findings: list[Finding], old_findings: list[Finding], facts: Any) -> list[Finding]:
    """Findings new since ``old``: a bump is unsafe only where an environment it changes becomes unsafe.
    Each is prefixed with the bumps that caused it; a package renamed (sgl-kernel -> sglang-kernel, a
    ``[[rename]]`` row) is one bump, not a removal plus an addition."""
    def pkgs_by_env(lock: Lock) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for e in lock.sets:
            for n in e.names:
                out[n] = dict(e.packages)
        return out

    def identity(f: Finding) -> tuple[str, tuple[tuple[str, str], ...], str]:
        """What makes two findings the same problem: the rule and the (name, version) pairs, never the prose
        (which carries notes that change with the rest of the file); one that names no package, its message."""
        return f.rule, f.packages, "" if f.packages else f.message

    old_env, new_env = pkgs_by_env(old), pkgs_by_env(new)
    renames = {r.new: r.old for r in facts.rows("rename")}
    old_keys: dict[tuple[str, tuple[tuple[str, str], ...], str], set[str]] = {}  # identity -> where (empty: everywhere)
    for f in old_findings:
        had = old_keys.get(identity(f))
        old_keys[identity(f)] = set() if not f.environments or had == set() else (had or set()) | set(f.environments)
    out = []
    for f in new_findings:
        envs = f.environments or tuple(new_env)
        if identity(f) in old_keys:
            before = old_keys[identity(f)]
            envs = tuple(e for e in envs if before and e not in before and e in old_env)
            if not envs:
                continue
        # the environments where some package of the finding changed
        changed: list[str] = []
        bumps: list[str] = []
        names = list(f.names)
        for e in envs:
            o, n = old_env.get(e), new_env.get(e, {})
            if o is None:
                o = next(iter(old_env.values()), {}) if len(old_env) == 1 else {}
            for name in names:
                if name in n and o.get(name) != n[name]:
                    was = renames.get(name)
                    if o.get(name) is None and was and was in o:
                        b = f"{was} {o[was]} -> {name} {n[name]}"
                    else:
                        b = f"{name} {o.get(name, '(none)')} -> {n[name]}"
                    if b not in bumps:
                        bumps.append(b)
                    if e not in changed:
                        changed.append(e)
        if not changed and identity(f) not in old_keys and not any(n in (new_env.get(e) or {}) for e in envs for n in names):
            changed = list(envs)
        if bumps:
            any_new = next(iter(new_env.values()), {})
            rest = [f"{n} {any_new[n]}" for n in names if n in any_new and not any(b.startswith(n + " ") or f"-> {n} " in b for b in bumps)]
            head = " and ".join(bumps) + (f" breaks {', '.join(rest)}" if rest else " is unsafe")
            f = replace(f, message=f"{head}: {f.message}", environments=tuple(changed) if f.environments else ())
        elif identity(f) in old_keys:
            continue
        out.append(f)
    return out


def main(name: str, argv: Sequence[str]) -> int:
    args = _parse(argv)
    before = fastpath.key(list(argv))  # the inputs as this run reads them (None: no verdict is recorded)
    read_wheels: list[bool] = []  # this run's: whether it read a wheel by URL or path of a package no row names
    if before is None:
        return _judge(args, read_wheels)[0]
    with fastpath.reading(list(argv)) as log:  # every file the verdict reads, as it reads it
        rc, text, facts = _judge(args, read_wheels)
    if facts is not None:  # what this run wrote (nothing with -qq), for the start-up path to write again (never a
        # verdict on a machine read here: what was read is no input the record could compare); a verdict that read a
        # wheel named by URL or path, of a package the matrix does not name, is kept for these exact bytes only: its name
        # is in no names record, so a uv.lock's projection would not see its version change
        fastpath.store(list(argv), before, log, text, "", rc, relevant=lambda: fastpath.relevant_names(facts),
                       exact=any(read_wheels))
    return rc


def _judge(args: Any, read_wheels: list[bool]) -> tuple[int, str, Any]:
    """The verdicts of ``check`` (printed), and for the start-up path's record: the exit code, what was written to
    stdout ("" when it was not the process's: -qq), and the matrix read (None: nothing to record)."""
    from glmcompat.matrix.load import load_facts  # lazy: the engine: `check --help` stays light
    from glmcompat.readers.formats import read_lock  # lazy: the engine: `check --help` stays light

    platforms = None if args.platform is None else list(dict.fromkeys(check_platform(p) for p in args.platform))
    facts = load_facts(args.matrix)
    hook_notes: list[str] = []
    if args.against:
        args.paths, hook_notes = _hook_paths(list(args.paths))
        for n in hook_notes:
            print(f"note: {n}", file=stderr())
        if not args.paths:
            return 0, "", None
    jobs = _jobs(args)
    stack = facts.stack(args.stack) if args.stack else None
    for job in jobs:
        if platforms is not None:
            job.platforms = platforms  # --platform wins over the pyproject's setting
        for t in job.targets:
            try:
                trow = facts.target(t)
            except InputError as e:
                if job.targets_from is None:
                    raise
                raise InputError(f"[tool.glmcompat] targets: {e.message}", path=job.targets_from) from None
            _check_ships(trow, job.platforms)
            job.rows.append(trow)
        if job.model:
            facts.model(job.model)
    o = output(args)
    ok = True
    for job in jobs:
        t0 = time.perf_counter()
        lock = _index_pins(read_lock(job.path), facts)
        old = _old_lock(job.path, args.against) if args.against else None
        iso = no_isolation(job.path)
        arts = _artifacts(lock, facts, read_wheels, job.platforms, {m for r in job.rows for m in r.ships_on})
        lock = _installed_numpy(lock, arts)
        mixed = _output_set_problems(job.path)
        job.notes = list(lock.meta.get("notes", ()))
        if (broken := unreadable_beside(job.path)) is not None:
            job.notes.append(broken)
        job.environments = sum(len(e.names) for e in lock.sets)
        job.packages = dict(lock.sets[0].packages) if lock.sets else {}
        for trow in job.rows:
            tname = trow.name
            found = rules.evaluate_lock(lock, trow, job.model, facts, args.allow_unknown, stack, iso, job.platforms,
                                        machine=job.machine, artifacts=arts)
            if args.against and old is not None:
                found = _bump_findings(old, lock, found, rules.evaluate_lock(old, trow, job.model, facts, args.allow_unknown,
                                                                             stack, iso, job.platforms,
                                                                             machine=job.machine), facts)
            found = mixed + found
            job.findings[tname] = found
            job.kind = lock.kind
            if any(f.severity == "error" for f in found):
                ok = False
        if any(f.severity == "error" for fs in job.findings.values() for f in fs):
            _remedy(job, lock, facts, args)
        o.detail(f"checked {job.path} ({lock.kind}, {job.environments} environment(s)) for "
                 f"{', '.join(job.targets)} in {time.perf_counter() - t0:.3f} s")
    if args.json:
        text = _render_json(jobs, ok, facts)
    else:
        text = _render_text(jobs, facts, bool(args.against), o.color, notes=o.notes, verbose=bool(o.verbose))
    o.out.write(text)
    detected = any(j.machine is not None and j.machine.detected for j in jobs)
    return 0 if ok else 1, text if o.out is sys.stdout else "", None if detected else facts


def _index_pins(lock: Lock, facts: Any) -> Lock:
    """``lock`` with the exact pins its packages' METADATA declares where the matrix has none (glmcompat.ops.indexpins)."""
    from glmcompat.ops.indexpins import with_index_pins  # lazy: the engine: `check --help` stays light

    return with_index_pins(lock, facts)


def _installed_numpy(lock: Lock, arts: Any) -> Lock:
    """``lock`` with the numpy its installer takes where the file leaves it open and an extension of the set was built
    against NumPy 1.x (glmcompat.ops.indexpins.with_installed_numpy)."""
    from glmcompat.ops.indexpins import with_installed_numpy  # lazy: the engine: `check --help` stays light

    return with_installed_numpy(lock, arts)


def _artifacts(lock: Lock, facts: Any, read_wheels: list[bool], platforms: Any, ships_on: set[str]) -> Any:
    """What the artifacts of the compiled packages of the set say (glmcompat.ops.indexpins.judged_artifacts, the reading
    ``lock`` judges with too), on every machine the targets ship on (an sm90 check reads the aarch64 wheels GH200
    installs too), for what it installs."""
    from glmcompat.ops.indexpins import judged_artifacts  # lazy: the engine: `check --help` stays light

    return judged_artifacts(lock, facts, read_wheels=read_wheels, platforms=platforms, ships_on=ships_on)


def remedy_sources(args: Any) -> Any:
    """The resolver's source per machine for the remedy search: the index ``--index-url`` names (the configured one by
    default), read through glmcompat's cache, each machine's wheels read once; none where ``GLMCOMPAT_OFFLINE`` is set
    and no ``--index-url`` is given (the verdict then says the remedy was not computed, and why)."""
    from glmcompat.cli.commands._common import index_client  # lazy: only when a file fails (a safe set to propose)
    from glmcompat.edges.sources import IndexSource  # lazy: only when a file fails (a safe set to propose)

    client, _cache = index_client(args)
    sources: dict[str, Any] = {}
    offline = bool(os.environ.get("GLMCOMPAT_OFFLINE")) and getattr(args, "index_url", None) is None

    def source_for(machine: str) -> Any:
        if offline:
            raise EnvironmentFailure("GLMCOMPAT_OFFLINE is set and no --index-url was given")
        if machine not in sources:
            sources[machine] = IndexSource(client, platform=machine)
        return sources[machine]

    return source_for


def _remedy(job: Job, lock: Lock, facts: Any, args: Any) -> None:
    """The one remedy of an unsafe file, for every target of the job (the index read only now: a safe file never
    reaches it)."""
    from glmcompat.ops.remedy import for_lock  # lazy: only when a file fails (a safe set to propose)

    source_for = remedy_sources(args)
    findings = [f for fs in job.findings.values() for f in fs]
    hint = next((u for u in lock.meta.get("index_urls", ()) if u), "")
    got = for_lock(lock, [r.name for r in job.rows], job.model, facts, source_for,
                   platforms=job.platforms, findings=findings, kind=lock.kind, path=job.path, index_hint=hint,
                   machine=job.machine)
    job.remedy, job.remedy_warning = got.remedy, got.warning


def _render_json(jobs: list[Job], ok: bool, facts: Any) -> str:
    """The verdicts as the versioned JSON document (check.schema.json), one line break at the end."""
    import json  # lazy: --json only

    from glmcompat.model.machine import Machine  # lazy: --json only
    from glmcompat.model.outputs.check import CheckOutput, CheckedDoc, CheckedFindingDoc  # lazy: --json only
    from glmcompat.model.outputs.machine import MachineDoc  # lazy: --json only
    from glmcompat.ops.remedy import safe_set_json  # lazy: --json only

    findings: list[CheckedFindingDoc] = []
    checked: list[CheckedDoc] = []
    for job in jobs:
        for t, fs in job.findings.items():
            # the machines whose environments were judged: --platform / [tool.glmcompat] platform, else every
            # machine the target ships on
            machines = job.platforms or target_platforms(job.row(t))
            ok_here = not any(f.severity == "error" for f in fs)
            checked.append(CheckedDoc(path=str(job.path), target=t, model=job.model,
                                   ok=not any(f.severity == "error" for f in fs), environments=job.environments,
                                   notes=tuple(job.notes), platforms=tuple(machines),
                                   safe_set=safe_set_json(job.remedy) if not ok_here else None,
                                   machine=MachineDoc.of(job.machine or Machine()),
                                   safe_set_indexes=dict(job.remedy.indexes) if job.remedy and not ok_here else None,
                                   remedy=_hint_docs(job.remedy) if not ok_here else ()))
            findings.extend(CheckedFindingDoc.at(f, str(job.path), t) for f in fs)
    doc = CheckOutput(ok=ok, target=checked[0].target if checked else None, checked=tuple(checked),
                      findings=tuple(findings))
    return json.dumps(doc.to_json(), indent=2, sort_keys=True) + "\n"


def _hint_docs(r: Any) -> tuple[Any, ...]:
    from glmcompat.model.outputs.check import HintDoc  # lazy: --json only

    return () if r is None else tuple(HintDoc.of(h) for h in r.changes)


def _render_text(jobs: list[Job], facts: Any, bump: bool, color: bool, *, notes: bool = True,
                 verbose: bool = False) -> str:
    """The verdicts as text (returned, lines ending in a line break): each finding, one short evidence line (the
    probe that reproduces it) and its hint; ``verbose`` (-v): every evidence source in full; ``notes`` False (-q): a
    safe verdict is its one line (its warnings counted in it), an unsafe one loses the lock's notes and the evidence
    lines (never a verdict, a finding or its hint). Evidence already printed in a verdict is said once ("as above")."""
    def c(code: str, s: str) -> str:
        return paint(code, s, color)

    parts: list[str] = []
    out = parts.append
    for job in jobs:
        for t, fs in job.findings.items():
            safe = job.remedy is not None and errors_of(fs)
            tr = job.row(t)
            errors = sum(f.severity == "error" for f in fs)
            warnings = len(fs) - errors
            where = f"{job.shown} on {t} (compute capability {tr.compute_capability}"
            if job.platforms:
                where += ", " + " and ".join(f"Linux {p}" for p in job.platforms) + " only"
            where += f", model {job.model})" if job.model else ")"
            m = job.machine
            judged = m is not None and (m.driver is not None or m.glibc is not None or m.detected)
            if errors:
                out(f"{c('1;31', 'error')}: {where}: the stack is unsafe ({errors} error(s), {warnings} warning(s))\n")
                if judged and m is not None:
                    out(f"  machine: {'; '.join(m.lines())}\n")
            else:
                what = "no unsafe bump" if bump else "the stack is safe"
                out(f"{c('1;32', 'ok')}: {where}: {what}" + (f" ({warnings} warning(s))" if warnings else "") + "\n")
                if judged and m is not None:
                    out(f"  machine: {'; '.join(m.lines())}\n")
                if not notes:
                    continue  # -q: the verdict line alone
            for note in job.notes if notes else ():
                out(f"  note: {note}\n")
            printed = Printed()
            for f in fs:
                mark = c("31", "  × ") if f.severity == "error" else c("33", "  ⚠ ")
                out(f"{mark}{f.message}\n")
                if f.environments:
                    shown = "; ".join(f.environments[:3])
                    more = len(f.environments) - 3
                    out(f"      in: {shown}" + (f" (and {more} more of {job.environments} environments)" if more > 0 else "") + "\n")
                for line in evidence_lines(f, verbose=verbose, printed=printed) if notes else ():
                    out(f"      {line}\n")
                if f.remedy and not (safe and f.severity == "error"):  # one remedy for the errors: the safe set below
                    out(f"      {c('1;36', 'hint')}: {_said(f.remedy, job, facts)}\n")
        if job.remedy is not None or job.remedy_warning:
            out(_remedy_text(job, c))
    return "".join(parts)


def _said(remedy: str, job: Job, facts: Any) -> str:
    """A finding's own hint, with the engine pin it overrides said (the set's first environment)."""
    from glmcompat.ops.remedy import engine_override_note  # lazy: only where a finding has a hint

    return engine_override_note(remedy, job.packages, facts) if job.packages else remedy


def errors_of(fs: list[Finding]) -> bool:
    return any(f.severity == "error" for f in fs)


def _remedy_text(job: Job, c: Any) -> str:
    """The one remedy of the file, after its verdicts: the set, the command, a line per change (the shared formatter)."""
    from glmcompat.model.hints import render_remedy  # lazy: only when a file fails (a safe set to propose)

    if job.remedy is None:
        return f"{c('33', 'warning')}: {job.remedy_warning}\n"
    lines = list(render_remedy(job.remedy, target=", ".join(job.targets)))
    return "".join(f"{c('1;36', 'hint')}: {ln}\n" if i == 0 else f"      {ln}\n" for i, ln in enumerate(lines))

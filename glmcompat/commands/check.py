"""``glmcompat check PATH... --target T``: an offline verdict on a lock for a GPU target.

Hot path (a pre-commit hook runs it on every commit): imports stay light (no pydantic, no httpx),
the matrix comes from the validated-JSON cache and the lock from the content-hash cache.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from .. import rules
from ..rules import Finding

JSON_VERSION = 1
LOCK_NAMES = ("uv.lock", "pylock.toml", "requirements.txt")


@dataclass
class Job:
    path: Path  # the lock to read
    targets: list[str]
    model: str | None
    shown: str  # how the path is named in output
    findings: dict[str, list[Finding]] = field(default_factory=dict)


def _parse(argv: Sequence[str]) -> Any:
    from ._common import parser

    p = parser("check", "Check a lock (uv.lock, pylock.toml, pinned requirements.txt or a pyproject.toml's lock) "
                        "for a GPU target, offline.")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--target", action="append", metavar="T", help="GPU target, e.g. sm120 (repeatable)")
    p.add_argument("--model", metavar="MODEL_TYPE", help="HF model_type the stack must serve, e.g. glm_moe_dsa")
    p.add_argument("--stack", metavar="NAME", help="also require the named stack's pins")
    p.add_argument("--allow-unknown", action="store_true", help="report combinations without evidence as warnings")
    p.add_argument("--against", metavar="REV", help="report only what changed since git revision REV made unsafe")
    p.add_argument("--matrix", action="append", metavar="PATH", help="matrix file or directory (repeatable)")
    p.add_argument("--json", action="store_true", help="versioned JSON on stdout")
    return p.parse_args(list(argv))


def _pyproject_settings(path: Path) -> dict[str, Any]:
    from ..lockfiles import _read, _text, _toml

    doc = _toml(path, _text(path, _read(path)))
    tool = doc.get("tool", {}).get("glmcompat", {})
    if not isinstance(tool, dict):
        raise InputError("[tool.glmcompat] must be a table", path=str(path))
    return tool


def _jobs(args: Any) -> list[Job]:
    jobs: list[Job] = []
    seen: set[Path] = set()
    for raw in args.paths:
        p = Path(raw)
        if p.is_dir():
            raise InputError("is a directory; pass a lock file or a pyproject.toml", path=raw)
        if not p.exists():
            raise InputError("no such file", path=raw)
        settings: dict[str, Any] = {}
        lock = p
        if p.name == "pyproject.toml":
            settings = _pyproject_settings(p)
            lock = next((p.parent / n for n in LOCK_NAMES if (p.parent / n).exists()), None)  # type: ignore[assignment]
            if lock is None:
                raise InputError(f"no lock beside it (looked for {', '.join(LOCK_NAMES)})", path=raw)
        elif (p.parent / "pyproject.toml").is_file() and not args.target:
            settings = _pyproject_settings(p.parent / "pyproject.toml")
        key = lock.resolve()
        if key in seen:
            continue
        seen.add(key)
        targets = list(args.target or [])
        if not targets:
            t = settings.get("targets", settings.get("target"))
            targets = [t] if isinstance(t, str) else list(t or [])
        if not targets:
            raise InputError("no target: pass --target (e.g. --target sm120) or set [tool.glmcompat] targets "
                             "in the pyproject.toml beside it", path=raw)
        model = args.model or settings.get("model")
        shown = str(lock) if lock == p else f"{lock} (from {raw})"
        jobs.append(Job(lock, [str(t) for t in targets], model, shown))
    return jobs


def _old_lock(path: Path, rev: str) -> Any | None:
    """The lock at git revision ``rev`` (None when the file did not exist there)."""
    import subprocess

    from ..lockfiles import detect_kind, read_text_lock

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
    r = subprocess.run(["git", "show", f"{rev}:{rel}"], cwd=top, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return read_text_lock(f"{rev}:{rel}", detect_kind(path), r.stdout)


def _bump_findings(old: Any, new: Any, new_findings: list[Finding], old_findings: list[Finding]) -> list[Finding]:
    """Findings new since ``old``, each prefixed with the bumps that caused it."""
    old_pkgs: dict[str, str] = {}
    for s in old.sets:
        old_pkgs.update(s)
    new_pkgs: dict[str, str] = {}
    for s in new.sets:
        new_pkgs.update(s)
    old_keys = {(f.rule, f.message) for f in old_findings}
    out = []
    for f in new_findings:
        if (f.rule, f.message) in old_keys:
            continue
        names = [p.split("==")[0] for p in f.packages]
        bumps = [f"{n} {old_pkgs.get(n, '(none)')} -> {new_pkgs[n]}" for n in names
                 if n in new_pkgs and old_pkgs.get(n) != new_pkgs[n]]
        if bumps:
            rest = [f"{n} {new_pkgs[n]}" for n in names if n in new_pkgs and old_pkgs.get(n) == new_pkgs[n]]
            head = " and ".join(bumps) + (f" breaks {', '.join(rest)}" if rest else " is unsafe")
            f = Finding(f.rule, f.severity, f.packages, f"{head}: {f.message}", f.evidence, f.remedy)
        out.append(f)
    return out


def main(name: str, argv: Sequence[str]) -> int:
    args = _parse(argv)
    from ..facts import load_facts
    from ..lockfiles import read_lock

    facts = load_facts(args.matrix)
    jobs = _jobs(args)
    stack = facts.stack(args.stack) if args.stack else None
    for job in jobs:
        for t in job.targets:
            facts.target(t)
        if job.model:
            facts.model(job.model)
    ok = True
    for job in jobs:
        lock = read_lock(job.path)
        old = _old_lock(job.path, args.against) if args.against else None
        for t in job.targets:
            tname = facts.target(t)["name"]
            found = rules.evaluate_lock(lock, tname, job.model, facts, args.allow_unknown, stack)
            if args.against and old is not None:
                found = _bump_findings(old, lock, found, rules.evaluate_lock(old, tname, job.model, facts, args.allow_unknown, stack))
            job.findings[tname] = found
            if any(f.severity == "error" for f in found):
                ok = False
    if args.json:
        _render_json(jobs, ok, facts)
    else:
        _render_text(jobs, facts, bool(args.against))
    return 0 if ok else 1


def _render_json(jobs: list[Job], ok: bool, facts: Any) -> None:
    import json

    findings = []
    checked = []
    for job in jobs:
        for t, fs in job.findings.items():
            checked.append({"path": str(job.path), "target": t, "model": job.model,
                            "ok": not any(f.severity == "error" for f in fs)})
            for f in fs:
                findings.append({**f.to_json(), "path": str(job.path), "target": t})
    doc = {"version": JSON_VERSION, "ok": ok, "target": checked[0]["target"] if checked else None,
           "checked": checked, "findings": findings}
    sys.stdout.write(json.dumps(doc, indent=2, sort_keys=True) + "\n")


def _render_text(jobs: list[Job], facts: Any, bump: bool) -> None:
    color = sys.stdout.isatty()

    def c(code: str, s: str) -> str:
        return f"\033[{code}m{s}\033[0m" if color else s

    out = sys.stdout.write
    for job in jobs:
        for t, fs in job.findings.items():
            tr = facts.target(t)
            errors = sum(f.severity == "error" for f in fs)
            warnings = len(fs) - errors
            where = f"{job.shown} on {t} (compute capability {tr['compute_capability']}"
            where += f", model {job.model})" if job.model else ")"
            if errors:
                out(f"{c('1;31', 'error')}: {where}: the stack is unsafe ({errors} error(s), {warnings} warning(s))\n")
            else:
                what = "no unsafe bump" if bump else "the stack is safe"
                out(f"{c('1;32', 'ok')}: {where}: {what}" + (f" ({warnings} warning(s))" if warnings else "") + "\n")
            for f in fs:
                mark = c("31", "  × ") if f.severity == "error" else c("33", "  ⚠ ")
                out(f"{mark}{f.message}\n")
                for kind, src in f.evidence:
                    out(f"      evidence ({kind}): {src}\n")
                if f.remedy:
                    out(f"      {c('1;36', 'hint')}: {f.remedy}\n")

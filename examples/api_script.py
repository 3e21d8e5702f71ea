"""Check a uv.lock, lock a project and read the findings, with glmcompat's documented library API only
(docs/api.md).

    python examples/api_script.py LOCK PROJECT TARGET [RECORDED_INDEX]

LOCK is judged for TARGET and its findings printed; then PROJECT (a folder with a pyproject.toml) is locked for
TARGET (its pyproject.toml gets the safe core as uv constraints and the real `uv lock` runs) and the new lock judged.
RECORDED_INDEX: resolve the core from a recorded index file instead of the package index (offline). Exit 0 when both
are safe, 1 when either is not, 2 on an error (printed as one line).
"""

from __future__ import annotations

import sys

import glmcompat


def show(result: glmcompat.CheckResult) -> None:
    for verdict in result.verdicts:
        print(f"{result.path} on {verdict.target}: {'safe' if verdict.ok else 'unsafe'} "
              f"({len(verdict.errors)} error(s), {len(verdict.warnings)} warning(s))")
        for f in verdict.findings:
            print(f"  {f.severity} [{f.rule}] {' '.join(f.pins)}")
        if verdict.safe_set:
            print("  safe set: " + " ".join(f"{n}=={v}" for n, v in verdict.safe_set.items()))


def main(argv: list[str]) -> int:
    lock_file, project, target = argv[:3]
    index = argv[3] if len(argv) > 3 else None
    try:
        before = glmcompat.check(lock_file, target=target)
        show(before)
        locked = glmcompat.lock(project, target, index=index)
        print(f"locked {project}: core {' '.join(f'{n}=={v}' for n, v in sorted(locked.core.items()))}; "
              f"wrote {', '.join(locked.written) or 'nothing'}; verdicts {locked.verdicts}")
        after = glmcompat.check(f"{project}/uv.lock", target=target)
        show(after)
    except glmcompat.GlmcompatError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0 if before.ok and after.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

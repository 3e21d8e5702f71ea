"""Record what ``glmcompat upgrade`` reads for every target on CPython 3.10 .. 3.14, for the property test
of tests/decide/test_resolver.py (upgrade never proposes a set ``check`` rejects).

Talks to the real package index (the URL is read at run time, as glmcompat does). For each Python and each
machine the targets ship on (their default platform), the resolver runs ``upgrade`` of the default stack
for every target (and explains the skipped releases for sm90) through a recording source; what it read -- the versions with a wheel for that Python
and machine, and the Requires-Dist of each release it looked at -- is written to
tests/fixtures/resolver/pythons/cpXY-MACHINE.json (no index host in it: versions and requirements only).

    python scripts/record_upgrade_pythons.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")
STACK = "glm5-sglang-0.5.9"
CUTOFF = "2026-11-29"
EXPLAINED = "sm90"  # the target whose skipped releases are explained too (tests read those explanations)


def main() -> int:
    from glmcompat.decide.explain import resolve, skip_reasons
    from glmcompat.decide.resolver import Request
    from glmcompat.decide.stacks import lock_platform
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient
    from glmcompat.edges.sources import IndexSource, RecordingSource
    from glmcompat.matrix.load import load_facts
    from glmcompat.model.errors import UnsafeError

    out = ROOT / "tests" / "fixtures" / "resolver" / "pythons"
    out.mkdir(parents=True, exist_ok=True)
    facts = load_facts()
    targets = [t.name for t in facts.rows("target")]
    with IndexClient(None, cache=Cache()) as client:
        for py in PYTHONS:
            sources: dict[str, RecordingSource] = {}
            for t in targets:
                machine = lock_platform(facts.target(t), None)
                src = sources.setdefault(machine, RecordingSource(IndexSource(client, python=py, exclude_newer=CUTOFF,
                                                                              platform=machine)))
                req = Request(STACK, facts.target(t), "glm_moe_dsa", (), True, python=py, platform=machine)
                try:
                    result = resolve(facts, src, req)
                    pins = result.pins
                    print(f"{py} {t} {machine}: {' '.join(f'{k}=={v}' for k, v in sorted(pins.items()))}")
                    if t == EXPLAINED:  # what the explanations of the skipped releases read, for one target
                        skip_reasons(facts, src, req, result)
                except UnsafeError as e:
                    print(f"{py} {t} {machine}: no safe set ({str(e).splitlines()[0][:100]})")
            for machine, src in sources.items():
                (out / f"cp{py.replace('.', '')}-{machine}.json").write_text(src.dump() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Record what the resolver reads from the index (versions, Requires-Dist) into a frozen JSON index.

Run by hand (needs the package index); the offline tests replay it with RecordedSource.

    python scripts/record_resolver_fixture.py [tests/fixtures/resolver/index.json]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from glmcompat.cache import Cache
from glmcompat.errors import UnsafeError
from glmcompat.facts import load_facts
from glmcompat.index import IndexClient
from glmcompat.resolver import IndexSource, RecordingSource, Request, resolve, skipped_newer

CUTOFF = "2026-11-29T00:00:00Z"


def main(out: Path) -> None:
    facts = load_facts()
    with IndexClient(cache=Cache()) as client:
        src = RecordingSource(IndexSource(client, exclude_newer=CUTOFF))
        for target in ("sm90", "sm100", "sm120", "sm103"):
            for with_ in ((), ("torch==2.10.0",)):
                try:
                    resolve(facts, src, Request("glm5-sglang-0.5.9", target, "glm_moe_dsa", with_))
                except UnsafeError:
                    pass
        resolve(facts, src, Request("sglang-0.5.23", "sm120", "glm_moe_dsa"))
        for stack in ("glm5-sglang-0.5.9", "sglang-0.5.23"):
            req = Request(stack, "sm120", "glm_moe_dsa", (), True)
            outcome = resolve(facts, src, req)
            skipped_newer(facts, src, req, outcome)
    data = json.loads(src.dump())
    data["#"] = f"Recorded by scripts/record_resolver_fixture.py from the index, exclude-newer {CUTOFF}"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}: {len(data) - 1} projects")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/resolver/index.json"))

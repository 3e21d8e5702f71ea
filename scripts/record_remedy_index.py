"""Record the package index as the remedy search reads it, for the offline remedy tests (tests/ops/test_remedy.py).

Run by hand, with the package index reachable (the one your installer uses):

    python scripts/record_remedy_index.py

For every case of tests/fixtures/remedy/cases.toml it writes the case's file(s) into a temporary directory, reads
them as ``check`` does and runs the remedy search (:func:`glmcompat.ops.remedy.for_lock`) against the live index
through a :class:`glmcompat.edges.sources.RecordingSource` per machine; what the search read (versions and
Requires-Dist) is written to tests/fixtures/remedy/index-<machine>.json in :class:`RecordedSource`'s format. No index
host is written: the recording holds versions and requirement strings only.
"""

from __future__ import annotations

import json
import sys
import tempfile
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from glmcompat.edges.cache import Cache
from glmcompat.edges.index import IndexClient
from glmcompat.edges.sources import IndexSource, RecordingSource
from glmcompat.matrix.load import load_facts
from glmcompat.ops.remedy import for_lock
from glmcompat.readers.formats import read_lock

HERE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "remedy"


def write_case(case: dict[str, Any], d: Path) -> Path:
    """The case's requirements file (and its include) in ``d``; the top file's path."""
    top = d / "requirements.txt"
    top.write_text(case["file"])
    inc = case.get("include")
    if inc:
        (d / inc[0]).write_text(inc[1])
    return top


def main() -> None:
    cases = tomllib.loads((HERE / "cases.toml").read_text())["case"]
    facts = load_facts()
    with IndexClient(cache=Cache()) as client:
        recorders: dict[str, RecordingSource] = {}

        def source_for(machine: str) -> RecordingSource:
            if machine not in recorders:
                recorders[machine] = RecordingSource(IndexSource(client, platform=machine))
            return recorders[machine]

        for case in cases:
            with tempfile.TemporaryDirectory() as tmp:
                top = write_case(case, Path(tmp))
                lock = read_lock(top)
                got = for_lock(lock, [case["target"]], None, facts, source_for, kind=lock.kind, path=top)
                print(f"{case['id']}: {got.remedy.safe_set if got.remedy else got.warning} ({got.tries} tries)",
                      file=sys.stderr)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d")
    for machine, rec in recorders.items():
        data = json.loads(rec.dump())
        data["#"] = f"Recorded by scripts/record_remedy_index.py from the index on {stamp} (Linux {machine}, CPython 3.11)"
        (HERE / f"index-{machine}.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()

"""Which transformers, sglang and vLLM releases first know a model (run by hand or by ``matrix refresh``; needs the index).

For each model type it reads, out of the released wheels by HTTP range requests, transformers'
``CONFIG_MAPPING_NAMES`` (configuration_auto.py, auto_mappings.py in 5.x), sglang's ``EntryClass`` of every
``sglang/srt/models/*.py`` and vLLM's ``registry.py`` (see :mod:`glmcompat.ops.modelprobe`), bisects over the final
releases for the first that knows it, reads the release before it, and prints the ``[[model]]`` row::

    python scripts/model_support.py glm_moe_dsa                      # a row of the matrix, re-derived
    python scripts/model_support.py --add qwen3_moe=Qwen3MoeForCausalLM
    python scripts/model_support.py --all --diff                     # every row; print only the rows that change

The index is the one pip/uv would use; no index host is written here. Exit 0 when every row was derived, 1 when a
re-derived row differs from the matrix (``--diff``), 2 on bad input, 3 when the index fails.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # glmcompat from this checkout

from glmcompat.edges.index import IndexClient  # noqa: E402
from glmcompat.matrix.curate import plain_row, render_row  # noqa: E402
from glmcompat.matrix.load import load_facts  # noqa: E402
from glmcompat.model.errors import EnvironmentFailure, InputError  # noqa: E402
from glmcompat.ops.modelprobe import derive_rows  # noqa: E402


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("model_type", nargs="*", help="model types of the matrix's [[model]] rows")
    ap.add_argument("--add", action="append", default=[], metavar="TYPE=ARCH[,ARCH]",
                    help="a model type the matrix lacks, with its architectures (config.json)")
    ap.add_argument("--all", action="store_true", help="every [[model]] row of the matrix")
    ap.add_argument("--diff", action="store_true", help="print only rows that differ from the matrix")
    a = ap.parse_args(argv)

    facts = load_facts()
    rows = {r.model_type: r for r in facts.rows("model")}
    wanted: dict[str, tuple[str, ...]] = {}
    for mt in (sorted(rows) if a.all else a.model_type):
        if mt not in rows:
            ap.error(f"unknown model type {mt!r} (use --add {mt}=Architecture)")
        wanted[mt] = tuple(rows[mt].architectures)
    for spec in a.add:
        mt, _, archs = spec.partition("=")
        if not mt or not archs:
            ap.error(f"--add {spec!r}: expected TYPE=ARCH[,ARCH]")
        wanted[mt] = tuple(x for x in archs.split(",") if x)
    if not wanted:
        ap.error("name a model type, --add or --all")
    t0 = time.monotonic()
    try:
        with IndexClient() as ic:
            old = {mt: rows[mt] for mt in wanted if mt in rows}
            derived, fetched = derive_rows(ic, wanted, old, log=lambda s: print(s, file=sys.stderr))
    except (InputError, EnvironmentFailure) as e:
        print(f"error: {e}", file=sys.stderr)
        return 3 if isinstance(e, EnvironmentFailure) else 2
    changed = 0
    for mt, row in derived.items():
        if row is None:
            print(f"# {mt}: no transformers release knows it", file=sys.stderr)
            changed += 1
            continue
        was = old.get(mt)
        same = was is not None and (was.transformers, was.sglang, was.vllm) == (row.transformers, row.sglang, row.vllm)
        changed += not same
        if a.diff and same:
            continue
        print(render_row("model", plain_row(row)))
    print(f"# {len(derived)} model(s), {fetched} bytes fetched, {time.monotonic() - t0:.1f} s", file=sys.stderr)
    return 1 if a.diff and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Where a refresh's rows go and which it writes: already-recorded rows are dropped, rows that contradict a
recorded one refused, package-level keys copied, each row sent to the file that holds its kind."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glmcompat.matrix.curate import Addition, row_identity, table_of, verdict
from glmcompat.matrix.rows import Fact, Requires
from glmcompat.matrix.schema import load_file
from glmcompat.model import platforms
from glmcompat.ops.refresh.floors import floor_recorded

if TYPE_CHECKING:
    from glmcompat.matrix.schema import Matrix
    from glmcompat.ops.refresh.probes import ReleaseOutcome

# Where a table's rows go when no file of the matrix holds a row of that table yet.
DEFAULT_FILES = {"torch": "torch.toml", "family": "torch.toml", "kernel": "kernels.toml",
                 "abi_probe": "kernels.toml", "arch_probe": "kernels.toml", "jit": "kernels.toml",
                 "release": "rules.toml", "requires": "rules.toml"}
# Keys that describe a package rather than a release: copied onto new rows when every existing row
# of the package agrees (torchao's on_mismatch = "warning" must not turn into an error for new releases).
PACKAGE_KEYS = {"kernel": ("on_mismatch", "consequence"), "family": ("failure",)}
ROW_ORDER = {"torch": 0, "family": 1, "kernel": 2, "jit": 3, "release": 4, "requires": 5, "abi_probe": 6,
             "arch_probe": 7}


def plan_writes(outcomes: Sequence[ReleaseOutcome], directory: Path, files: Sequence[Path],
                m: Matrix) -> list[tuple[Addition, ReleaseOutcome]]:
    """(the row to add and the file it goes to, its outcome) for every row to add: already-recorded rows are
    dropped, rows that contradict a recorded one are refused (said in the outcome), package-level keys copied."""
    loaded = [(p, load_file(p)[0]) for p in files]
    existing: dict[tuple[str, Any], Any] = {}
    for table in ROW_ORDER:
        for r in getattr(m, table):
            ident = row_identity(r)
            if ident is not None:
                existing[(table, ident)] = verdict(r)
    plan = []
    for o in outcomes:
        if o.failed:
            continue
        for row in sorted(o.rows, key=lambda r: ROW_ORDER.get(table_of(r), 9)):
            table = table_of(row)
            if isinstance(row, Requires) and floor_recorded(row, m.requires):
                continue
            ident = row_identity(row)
            key = (table, ident)
            if ident is not None and key in existing:
                if existing[key] != verdict(row):
                    o.unproved.append(f"the [[{table}]] row it proved contradicts the recorded one: not written; "
                                      "review by hand")
                continue
            if ident is not None:
                existing[key] = verdict(row)
            row, also = with_package_keys(row, getattr(m, table))
            path = target_file(directory, loaded, table, getattr(row, "package", None),
                               getattr(row, "platform", "x86_64"))
            plan.append((Addition(path, row, also), o))
    return plan


def with_package_keys(row: Fact, rows: Sequence[Fact]) -> tuple[Fact, tuple[str, ...]]:
    """``row`` with the package-level keys (:data:`PACKAGE_KEYS`) that every row of ``rows`` (its table's) about
    the same package and platform agrees on, and the names of the keys copied (written even at their default)."""
    keys = PACKAGE_KEYS.get(table_of(row), ())
    package, platform = getattr(row, "package", None), getattr(row, "platform", "x86_64")
    same = [r for r in rows if getattr(r, "package", None) == package and not getattr(r, "variant", None)
            and getattr(r, "platform", "x86_64") == platform]
    extra = {}
    for k in keys if same else ():
        values = {getattr(r, k) for r in same}
        if len(values) == 1 and getattr(same[0], k) is not None:
            extra[k] = getattr(same[0], k)
    if not extra:
        return row, ()
    return replace(row, **extra), tuple(extra)


def target_file(directory: Path, loaded: Sequence[tuple[Path, Any]], table: str, package: str | None,
                platform: str = "x86_64") -> Path:
    """The file a new ``table`` row about ``platform``'s wheel goes to: the last one holding a row of that
    table for the same package and platform, else the last one holding that table's rows of that platform,
    else (aarch64) the file holding most aarch64 rows, else the table's usual file."""
    def pkg_of(r: Any) -> str | None:
        return getattr(r, "package", None)

    def plat_of(r: Any) -> str:
        return str(getattr(r, "platform", "x86_64"))

    def rows(mf: Any) -> list[Any]:
        return [r for r in getattr(mf, table, ()) if plat_of(r) == platform]

    same = [p for p, mf in loaded if any(package is None or pkg_of(r) == package for r in rows(mf))]
    if same:
        return same[-1]
    own = [p for p, _ in loaded if package is not None and p.name == f"{package}.toml" and platform == "x86_64"]
    if own:  # the package's own file (torchcodec.toml, vllm.toml)
        return own[0]
    # the file holding most rows about the package's wheels of this platform (vllm.toml for vLLM), else the one
    # holding most rows of the table on this platform
    tables = platforms.PER_PLATFORM if table in platforms.PER_PLATFORM else (table,)
    most = max(((sum(pkg_of(r) == package and plat_of(r) == platform for t in tables for r in getattr(mf, t, ())), p)
                for p, mf in loaded), default=(0, directory), key=lambda np: np[0])
    if package is not None and most[0]:
        return most[1]
    most = max(((len(rows(mf)), p) for p, mf in loaded), default=(0, directory), key=lambda np: np[0])
    if most[0]:
        return most[1]
    if platform != "x86_64":
        counts = [(sum(plat_of(r) == platform for t in platforms.PER_PLATFORM for r in getattr(mf, t, ())), p)
                  for p, mf in loaded]
        best = max(counts, default=(0, directory), key=lambda np: np[0])
        if best[0]:
            return best[1]
        return directory / f"{platform}.toml"
    return directory / DEFAULT_FILES.get(table, "kernels.toml")

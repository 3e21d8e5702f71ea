"""The ``[[model]]`` rows a refresh updates in place: the bounds that newer transformers, sglang and vLLM releases
add (:mod:`glmcompat.ops.modelprobe` reads the releases)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from glmcompat.model.outputs.refresh import BoundDoc, ModelUpdateDoc
from glmcompat.matrix.curate import Replacement, replace_rows
from glmcompat.matrix.rows import ModelSupport
from glmcompat.matrix.schema import load_file
from glmcompat.ops import modelprobe as mp
from glmcompat.ops.refresh.common import pmap
from glmcompat.ops.refresh.options import DEFAULT_JOBS

if TYPE_CHECKING:
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient

MODEL_PACKAGES = mp.ENGINES  # a release of these can change [[model]] rows: the packages the model probe reads


@dataclass
class ModelUpdate:
    """A ``[[model]]`` row a refresh changed in place: the bounds newer releases add."""

    model_type: str
    file: str
    changed: dict[str, tuple[str | None, str | None]]  # a bound of mp.BOUNDS -> (before, after)

    def to_output(self) -> ModelUpdateDoc:
        return ModelUpdateDoc(model_type=self.model_type, file=self.file,
                              changed={k: BoundDoc(before=a, after=b) for k, (a, b) in sorted(self.changed.items())})


def refresh_models(index: IndexClient, cache: Cache | None, files: Sequence[Path], packages: Iterable[str], *,
                   dry_run: bool = False, jobs: int = DEFAULT_JOBS) -> tuple[list[ModelUpdate], int]:
    """Update the ``[[model]]`` rows in place from the releases of ``packages`` (of :data:`MODEL_PACKAGES`): a row
    gains the bound of a package whose first release knowing the model came out since it was derived
    (:func:`glmcompat.ops.modelprobe.update_row`). Reads the newest release of each package once (cached by its
    sha256), more only for a row that changes. Returns (updates, bytes fetched)."""
    chosen = [p for p in MODEL_PACKAGES if p in set(packages)]
    rows: list[tuple[Path, int, ModelSupport]] = []
    for path in files:
        mf, _ = load_file(path)
        rows += [(path, i, r) for i, r in enumerate(mf.model)]
    if not chosen or not rows:
        return [], 0

    def prober(package: str) -> mp.Prober:
        project = index.project(package)
        return mp.Prober(package, mp.final_releases(project), mp.cached_read(index, project, cache))

    probers = dict(zip(chosen, pmap(prober, chosen, jobs), strict=True))
    pmap(lambda p: p.look(p.versions[-1]) if p.versions else None, list(probers.values()), jobs)  # the newest, at once
    changes: list[Replacement] = []
    updates: list[ModelUpdate] = []
    for path, i, row in rows:
        new = mp.update_row(row, probers)
        if new is None:
            continue
        changes.append(Replacement(path, i, new))
        diff = {k: (getattr(row, k), getattr(new, k)) for k in mp.BOUNDS if getattr(row, k) != getattr(new, k)}
        updates.append(ModelUpdate(row.model_type, str(path), diff))
    if changes:
        replace_rows(files, changes, dry_run=dry_run)
    return updates, sum(p.bytes_fetched for p in probers.values())

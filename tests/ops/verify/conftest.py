"""Hermetic verify runs: a test's subject is the site it builds (``--path``), not this virtual environment."""

from __future__ import annotations

import sys

import pytest

from glmcompat.ops.verify import core
from glmcompat.ops.verify.extensions import COVERED, ExtDist, scan


@pytest.fixture(autouse=True)
def _extensions_of_the_given_sites_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process runs import the extension modules of the ``--path`` folders only: this environment's own
    (mypy's 232 compiled modules, pydantic-core, ...) would cost every run a second of CPU and test nothing
    of the case. ``scan`` itself runs unchanged; the CLI runs (a process each) scan everything."""
    given_sites_only(monkeypatch)


def given_sites_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``_extensions_of_the_given_sites_only`` does, for a module-scoped fixture's run (set up before it)."""
    here = set(sys.path)

    def given_sites(search: list[str], skip: frozenset[str] = COVERED) -> list[ExtDist]:
        return scan([s for s in search if s not in here], skip)

    monkeypatch.setattr(core, "scan", given_sites)

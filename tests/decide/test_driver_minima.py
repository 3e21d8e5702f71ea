"""`check` and `explain` state one minimum driver for each CUDA release: both read the matrix's ``[[cuda]]`` rows
(NVIDIA's CUDA Toolkit release notes: minor-version compatibility, and each toolkit's own driver), so a log's
diagnosis and a lock's verdict agree (issue 38)."""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.cli import main
from glmcompat.decide import cudadriver
from glmcompat.decide.cudacauses import min_driver
from glmcompat.decide.rules import evaluate
from glmcompat.matrix.load import load_facts
from glmcompat.model.machine import Machine, Provenance

FACTS = load_facts()
ROWS = sorted(FACTS.rows("cuda"), key=lambda r: [int(p) for p in r.release.split(".")])


def _machine(driver: str) -> Machine:
    return Machine(("sm90",), Provenance("flag", "--target"), driver, Provenance("flag", "--driver"))


def _errors(torch: str, driver: str) -> list[str]:
    return [f.message for f in evaluate({"torch": torch}, target="sm90", matrix=FACTS, machine=_machine(driver))
            if f.rule == "driver" and f.severity in ("error", "warning")]


@pytest.mark.parametrize("row", ROWS, ids=[r.release for r in ROWS])
def test_check_and_explain_state_the_same_minimum(row, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    floor, own = min_driver(row.release, FACTS)
    assert (floor, own) == (cudadriver.needs(row.release, FACTS)[0], row.driver)
    torch = f"2.7.1+cu{row.release.replace('.', '')}"
    below = f"{int(floor.split('.')[0]) - 1}.0"
    # check: the floor runs the build, a driver below it does not, and the error names the same floor
    assert not _errors(torch, floor)
    errors = _errors(torch, below)
    assert len(errors) == 1 and f">= {floor}" in errors[0], errors
    # explain, on torch's own error for that build: the same floor, and the toolkit's own driver
    log = tmp_path / "x.log"
    log.write_text(f"torch=={torch}\nRuntimeError: The NVIDIA driver on your system is too old (found version 11000).\n")
    assert main(["explain", "--color", "never", str(log)]) == 1
    out = capsys.readouterr().out
    assert f"CUDA {row.release} builds need driver >= {floor}" in out, out
    assert own == floor or f">= {own}, CUDA {row.release}'s own driver" in out, out

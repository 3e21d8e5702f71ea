"""`glmcompat check` on dependency files real projects published (tests/fixtures/realworld/): every
verdict in expected.tsv, judged independently of glmcompat, must come out right, as a user sees it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

HERE = Path(__file__).parent / "fixtures" / "realworld"
ROWS = [line.rstrip("\n").split("\t") for line in (HERE / "expected.tsv").read_text().splitlines()
        if line.strip() and not line.startswith("#")]


@pytest.mark.slow
@pytest.mark.parametrize("case,file,target,want,args,why", ROWS, ids=[f"{r[0]}-{r[2]}" for r in ROWS])
def test_real_world_verdict(tmp_path, case, file, target, want, args, why):
    extra = [] if args == "-" else args.split()
    r = run_cli("check", file, "--target", target, *extra, cwd=HERE / case,
                env={"GLMCOMPAT_CACHE_DIR": str(tmp_path / "cache")})
    assert "Traceback" not in r.stderr
    assert r.returncode == int(want), f"{why}\n{r.stdout}{r.stderr}"


def test_every_case_keeps_its_source():
    for case in sorted({r[0] for r in ROWS}):
        src = (HERE / case / "SOURCE").read_text().strip()
        assert src, case

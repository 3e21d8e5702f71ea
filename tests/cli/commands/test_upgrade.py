"""`glmcompat upgrade` on the live index knows the newest engine releases the matrix was refreshed to (issue 37)."""

from __future__ import annotations

import pytest

from glmcompat.matrix.load import load_facts
from tests.conftest import run_cli


def test_the_matrix_has_rows_for_vllm_0_34_0():
    """The refresh that reached 2026-12-06: vllm 0.34.0 (on the index since 2026-11-16) has its [[kernel]] row (the
    torch it pins, its GPU code) and its [[release]] row (its Requires-Dist)."""
    facts = load_facts()
    k = facts.kernel("vllm", "0.34.0")
    assert k is not None and k.torch and k.sass
    assert any(r.package == "vllm" and r.version == "0.34.0" for r in facts.rows("release"))


@pytest.mark.network
@pytest.mark.slow
def test_upgrade_vllm_sm120_names_vllm_0_34_0_and_why_it_is_skipped():
    r = run_cli("upgrade", "--engine", "vllm", "--target", "sm120", "--color", "never")
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if "vllm 0.34.0" in ln]
    assert lines, r.stdout  # chosen, or skipped with its reason
    assert "vllm==0.34.0" in r.stdout or lines[0].lstrip().startswith("vllm 0.34.0: Because ")

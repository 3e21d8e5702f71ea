"""The messages of tests/fixtures/raise_sites/last2-signatures.toml (issue 38, branch fix-last2): real tracebacks under
the prefixes log collectors write before every line (docker compose's service column, with and without its timestamps,
FastChat's logger columns, kubectl's and stern's pod and container, journald's), read as the unprefixed log; uv's
derivation "X>=A has no wheels with a matching <tag> tag (e.g., `<tag>`)" named however uv wrapped it; near misses
unclaimed. And every real fixture log read the same under each collector's prefix as without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.decide.pasted import unshared
from tests.decide.explaining import explain, table

MESSAGES = table("last2-signatures.toml")
LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "explain" / "logs"



# each collector's prefix for line k of a log, as the tool's source writes it (sources in last2-signatures.toml)
PREFIXES = {
    "compose": lambda k: "fastchat-model-worker-1  | ",
    "compose-t": lambda k: f"worker-1  | 2024-09-26T06:{k // 60 % 60:02d}:{k % 60:02d}.{k * 7919 % 10**9:09d}Z ",
    "fastchat": lambda k: f"2024-09-26 06:{k // 60 % 60:02d}:{k % 60:02d} | ERROR | stderr | ",
    "kubectl": lambda k: "[pod/vllm-0/vllm] ",
    "stern": lambda k: "vllm-deploy-7d9f8b6c5-x2k4p vllm ",
    "journald": lambda k: f"Sep 26 06:{k // 60 % 60:02d}:{k % 60:02d} gpu-host python3[4121]: ",
}
REAL = ["glm5-22-keyerror.log", "hunyuan-7b-3-model-type.log", "bc-boltz-361-cuequivariance-ops-platform-tag.log"]


@pytest.mark.parametrize("kind", sorted(PREFIXES))
@pytest.mark.parametrize("log", REAL)
def test_prefixed_real_log_reads_as_unprefixed(log, kind, tmp_path, capsys):
    text = (LOGS / log).read_text(encoding="utf-8")
    plain_code, plain = explain(text, tmp_path, capsys)
    assert plain_code == 1, plain
    prefixed = "\n".join(PREFIXES[kind](k) + line for k, line in enumerate(text.splitlines()))
    code, out = explain(prefixed, tmp_path, capsys)
    ids = [ln.split(": ", 1)[1] for ln in plain.splitlines() if ln.startswith("line ")]
    assert code == 1 and ids and all(f": {sid}" in out for sid in ids), out


def test_text_that_differs_line_to_line_is_kept():
    """A column whose words differ from line to line (a table's names) is no collector's prefix, nor a run shorter
    than three lines."""
    rows = [(1, "torch  | 2.4.0"), (2, "numpy  | 1.26.4"), (3, "triton | 3.0.0")]
    assert unshared(rows) == rows
    short = [(1, "app-1  | Traceback (most recent call last):"), (2, "app-1  | KeyError: 'x'")]
    assert unshared(short) == short
    run = [(k, f"app-1  | line {k}") for k in range(1, 4)]
    assert [t for _, t in unshared(run)] == ["line 1", "line 2", "line 3"]

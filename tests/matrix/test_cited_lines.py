"""A `source` that cites a line of a wheel's file and quotes it (`extend_attention.py:67 ... `if ...``) cites the line the
quoted code is on (issue 37 found one a line off). Network: each cited member is read from its wheel on the index by
range requests."""

from __future__ import annotations

import re

import pytest
from packaging.utils import parse_wheel_filename

from glmcompat.matrix.load import load_facts

CITE = re.compile(r"([A-Za-z0-9_.+-]+\.whl):? ([A-Za-z0-9_/.-]+\.py):(\d+)(?:-\d+)?[^`;]{0,80}?`([^`]+)`")
TABLES = ("target_requirement", "requires", "signature", "kernel", "model", "release", "family", "jit", "torch")


def citations() -> list[tuple[str, str, int, str]]:
    facts = load_facts()
    out = []
    for table in TABLES:
        for row in facts.all_rows(table):
            for m in CITE.finditer(getattr(row, "source", "") or ""):
                out.append((m.group(1), m.group(2), int(m.group(3)), m.group(4)))
    return sorted(set(out))


def test_the_citations_are_found():
    """The pattern reads the matrix's quoted line citations (one that matched nothing would pass anything)."""
    assert ("sglang-0.5.9-py3-none-any.whl", "sglang/srt/layers/attention/triton_ops/extend_attention.py", 67,
            "if _is_cuda and CUDA_CAPABILITY[0] == 12:") in citations()


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize(("wheel", "member", "line", "quoted"), citations())
def test_a_cited_line_holds_the_quoted_code(wheel, member, line, quoted):
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient
    from glmcompat.edges.ranges import HttpRangeReader
    from glmcompat.readers.wheelzip import RemoteZip

    name, version, _, _ = parse_wheel_filename(wheel)
    with IndexClient(cache=Cache()) as client:
        files = [f for f in client.project(str(name)).files if f.filename == wheel]
        assert files, f"{wheel} is not on the index"
        f = files[0]
        zf = RemoteZip(HttpRangeReader(client.client, f.url, name=f.filename, size=f.size))
        lines = zf.read(member).decode("utf-8", "replace").splitlines()
    assert quoted.strip() in lines[line - 1], (
        f"{wheel} {member}:{line} is {lines[line - 1].strip()!r}; the quoted code is on line "
        f"{next((i + 1 for i, x in enumerate(lines) if quoted.strip() in x), None)}")

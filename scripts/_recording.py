"""What the fixture recorders share (scripts/record_floor_fixtures.py, scripts/record_modelprobe_fixtures.py): the wheel
of a release that glmcompat reads, and one member of it read by range requests, as ``matrix refresh`` and the model
probe read them (needs the index)."""

from __future__ import annotations

from glmcompat.edges.index import IndexClient, IndexFile
from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.model.errors import EnvironmentFailure
from glmcompat.ops.refresh import pick_wheel
from glmcompat.readers.wheelzip import RemoteZip


def wheel(ic: IndexClient, package: str, version: str) -> IndexFile:
    """The wheel of ``package==version`` that glmcompat reads (Linux x86_64, CPython 3.11 first; not yanked)."""
    picked = pick_wheel([f for f in ic.project(package).files_for(version) if not f.yanked])
    if picked is None:
        raise EnvironmentFailure(f"{package} {version} has no Linux x86_64 wheel")
    return picked[0]


def read_member(ic: IndexClient, f: IndexFile, member: str) -> tuple[str, int]:
    """(the text of ``member`` of the wheel ``f``, the bytes fetched to read it: its central directory and that
    member)."""
    reader = HttpRangeReader(ic.client, f.url, name=f.filename, size=f.size)
    text = RemoteZip(reader).read(member).decode("utf-8", "replace")
    return text, reader.bytes_fetched

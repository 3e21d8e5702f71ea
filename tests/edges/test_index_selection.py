"""The cold lock's index reads, made faster without changing an answer: the tag ranks of a wheel selection are
built once per tag list, the resolver's first questions are prefetched concurrently, and a wheel's local header
and METADATA come in one range request. Offline: the recorded index (tests/fixtures/resolver/pages.json, at
index.invalid) and wheels built here."""

from __future__ import annotations

import io
import json
import random
import threading
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from glmcompat.decide.explain import resolve
from glmcompat.decide.resolver import Request
from glmcompat.edges.cache import Cache
from glmcompat.edges.index import ACCEPT_JSON, IndexClient, IndexFile, parse_project_page, select_wheel, supported_tags
from glmcompat.edges.sources import IndexSource
from glmcompat.matrix.load import load_facts

from tests.conftest import FIXTURES

STACK = "glm5-sglang-0.5.9"


@pytest.fixture(scope="module")
def recorded() -> Any:
    return json.loads((FIXTURES / "resolver" / "pages.json").read_text())


def reference_select(files: list[IndexFile], tags: list[Any]) -> IndexFile | None:
    """select_wheel as it was before the rank memo: the ranks built on every call."""
    rank = {str(t): i for i, t in enumerate(tags)}
    best: Any = None
    for f in files:
        if not f.is_wheel or f.yanked:
            continue
        r = min((rank[t] for t in f.tags if t in rank), default=None)
        if r is None:
            continue
        try:
            build = parse_wheel_filename(f.filename)[2]
        except InvalidWheelFilename:
            continue
        key = (r, tuple(-x if isinstance(x, int) else x for x in build) or (0,), f.filename)
        if best is None or key < best[0]:
            best = (key, f)
    return best[1] if best else None


@pytest.mark.slow
@pytest.mark.parametrize("python,platform", [("cp311", "manylinux_x86_64"), ("cp312", "manylinux_aarch64"),
                                             ("cp310", "manylinux_2_17_x86_64")])
def test_the_rank_memo_selects_what_selection_always_selected(recorded, python, platform):
    tags = supported_tags(python, platform)
    n = 0
    for name, page in recorded["pages"].items():
        project = parse_project_page(page, f"https://index.invalid/simple/{name}/")
        for v in project.versions:
            files = project.files_for(v)
            assert select_wheel(files, tags) == reference_select(files, tags), (name, v)
            n += 1
    assert n > 500


class CountingTags(list):  # type: ignore[type-arg]
    iterations = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        CountingTags.iterations += 1
        return super().__iter__()


def test_the_ranks_are_built_once_per_tag_list(recorded):
    project = parse_project_page(recorded["pages"]["torch"], "https://index.invalid/simple/torch/")
    tags = CountingTags(supported_tags("cp311", "manylinux_x86_64"))
    for v in project.versions:
        select_wheel(project.files_for(v), tags)
    assert CountingTags.iterations == 1
    tags.append(tags[0])  # a list that changed is ranked again
    select_wheel(project.files, tags)
    assert CountingTags.iterations == 2


def counting_index(recorded: Any, cache_dir: Path) -> tuple[IndexClient, Counter[str]]:
    """An IndexClient over the recorded pages and METADATA that counts the requests for each URL."""
    pages, metadata = recorded["pages"], recorded["metadata"]
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    def handler(request: httpx.Request) -> httpx.Response:
        with lock:
            seen[str(request.url)] += 1
        parts = request.url.path.strip("/").split("/")
        if request.url.host == "index.invalid" and len(parts) == 2 and parts[0] == "simple" and parts[1] in pages:
            return httpx.Response(200, json=pages[parts[1]], headers={"content-type": ACCEPT_JSON})
        if str(request.url) in metadata:
            return httpx.Response(200, content=metadata[str(request.url)].encode())
        return httpx.Response(404)

    client = IndexClient("https://index.invalid/simple/", client=httpx.Client(transport=httpx.MockTransport(handler)),
                         cache=Cache(cache_dir), retries=0)
    return client, seen


@pytest.mark.parametrize("target,platform,upgrade", [("sm120", "x86_64", False), ("sm121", "aarch64", False),
                                                     ("sm120", "x86_64", True)])
def test_prefetching_changes_nothing_but_speed(recorded, tmp_path, target, platform, upgrade):
    """The same resolution with and without the prefetch, no URL fetched twice, and nothing more fetched than
    the stack's packages' pages and its pins' METADATA (where the resolution departs from them)."""
    facts = load_facts()
    stack = facts.stack(STACK)
    req = Request(STACK, facts.target(target), "glm_moe_dsa", (), upgrade, "3.11", platform)
    outcomes, seen = [], []
    for prefetch in (False, True):
        client, urls = counting_index(recorded, tmp_path / f"cache-{prefetch}")
        with client:
            src = IndexSource(client, exclude_newer=recorded["cutoff"], platform=platform)
            if prefetch:
                wanted: dict[str, str | None] = dict.fromkeys(stack.pins)
                if not upgrade:
                    wanted.update(stack.pins)
                src.prefetch(list(wanted.items()))
            outcomes.append(resolve(facts, src, req))
            src.close()
            if src._pool is not None:
                src._pool.shutdown(wait=True)
        seen.append(urls)
    assert outcomes[0].pins == outcomes[1].pins and outcomes[0].overridden == outcomes[1].overridden
    assert max(seen[1].values()) == 1 and max(seen[0].values()) == 1
    assert set(seen[0]) <= set(seen[1])
    pages = {f"https://index.invalid/simple/{n}/" for n in stack.pins}
    extra = set(seen[1]) - set(seen[0])
    assert all(u in pages or u.endswith((".metadata", ".whl")) for u in extra), extra  # a page or a METADATA read


# -- one request for the local header and METADATA --------------------------------------------------------


def wheel_bytes(extra_field: bytes = b"") -> bytes:
    """A wheel whose METADATA comes first and 256 KiB of incompressible data after it: the METADATA is not in
    the tail a reader fetches first. ``extra_field``: the local header's extra field for METADATA."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        info = zipfile.ZipInfo("demo-1.0.dist-info/METADATA", (2020, 1, 1, 0, 0, 0))
        info.extra = extra_field
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Dist: torch==2.9.1\n" + "X-Pad: y\n" * 200)
        z.writestr(zipfile.ZipInfo("demo/blob.bin", (2020, 1, 1, 0, 0, 0)), random.Random(0).randbytes(256 << 10))
        z.writestr(zipfile.ZipInfo("demo-1.0.dist-info/RECORD", (2020, 1, 1, 0, 0, 0)), "")
    return buf.getvalue()


def ranged_client(data: bytes, ranges: list[str]) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        spec = request.headers.get("range", "")
        ranges.append(spec)
        lo_s, _, hi_s = spec.removeprefix("bytes=").partition("-")
        if not lo_s:
            lo, hi = len(data) - int(hi_s), len(data) - 1
        else:
            lo, hi = int(lo_s), min(int(hi_s), len(data) - 1)
        return httpx.Response(206, content=data[lo:hi + 1],
                              headers={"content-range": f"bytes {lo}-{hi}/{len(data)}", "content-length": str(hi - lo + 1)})

    return httpx.Client(transport=httpx.MockTransport(handler))


@pytest.mark.parametrize("extra_len,requests", [(0, 2), (4000, 3)], ids=["usual", "long-extra-field"])
def test_metadata_is_one_range_request_after_the_directory(tmp_path, extra_len, requests):
    extra = (b"\xfe\xca" + (extra_len - 4).to_bytes(2, "little") + b"\0" * (extra_len - 4)) if extra_len else b""
    data = wheel_bytes(extra)
    ranges: list[str] = []
    client = IndexClient("https://index.invalid/simple/", client=ranged_client(data, ranges), cache=None, retries=0)
    f = IndexFile(filename="demo-1.0-py3-none-any.whl", url="https://index.invalid/files/demo-1.0-py3-none-any.whl",
                  size=len(data), sha256=None, requires_python=None, yanked=False, version="1.0", is_wheel=True)
    text = client.wheel_metadata(f)
    assert "Requires-Dist: torch==2.9.1" in text and text.count("X-Pad: y") == 200
    assert len(ranges) == requests, ranges  # the tail (with the directory), then the header and METADATA together

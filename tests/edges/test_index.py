"""Index client: URL resolution, PEP 691 pages (recorded), wheel choice, retries and errors.

The recorded pages under tests/fixtures/index/ were trimmed from the real index's answers; every
host in them is a placeholder.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glmcompat.edges.cache import Cache
from glmcompat.edges.index import (
    ACCEPT_JSON,
    IndexClient,
    IndexFile,
    default_index_url,
    iter_requires_dist,
    parse_project_page,
    platform_tags,
    select_wheel,
    supported_tags,
)
from glmcompat.model.errors import EnvironmentFailure, InputError

FIXTURES = Path(__file__).parents[1] / "fixtures" / "index"
BASE = "https://index.invalid/simple"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL", "PIP_CONFIG_FILE", "VIRTUAL_ENV"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / "xdg-dirs"))


class LocalIndex:
    """An httpx transport serving recorded project pages, .metadata files and wheels."""

    def __init__(self) -> None:
        self.pages = {p.stem: json.loads(p.read_text()) for p in FIXTURES.glob("*.json")}
        self.files: dict[str, bytes] = {}
        self.calls: list[str] = []
        self.fail: dict[str, list[int]] = {}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        self.calls.append(url)
        codes = self.fail.get(url)
        if codes:
            return httpx.Response(codes.pop(0))
        if url.startswith(BASE + "/"):
            name = url[len(BASE) + 1:].strip("/")
            if name not in self.pages:
                return httpx.Response(404)
            return httpx.Response(200, json=self.pages[name], headers={"content-type": ACCEPT_JSON})
        if url in self.files:
            data = self.files[url]
            rng = request.headers.get("range")
            if rng:
                lo_s, _, hi_s = rng.removeprefix("bytes=").partition("-")
                lo, hi = (len(data) - int(hi_s), len(data) - 1) if lo_s == "" else (int(lo_s), min(int(hi_s), len(data) - 1))
                return httpx.Response(206, content=data[lo:hi + 1],
                                      headers={"content-range": f"bytes {lo}-{hi}/{len(data)}"})
            return httpx.Response(200, content=data)
        return httpx.Response(404)

    def client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self))


# -- index URL ------------------------------------------------------------------------------------


def test_env_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", "https://c.invalid/simple")
    assert default_index_url() == "https://c.invalid/simple"
    monkeypatch.setenv("UV_INDEX_URL", "https://b.invalid/simple")
    assert default_index_url() == "https://b.invalid/simple"
    monkeypatch.setenv("UV_DEFAULT_INDEX", "https://a.invalid/simple")
    assert default_index_url() == "https://a.invalid/simple"


def test_pip_config(tmp_path: Path) -> None:
    conf = tmp_path / "xdg" / "pip" / "pip.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text("[global]\nindex-url = https://conf.invalid/simple\n")
    assert default_index_url() == "https://conf.invalid/simple"


def test_uv_config(tmp_path: Path) -> None:
    conf = tmp_path / "xdg" / "uv" / "uv.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text('[[index]]\nurl = "https://uv.invalid/simple"\ndefault = true\n')
    assert default_index_url() == "https://uv.invalid/simple"


def test_pip_builtin_default() -> None:
    from pip._internal.models.index import PyPI

    assert default_index_url() == PyPI.simple_url


def test_without_pip_the_default_is_uvs(monkeypatch: pytest.MonkeyPatch) -> None:
    """An environment made by uv (or `uv tool install`) has no pip: the default is the one the real uv binary
    names in its help, which is pip's own default (both read here at run time)."""
    import sys

    from pip._internal.models.index import PyPI

    from glmcompat.edges.index import uv_default_index

    monkeypatch.setitem(sys.modules, "pip._internal.models.index", None)  # pip is not importable
    assert uv_default_index() == PyPI.simple_url
    assert default_index_url() == PyPI.simple_url
    monkeypatch.setattr("glmcompat.edges.uv.uv_binary", lambda: "/nonexistent/uv")
    with pytest.raises(EnvironmentFailure, match="set UV_DEFAULT_INDEX"):
        default_index_url()


# -- pages and wheel choice -----------------------------------------------------------------------


def test_parse_recorded_page() -> None:
    page = json.loads((FIXTURES / "sgl-kernel.json").read_text())
    p = parse_project_page(page, BASE + "/sgl-kernel/")
    assert p.name == "sgl-kernel"
    files = p.files_for("0.3.21")
    assert {f.filename for f in files} >= {"sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl"}
    f = next(f for f in files if f.filename.endswith("x86_64.whl"))
    assert f.size and f.size > 100_000_000 and f.sha256 and len(f.sha256) == 64
    assert f.is_wheel and "cp310-abi3-manylinux2014_x86_64" in f.tags and not f.yanked
    assert f.requires_python == ">=3.10"


def test_relative_urls_and_metadata_flag() -> None:
    page = {"name": "x", "files": [{"filename": "x-1.0-py3-none-any.whl", "url": "../../files/x-1.0-py3-none-any.whl",
                                    "hashes": {"sha256": "ab" * 32}, "core-metadata": {"sha256": "cd" * 32}}]}
    p = parse_project_page(page, BASE + "/x/")
    f = p.files[0]
    assert f.url == "https://index.invalid/files/x-1.0-py3-none-any.whl"
    assert f.metadata_url == f.url + ".metadata" and f.metadata_sha256 == "cd" * 32
    assert p.versions == ["1.0"]


def test_not_a_page() -> None:
    with pytest.raises(InputError, match="not a PEP 691"):
        parse_project_page({"nope": 1}, BASE + "/x/")


@pytest.mark.parametrize(
    ("python", "platform", "want"),
    [
        ("cp311", "manylinux_x86_64", "torch-2.10.0-3-cp311-cp311-manylinux_2_28_x86_64.whl"),
        ("cp312", "x86_64", "torch-2.10.0-3-cp312-cp312-manylinux_2_28_x86_64.whl"),
        ("3.11", "manylinux_2_28_aarch64", "torch-2.10.0-cp311-cp311-manylinux_2_28_aarch64.whl"),
        ("cp311", "manylinux_2_17_x86_64", None),
    ],
)
def test_select_wheel(python: str, platform: str, want: str | None) -> None:
    p = parse_project_page(json.loads((FIXTURES / "torch.json").read_text()), BASE + "/torch/")
    f = select_wheel(p.files_for("2.10.0"), supported_tags(python, platform))
    assert (f.filename if f else None) == want


def test_abi3_wheel_for_newer_python() -> None:
    p = parse_project_page(json.loads((FIXTURES / "sgl-kernel.json").read_text()), BASE + "/sgl-kernel/")
    f = select_wheel(p.files_for("0.3.21"), supported_tags("cp312", "manylinux_x86_64"))
    assert f is not None and f.filename == "sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl"


def test_platform_tags_and_bad_input() -> None:
    tags = platform_tags("manylinux_2_28_x86_64")
    assert tags[0] == "manylinux_2_28_x86_64" and "manylinux2014_x86_64" in tags and tags[-1] == "linux_x86_64"
    with pytest.raises(InputError, match="unsupported platform"):
        platform_tags("win_amd64")
    with pytest.raises(InputError, match="invalid Python version"):
        supported_tags("python3", "x86_64")


def test_yanked_is_skipped() -> None:
    f = IndexFile("x-1.0-py3-none-any.whl", "u", 1, None, None, True, "1.0", True, frozenset({"py3-none-any"}))
    assert select_wheel([f], supported_tags("cp311", "x86_64")) is None


# -- client ---------------------------------------------------------------------------------------


def test_client_project_and_find() -> None:
    idx = LocalIndex()
    with IndexClient(BASE, client=idx.client()) as ic:
        f = ic.find_wheel("sgl_kernel", "0.3.21")
        assert f.filename == "sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl"
        assert f.url.startswith("https://files.invalid/")
        with pytest.raises(InputError, match="not on the index"):
            ic.find_wheel("sgl-kernel", "9.9.9")
        with pytest.raises(InputError, match="HTTP 404"):
            ic.project("no-such-project")
        with pytest.raises(InputError, match="has no wheel for cp311 on ppc64le"):
            ic.find_wheel("sgl-kernel", "0.3.21", platform="ppc64le")


def test_retries_then_success() -> None:
    idx = LocalIndex()
    idx.fail[BASE + "/torch/"] = [503, 502]
    with IndexClient(BASE, client=idx.client(), backoff=0) as ic:
        assert ic.project("torch").name == "torch"
    assert idx.calls.count(BASE + "/torch/") == 3


def test_retries_exhausted() -> None:
    idx = LocalIndex()
    idx.fail[BASE + "/torch/"] = [503] * 10
    with IndexClient(BASE, client=idx.client(), backoff=0, retries=2) as ic, \
            pytest.raises(EnvironmentFailure, match="HTTP 503 after 3 attempts"):
        ic.project("torch")


def test_offline_and_timeout() -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("Name or service not known", request=request)

    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    for handler, msg in ((down, "cannot connect"), (slow, "timed out")):
        with IndexClient(BASE, client=httpx.Client(transport=httpx.MockTransport(handler)), backoff=0) as ic, \
                pytest.raises(EnvironmentFailure, match=msg) as e:
            ic.project("torch")
        assert "\n" not in str(e.value)


def test_html_answer_is_refused() -> None:
    def html(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="<html></html>", headers={"content-type": "text/html"})

    with IndexClient(BASE, client=httpx.Client(transport=httpx.MockTransport(html))) as ic, \
            pytest.raises(EnvironmentFailure, match="PEP 691"):
        ic.project("torch")


def _wheel(meta: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("x/__init__.py", b"")
        zf.writestr("x-1.0.dist-info/METADATA", meta)
    return buf.getvalue()


META = b"Metadata-Version: 2.1\nName: x\nVersion: 1.0\nRequires-Dist: torch==2.9.1\nRequires-Dist: numpy\n"


def test_wheel_metadata_by_range_read_and_cache(tmp_path: Path) -> None:
    idx = LocalIndex()
    url = "https://files.invalid/x-1.0-py3-none-any.whl"
    data = _wheel(META)
    idx.files[url] = data
    f = IndexFile("x-1.0-py3-none-any.whl", url, len(data), "ab" * 32, None, False, "1.0", True,
                  frozenset({"py3-none-any"}))
    cache = Cache(tmp_path / "cache")
    with IndexClient(BASE, client=idx.client(), cache=cache) as ic:
        text = ic.wheel_metadata(f)
    assert list(iter_requires_dist(text)) == ["torch==2.9.1", "numpy"]
    idx.calls.clear()
    with IndexClient(BASE, client=idx.client(), cache=cache) as ic:
        assert ic.wheel_metadata(f) == text
    assert idx.calls == []  # served from the cache, keyed by sha256


def test_wheel_metadata_pep658() -> None:
    import hashlib

    idx = LocalIndex()
    url = "https://files.invalid/x-1.0-py3-none-any.whl"
    idx.files[url + ".metadata"] = META
    f = IndexFile("x-1.0-py3-none-any.whl", url, 10, "ab" * 32, None, False, "1.0", True,
                  frozenset({"py3-none-any"}), hashlib.sha256(META).hexdigest(), True)
    with IndexClient(BASE, client=idx.client()) as ic:
        assert "Requires-Dist: torch==2.9.1" in ic.wheel_metadata(f)
    assert idx.calls == [url + ".metadata"]
    bad = IndexFile(f.filename, url, 10, "ab" * 32, None, False, "1.0", True, f.tags, "00" * 32, True)
    with IndexClient(BASE, client=idx.client()) as ic, pytest.raises(EnvironmentFailure, match="sha256"):
        ic.wheel_metadata(bad)


@pytest.mark.network
def test_real_index_page() -> None:
    with IndexClient() as ic:
        f = ic.find_wheel("sgl-kernel", "0.3.21")
        assert f.filename == "sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl"
        assert f.sha256 == "57dfb3a2a3cd759f499c32e2bad5f6489b7c58f7f9a84ee00c53ec92d303aaab"
        meta = ic.wheel_metadata(ic.find_wheel("torchvision", "0.24.1"))
        from packaging.requirements import Requirement

        reqs = [Requirement(r) for r in iter_requires_dist(meta)]
        assert any(r.name == "torch" and str(r.specifier) == "==2.9.1" for r in reqs)


# -- issue 12: every failure is an EnvironmentFailure; sizes capped; sha256 checked ---------------


def test_a_redirect_loop_is_an_environment_failure() -> None:
    """httpx's TooManyRedirects escaped as a traceback."""
    def loop(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"location": str(request.url)})

    client = httpx.Client(transport=httpx.MockTransport(loop), follow_redirects=True)
    with IndexClient(BASE, client=client, backoff=0) as ic, pytest.raises(EnvironmentFailure, match="too many redirects"):
        ic.project("torch")


def test_a_body_cut_short_is_retried_then_an_environment_failure() -> None:
    """A connection cut while the body streams (httpx's RemoteProtocolError) is retried, then one EnvironmentFailure
    (the body is read within the retry loop, under the deadline and the size cap)."""
    class Cut(httpx.SyncByteStream):
        def __iter__(self):  # type: ignore[no-untyped-def]
            yield b'{"files": ['
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

    calls: list[str] = []

    def cut(request: httpx.Request) -> httpx.Response:
        calls.append(str(request.url))
        return httpx.Response(200, stream=Cut(), headers={"content-type": ACCEPT_JSON})

    client = httpx.Client(transport=httpx.MockTransport(cut))
    with IndexClient(BASE, client=client, backoff=0, retries=2) as ic, \
            pytest.raises(EnvironmentFailure, match="RemoteProtocolError"):
        ic.project("torch")
    assert len(calls) == 3


def test_a_huge_page_is_refused_without_holding_it() -> None:
    """A 600 MB project page grew past 7.9 GB of memory; the body is now read up to a cap."""
    sent = {"bytes": 0}

    class Endless(httpx.SyncByteStream):
        def __iter__(self):  # type: ignore[no-untyped-def]
            block = b" " * (1 << 20)
            for _ in range(600):
                sent["bytes"] += len(block)
                yield block

    def huge(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=Endless(), headers={"content-type": ACCEPT_JSON})

    with IndexClient(BASE, client=httpx.Client(transport=httpx.MockTransport(huge))) as ic:
        with pytest.raises(EnvironmentFailure, match="larger than 8 MiB"):
            ic.get(f"{BASE}/torch/", "index: project 'torch'", limit=8 << 20)
        with pytest.raises(EnvironmentFailure, match="larger than 64 MiB"):
            ic.project("torch")
    assert sent["bytes"] < 80 << 20


def test_the_overall_deadline_bounds_a_stalled_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    release = threading.Event()
    answered: list[bool] = []

    def stall(request: httpx.Request) -> httpx.Response:
        release.wait(30)  # headers that never come (a transport blocked in a read)
        answered.append(True)
        return httpx.Response(200, json={"files": []}, headers={"content-type": ACCEPT_JSON})

    monkeypatch.setenv("GLMCOMPAT_HTTP_DEADLINE", "1")
    try:
        with IndexClient(BASE, client=httpx.Client(transport=httpx.MockTransport(stall)), backoff=0) as ic, \
                pytest.raises(EnvironmentFailure, match="no complete answer within 1 s"):
            ic.project("torch")
        assert not answered  # the client gave up while the transport was still blocked, not after it answered
    finally:
        release.set()


def test_page_sha256_values_are_checked() -> None:
    page = {"files": [{"filename": "x-1.0-py3-none-any.whl", "url": "x-1.0-py3-none-any.whl",
                       "hashes": {"sha256": "../" * 21 + "x"}, "core-metadata": {"sha256": "AB" * 32}}]}
    f = parse_project_page(page, f"{BASE}/x/").files[0]
    assert f.sha256 is None and f.metadata_sha256 == "ab" * 32


# --- a cache key's readable tail, read from the text's end (issue 39) ---------------------------------------------------

def _slug_of_whole(text: str) -> str:
    """The readable tail :func:`cache_key` gave when it substituted the whole text."""
    import re

    return re.sub(r"[^A-Za-z0-9._-]+", "_", text.split("://", 1)[-1])[-120:].strip("_.-") or "x"


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab9._-/:|#?= \u00e9", max_size=400), scheme=st.sampled_from(["", "https://"]))
def test_cache_key_tail_is_the_whole_texts(text: str, scheme: str) -> None:
    from glmcompat.edges.index import cache_key
    from glmcompat.matrix.locations import text_digest

    t = scheme + text
    assert cache_key("unread", t) == f"unread-{text_digest(t)}-{_slug_of_whole(t)}"


@pytest.mark.parametrize("text", ["a" * 120 + "|" * 200 + "b" * 119, "|" * 500, "a" * 300 + "||||b" * 48, "x" * 240 + "/" * 3 + "y" * 120,
                                  "https://h/" + "|".join(f"https://h/p/w{i}.whl#sha256=ab" for i in range(40))])
def test_cache_key_tail_at_the_cut(text: str) -> None:
    from glmcompat.edges.index import cache_key
    from glmcompat.matrix.locations import text_digest

    assert cache_key("unread", text) == f"unread-{text_digest(text)}-{_slug_of_whole(text)}"


def test_files_for_compares_versions_as_versions() -> None:
    """A release's files by its version compared as a version (``1.0`` is ``1.0.0``, ``1.0.post0`` is not), each
    file's version parsed once a call; a file whose version does not parse is no release's."""
    from glmcompat.edges.index import IndexFile, Project

    def f(name: str, version: str | None) -> IndexFile:
        return IndexFile(name, f"https://example.invalid/{name}", 1, None, None, False, version, name.endswith(".whl"))

    files = [f("a-1.0-py3-none-any.whl", "1.0"), f("a-1.0.0.tar.gz", "1.0.0"), f("a-1.0.post0.tar.gz", "1.0.post0"),
             f("a-2.0-py3-none-any.whl", "2.0"), f("a-x.tar.gz", "not a version"), f("a.zip", None),
             f("a-1.0-cp311-cp311-linux_x86_64.whl", "1.0")]
    p = Project("a", ["1.0", "2.0"], files)
    assert [x.filename for x in p.files_for("1.0.0")] == ["a-1.0-py3-none-any.whl", "a-1.0.0.tar.gz",
                                                          "a-1.0-cp311-cp311-linux_x86_64.whl"]
    assert [x.filename for x in p.files_for("1.0.post0")] == ["a-1.0.post0.tar.gz"]
    assert p.files_for("3.0") == []

"""Package-index client: the JSON simple API (PEP 691), wheel selection and wheel METADATA.

The index URL is never written down here: :func:`default_index_url` reads it at run time from the
installer's environment and configuration, falling back to pip's own built-in default.

I/O lives in :class:`IndexClient` (httpx, bounded retries with backoff on timeouts, connection errors,
429 and 5xx; a clear one-line error on 404 or when offline). Parsing the project page and choosing a
wheel are pure functions that tests drive with recorded pages.
"""

from __future__ import annotations

import configparser
import hashlib
import math
import os
import re
import subprocess
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from packaging.tags import Tag
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from glmcompat.edges import uv
from glmcompat.edges.http import (
    DEFAULT_TIMEOUT,
    MAX_RESPONSE,
    RETRY_STATUS,
    Deadline,
    Fetched,
    make_client,
    read_capped,
    request_with_retries,
)
from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.matrix.locations import text_digest
from glmcompat.model.errors import EnvironmentFailure, InputError
from glmcompat.model.wheeltags import parse_python as parse_python  # re-exported: tag logic lives in model.wheeltags
from glmcompat.model.wheeltags import platform_tags as platform_tags
from glmcompat.model.wheeltags import supported_tags as supported_tags
from glmcompat.readers.wheelzip import RemoteZip
from glmcompat.edges.indexconfig import IndexOptions as IndexOptions  # re-exported: the light half
from glmcompat.edges.indexconfig import pip_config_files as pip_config_files

if TYPE_CHECKING:
    import httpx

ACCEPT_JSON = "application/vnd.pypi.simple.v1+json"


# ------------------------------------------------------------------------------------------------
# Index URL
# ------------------------------------------------------------------------------------------------


def _pip_configured_index() -> str | None:
    found: str | None = None
    for path in pip_config_files():
        if not path.is_file():
            continue
        cp = configparser.RawConfigParser()
        try:
            cp.read(path, encoding="utf-8")
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue
        for section in ("global", "install", "download"):
            if cp.has_option(section, "index-url"):
                found = cp.get(section, "index-url").strip() or found
    return found


def _uv_configured_index() -> str | None:
    """The default index of uv's user or system configuration (:func:`glmcompat.edges.uv.config_files`, in uv's
    order), as the uv that locks reads it."""
    for path in map(Path, uv.config_files()):
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError:
            continue
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, ValueError) as e:
            # uv refuses such a file too: naming it is the remedy
            raise InputError(f"{path}: uv's configuration is not valid TOML ({str(e)[:200]}); fix or remove it") from None
        indexes = data.get("index")
        for idx in indexes if isinstance(indexes, list) else []:
            if isinstance(idx, dict) and idx.get("default") and isinstance(idx.get("url"), str):
                return str(idx["url"])
        url = data.get("index-url")
        if isinstance(url, str) and url:
            return url
    return None


def index_ttl() -> float:
    """How long a cached index page is used, in seconds (``GLMCOMPAT_INDEX_TTL``; default a day); InputError for a
    value that is no such number."""
    raw = os.environ.get("GLMCOMPAT_INDEX_TTL", "")
    if not raw.strip():
        return 86400.0
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise InputError(f"GLMCOMPAT_INDEX_TTL={raw[:40]!r}: not a number of seconds (a day is 86400)")
    return value


def default_index_url() -> str:
    """The simple-API base URL the installer would use, read at run time.

    Order: ``UV_DEFAULT_INDEX``, ``UV_INDEX_URL``, ``PIP_INDEX_URL``, uv's ``uv.toml``, pip's
    configuration files, pip's built-in default, then uv's built-in default (an environment made by uv, or
    ``uv tool install``, has no pip: the uv binary the lock runs says its default in its ``--help``).
    """
    for var in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"):
        value = os.environ.get(var)
        if value is not None and not value.strip():
            raise InputError(f"{var} is set but blank (it would silently mean the default index); unset it, or name "
                             "the index")
        if value:
            return value.split()[0]
    for reader in (_uv_configured_index, _pip_configured_index):
        url = reader()
        if url:
            return url
    try:
        from pip._internal.models.index import PyPI  # lazy: pip's default index, read only when none is configured

        return str(PyPI.simple_url)
    except ImportError:
        pass
    url = uv_default_index()
    if url is None:
        raise EnvironmentFailure("no package index configured, pip is not importable and uv does not name its default: "
                                 "set UV_DEFAULT_INDEX to the index's simple-API URL")
    return url


_UV_DEFAULT = re.compile(r"--default-index\b[^\n]*\n?[^\n]*?\(by default: <([^>\s]+)>\)")


def uv_default_index() -> str | None:
    """uv's built-in default index, as the uv binary glmcompat runs prints it in ``uv lock --help``
    (``--default-index ... (by default: <URL>)``); None when it cannot be read."""
    try:
        r = subprocess.run([uv.uv_binary(), "lock", "--help"], capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL, env={**os.environ, "NO_COLOR": "1"})
    except (OSError, subprocess.SubprocessError, EnvironmentFailure):
        return None
    m = _UV_DEFAULT.search(r.stdout)
    return m.group(1) if m and m.group(1).startswith(("https://", "http://")) else None


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
SLUG = 120  # the characters of the readable tail


def cache_key(kind: str, text: str) -> str:
    """A readable, file-name-safe cache key for ``text``: the one digest of stored names
    (:func:`glmcompat.matrix.locations.text_digest`, not a CRC that two URLs can share), then a readable tail: the
    last :data:`SLUG` characters of the text with each run of other characters one ``_``, read from its end only
    (a key of every wheel URL of a release, 4 kB, is made once for each package a lock's judge reads: the whole
    text's substitution took 0.1 ms of each). A tail whose substitution is longer than the slug gives the slug the
    whole text's does (only its first character can join a run before it)."""
    rest = text.split("://", 1)[-1]
    slug = _UNSAFE.sub("_", rest[-2 * SLUG:])
    if len(slug) <= SLUG:
        slug = _UNSAFE.sub("_", rest)
    return f"{kind}-{text_digest(text)}-{slug[-SLUG:].strip('_.-') or 'x'}"


def redact(url: str) -> str:
    """``url`` without credentials, for messages."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, "***@" + host, parts.path, parts.query, parts.fragment))


# ------------------------------------------------------------------------------------------------
# Values
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IndexFile:
    """One file of a project page."""

    filename: str
    url: str
    size: int | None
    sha256: str | None
    requires_python: str | None
    yanked: bool
    version: str | None
    is_wheel: bool
    tags: frozenset[str] = frozenset()
    metadata_sha256: str | None = None
    has_metadata: bool = False
    upload_time: str | None = None  # PEP 700, RFC 3339 ("2026-11-18T11:06:54.123Z")

    @property
    def metadata_url(self) -> str | None:
        """PEP 658/714: the wheel's METADATA beside it, when the index advertises one."""
        return self.url.split("#", 1)[0] + ".metadata" if self.has_metadata else None


@dataclass(frozen=True, slots=True)
class Project:
    name: str
    versions: list[str]
    files: list[IndexFile] = field(default_factory=list)

    def files_for(self, version: str) -> list[IndexFile]:
        """The files of the release ``version`` (its versions compared as versions: ``1.0`` is ``1.0.0``), each file's
        version parsed once a call (a release's thirty wheels share one; torch's page holds 2,000 files)."""
        v = Version(version)
        same: dict[str, bool] = {}
        out = []
        for f in self.files:
            if f.version is None:
                continue
            hit = same.get(f.version)
            if hit is None:
                try:
                    hit = same[f.version] = Version(f.version) == v
                except InvalidVersion:
                    hit = same[f.version] = False
            if hit:
                out.append(f)
        return out


def parse_project_page(data: Mapping[str, Any], page_url: str) -> Project:
    """Parse a PEP 691 JSON project page (pure). Relative file URLs are resolved against ``page_url``."""
    if not isinstance(data, Mapping) or not isinstance(data.get("files"), list):
        raise InputError(f"index page {redact(page_url)!r} is not a PEP 691 project page (no 'files' list)")
    name = str(data.get("name") or "")
    files: list[IndexFile] = []
    memo = _WheelMemo()
    for raw in data["files"]:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("filename"), str):
            continue
        filename = raw["filename"]
        url = join_url(page_url, str(raw.get("url", filename)))
        hashes = raw.get("hashes")
        sha = _sha256(hashes.get("sha256")) if isinstance(hashes, Mapping) else None
        size = raw.get("size")
        if type(size) is not int or not 0 <= size < 1 << 48:
            size = None  # absent, or no size a file has (a bool, a 4,000-digit integer)
        yanked = bool(raw.get("yanked", False))
        meta = raw.get("core-metadata", raw.get("dist-info-metadata", False))
        has_meta = bool(meta)
        meta_sha = _sha256(meta.get("sha256")) if isinstance(meta, Mapping) else None
        version: str | None = None
        tags: frozenset[str] = frozenset()
        is_wheel = filename.endswith(".whl")
        try:
            if is_wheel:
                version, tags = memo.parse(filename)
            else:
                _, ver = parse_sdist_filename(filename)
                version = str(ver)
        except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
            pass
        files.append(IndexFile(
            filename=filename, url=url, size=size, sha256=sha,
            requires_python=raw.get("requires-python") if isinstance(raw.get("requires-python"), str) else None,
            yanked=yanked, version=version, is_wheel=is_wheel, tags=tags,
            metadata_sha256=meta_sha, has_metadata=has_meta,
            upload_time=raw.get("upload-time") if isinstance(raw.get("upload-time"), str) else None,
        ))
    files.sort(key=lambda f: f.filename)
    versions = data.get("versions")
    if isinstance(versions, list):
        vers = [str(v) for v in versions]
    else:
        vers = sorted({f.version for f in files if f.version}, key=_version_key)
    return Project(name=name or "", versions=sorted(vers, key=_version_key), files=files)


def join_url(page_url: str, url: str) -> str:
    """``urljoin(page_url, url)``, without its two parses for the absolute URL a page gives each file (a thousand
    files a page): an ``http(s)://host/...`` URL with nothing urljoin would rewrite (a query, fragment or parameter
    mark, whitespace, a bracketed host) is its own answer; every other goes through urljoin."""
    if url.startswith(("https://", "http://")) and url[url.index("//") + 2:][:1] not in ("", "/") \
            and not _REWRITTEN.search(url):
        return url
    return urljoin(page_url, url)


_REWRITTEN = re.compile(r"[?#;\[\]\s\x00-\x1f]")  # what urlsplit/urlunsplit would strip, split off or validate


class _WheelMemo:
    """A page's wheel filenames parsed as :func:`packaging.utils.parse_wheel_filename` parses them, with its pieces
    (the name, the version, the build tag, the tag set) each parsed by packaging once per page: a thousand wheels
    share a few dozen versions and tag sets, and parsing each whole was most of a page's CPU."""

    __slots__ = ("names", "versions", "builds", "tagsets")

    def __init__(self) -> None:
        self.names: dict[str, bool] = {}
        self.versions: dict[str, str | None] = {}
        self.builds: dict[str, bool] = {}
        self.tagsets: dict[str, frozenset[str] | None] = {}

    def parse(self, filename: str) -> tuple[str, frozenset[str]]:
        """(the version's normal form, the tags' texts) of a ``.whl`` filename; InvalidWheelFilename where packaging
        refuses it. The filename is split exactly as packaging splits it (its dash count, then ``split('-', n - 2)``)
        and each piece is judged by packaging itself, inside a filename otherwise valid."""
        stem = filename[:-4]
        dashes = stem.count("-")
        if dashes not in (4, 5):
            raise InvalidWheelFilename(f"Invalid wheel filename (wrong number of parts): {stem!r}")
        parts = stem.split("-", dashes - 2)
        ok = self.names.get(parts[0])
        if ok is None:
            ok = self.names[parts[0]] = _valid_wheel(f"{parts[0]}-0-py3-none-any.whl")
        if parts[1] in self.versions:
            version = self.versions[parts[1]]
        else:
            try:
                version = str(Version(parts[1]))
            except InvalidVersion:
                version = None
            self.versions[parts[1]] = version
        if dashes == 5:
            build = self.builds.get(parts[2])
            if build is None:
                build = self.builds[parts[2]] = _valid_wheel(f"x-0-{parts[2]}-py3-none-any.whl")
            ok = ok and build
        if parts[-1] in self.tagsets:
            tags = self.tagsets[parts[-1]]
        else:
            try:
                tags = frozenset(str(t) for t in parse_wheel_filename(f"x-0-{parts[-1]}.whl")[3])
            except InvalidWheelFilename:
                tags = None
            self.tagsets[parts[-1]] = tags
        if not ok or version is None or tags is None:
            raise InvalidWheelFilename(f"Invalid wheel filename: {filename!r}")
        return version, tags


def _valid_wheel(filename: str) -> bool:
    try:
        parse_wheel_filename(filename)
    except (InvalidWheelFilename, InvalidVersion):
        return False
    return True


def _sha256(value: Any) -> str | None:
    """A sha256 the index gave, lowercased, when it is one (64 hex digits); None otherwise: the value names
    cache files, so nothing else may pass."""
    if isinstance(value, str) and len(value) == 64:
        low = value.lower()
        if _HEX64.fullmatch(low):
            return low
    return None


_HEX64 = re.compile(r"[0-9a-f]{64}")  # a regular expression: a page lists a thousand hashes (torch's), a loop cost 5 ms


def _version_key(v: str) -> tuple[int, Any]:
    try:
        return (1, Version(v))
    except InvalidVersion:
        return (0, v)


# ------------------------------------------------------------------------------------------------
# Wheel selection (pure)
# ------------------------------------------------------------------------------------------------


_RANKS: dict[int, tuple[Sequence[Tag], int, dict[str, int]]] = {}


def _rank(tags: Sequence[Tag]) -> dict[str, int]:
    """{tag text: its place} of a tag list, built once per list: a resolution selects a wheel for hundreds of
    releases against the same list (one ``str`` per tag, a thousand tags, each time, was most of its CPU)."""
    hit = _RANKS.get(id(tags))
    if hit is not None and hit[0] is tags and hit[1] == len(tags):
        return hit[2]
    rank = {str(t): i for i, t in enumerate(tags)}
    if len(_RANKS) >= 16:
        _RANKS.clear()
    _RANKS[id(tags)] = (tags, len(tags), rank)  # the list is kept alive, so its id is not reused meanwhile
    return rank


def select_wheel(files: Iterable[IndexFile], tags: Sequence[Tag], *, yanked: bool = False) -> IndexFile | None:
    """The best non-yanked wheel for ``tags`` (earlier tag = better), yanked ones too with ``yanked``; None when none
    fits."""
    rank = _rank(tags)
    best: tuple[tuple[int, Any, str], IndexFile] | None = None
    for f in files:
        if not f.is_wheel or f.yanked and not yanked:
            continue
        r = min((rank[t] for t in f.tags if t in rank), default=None)
        if r is None:
            continue
        try:
            build = parse_wheel_filename(f.filename)[2]
        except InvalidWheelFilename:
            continue
        # Best tag first; among equal tags the higher build number wins (as pip decides).
        key = (r, tuple(-x if isinstance(x, int) else x for x in build) or (0,), f.filename)
        if best is None or key < best[0]:
            best = (key, f)
    return best[1] if best else None


# ------------------------------------------------------------------------------------------------
# HTTP with retries, an overall deadline and a size cap
# ------------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------------
# Client
# ------------------------------------------------------------------------------------------------


class IndexClient:
    """The JSON simple API of one index, plus METADATA of its wheels (cached by sha256).

    ``client`` may be any ``httpx.Client`` (tests pass one whose transport serves recorded pages).
    ``cache`` is a :class:`glmcompat.edges.cache.Cache` or None for no caching.
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        client: httpx.Client | None = None,
        cache: Any = None,
        retries: int = 3,
        backoff: float = 0.5,
        page_ttl: float | None = None,
    ) -> None:
        self.base_url = (base_url or default_index_url()).rstrip("/") + "/"
        self._own_client = client is None
        self._client = client
        self.cache = cache
        self.retries = retries
        self.backoff = backoff
        self.page_ttl = page_ttl if page_ttl is not None else index_ttl()
        self.bytes_fetched = 0
        self.requests = 0

    # -- plumbing ---------------------------------------------------------------------------------
    @property
    def client(self) -> httpx.Client:
        if self._client is None:
            self._client = make_client()
        return self._client

    def close(self) -> None:
        if self._own_client and self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> IndexClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, url: str, what: str, headers: Mapping[str, str] | None = None, *,
            limit: int = MAX_RESPONSE) -> Fetched:
        """The whole answer to ``GET url``: retried on transient failures, within one overall deadline
        (:class:`Deadline`), its body at most ``limit`` bytes. Every failure is an
        :class:`EnvironmentFailure` naming ``what``."""
        self.requests += 1
        deadline = Deadline(what)

        got: list[Fetched] = []

        def send() -> httpx.Response:
            """One attempt: the response, closed, its body (when it is an answer, not a retry) in ``got``."""
            import httpx  # lazy: heavy httpx, only network calls need it

            req = self.client.build_request("GET", url, headers=dict(headers or {}),
                                            timeout=httpx.Timeout(deadline.read_timeout(),
                                                                  connect=min(DEFAULT_TIMEOUT[1], deadline.read_timeout())))
            r = deadline.call(lambda: self.client.send(req, stream=True))
            try:
                if r.status_code in RETRY_STATUS:
                    return r
                body = read_capped(r, what, limit, deadline)
            finally:
                r.close()
            self.bytes_fetched += len(body)
            got.append(Fetched(r.status_code, r.headers, body, str(r.url)))
            return r

        request_with_retries(send, what, retries=self.retries, backoff=self.backoff, deadline=deadline)
        return got[-1]

    # -- API ----------------------------------------------------------------------------------------
    def project_url(self, name: str) -> str:
        return urljoin(self.base_url, str(canonicalize_name(name)) + "/")

    def project(self, name: str) -> Project:
        """The project page of ``name`` (PEP 691 JSON), cached for ``page_ttl`` seconds."""
        url = self.project_url(name)
        key = cache_key("page", url)
        if self.cache is not None:
            data = self.cache.get_json(key, max_age=self.page_ttl)
            if data is not None:
                return parse_project_page(data, url)
        r = self.get(url, f"index {redact(self.base_url)}: project {name!r}", {"Accept": ACCEPT_JSON})
        if r.status_code == 404:
            raise InputError(f"no project {name!r} on the index {redact(self.base_url)} (HTTP 404)")
        if r.status_code != 200:
            raise EnvironmentFailure(f"index {redact(self.base_url)}: project {name!r}: HTTP {r.status_code}")
        ctype = r.headers.get("content-type", "")
        if "json" not in ctype:
            raise EnvironmentFailure(
                f"index {redact(self.base_url)} did not answer the JSON simple API (PEP 691) for {name!r} "
                f"(content-type {ctype!r})"
            )
        try:
            data = r.json()
        except (ValueError, RecursionError):
            raise EnvironmentFailure(f"index {redact(self.base_url)}: project {name!r}: invalid JSON") from None
        project = parse_project_page(data, r.url)
        if self.cache is not None:
            self.cache.put_json(key, data)
        return project

    def find_wheel(self, name: str, version: str, *, python: str = "cp311",
                   platform: str = "manylinux_x86_64") -> IndexFile:
        """The wheel of ``name==version`` an interpreter ``python`` on ``platform`` would install."""
        try:
            Version(version)
        except InvalidVersion:
            raise InputError(f"invalid version {version!r} for {name!r}") from None
        project = self.project(name)
        files = project.files_for(version)
        if not files:
            near = ", ".join(project.versions[-5:]) or "none"
            raise InputError(f"{name}=={version} is not on the index (latest: {near})")
        tags = supported_tags(python, platform)
        # PEP 592: a yanked file is still installed where the version is pinned exactly, as a lock pins it
        wheel = select_wheel(files, tags) or select_wheel(files, tags, yanked=True)
        if wheel is None:
            have = ", ".join(f.filename for f in files)
            raise InputError(f"{name}=={version} has no wheel for {python} on {platform} (files: {have})")
        return wheel

    def wheel_metadata(self, file: IndexFile) -> str:
        """The METADATA text of a wheel: PEP 658 ``.metadata`` when advertised, else a range read."""
        key = f"metadata-{file.sha256}" if _sha256(file.sha256) == file.sha256 and file.sha256 else None
        if key and self.cache is not None:
            cached = self.cache.get_bytes(key)
            if cached is not None:
                return str(cached.decode("utf-8", "replace"))
        text: str | None = None
        if file.metadata_url:
            r = self.get(file.metadata_url, f"{file.filename}: METADATA")
            if r.status_code == 200:
                body = r.content
                if file.metadata_sha256 and hashlib.sha256(body).hexdigest() != file.metadata_sha256:
                    raise EnvironmentFailure(f"{file.filename}: METADATA: sha256 does not match the index")
                text = body.decode("utf-8", "replace")
        if text is None:
            reader = HttpRangeReader(self.client, file.url, name=file.filename, size=file.size)
            try:
                zf = RemoteZip(reader)
                member = zf.find_metadata()
                # The local header and the compressed METADATA in one request (the reader keeps the span), not
                # two: 1 KiB covers the local header's name and extra field, which the central directory does
                # not give; a longer extra field only costs the second request.
                span = 30 + len(member.name.encode()) + 1024 + member.compressed_size
                reader.read(member.header_offset, min(span, reader.size - member.header_offset))
                text = zf.read(member).decode("utf-8", "replace")
            finally:
                self.bytes_fetched += reader.bytes_fetched
        if key and self.cache is not None:
            self.cache.put_bytes(key, text.encode("utf-8"))
        return text


def iter_requires_dist(metadata: str) -> Iterator[str]:
    """The ``Requires-Dist`` values of a METADATA text (pure)."""
    from email.parser import HeaderParser  # lazy: 7 ms that a cold project lock pays before its predicted uv starts

    msg = HeaderParser().parsestr(metadata)
    yield from (str(v) for v in msg.get_all("Requires-Dist") or [])


def client_for(options: IndexOptions) -> IndexClient:
    """The client of the index ``options`` name, with the cache they allow: what the command line and the library
    hand to :func:`glmcompat.ops.lockgen.resolve_core` (a :data:`ClientFactory`) to resolve from the package index."""
    return IndexClient(options.url, cache=options.cache())


ClientFactory = Callable[[IndexOptions], IndexClient]
"""How a caller reaches the package index: a client for the options the command line gave (:func:`client_for`)."""

"""Where the resolver's versions and Requires-Dist come from (the :class:`glmcompat.decide.resolver.Source`
protocol): the live index, a recorded JSON snapshot of it, and a recorder wrapping either."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glmcompat.decide.resolver import Source, parse_cutoff
from glmcompat.edges.index import (
    IndexClient,
    IndexFile,
    Project,
    cache_key,
    iter_requires_dist,
    select_wheel,
    supported_tags,
)
from glmcompat.matrix.locations import hasher
from glmcompat.model.errors import InputError
from glmcompat.model.names import normalize_version
from glmcompat.model.platforms import PLATFORM_NAME, check_platform


@dataclass(frozen=True, slots=True)
class ReleaseWheel:
    """The wheel one release installs here, as the index source's memo stores it (kind ``wheels``: its shape is
    :data:`glmcompat.edges.cache.SHAPES`'s): enough to read its METADATA again without the page."""

    filename: str
    url: str
    size: int | None
    sha256: str | None
    has_metadata: bool
    metadata_sha256: str | None

    @classmethod
    def of(cls, f: IndexFile) -> ReleaseWheel:
        return cls(f.filename, f.url, f.size, f.sha256, f.has_metadata, f.metadata_sha256)

    def to_json(self) -> dict[str, Any]:
        return {"filename": self.filename, "url": self.url, "size": self.size, "sha256": self.sha256,
                "has_metadata": self.has_metadata, "metadata_sha256": self.metadata_sha256}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ReleaseWheel:
        return cls(d["filename"], d["url"], d["size"], d["sha256"], bool(d["has_metadata"]), d["metadata_sha256"])

    def index_file(self, version: str | None) -> IndexFile:
        """The index file it is, for reading its METADATA (:meth:`glmcompat.edges.index.IndexClient.wheel_metadata`)."""
        return IndexFile(filename=self.filename, url=self.url, size=self.size, sha256=self.sha256,
                         requires_python=None, yanked=False, version=version, is_wheel=True,
                         has_metadata=self.has_metadata, metadata_sha256=self.metadata_sha256)


class IndexSource:
    """Versions from the index's JSON simple API; Requires-Dist from each wheel's METADATA (range
    reads). Files uploaded after ``exclude_newer`` are invisible.

    Memoised twice: in the process (one parse per release), and, when the client has a cache, on
    disk: the wheel each release installs (keyed by the cached page's bytes, the cutoff and the
    interpreter, so a refreshed page is read again) and each wheel's Requires-Dist (keyed by its
    sha256, which never changes). A warm run reads neither the whole pages nor any METADATA.
    """

    MEMO_FORMAT = 2

    def __init__(self, client: IndexClient, *, python: str = "3.11", exclude_newer: str | None = None,
                 platform: str = "x86_64") -> None:
        self.client = client
        self.machine = check_platform(platform)  # the Linux machine whose wheels are candidates
        self.python = python
        self.cp = "cp" + python.replace(".", "")
        self.exclude_newer = exclude_newer
        self.cutoff = parse_cutoff(exclude_newer)
        self.cache = client.cache
        self._wheel: dict[str, dict[str, ReleaseWheel]] = {}
        self._order: dict[str, list[str]] = {}
        self._elsewhere: dict[str, dict[str, list[str]]] = {}
        self._requires: dict[tuple[str, str], list[str]] = {}
        # One lock per project and per release: a prefetch and the resolver never fetch the same thing twice;
        # whoever comes second waits and finds it memoised.
        self._guard = threading.Lock()
        self._locks: dict[object, threading.Lock] = {}
        self._pool: ThreadPoolExecutor | None = None

    def _lock(self, key: object) -> threading.Lock:
        with self._guard:
            lock = self._locks.get(key)
            if lock is None:
                lock = self._locks[key] = threading.Lock()
            return lock

    # -- prefetch ---------------------------------------------------------------------------------
    def prefetch(self, wanted: list[tuple[str, str | None]], *, workers: int = 8) -> None:
        """Fetch, concurrently and in the background, the project pages of ``wanted`` and the Requires-Dist of
        each release named (``(name, None)``: the page only). Nothing changes but speed: the resolver's own
        calls take the memoised answers (waiting for one in flight); a prefetch that fails is forgotten, and
        the resolver's call, if it makes it, fails or succeeds on its own."""
        if not wanted or self._pool is not None:
            return
        self.client.client  # noqa: B018 - the HTTP client, made once here rather than raced for by the threads
        self._pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(wanted))), thread_name_prefix="glmcompat-prefetch")
        for name, version in wanted:
            self._pool.submit(self._prefetch_one, name, version)

    def _prefetch_one(self, name: str, version: str | None) -> None:
        try:
            if version is None:
                self._load(name)
            else:
                self.requires(name, version)
        except Exception:
            pass  # the resolver's own call reports it, if it asks

    def close(self) -> None:
        """Cancel the prefetches not yet started (those running finish on their own)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    # -- the wheel each release installs ----------------------------------------------------------
    def _load(self, name: str) -> None:
        if name in self._wheel:
            return
        with self._lock(("page", name)):
            if name not in self._wheel:
                self._load_locked(name)

    def _load_locked(self, name: str) -> None:
        key = self._memo_key(name)
        cache = self.cache
        if key is not None and cache is not None:
            memo = cache.get_json(key)
            if isinstance(memo, dict) and memo.get("format") == self.MEMO_FORMAT:
                self._order[name] = list(memo["versions"])
                self._elsewhere[name] = dict(memo.get("elsewhere") or {})
                wheels = {v: ReleaseWheel.from_json(w) for v, w in memo["wheels"].items() if w is not None}
                self._wheel[name] = wheels  # last: its presence says the other two are there
                return
        project = self.client.project(name)
        self._digest(name, project)
        key = key or self._memo_key(name)
        if key is not None and cache is not None:
            cache.put_json(key, {"format": self.MEMO_FORMAT, "versions": self._order[name],
                                 "wheels": {v: w.to_json() for v, w in self._wheel[name].items()},
                                 "elsewhere": self._elsewhere[name]})

    def _memo_key(self, name: str) -> str | None:
        """The memo's key: the cached page's bytes (fresh ones only), the cutoff and the interpreter."""
        if self.cache is None:
            return None
        url = self.client.project_url(name)
        page = self.cache.get_bytes(cache_key("page", url), max_age=self.client.page_ttl)
        if page is None:
            return None
        machine = "" if self.machine == "x86_64" else f"|{self.machine}"
        h = hasher()  # the page's digest (a CRC let two pages of one length share a memo)
        h.update(page)
        return cache_key("wheels", f"{url}|{len(page)}|{h.hexdigest()}|{self.cutoff}|{self.cp}|{self.MEMO_FORMAT}{machine}")

    def _digest(self, name: str, project: Project) -> None:
        cutoff = self.cutoff
        groups: dict[str, list[IndexFile]] = {}
        other: dict[str, list[str]] = {}
        for f in project.files:
            if f.yanked or f.version is None:
                continue
            # RFC 3339 UTC timestamps compare as text once cut to whole seconds.
            if cutoff and f.upload_time is not None and f.upload_time[:19] > cutoff:
                continue
            if f.is_wheel:
                groups.setdefault(f.version, []).append(f)
            else:
                other.setdefault(f.version, []).append(f.filename)
        tags = supported_tags(self.cp, f"manylinux_{self.machine}")
        wheels: dict[str, ReleaseWheel] = {}
        elsewhere: dict[str, list[str]] = {}
        for v, files in groups.items():
            w = select_wheel(files, tags)
            if w is None:  # wheels only for other interpreters or platforms: uv could not install it here either
                elsewhere[v] = sorted(f.filename for f in files)
                continue
            wheels[v] = ReleaseWheel.of(w)
        for v, names in other.items():
            if v not in wheels:
                elsewhere[v] = sorted(set(elsewhere.get(v, [])) | set(names))
        self._order[name] = [v for v in groups if v in wheels]
        self._elsewhere[name] = elsewhere
        self._wheel[name] = wheels  # last: its presence says the other two are there

    def versions(self, name: str) -> list[str]:
        self._load(name)
        return list(self._order[name])

    def wheel(self, name: str, version: str) -> ReleaseWheel | None:
        """The wheel ``name==version`` installs here (filename, url, sha256, ...), or None."""
        self._load(name)
        return self._wheel[name].get(normalize_version(version))

    def platform(self) -> str:
        return f"CPython {self.python} on {PLATFORM_NAME[self.machine]}"

    def bytes_received(self) -> int:
        """The bytes its index client has received (what a progress display shows)."""
        return self.client.bytes_fetched

    def unavailable(self, name: str) -> dict[str, list[str]]:
        """Releases of ``name`` on the index (before the cutoff) with no wheel this interpreter and platform can
        install: {version: the files they do have (sdists, wheels for other platforms)}. They are never
        candidates: a lock never builds from source."""
        self._load(name)
        return dict(self._elsewhere[name])

    # -- Requires-Dist ----------------------------------------------------------------------------
    def requires(self, name: str, version: str) -> list[str]:
        key = (name, normalize_version(version))
        hit = self._requires.get(key)
        if hit is not None:
            return hit
        with self._lock(key):
            hit = self._requires.get(key)
            return hit if hit is not None else self._requires_locked(name, key)

    def _requires_locked(self, name: str, key: tuple[str, str]) -> list[str]:
        self._load(name)
        w = self._wheel[name].get(key[1])
        if w is None:
            self._requires[key] = []
            return []
        cache = self.cache
        memo = f"requires-{w.sha256}" if cache is not None and w.sha256 else None
        if memo is not None and cache is not None:
            got = cache.get_json(memo)
            if isinstance(got, list):
                self._requires[key] = got
                return got
        out = self._requires[key] = list(iter_requires_dist(self.client.wheel_metadata(w.index_file(key[1]))))
        if memo is not None and cache is not None:
            cache.put_json(memo, out)
        return out


class RecordedSource:
    """A frozen index recorded as JSON: {name: {"versions": [...], "requires": {version: [...]}}}, read for the
    machine its ``"#platform"`` entry names (absent: x86_64)."""

    def __init__(self, path: str | Path) -> None:
        text = Path(path).read_text()
        self.data = json.loads(text)
        self.machine = str(self.data.get("#platform", "x86_64"))
        self.key = "recorded:" + hashlib.sha256(text.encode()).hexdigest()  # what it answers, for records that depend on it

    def versions(self, name: str) -> list[str]:
        return list(self.data.get(name, {}).get("versions", []))

    def requires(self, name: str, version: str) -> list[str]:
        reqs = self.data.get(name, {}).get("requires", {})
        if version not in reqs:
            raise InputError(f"recorded index has no METADATA for {name}=={version}")
        return list(reqs[version])

    def unavailable(self, name: str) -> dict[str, list[str]]:
        """As :meth:`IndexSource.unavailable`, where the recording kept it (``"#unavailable"``), else nothing."""
        return {v: list(f) for v, f in self.data.get("#unavailable", {}).get(name, {}).items()}

    def platform(self) -> str:
        return str(self.data.get("#where", f"{PLATFORM_NAME[self.machine]}"))


class RecordingSource:
    """Wraps a source and keeps what was asked, to write a :class:`RecordedSource` file."""

    def __init__(self, inner: Source) -> None:
        self.inner = inner
        self.machine = inner.machine
        self.data: dict[str, dict[str, Any]] = {}
        self.unavailable_: dict[str, dict[str, list[str]]] = {}

    def versions(self, name: str) -> list[str]:
        vs = self.inner.versions(name)
        self.data.setdefault(name, {"versions": [], "requires": {}})["versions"] = vs
        away = self.inner.unavailable(name)  # releases without a wheel here: what explanations name (kept where some)
        if away:
            self.unavailable_[name] = away
        return vs

    def unavailable(self, name: str) -> dict[str, list[str]]:
        return self.inner.unavailable(name)

    def platform(self) -> str:
        return self.inner.platform()

    def requires(self, name: str, version: str) -> list[str]:
        rs = self.inner.requires(name, version)
        self.data.setdefault(name, {"versions": [], "requires": {}})["requires"][version] = rs
        return rs

    def dump(self) -> str:
        head: dict[str, Any] = {} if self.machine == "x86_64" else {"#platform": self.machine}
        if self.unavailable_:
            head["#unavailable"] = self.unavailable_
            head["#where"] = self.inner.platform()
        return json.dumps({**head, **self.data}, indent=1, sort_keys=True)

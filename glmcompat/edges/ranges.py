"""Random access to a remote file over HTTP ``Range`` requests: short ``206`` bodies are asked for again,
a server that ignores ``Range`` is streamed with only the requested slice kept (bounded memory), every byte
received is counted, and every request asks for at most ``WINDOW`` bytes.

Reading one file is one operation with one deadline (``GLMCOMPAT_HTTP_DEADLINE``): every request for it, and the
inflating and parsing of what they brought (:meth:`HttpRangeReader.check`, which the zip and ELF readers call as
they work), end within it. And a byte budget: a file is never received more than about twice over
(:data:`BYTE_BUDGET_FACTOR`), so a server that ignores ``Range`` on a huge file, sending it whole for every part
asked, is refused instead of streamed again and again."""

from __future__ import annotations

import base64
import binascii
import re
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from glmcompat.edges.http import DEFAULT_TIMEOUT, Deadline, request_with_retries
from glmcompat.model.errors import TransferError, WheelError
from glmcompat.readers.wheelzip import MiB

if TYPE_CHECKING:
    import httpx

WINDOW = 64 * MiB  # the most one range request asks for
BYTE_BUDGET_FACTOR = 2  # bytes received for one file: at most this many times its size, plus WINDOW


def stated_sha256(headers: Mapping[str, str]) -> str | None:
    """The sha256 of the whole file a server states beside a (range) answer, hex: ``Repr-Digest: sha-256=:B64:``
    (RFC 9530, the representation's digest, the same for every range of it), ``Digest: SHA-256=B64`` (RFC 3230) or
    ``x-amz-checksum-sha256: B64``; None when it states none."""
    for name, pattern in (("repr-digest", r"sha-256=:([A-Za-z0-9+/=]+):"), ("digest", r"(?i)sha-256=([A-Za-z0-9+/=]+)"),
                          ("x-amz-checksum-sha256", r"^\s*([A-Za-z0-9+/=]+)\s*$")):
        value = headers.get(name)
        m = re.search(pattern, value) if value else None
        if m:
            try:
                raw = base64.b64decode(m.group(1), validate=True)
            except (binascii.Error, ValueError):
                continue
            if len(raw) == 32:
                return raw.hex()
    return None


class HttpRangeReader:
    """Random access to a remote file over HTTP ``Range`` requests.

    ``size`` may be given (the index reports it); else the first request learns it. Spans read
    before are served from memory (at most ``keep`` bytes kept).
    """

    def __init__(self, client: httpx.Client, url: str, *, name: str | None = None, size: int | None = None,
                 retries: int = 3, backoff: float = 0.5, keep: int = 64 * MiB) -> None:
        self.client = client
        self.url = url
        self.name = name or url.rsplit("/", 1)[-1]
        self._size = size
        self.retries = retries
        self.backoff = backoff
        self.keep = keep
        self.bytes_fetched = 0
        self.requests = 0
        self.ignores_range = False
        self._spans: list[tuple[int, bytes]] = []
        self._whole: bytes | None = None
        self._lock = threading.Lock()
        self._cut = 0  # answers in a row that the connection cut short
        self.deadline = Deadline(f"{self.name}: download")  # of the whole reading: requests, inflating, parsing
        self.stated_sha256: str | None = None  # the whole file's sha256 as the server states it (stated_sha256)

    def check(self) -> None:
        """Raise the deadline's :class:`EnvironmentFailure` once the time to read this file is spent (the readers
        that inflate and parse what arrived call this as they go)."""
        self.deadline.check()

    def _count(self, n: int) -> None:
        with self._lock:
            self.bytes_fetched += n
            fetched = self.bytes_fetched
        size = self._size
        if size is not None and fetched > BYTE_BUDGET_FACTOR * size + WINDOW:
            why = "it ignores Range, sending the whole file for every part asked" if self.ignores_range else \
                "it sends more than was asked"
            raise TransferError(self.name, f"received {fetched} bytes reading a file of {size} bytes: {why} (refused)")

    # -- size ---------------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        if self._size is None:
            self.read_tail(1)
        assert self._size is not None
        return self._size

    def read_tail(self, n: int) -> bytes:
        """The last ``n`` bytes (fewer if the file is smaller); learns the size if unknown."""
        if self._size is not None:
            n = min(n, self._size)
            return self.read(self._size - n, n)
        data = self._get(None, n)
        return data

    # -- reading ------------------------------------------------------------------------------------
    def read(self, offset: int, length: int) -> bytes:
        if length <= 0:
            return b""
        if offset < 0 or (self._size is not None and offset + length > self._size):
            raise WheelError(self.name, f"read past the end of the file ({offset}+{length} > {self._size})")
        if self._whole is not None:
            return self._whole[offset:offset + length]
        for start, data in list(self._spans):
            if start <= offset and offset + length <= start + len(data):
                return data[offset - start:offset - start + length]
        data = self._get(offset, length)
        self._remember(offset, data)
        return data

    def stream(self, offset: int, length: int, chunk: int = MiB) -> Iterator[bytes]:
        """Yield ``length`` bytes from ``offset`` in chunks, without keeping them."""
        end = offset + length
        pos = offset
        stalls = 0
        while pos < end:
            got_any = False
            for piece in self._iter_range(pos, min(end - pos, WINDOW), chunk):
                got_any = True
                pos += len(piece)
                yield piece
            if pos < end:
                stalls = 0 if got_any else stalls + 1
                if stalls > self.retries:
                    raise TransferError(self.name, f"the server keeps ending the body early at byte {pos} of {end}")

    def _remember(self, offset: int, data: bytes) -> None:
        if len(data) > self.keep // 4:
            return
        with self._lock:
            self._spans.append((offset, data))
            total = sum(len(d) for _, d in self._spans)
            while total > self.keep and len(self._spans) > 1:
                total -= len(self._spans.pop(0)[1])

    def _send(self, headers: dict[str, str], deadline: Deadline) -> httpx.Response:
        import httpx  # lazy: heavy httpx, only network calls need it

        def send() -> httpx.Response:
            t = deadline.read_timeout()
            req = self.client.build_request("GET", self.url, headers=headers,
                                            timeout=httpx.Timeout(t, connect=min(DEFAULT_TIMEOUT[1], t)))
            return deadline.call(lambda: self.client.send(req, stream=True))

        self.requests += 1
        return request_with_retries(send, f"{self.name}: download", retries=self.retries, backoff=self.backoff,
                                    deadline=deadline)

    def _deadline(self) -> Deadline:
        return self.deadline

    def _pieces(self, r: httpx.Response, deadline: Deadline) -> Iterator[bytes]:
        """The body as it arrives, each piece counted; ends early (noted in ``_cut``) when the connection is
        cut, and fails with :class:`TransferError` when that keeps happening or the deadline passes."""
        import httpx  # lazy: heavy httpx, only network calls need it

        try:
            for piece in r.iter_bytes():
                self._count(len(piece))
                deadline.check()
                yield piece
        except httpx.HTTPError as e:
            self._cut += 1
            if self._cut > self.retries:
                raise TransferError(self.name, f"the server keeps cutting its answers short "
                                    f"({type(e).__name__}: {e})"[:300]) from None
            return
        self._cut = 0

    def _check_status(self, r: httpx.Response) -> None:
        if r.status_code == 404:
            r.close()
            raise WheelError(self.name, "not found on the index (HTTP 404)")
        if r.status_code == 416:
            r.close()
            raise WheelError(self.name, "the server refused the byte range (HTTP 416)")
        if r.status_code not in (200, 206):
            r.close()
            raise TransferError(self.name, f"unexpected HTTP {r.status_code}")

    def _iter_range(self, offset: int, length: int, chunk: int) -> Iterator[bytes]:
        """One request for [offset, offset+length); yields what arrives (may end early)."""
        deadline = self._deadline()
        r = self._send({"Range": f"bytes={offset}-{offset + length - 1}", "Accept-Encoding": "identity"}, deadline)
        try:
            self._check_status(r)
            skip, left = self._start(r, offset)
            left = min(left, length) if left >= 0 else length
            pieces = self._pieces(r, deadline)
            for piece in pieces:
                if skip:
                    cut = min(skip, len(piece))
                    piece = piece[cut:]
                    skip -= cut
                if not piece:
                    continue
                if len(piece) >= left:
                    self._cut = 0
                    yield piece[:left]
                    if r.status_code == 206 and len(piece) == left and "content-length" in r.headers:
                        next(pieces, None)  # the body's end, known from its length without reading more: the
                    return                  # connection is kept for the next request, not closed unread
                left -= len(piece)
                yield piece
        finally:
            r.close()

    def _start(self, r: httpx.Response, offset: int) -> tuple[int, int]:
        """(bytes to skip, bytes the body holds from ``offset`` or -1) for a 200 or 206 answer."""
        self.stated_sha256 = self.stated_sha256 or stated_sha256(r.headers)
        if r.status_code == 200:
            self.ignores_range = True
            total = r.headers.get("content-length")
            if total and total.isdigit():
                self._learn_size(int(total))
            return offset, -1
        lo, hi, total = self._content_range(r)
        if lo != offset:
            raise WheelError(self.name, f"the server answered bytes {lo}-{hi} for a request starting at {offset}")
        if total is not None:
            self._learn_size(total)
        return 0, hi - lo + 1

    def _content_range(self, r: httpx.Response) -> tuple[int, int, int | None]:
        cr = r.headers.get("content-range", "")
        try:
            unit, _, rest = cr.partition(" ")
            span, _, total = rest.partition("/")
            lo_s, _, hi_s = span.partition("-")
            lo, hi = int(lo_s), int(hi_s)
            tot = None if total == "*" else int(total)
            if unit != "bytes" or hi < lo:
                raise ValueError
        except ValueError:
            raise WheelError(self.name, f"invalid Content-Range {cr!r} in a 206 answer") from None
        return lo, hi, tot

    def _learn_size(self, size: int) -> None:
        if self._size is None:
            self._size = size
        elif self._size != size:
            raise WheelError(self.name, f"the server reports {size} bytes, the index {self._size}")

    def _get(self, offset: int | None, length: int) -> bytes:
        """Exactly ``length`` bytes from ``offset`` (``None``: the last ``length`` bytes)."""
        if offset is None:
            deadline = self._deadline()
            r = self._send({"Range": f"bytes=-{length}", "Accept-Encoding": "identity"}, deadline)
            try:
                self._check_status(r)
                if r.status_code == 206:
                    lo, hi, total = self._content_range(r)
                    if total is not None:
                        self._learn_size(total)
                    offset = lo
                    length = hi - lo + 1
                else:
                    self.ignores_range = True
                    total_s = r.headers.get("content-length")
                    if not (total_s and total_s.isdigit()):
                        return self._keep_whole_or_fail(r, deadline)
                    self._learn_size(int(total_s))
                    offset = max(0, int(total_s) - length)
                    length = int(total_s) - offset
            finally:
                r.close()
        buf = bytearray()
        stalls = 0
        while len(buf) < length:
            before = len(buf)
            for piece in self._iter_range(offset + len(buf), min(length - len(buf), WINDOW), MiB):
                buf += piece
            if len(buf) == before:
                stalls += 1
                if stalls > self.retries:
                    raise TransferError(
                        self.name, f"short answer: got {len(buf)} of {length} bytes from offset {offset}"
                    )
        return bytes(buf)

    def _keep_whole_or_fail(self, r: httpx.Response, deadline: Deadline) -> bytes:
        buf = bytearray()
        start = self._cut
        for piece in self._pieces(r, deadline):
            buf += piece
            if len(buf) > self.keep:
                raise WheelError(self.name, "the server ignores Range and sends no Content-Length")
        if self._cut > start:
            raise TransferError(self.name, f"the server cut its answer short after {len(buf)} bytes "
                                "(it ignores Range and sends no Content-Length)")
        self._whole = bytes(buf)
        self._size = len(buf)
        return self._whole

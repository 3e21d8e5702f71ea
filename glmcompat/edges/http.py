"""HTTP with retries, an overall deadline per operation and a size cap on every answer."""

from __future__ import annotations

import json
import math
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from glmcompat.model.errors import EnvironmentFailure, InputError

if TYPE_CHECKING:
    import ssl

    import httpx

T = TypeVar("T")

USER_AGENT = "glmcompat (+metadata and range reads only)"


RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})


DEFAULT_TIMEOUT = (30.0, 10.0)  # read, connect (seconds)


MiB = 1 << 20


MAX_RESPONSE = 64 * MiB  # bytes of one index page or METADATA file (decoded): a bigger answer is refused


DEFAULT_DEADLINE = 300.0  # seconds one HTTP operation (its retries, redirects and body included) may take


def http_deadline() -> float:
    """The overall deadline of one HTTP operation, in seconds (``GLMCOMPAT_HTTP_DEADLINE`` overrides)."""
    try:
        value = float(os.environ.get("GLMCOMPAT_HTTP_DEADLINE") or DEFAULT_DEADLINE)
    except ValueError:
        return DEFAULT_DEADLINE
    return value if math.isfinite(value) and value > 0 else DEFAULT_DEADLINE


class Deadline:
    """The overall deadline of one HTTP operation. A per-read timeout alone never fires on a server that
    trickles a byte every few seconds; this one bounds the whole: connecting, redirects, the headers
    (:meth:`call` runs the blocking part in a worker thread and stops waiting for it), and the body
    (:meth:`check` between chunks, each read also bounded by :meth:`read_timeout`)."""

    def __init__(self, what: str, seconds: float | None = None) -> None:
        self.what = what
        self.seconds = seconds if seconds is not None else http_deadline()
        self.end = time.monotonic() + self.seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    def failure(self) -> EnvironmentFailure:
        return EnvironmentFailure(f"{self.what}: no complete answer within {self.seconds:g} s (a server that "
                                  "trickles or stalls; GLMCOMPAT_HTTP_DEADLINE sets this deadline)")

    def check(self) -> None:
        if self.left() <= 0:
            raise self.failure()

    def read_timeout(self, default: float = DEFAULT_TIMEOUT[0]) -> float:
        """A per-read timeout that cannot outlast the deadline by more than itself."""
        return max(0.05, min(default, self.left()))

    def call(self, fn: Callable[[], T]) -> T:
        """``fn()``, or the deadline's :class:`EnvironmentFailure` when it has not returned in time. A
        response ``fn`` returns after that is closed as soon as it arrives."""
        self.check()
        lock = threading.Lock()
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                value = fn()
            except BaseException as e:  # noqa: BLE001 - handed to the waiting thread
                with lock:
                    box["error"] = e
                return
            with lock:
                if box.get("abandoned"):
                    close = getattr(value, "close", None)
                    if close is not None:
                        try:
                            close()
                        except Exception:  # noqa: BLE001
                            pass
                    return
                box["value"] = value

        t = threading.Thread(target=work, name="glmcompat-http", daemon=True)
        t.start()
        t.join(max(0.0, self.left()))
        with lock:
            if "value" in box:
                value: T = box["value"]
                return value
            if "error" in box:
                raise box["error"]
            box["abandoned"] = True
        raise self.failure()


@dataclass(frozen=True)
class Fetched:
    """A whole HTTP answer read within its deadline and size cap."""

    status_code: int
    headers: Mapping[str, str]
    content: bytes
    url: str

    def json(self) -> Any:
        return json.loads(self.content)

    def close(self) -> None:
        pass


def read_capped(r: httpx.Response, what: str, limit: int, deadline: Deadline) -> bytes:
    """The (decoded) body of a streamed response: at most ``limit`` bytes, within ``deadline``."""
    buf = bytearray()
    for chunk in r.iter_bytes():
        buf += chunk
        if len(buf) > limit:
            raise EnvironmentFailure(f"{what}: the answer is larger than {limit // MiB} MiB (refused; "
                                     "a project page or METADATA is far smaller)")
        deadline.check()
    return bytes(buf)


_SSL: dict[str, ssl.SSLContext] = {}  # by the CA bundle's path ("" for httpx's default): one per process
_SSL_LOCK = threading.Lock()


def ssl_context() -> ssl.SSLContext:
    """The TLS context every client of this process uses: the CA bundle the usual variables name (``SSL_CERT_FILE``,
    ``REQUESTS_CA_BUNDLE``, ``PIP_CERT``), else httpx's default; built once per bundle, since loading a bundle costs
    tens of milliseconds of CPU and a cold lock opens a client per reading thread. A context is safe to share."""
    import ssl  # lazy: with httpx, only network calls

    import httpx  # lazy: heavy httpx, only network calls need it

    path = next((p for p in (os.environ.get(v) for v in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT"))
                 if p and os.path.isfile(p)), "")
    with _SSL_LOCK:
        ctx = _SSL.get(path)
        if ctx is None:
            ctx = _SSL[path] = (ssl.create_default_context(cafile=path) if path else httpx.create_ssl_context())
        return ctx


def make_client(timeout: tuple[float, float] = DEFAULT_TIMEOUT, *, max_connections: int | None = None) -> httpx.Client:
    """An httpx client honouring the usual CA bundle variables (``SSL_CERT_FILE``, ``PIP_CERT``...).
    ``max_connections`` bounds the pool (parallel downloads wait for a free connection, no pool timeout)."""
    import httpx  # lazy: heavy httpx, only network calls need it

    from glmcompat.edges.dns import client  # lazy: heavy httpx, only network calls need it

    # Sized for the parallel reads (the index source's prefetch, a refresh's jobs): every connection they open kept.
    limits = (httpx.Limits(max_connections=100, max_keepalive_connections=20) if max_connections is None else
              httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections))
    wait: dict[str, Any] = {} if max_connections is None else {"pool": None}  # a bounded pool: wait for a connection
    try:
        verify = ssl_context()
        # The direct connections through the shared resolver; the proxy variables read as httpx reads them.
        return client(limits, verify, timeout=httpx.Timeout(timeout[0], connect=timeout[1], **wait),
                      follow_redirects=True, headers={"User-Agent": USER_AGENT})
    except (ImportError, ValueError, httpx.InvalidURL) as e:  # the proxy variables' transports are built here: SOCKS needs socksio
        raise proxy_error(e) from None


PROXY_VARIABLES = ("ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")


def proxy_error(e: Exception) -> InputError:
    """The configuration error for a proxy variable httpx cannot use (a SOCKS proxy without the optional
    ``socksio`` package, a scheme or URL it does not know): one line naming the variable, its value (credentials
    hidden) and the remedy."""
    set_ = [(k, os.environ[k]) for k in PROXY_VARIABLES if os.environ.get(k)]
    socks = [(k, v) for k, v in set_ if v.lower().startswith("socks")]
    name, value = (socks or set_ or [("ALL_PROXY", "")])[0]
    shown = re.sub(r"//[^@/]*@", "//***@", value)[:200]
    if isinstance(e, ImportError) or socks:
        return InputError(f"{name}={shown}: a SOCKS proxy needs the socksio package, which is not installed; "
                          f"install it (pip install 'httpx[socks]') or unset {name}")
    return InputError(f"{name}={shown}: not a proxy URL glmcompat can use ({str(e).splitlines()[0] if str(e) else e!r}); "
                      f"set it to http://HOST:PORT or unset it")


def request_with_retries(
    send: Callable[[], httpx.Response],
    what: str,
    *,
    retries: int = 3,
    backoff: float = 0.5,
    sleep: Callable[[float], None] | None = None,
    deadline: Deadline | None = None,
) -> httpx.Response:
    """Call ``send`` until it answers something other than a timeout, connection error, 429 or 5xx.

    Bounded: ``retries`` extra attempts, waiting ``backoff * 2**i`` seconds between them, all within
    ``deadline`` (the whole operation's). The last failure becomes an :class:`EnvironmentFailure`
    naming ``what``; so does any other httpx error (too many redirects, an undecodable body, an invalid
    URL), at once.
    """
    import httpx  # lazy: heavy httpx, only network calls need it

    last = ""
    for attempt in range(retries + 1):
        if attempt:
            pause = backoff * (2 ** (attempt - 1))
            if deadline is not None:
                pause = min(pause, max(0.0, deadline.left()))
            (sleep or time.sleep)(pause)
        if deadline is not None:
            deadline.check()
        try:
            r = send()
        except httpx.TimeoutException:
            last = "timed out"
            continue
        except httpx.TransportError as e:
            last = f"cannot connect ({type(e).__name__}: {e})" if str(e) else f"cannot connect ({type(e).__name__})"
            continue
        except httpx.TooManyRedirects:
            raise EnvironmentFailure(f"{what}: too many redirects (a redirect loop?)") from None
        except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError) as e:
            raise EnvironmentFailure(f"{what}: {type(e).__name__}: {e}"[:400]) from None
        if r.status_code in RETRY_STATUS:
            last = f"HTTP {r.status_code}"
            r.close()
            continue
        return r
    raise EnvironmentFailure(f"{what}: {last} after {retries + 1} attempts (offline? set UV_DEFAULT_INDEX or PIP_INDEX_URL)")

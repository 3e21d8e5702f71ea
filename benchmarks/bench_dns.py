"""Benchmark (issue 39): parallel first requests to the index's hosts, a plain httpx client (each new connection asks
``getaddrinfo`` on its own) against :func:`glmcompat.edges.http.make_client` (each host looked up once:
:mod:`glmcompat.edges.dns`), in one run, rounds alternating.

Each round makes a fresh client of each kind and sends ``--threads`` GETs at once, half for the index's project page
of numpy, half for the last 64 KiB of a numpy wheel on the files host (a range read) (both read from the index at run time), as the
index source's prefetch does; a round's figure is its slowest request. A resolver that drops one of many queries
sent together shows as rounds of 5 s and more (the C library's retry) on the plain side.

    python benchmarks/bench_dns.py [--rounds 10] [--threads 8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from glmcompat.edges import dns  # noqa: E402
from glmcompat.edges.http import USER_AGENT, make_client  # noqa: E402
from glmcompat.edges.index import ACCEPT_JSON, IndexClient, default_index_url  # noqa: E402


def plain() -> object:
    import httpx

    cafile = next((os.environ[v] for v in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT")
                   if os.path.isfile(os.environ.get(v) or "")), None)
    return httpx.Client(verify=cafile or True, follow_redirects=True, headers={"User-Agent": USER_AGENT})


def slowest(client: object, urls: list[str], failed: list[str]) -> float:
    """The slowest of ``urls`` fetched at once (a failed request counts with the time it took, and is listed)."""
    times: list[float] = []

    def one(url: str) -> None:
        t = time.perf_counter()
        headers = {"Accept": ACCEPT_JSON} if url.endswith("/") else {"Range": "bytes=-65536"}
        try:
            client.get(url, headers=headers).read()  # type: ignore[attr-defined]
        except Exception as e:  # noqa: BLE001 - counted: a lookup that fails outright ("Temporary failure")
            failed.append(f"{type(e).__name__}: {e}")
        times.append(time.perf_counter() - t)

    threads = [threading.Thread(target=one, args=(u,)) for u in urls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    client.close()  # type: ignore[attr-defined]
    return max(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--threads", type=int, default=8)
    a = ap.parse_args()
    with IndexClient(default_index_url()) as index:
        page = index.project_url("numpy")
        wheel = next(f for f in reversed(index.project("numpy").files) if f.is_wheel)
    urls = [page if i % 2 == 0 else wheel.url for i in range(a.threads)]
    ta, tb, fa, fb = [], [], [], []  # type: ignore[var-annotated]
    for i in range(a.rounds):
        for side in ("ab" if i % 2 == 0 else "ba"):
            if side == "a":
                ta.append(slowest(make_client(), urls, fa))
            else:
                tb.append(slowest(plain(), urls, fb))
    over = lambda ts: sum(t >= 4.0 for t in ts)  # noqa: E731
    print(f"slowest of {a.threads} parallel first requests, {a.rounds} rounds: make_client median "
          f"{statistics.median(ta):.2f} s, max {max(ta):.2f} s, rounds >= 4 s: {over(ta)} "
          f"({dns.SHARED.lookups} lookups in all), failed requests: {len(fa)}; plain httpx median {statistics.median(tb):.2f} s, "
          f"max {max(tb):.2f} s, rounds >= 4 s: {over(tb)}, failed requests: {len(fb)}; load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

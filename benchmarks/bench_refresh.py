"""Benchmark: `glmcompat matrix refresh` of one new compiled release, cold (needs the package index).

A copy of the shipped matrix with one kernel release removed (default sglang-kernel 0.4.10, whose
METADATA pins torch==2.14.1) is refreshed end to end with an empty cache; then each part is timed
alone, each with its own empty cache:

* abi:  `glmcompat abi PKG==VER --torch PIN` (ELF tables of the extension and of torch's libraries);
        target: at most 60 s and 5% of the wheels' bytes;
* arch: the GPU code of the main modules only (what refresh reads: `[[primary_modules]]` members
        streamed up to the end of their fatbin), and with --full-arch every module (`glmcompat arch`).

Bytes are counted on the wire by an httpx transport wrapper. Prints figures; asserts nothing.

    python benchmarks/bench_refresh.py [--package sglang-kernel --version 0.4.10] [--full-arch] [--jobs 4]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


class Counting:
    """An httpx transport that counts response bytes and requests."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.bytes = 0
        self.requests = 0
        self.lock = threading.Lock()

    def handle_request(self, request: Any) -> Any:
        import httpx

        r = self.inner.handle_request(request)
        counter = self

        class Stream(httpx.SyncByteStream):
            def __iter__(self) -> Any:
                for chunk in r.stream:
                    with counter.lock:
                        counter.bytes += len(chunk)
                    yield chunk

            def close(self) -> None:
                r.stream.close()

        with self.lock:
            self.requests += 1
        return httpx.Response(r.status_code, headers=r.headers, stream=Stream(), extensions=r.extensions)

    def close(self) -> None:
        self.inner.close()


def client(jobs: int) -> tuple[Any, Counting]:
    from glmcompat.ops.refresh import bounded_client

    base = bounded_client(jobs)
    counting = Counting(base._transport)  # the pool bounded to `jobs` connections
    base._transport = counting  # type: ignore[assignment]
    return base, counting


def trimmed_matrix(dest: Path, package: str, version: str) -> None:
    """A copy of the shipped matrix without any row for package==version (tests/matrixtrim.py, as the round trip of
    tests/ops/test_refresh.py takes releases out)."""
    from glmcompat.matrix.store import default_matrix_dir
    from tests.matrixtrim import trim

    shutil.copytree(default_matrix_dir(), dest)
    trim(dest, package, {version})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--package", default="sglang-kernel")
    ap.add_argument("--version", default="0.4.10")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--full-arch", action="store_true", help="also time the whole-wheel arch probe")
    args = ap.parse_args()

    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient
    from glmcompat.matrix.curate import table_of
    from glmcompat.matrix.rows import AbiProbe, Kernel
    from glmcompat.ops.refresh import refresh
    from glmcompat.ops.wheelprobe import probe_abi, probe_arch

    tmp = Path(tempfile.mkdtemp(prefix="bench-refresh-"))
    try:
        mdir = tmp / "matrices"
        trimmed_matrix(mdir, args.package, args.version)

        def fresh(name: str) -> Cache:
            d = tmp / name
            os.environ["GLMCOMPAT_CACHE_DIR"] = str(d)
            return Cache(d)

        # 1. end to end, cold
        cache = fresh("cache-e2e")
        http, counting = client(args.jobs)
        with IndexClient(None, client=http, cache=cache) as index:
            wheel = index.find_wheel(args.package, args.version)
            t0 = time.perf_counter()
            report = refresh(index=index, cache=cache, matrix=mdir, packages=[args.package], jobs=args.jobs,
                             progress=False)
            e2e = time.perf_counter() - t0
        outcome = next(o for o in report.outcomes if o.version == args.version)
        print(f"refresh {args.package} {args.version} ({wheel.filename}, {wheel.size / 1e6:.1f} MB), cold, "
              f"jobs={args.jobs}:")
        print(f"  end to end: {e2e:.1f} s, {counting.bytes / 1e6:.1f} MB fetched in {counting.requests} requests; "
              f"status {outcome.status}; rows {', '.join(table_of(r) for r in outcome.rows)}")
        for p in outcome.proved:
            print(f"    proved: {p}")
        for u in outcome.unproved:
            print(f"    not proved: {u}")
        pin = next((r.torch for r in outcome.rows if isinstance(r, Kernel)), None) or \
            next((r.torch for r in outcome.rows if isinstance(r, AbiProbe)), None)

        # 2. abi part alone, cold
        if pin:
            cache = fresh("cache-abi")
            http, counting = client(args.jobs)
            with IndexClient(None, client=http, cache=cache) as index:
                t0 = time.perf_counter()
                a = probe_abi(args.package, args.version, pin, index=index, cache=cache)
                secs = time.perf_counter() - t0
            ext_size = wheel.size or 1
            print(f"  abi vs torch {pin}: {secs:.1f} s, {counting.bytes / 1e6:.1f} MB on the wire; probe counted "
                  f"{a.bytes_fetched / 1e6:.1f} MB of {a.bytes_total / 1e6:.1f} MB (both wheels) = "
                  f"{100 * a.bytes_fetched / max(1, a.bytes_total):.2f}%; "
                  f"{100 * counting.bytes / ext_size:.2f}% of the extension wheel alone "
                  f"(target: <= 60 s, <= 5%)")

            # 2b. the steady state of a nightly refresh: torch's libraries already read (cached), the
            # extension new
            cache = fresh("cache-abi-marginal")
            shutil.copytree(tmp / "cache-abi", tmp / "cache-abi-marginal", dirs_exist_ok=True)
            for kind in ("ext", "abi"):
                shutil.rmtree(tmp / "cache-abi-marginal" / kind, ignore_errors=True)
            http, counting = client(args.jobs)
            with IndexClient(None, client=http, cache=cache) as index:
                t0 = time.perf_counter()
                probe_abi(args.package, args.version, pin, index=index, cache=cache)
                secs = time.perf_counter() - t0
            print(f"  abi, torch {pin} already read (a nightly's steady state): {secs:.1f} s, "
                  f"{counting.bytes / 1e6:.1f} MB = {100 * counting.bytes / ext_size:.2f}% of the extension wheel")

        # 3. arch part alone, cold: main modules only (what refresh reads)
        from glmcompat.matrix.schema import load_matrix

        pats = [list(r.modules) for r in load_matrix([mdir]).primary_modules if r.package == args.package]
        cache = fresh("cache-arch")
        http, counting = client(args.jobs)
        with IndexClient(None, client=http, cache=cache) as index:
            t0 = time.perf_counter()
            r = probe_arch(args.package, args.version, index=index, cache=cache, select=pats[0] if pats else [])
            secs = time.perf_counter() - t0
        print(f"  arch (main modules {', '.join(r.primary) or '-'}): {secs:.1f} s, {counting.bytes / 1e6:.1f} MB = "
              f"{100 * counting.bytes / (wheel.size or 1):.1f}% of the wheel; SASS {', '.join(r.sass)}")
        if args.full_arch:
            cache = fresh("cache-arch-full")
            http, counting = client(args.jobs)
            with IndexClient(None, client=http, cache=cache) as index:
                t0 = time.perf_counter()
                probe_arch(args.package, args.version, index=index, cache=cache)
                secs = time.perf_counter() - t0
            print(f"  arch (every module, as `glmcompat arch`): {secs:.1f} s, {counting.bytes / 1e6:.1f} MB = "
                  f"{100 * counting.bytes / (wheel.size or 1):.1f}% of the wheel")

        # 4. warm repeat: the journal answers, nothing is fetched
        cache = Cache(tmp / "cache-e2e")
        os.environ["GLMCOMPAT_CACHE_DIR"] = str(tmp / "cache-e2e")
        shutil.rmtree(mdir)
        trimmed_matrix(mdir, args.package, args.version)
        http, counting = client(args.jobs)
        with IndexClient(None, client=http, cache=cache) as index:
            t0 = time.perf_counter()
            refresh(index=index, cache=cache, matrix=mdir, packages=[args.package], jobs=args.jobs, progress=False)
            secs = time.perf_counter() - t0
        print(f"  warm repeat (journal): {secs:.2f} s, {counting.bytes / 1e6:.2f} MB fetched")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark (issue 36): what reading every compiled wheel of a real lock costs, cold and warm.

The glm5 uv.lock (179 packages, tests/fixtures/locks/glm5-sglang-0.5.9) records its wheels' URLs with the fixtures'
placeholder host; the real files host is read at run time from the configured index (the URL of one of its files) and
put back in a copy. Then :func:`glmcompat.ops.artifacts.read_artifacts` runs in this process with an empty cache
(cold: every compiled wheel's central directory, then its ELF dynamic tables, by range reads) and again (warm: stored
by sha256), counting the requests and bytes the range readers fetch against the wheels' full sizes (HEAD of each
picked wheel: what a download would cost). `uv lock --check` of the same project (locked afresh by the real uv in a
temporary directory) is the anchor. Needs the package index.

    python benchmarks/bench_artifacts.py [--lock PATH]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GLM5 = ROOT / "tests" / "fixtures" / "locks" / "glm5-sglang-0.5.9"


def files_host() -> str:
    """scheme://host/ of the configured index's files (read from one file's URL)."""
    from glmcompat.edges.index import IndexClient

    with IndexClient(None, retries=1) as index:
        url = index.project("six").files[0].url
    m = re.match(r"(https?://[^/]+/)", url)
    assert m, url
    return m.group(1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lock", type=Path, default=GLM5 / "uv.lock")
    ap.add_argument("--keep", type=Path, help="keep the copy of the lock and its cache in this directory")
    args = ap.parse_args()
    os.environ.pop("GLMCOMPAT_NO_ARTIFACTS", None)
    os.environ.pop("GLMCOMPAT_OFFLINE", None)
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="bench-artifacts-"))
    tmp.mkdir(parents=True, exist_ok=True)
    os.environ["GLMCOMPAT_CACHE_DIR"] = str(tmp / "cache")
    host = files_host()
    text = re.sub(r"https://(files\.)?index\.invalid/", host, args.lock.read_text())
    (tmp / "uv.lock").write_text(text)
    if (args.lock.parent / "pyproject.toml").exists():
        shutil.copy(args.lock.parent / "pyproject.toml", tmp / "pyproject.toml")

    from glmcompat.edges import ranges
    from glmcompat.matrix.load import load_facts
    from glmcompat.ops.artifacts import candidates, read_artifacts, read_machines
    from glmcompat.readers.formats import read_lock

    fetched = {"bytes": 0, "requests": 0}
    by_wheel: dict[str, int] = {}
    count = ranges.HttpRangeReader._count

    def counting(self: ranges.HttpRangeReader, n: int) -> None:
        fetched["bytes"] += n
        fetched["requests"] += 1
        by_wheel[self.name] = by_wheel.get(self.name, 0) + n
        count(self, n)

    ranges.HttpRangeReader._count = counting  # type: ignore[method-assign]
    lock = read_lock(tmp / "uv.lock")
    facts = load_facts()
    todo = candidates(lock, facts, False, read_machines(lock))
    print(f"{args.lock}: {len(lock.entries)} packages, {len(lock.meta.get('lock_wheels', {}))} with compiled wheels, "
          f"{len(todo)} read (the rest: judged by the matrix's rows)")
    t0 = time.perf_counter()
    got = read_artifacts(lock, facts, resolved_at_install=False)
    cold = time.perf_counter() - t0
    unread = {k: a.unread for k, a in got.items() if not a.read}
    print(f"cold: {cold:.2f} s, {fetched['requests']} range reads, {fetched['bytes'] / 2**20:.1f} MiB fetched; "
          f"{len(got) - len(unread)} read, {len(unread)} unread")
    for name, n in sorted(by_wheel.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {n / 2**20:7.1f} MiB  {name}")
    for k, why in sorted(unread.items())[:10]:
        print(f"  unread {k}: {why}")
    import httpx

    full = 0
    with httpx.Client(follow_redirects=True, timeout=30) as c:
        for a in got.values():
            if a.read and a.artifact:
                loc = next((u for u in lock.meta["lock_wheels"].get(f"{a.name}=={a.version}", ()) if a.artifact in u), "")
                if loc:
                    full += int(c.head(loc.split("#")[0]).headers.get("content-length", 0))
    print(f"whole wheels would be {full / 2**20:.1f} MiB: read {100 * fetched['bytes'] / max(full, 1):.1f}% of them")
    errors = [(k, a.torch_missing, a.numpy_abi) for k, a in got.items() if a.read and any(a.torch_missing.values())]
    print(f"torch symbols missing in: {errors or 'none'}")
    before = dict(fetched)
    t0 = time.perf_counter()
    again = read_artifacts(read_lock(tmp / "uv.lock"), facts, resolved_at_install=False)
    warm = time.perf_counter() - t0
    print(f"warm: {warm * 1000:.1f} ms, {fetched['requests'] - before['requests']} range reads; same facts: {again == got}")
    uv = shutil.which("uv")
    if uv and (tmp / "pyproject.toml").exists():
        env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_PYTHON": sys.executable}
        proj = tmp / "uvproj"
        proj.mkdir()
        shutil.copy(tmp / "pyproject.toml", proj / "pyproject.toml")
        subprocess.run([uv, "lock", "-q"], cwd=proj, env=env, check=False, capture_output=True)
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            subprocess.run([uv, "lock", "--check", "-q"], cwd=proj, env=env, check=False, capture_output=True)
            times.append(time.perf_counter() - t0)
        anchor = sorted(times)[2]
        print(f"uv lock --check (median of 5): {anchor * 1000:.1f} ms; cold read / anchor: {cold / anchor:.1f}x; "
              f"warm read / anchor: {warm / anchor:.2f}x")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

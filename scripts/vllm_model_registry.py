"""Which vLLM release first registers a model architecture (run by hand; needs the package index).

vLLM maps architecture names (``config.json``'s ``architectures``) to its model classes in
``vllm/model_executor/models/registry.py``. This reads that one file out of the released wheels with
HTTP range requests (the central directory and one member; a vLLM wheel is hundreds of MB and is never
downloaded) and bisects over the final releases for the first one whose registry names the
architecture, then checks the release before it. It prints the first release, the wheel, the file and
the line, e.g.::

    python scripts/vllm_model_registry.py GlmMoeDsaForCausalLM
    python scripts/vllm_model_registry.py GlmMoeDsaForCausalLM --scan      # every release, no bisection
    python scripts/vllm_model_registry.py GlmMoeDsaForCausalLM --json

Bisection assumes an architecture, once registered, stays registered; ``--scan`` reads every release
(one range-read each) and shows where that does not hold. The index is the one pip/uv would use
(``glmcompat.edges.index.default_index_url``); no index host is written here. Exit 0 when a release
registers it, 1 when none does, 2 on bad input, 3 when the index fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Any

REGISTRY = "vllm/model_executor/models/registry.py"


@dataclass
class Seen:
    version: str
    wheel: str
    sha256: str | None
    line_no: int | None  # 1-based line of the first mention; None: not registered
    line: str | None
    bytes_fetched: int


def registry_lines(text: str, arch: str) -> list[tuple[int, str]]:
    """The lines of a registry.py that register ``arch`` (as a quoted key: ``"Arch": (...)``)."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s.startswith((f'"{arch}"', f"'{arch}'")):
            out.append((n, s))
    return out


def read_registry(ic: Any, version: str, python: str, platform: str) -> tuple[Any, str, int]:
    from glmcompat.edges.ranges import HttpRangeReader
    from glmcompat.readers.wheelzip import RemoteZip

    f = ic.find_wheel("vllm", version, python=python, platform=platform)
    reader = HttpRangeReader(ic.client, f.url, name=f.filename, size=f.size)
    zf = RemoteZip(reader)
    names = {m.name for m in zf.members}
    text = zf.read(REGISTRY).decode("utf-8", "replace") if REGISTRY in names else ""
    return f, text, reader.bytes_fetched


def look(ic: Any, version: str, arch: str, python: str, platform: str, cache: dict[str, Seen]) -> Seen:
    if version not in cache:
        f, text, fetched = read_registry(ic, version, python, platform)
        hits = registry_lines(text, arch)
        cache[version] = Seen(version, f.filename, f.sha256, hits[0][0] if hits else None,
                              hits[0][1] if hits else None, fetched)
        print(f"  {version}: {'registers' if hits else 'no'} {arch}"
              + (f" (line {hits[0][0]})" if hits else "") + f" [{fetched // 1024} KiB read]", file=sys.stderr)
    return cache[version]


def releases(ic: Any, python: str, platform: str) -> list[str]:
    from packaging.version import Version

    from glmcompat.edges.index import select_wheel, supported_tags

    project = ic.project("vllm")
    tags = supported_tags(python, platform)
    out = []
    for v in project.versions:
        try:
            pv = Version(v)
        except ValueError:
            continue
        if pv.is_prerelease or pv.is_devrelease:
            continue
        files = [f for f in project.files_for(v) if not f.yanked]
        if select_wheel(files, tags) is not None:
            out.append(v)
    return sorted(out, key=Version)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("architecture", help="e.g. GlmMoeDsaForCausalLM")
    ap.add_argument("--scan", action="store_true", help="read every release instead of bisecting")
    ap.add_argument("--python", default="cp311")
    ap.add_argument("--platform", default="manylinux_x86_64")
    ap.add_argument("--since", default=None, help="ignore releases before this version")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    from packaging.version import InvalidVersion, Version

    from glmcompat.edges.index import IndexClient
    from glmcompat.model.errors import EnvironmentFailure, InputError

    try:
        Version(a.since or "0")
    except InvalidVersion:
        ap.error(f"--since {a.since!r} is not a version")
    try:
        with IndexClient() as ic:
            vs = releases(ic, a.python, a.platform)
            if a.since:
                vs = [v for v in vs if Version(v) >= Version(a.since)]
            if not vs:
                print("no vLLM release with a wheel for this platform", file=sys.stderr)
                return 2
            cache: dict[str, Seen] = {}
            if a.scan:
                for v in vs:
                    look(ic, v, a.architecture, a.python, a.platform, cache)
                first = next((v for v in vs if cache[v].line_no), None)
            else:
                if not look(ic, vs[-1], a.architecture, a.python, a.platform, cache).line_no:
                    first = None
                else:
                    lo, hi = 0, len(vs) - 1  # invariant: vs[hi] registers it
                    while lo < hi:
                        mid = (lo + hi) // 2
                        if look(ic, vs[mid], a.architecture, a.python, a.platform, cache).line_no:
                            hi = mid
                        else:
                            lo = mid + 1
                    first = vs[hi]
                    i = vs.index(first)
                    if i > 0:
                        look(ic, vs[i - 1], a.architecture, a.python, a.platform, cache)  # the one before
    except (InputError, EnvironmentFailure) as e:
        print(f"error: {e}", file=sys.stderr)
        return 3 if isinstance(e, EnvironmentFailure) else 2
    checked = {v: s.__dict__ for v, s in sorted(cache.items(), key=lambda kv: Version(kv[0]))}
    result: dict[str, Any] = {"architecture": a.architecture, "file": REGISTRY, "first": None, "checked": checked}
    if first:
        s = cache[first]
        prev = vs[vs.index(first) - 1] if vs.index(first) > 0 else None
        result.update(first=first, wheel=s.wheel, sha256=s.sha256, line_no=s.line_no, line=s.line, previous=prev)
    if a.json:
        print(json.dumps(result, indent=2))
    elif first:
        s = cache[first]
        print(f"{a.architecture}: first registered in vllm {first} ({s.wheel}, sha256 {s.sha256})")
        print(f"  {REGISTRY}:{s.line_no}: {s.line}")
        if result["previous"]:
            print(f"  vllm {result['previous']}: not registered")
    else:
        print(f"{a.architecture}: no vLLM release registers it (newest checked: {vs[-1]})")
    return 0 if first else 1


if __name__ == "__main__":
    import os

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # glmcompat from this checkout
    sys.exit(main(sys.argv[1:]))

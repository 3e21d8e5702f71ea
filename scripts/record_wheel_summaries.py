"""Record glmcompat/ops/evidence/wheel-summaries.zip (glmcompat.ops.shipped, issue 39): what the judge of a lock reads
of the compiled wheels of the curated stacks (the matrix's ``[[stack]]`` rows: the sets ``glmcompat lock --target``
writes, examples/glm5-sglang among them), by the wheel's sha256, so a cold lock or a fresh clone of such a project
reads none of their bytes.

Which wheels: each stack is made a project (its pins as dependencies, its overrides and exclude-newer, as
``glmcompat lock`` writes them) and locked by ``uv lock`` universally (Linux), once for each floor of --python (a
project's ``requires-python`` decides which releases uv takes, so each floor is a lock a user may have). Each lock is
read by glmcompat's own uv.lock reader and the judge's own choice is asked of it: the packages it reads
(:func:`glmcompat.ops.artifacts.candidates`, on every machine of --machine) and, for each CPython of --python, the
wheel an installer of that Python and machine takes (:func:`glmcompat.ops.artifacts.pick_wheel`), and the torch
wheels their verdicts read. Each wheel is read from the index's bytes (HTTP range requests) with the judge's reader
(:func:`glmcompat.ops.artifacts.summaries`, shipping off): a summary is a pure function of the wheel's bytes, so no
interpreter of that Python is needed. Only a wheel read whole (nothing left beyond the byte budget) is kept. Each
torch wheel is kept cut to the names its covered extension rows (those of its machine that need torch's exports)
leave undefined: all the judge asks of it for them (glmcompat.ops.shipped.torch_exports).

Each stack is locked with its exclude-newer and without it (the newest index: what a user project `glmcompat lock`
pinned locks). The file is written anew from the locks (no stale rows); ``covered.json`` in it names the stacks, floors, Pythons,
machines and every wheel (sha256, file name, stack) the locks gave, read or not (tests/ops/test_shipped.py checks
every row against it). ``--verify SHA...`` reads the wheels of those rows again from the index (same file name, same
sha256) with the judge's reader and exits 1 on a difference.

    python scripts/record_wheel_summaries.py [--stack NAME ...] [--python 3.10 3.11 3.12 3.13] [--machine x86_64 aarch64]
    python scripts/record_wheel_summaries.py --verify SHA256 [SHA256 ...]

Needs the package index (the configured one, UV_DEFAULT_INDEX for uv) and uv on PATH."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from glmcompat.edges.index import IndexClient, IndexFile  # noqa: E402
from glmcompat.matrix.load import load_facts  # noqa: E402
from glmcompat.matrix.rows import Stack  # noqa: E402
from glmcompat.ops.artifacts import (  # noqa: E402
    NUMPY_VERSION,
    _lock_file,
    _needs_torch,
    _torches,
    candidates,
    judged_part,
    open_index,
    pick_wheel,
    same_file,
    summaries,
)
from glmcompat.ops.shipped import COVERED, FORMAT, INDEX, PATH  # noqa: E402
from glmcompat.ops.shipped import rows as shipped_rows  # noqa: E402
from glmcompat.ops.wheelprobe import EXT_SUMMARY_VERSION, SUMMARY_VERSION, ExtSummary, _Stats, _torch_summary  # noqa: E402
from glmcompat.readers.formats.uvlock import parse_uv_lock  # noqa: E402

DATE = (2020, 1, 1, 0, 0, 0)  # every member's time: the file's bytes depend on its rows only
PYTHONS = ("3.10", "3.11", "3.12", "3.13")
MACHINES = ("x86_64", "aarch64")


def command(sha: str) -> str:
    return f"python scripts/record_wheel_summaries.py --verify {sha}"


def write_zip(path: Path, rows: dict[str, bytes], covered: bytes) -> None:
    """The file: the rows of one release (``<name>-<version>`` of the wheel's file name) one LZMA member, a line
    ``<sha256>\t<row>`` a wheel, sorted; ``index.json`` {sha256: member}; ``covered.json``."""
    import zipfile

    groups: dict[str, list[bytes]] = {}
    index: dict[str, str] = {}
    for sha, row in sorted(rows.items()):
        name, version = json.loads(row)["filename"].split("-")[:2]
        index[sha] = f"{name.lower()}-{version}"
        groups.setdefault(index[sha], []).append(sha.encode() + b"\t" + row)
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w") as zf:
        for member, data, method in ((INDEX, dump(index), zipfile.ZIP_DEFLATED), (COVERED, covered, zipfile.ZIP_DEFLATED),
                                     *((m, b"\n".join(g), zipfile.ZIP_LZMA) for m, g in sorted(groups.items()))):
            info = zipfile.ZipInfo(member, DATE)
            info.compress_type = method
            zf.writestr(info, data, compresslevel=9)
    tmp.replace(path)


def dump(d: dict[str, Any]) -> bytes:
    return json.dumps(d, sort_keys=True, separators=(",", ":")).encode()


def project(stack: Stack, floor: str, newest: bool) -> str:
    """The pyproject.toml of a project locking ``stack`` (as ``glmcompat lock`` writes its pins) on Pythons >= floor;
    ``newest``: without the stack's exclude-newer (a user's project that ``glmcompat lock`` pinned: the rest of its set
    is the index's newest), else with it (examples/glm5-sglang: the index as it was when the stack was proven)."""
    q = json.dumps
    deps = ", ".join(q(f"{n}=={v}") for n, v in sorted(stack.pins.items()))
    lines = ["[project]", 'name = "stack"', 'version = "0"', f"requires-python = {q('>=' + floor)}",
             f"dependencies = [{deps}]", "", "[tool.uv]", "environments = [" + ", ".join(q(f"sys_platform == 'linux' and platform_machine == '{m}'") for m in MACHINES) + "]"]
    if stack.overrides:
        lines.append(f"override-dependencies = [{', '.join(q(f'{n}=={v}') for n, v in sorted(stack.overrides.items()))}]")
    if stack.exclude_newer and not newest:
        lines.append(f"exclude-newer = {q(str(stack.exclude_newer))}")
    return "\n".join(lines) + "\n"


Wheel = tuple[str, str, str, str]  # (sha256, file name, location with #sha256=, machine)


def lock_stack(stack: Stack, floor: str, newest: bool, work: Path, facts: Any, pythons: Iterable[str],
               machines: tuple[str, ...]) -> tuple[dict[str, Wheel], dict[str, Wheel], str]:
    """({sha: wheel} the judge reads for extensions, {sha: wheel} of the torch wheels, the uv error or '')."""
    where = work / f"{stack.name}-{floor}-{int(newest)}"
    where.mkdir(parents=True)
    (where / "pyproject.toml").write_text(project(stack, floor, newest))
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    r = subprocess.run(["uv", "lock", "-q"], cwd=where, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        return {}, {}, (r.stderr.strip().splitlines() or ["uv lock failed"])[-1][:200]
    text = (where / "uv.lock").read_text()
    lock = parse_uv_lock(where / "uv.lock", text)
    binary = lock.meta.get("lock_wheels", {})
    ext: dict[str, Wheel] = {}
    torch: dict[str, Wheel] = {}

    def add(out: dict[str, Wheel], locs: list[str], machine: str) -> None:
        for py in pythons:
            loc = pick_wheel(locs, "cp" + py.replace(".", ""), machine)
            if loc is not None and "#sha256=" in loc:
                f = _lock_file(loc)
                if f"_{machine}" in f.filename and f.sha256:
                    out[f.sha256.lower()] = (f.sha256.lower(), f.filename, loc, machine)

    for name, ver, where_, _py, machine in candidates(lock, facts, False, set(machines)):
        if where_ == "lock" and f"{name}=={ver}" in binary:
            add(ext, binary[f"{name}=={ver}"], machine)
    for machine in machines:
        for tfull in _torches(lock).values():
            add(torch, binary.get(f"torch=={tfull}", []), machine)
    return ext, torch, ""


def read_ext(index: IndexClient, w: Wheel) -> dict[str, Any] | str:
    """The row of an extension wheel, read from the index's bytes; a str: why none is kept."""
    sha, filename, loc, _ = w
    left: dict[str, str] = {}
    try:
        ext, np = summaries(open_index(index, _lock_file(loc)), None, True, left, shipped=False)
    except Exception as e:  # noqa: BLE001 - a wheel that cannot be read is not shipped, and said so
        return f"not read: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
    if left:
        return f"not read whole: {sorted(left)[0]}"
    return {"format": FORMAT, "sha256": sha, "filename": filename, "command": command(sha),
            "ext_version": EXT_SUMMARY_VERSION, "numpy_version": NUMPY_VERSION, "ext": judged_part(ext).to_json(),
            "npabi": np}


def read_torch(index: IndexClient, w: Wheel) -> frozenset[str] | str:
    try:
        return _torch_summary(index, None, _lock_file(w[2]), _Stats()).exports
    except Exception as e:  # noqa: BLE001
        return f"not read: {type(e).__name__}"


def torch_row(sha: str, filename: str, exports: Iterable[str], covered: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A torch wheel's row, cut to the undefined names of the extension rows it ``covers``."""
    wanted = {s for d in covered.values() for m in d["ext"].values() for s in m["undefined"]}
    return {"format": FORMAT, "sha256": sha, "filename": filename, "command": command(sha),
            "summary_version": SUMMARY_VERSION, "exports": sorted(set(exports) & wanted), "covers": sorted(covered)}


def verify(shas: list[str]) -> int:
    """Read the wheels of these rows again from the index and compare (1: a row differs or cannot be read)."""
    members = shipped_rows()
    bad = 0
    with IndexClient(None) as index:
        for sha in shas:
            d = members[sha]
            torch = "exports" in d
            _, f = same_file([index], IndexFile(d["filename"], "", None, sha, None, False, None, True))
            if torch:
                exports = _torch_summary(index, None, f, _Stats()).exports
                same = torch_row(sha, d["filename"], exports, {s: members[s] for s in d["covers"]}) == d
            else:
                left: dict[str, str] = {}
                ext, np = summaries(open_index(index, f), None, True, left, shipped=False)
                same = not left and judged_part(ext).to_json() == d["ext"] and np == d["npabi"]
            print(f"{d['filename']}: {'same' if same else 'DIFFERS'}")
            bad += not same
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stack", nargs="+", metavar="NAME", help="the stacks (default: every [[stack]] of the matrix)")
    ap.add_argument("--python", nargs="+", default=list(PYTHONS), help="the lock floors and CPythons read")
    ap.add_argument("--machine", nargs="+", choices=MACHINES, default=list(MACHINES))
    ap.add_argument("--verify", nargs="+", metavar="SHA256")
    ap.add_argument("--workers", type=int, default=8)
    a = ap.parse_args()
    if a.verify:
        return verify([s.lower() for s in a.verify])
    facts = load_facts()
    stacks = [s for s in facts.rows("stack") if not a.stack or s.name in a.stack]
    machines = tuple(a.machine)
    ext: dict[str, Wheel] = {}
    torch: dict[str, Wheel] = {}
    of: dict[str, set[str]] = {}  # sha -> the stacks whose locks hold it
    locks: list[dict[str, str]] = []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="wheel-summaries-") as d:
        for stack in stacks:
            for floor, newest in ((f, n) for f in a.python for n in ((False, True) if stack.exclude_newer else (True,))):
                e, t, err = lock_stack(stack, floor, newest, Path(d), facts, [p for p in a.python if p >= floor],
                                       machines)
                excl = "" if newest else str(stack.exclude_newer)
                locks.append({"stack": stack.name, "requires-python": f">={floor}", "exclude-newer": excl,
                              "error": err, "wheels": str(len(e)), "torch": str(len(t))})
                print(f"{stack.name} >={floor} {excl or 'newest'}: "
                      f"{err or f'{len(e)} extension wheels, {len(t)} torch wheels'}", file=sys.stderr)
                ext |= e
                torch |= t
                for sha in (*e, *t):
                    of.setdefault(sha, set()).add(stack.name)
    print(f"locked in {time.monotonic() - t0:.0f} s; reading {len(ext)} + {len(torch)} torch wheels", file=sys.stderr)
    with IndexClient(None) as index, ThreadPoolExecutor(a.workers) as pool:
        got = dict(zip(ext, pool.map(lambda w: read_ext(index, w), ext.values()), strict=True))
        rows = {sha: r for sha, r in got.items() if isinstance(r, dict)}
        exports = dict(zip(torch, pool.map(lambda w: read_torch(index, w), torch.values()), strict=True))
    members = {sha: dump(r) for sha, r in rows.items()}
    for sha, ex in sorted(exports.items()):
        if isinstance(ex, str):
            continue
        machine = torch[sha][3]
        covered = {s: r for s, r in rows.items() if ext[s][3] == machine and _needs_torch(ExtSummary.from_json(r["ext"]))}
        members[sha] = dump(torch_row(sha, torch[sha][1], ex, covered))
    listed: dict[str, dict[str, Any]] = {}
    for kind, ws, read in (("extension", ext, got), ("torch", torch, exports)):
        for sha, w in sorted(ws.items()):
            r = read[sha]
            listed[sha] = {"filename": w[1], "machine": w[3], "stacks": sorted(of[sha]), "kind": kind,
                           "shipped": not isinstance(r, str), **({"why": r} if isinstance(r, str) else {})}
    cover = json.dumps({"format": FORMAT, "command": "python scripts/record_wheel_summaries.py "
                                   f"--python {' '.join(a.python)} --machine {' '.join(machines)}",
                                   "stacks": [s.name for s in stacks], "pythons": a.python, "machines": list(machines),
                                   "locks": locks, "wheels": listed}, sort_keys=True, indent=0).encode()
    write_zip(PATH, members, cover)
    n_t = sum(isinstance(x, frozenset) for x in exports.values())
    print(f"{PATH.relative_to(ROOT)}: {len(rows)} of {len(ext)} extension wheels, {n_t} of {len(torch)} torch wheels, "
          f"{PATH.stat().st_size} bytes")
    for item in sorted(listed.values(), key=lambda x: str(x["filename"])):
        if not item["shipped"]:
            print(f"  not shipped: {item['filename']}: {item['why']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

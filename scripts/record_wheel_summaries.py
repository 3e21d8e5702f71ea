"""Record glmcompat/ops/evidence/wheel-summaries.zip (glmcompat.ops.shipped, issue 39): what the judge of a lock reads
of the compiled wheels the curated stacks lock, by the wheel's sha256, so a cold lock or a fresh clone reads none of
their bytes.

Each project of PROJECTS (the curated stacks' projects, as benchmarks/bench_project_lock.py makes them) is made for
each Python of --python and locked by this checkout's ``glmcompat lock`` on an empty private cache, with the shipped
rows off (GLMCOMPAT_NO_SHIPPED): the judge reads every compiled wheel of the lock from the index, as on any machine.
The summaries it stored (kinds ``ext`` ``-own``, ``npabi``, ``skipped``) are the rows: only a wheel read whole
(``skipped`` empty) is kept. Each torch wheel the judge read is kept cut to the names some extension row leaves
undefined (all the judge asks of it for those rows: glmcompat.ops.shipped.torch_exports), naming the rows it covers.
Rows already in the file stay (a row is a pure function of the wheel's bytes); ``--verify SHA...`` reads the wheels
of those rows again from the index (same file name, same sha256) with the judge's reader and exits 1 on a difference.

    python scripts/record_wheel_summaries.py [--project sglang-api benchmark] [--python 3.11 3.12]
    python scripts/record_wheel_summaries.py --verify SHA256 [SHA256 ...]

Needs the package index (the configured one, UV_DEFAULT_INDEX for uv)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from glmcompat.edges.cache import Cache  # noqa: E402
from glmcompat.edges.index import IndexClient, IndexFile  # noqa: E402
from glmcompat.ops.artifacts import NUMPY_VERSION, open_index, same_file, summaries  # noqa: E402
from glmcompat.ops.shipped import FORMAT, PATH  # noqa: E402
from glmcompat.ops.wheelprobe import EXT_SUMMARY_VERSION, SUMMARY_VERSION, _Stats, _torch_summary  # noqa: E402
from glmcompat.ops.wheelrecords import TorchSummary  # noqa: E402

PROJECTS = {  # as benchmarks/bench_project_lock.py locks them
    "benchmark": (("torch", "sgl-kernel==0.3.21", "torchvision", "numpy"), ["--target", "sm120"]),
    "sglang-api": (("sglang>=0.5.9", "fastapi", "redis>=5"), ["--target", "sm120", "--model", "glm_moe_dsa"]),
}
DATE = (2020, 1, 1, 0, 0, 0)  # every member's time: the file's bytes depend on its rows only


def command(sha: str) -> str:
    return f"python scripts/record_wheel_summaries.py --verify {sha}"


def read_existing() -> dict[str, bytes]:
    if not PATH.exists():
        return {}
    with zipfile.ZipFile(PATH) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def write(members: dict[str, bytes]) -> None:
    PATH.parent.mkdir(parents=True, exist_ok=True)
    tmp = PATH.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, members[name], compresslevel=9)
    tmp.replace(PATH)


def dump(d: dict[str, Any]) -> bytes:
    return json.dumps(d, sort_keys=True, separators=(",", ":")).encode()


def lock_files(lock: Path) -> dict[str, str]:
    """{sha256: wheel file name} of every wheel a uv.lock records."""
    out = {}
    for p in tomllib.loads(lock.read_text()).get("package", []):
        for w in p.get("wheels", []):
            h = w.get("hash", "")
            if h.startswith("sha256:") and w.get("url"):
                out[h[7:].lower()] = w["url"].rsplit("/", 1)[-1]
    return out


def harvest(project: str, python: str, work: Path) -> tuple[dict[str, dict[str, Any]], dict[str, tuple[str, set[str]]]]:
    """({sha: row} of the extension wheels, {torch sha: (file name, its exports)}) the judge read locking ``project``."""

    deps, args = PROJECTS[project]
    where = work / f"{project}-{python}"
    where.mkdir(parents=True)
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "GLMCOMPAT_CACHE_DIR": str(work / f"cache-{project}-{python}"),
           "GLMCOMPAT_NO_SHIPPED": "1", "GLMCOMPAT_NO_LOCK_PREFETCH": "1"}
    subprocess.run(["uv", "init", "--bare", "-q", "--name", project, "--python", python], cwd=where, check=True, env=env)
    subprocess.run(["uv", "add", "--frozen", "-q", *deps], cwd=where, check=True, env=env)
    (where / ".python-version").unlink(missing_ok=True)
    subprocess.run([sys.executable, "-m", "glmcompat", "lock", *args, "-q"], cwd=where, check=True, env=env)
    files = lock_files(where / "uv.lock")
    cache = Cache(env["GLMCOMPAT_CACHE_DIR"])
    rows: dict[str, dict[str, Any]] = {}
    torches: dict[str, tuple[str, set[str]]] = {}
    for sha, filename in sorted(files.items()):
        ext = cache.get_json(f"ext-v{EXT_SUMMARY_VERSION}-{sha}-own")
        left = cache.get_json(f"skipped-v1-{sha}")
        np = cache.get_json(f"npabi-v{NUMPY_VERSION}-{sha}")
        if isinstance(ext, dict) and left == {} and (isinstance(np, dict) or not ext):
            rows[sha] = {"format": FORMAT, "sha256": sha, "filename": filename, "command": command(sha),
                         "ext_version": EXT_SUMMARY_VERSION, "numpy_version": NUMPY_VERSION, "ext": ext,
                         "npabi": np or {}}
        raw = cache.get_bytes(f"torch-v{SUMMARY_VERSION}-{sha}")
        meta = cache.get_json(f"torch-v{SUMMARY_VERSION}-{sha}.meta")
        if raw is not None and isinstance(meta, dict):
            torches[sha] = (filename, set(TorchSummary.from_stored(raw, meta).exports))
    return rows, torches


def torch_rows(members: dict[str, bytes], torches: dict[str, tuple[str, set[str]]]) -> None:
    """Each torch wheel's row, cut to the undefined names of every extension row in ``members``, covering them all."""

    ext_rows = {n[:-5]: json.loads(b) for n, b in members.items() if not n.startswith("torch-")}
    wanted = {s for d in ext_rows.values() for m in d["ext"].values() for s in m["undefined"]}
    for sha, (filename, exports) in sorted(torches.items()):
        members[f"torch-{sha}.json"] = dump({
            "format": FORMAT, "sha256": sha, "filename": filename, "command": command(sha),
            "summary_version": SUMMARY_VERSION, "exports": sorted(exports & wanted), "covers": sorted(ext_rows)})


def verify(shas: list[str]) -> int:
    """Read the wheels of these rows again from the index and compare (1: a row differs or cannot be read)."""

    members = read_existing()
    bad = 0
    with IndexClient(None) as index:
        for sha in shas:
            torch = f"torch-{sha}.json" in members
            d = json.loads(members.get(f"torch-{sha}.json") or members[f"{sha}.json"])
            _, f = same_file([index], IndexFile(d["filename"], "", None, sha, None, False, None, True))
            if torch:
                exports = _torch_summary(index, None, f, _Stats()).exports
                wanted = {s for n, b in members.items() if n[:-5] in d["covers"]
                          for m in json.loads(b)["ext"].values() for s in m["undefined"]}
                same = sorted(exports & wanted) == d["exports"]
            else:
                left: dict[str, str] = {}
                ext, np = summaries(open_index(index, f), None, True, left, shipped=False)
                same = not left and ext.to_json() == d["ext"] and np == d["npabi"]
            print(f"{d['filename']}: {'same' if same else 'DIFFERS'}")
            bad += not same
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", nargs="+", choices=list(PROJECTS), default=list(PROJECTS))
    ap.add_argument("--python", nargs="+", default=["3.11"])
    ap.add_argument("--verify", nargs="+", metavar="SHA256")
    a = ap.parse_args()
    if a.verify:
        return verify([s.lower() for s in a.verify])
    members = read_existing()
    torches: dict[str, tuple[str, set[str]]] = {}
    with tempfile.TemporaryDirectory(prefix="wheel-summaries-") as d:
        for project in a.project:
            for python in a.python:
                rows, ts = harvest(project, python, Path(d))
                members.update({f"{sha}.json": dump(r) for sha, r in rows.items()})
                torches.update(ts)
    torch_rows(members, torches)
    write(members)
    print(f"{PATH.relative_to(ROOT)}: {sum(not n.startswith('torch-') for n in members)} wheels, "
          f"{sum(n.startswith('torch-') for n in members)} torch wheels, {PATH.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

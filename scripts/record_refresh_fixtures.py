"""Record the index pages and METADATA files that tests/ops/test_refresh.py serves offline.

Talks to the real package index (the URL is read at run time, as glmcompat does: UV_DEFAULT_INDEX,
PIP_INDEX_URL, the installers' configuration, pip's default). Each project page (PEP 691 JSON) is
trimmed to the releases listed below and to their Linux x86_64 wheels; every URL's host is replaced
by ``index.invalid`` so no index host is written in the repository. The METADATA of the wheel
glmcompat reads for each release is stored beside it.

    python scripts/record_refresh_fixtures.py [--out tests/fixtures/refresh] [--roundtrip-only]

It then records the round trip (tests/fixtures/refresh/roundtrip/): the releases of
tests/matrixtrim.py ROUNDTRIP are taken out of a copy of the shipped matrix and ``matrix refresh`` runs
on the real index for them, probes included. What it read is kept: each project page, trimmed to the
releases taken out (torch: every release, for the windows) and their Linux x86_64 / aarch64 wheels;
the METADATA of every wheel it read; and the result of every ABI and GPU-code probe it ran (the probe
cache's entries, keyed by the wheels' sha256, which the trimmed pages keep). tests/ops/test_refresh.py
replays it offline: a probe the fixtures lack fails the test (nothing serves wheels).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from urllib.parse import urljoin, urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PLACEHOLDER = "index.invalid"


def scrub_hosts(text: str) -> str:
    """Replace every package-index host a README in METADATA may name with a placeholder."""
    import re

    return re.sub(r"(?i)(?:files\.)?(?:pypi|pythonhosted)\.org\b|\bdownload\.pytorch\.org\b",
                  PLACEHOLDER, text)
# project -> releases kept on its page; METADATA is recorded for those marked True
RELEASES: dict[str, dict[str, bool]] = {
    "sglang-kernel": {"0.4.8": False, "0.4.9": True, "0.4.10": True},
    "torch": {"2.12.0": False, "2.12.1": False, "2.13.0": False, "2.14.0": False, "2.14.1": True, "2.15.0": True},
    "torchao": {"0.17.0": False, "0.18.0": True},
    "torchaudio": {"2.11.0": False, "2.11.1": True},
    "flashinfer-python": {"0.7.2": False, "0.7.4": True},
    "sglang": {"0.5.22": False, "0.5.23": True},
}
KEEP_KEYS = ("filename", "url", "hashes", "size", "requires-python", "yanked", "upload-time", "core-metadata",
             "data-dist-info-metadata")


def placeholder(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(("https", PLACEHOLDER, parts.path, "", ""))


def _keep_file(filename: str) -> bool:
    """A Linux x86_64 / aarch64 wheel for CPython 3.10-3.12 (or abi3 / py3): what refresh and the probes pick."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    if not filename.endswith(".whl"):
        return False
    try:
        tags = parse_wheel_filename(filename)[3]
    except InvalidWheelFilename:
        return False
    linux = any(t.platform.endswith(("_x86_64", "_aarch64")) and "linux" in t.platform or t.platform == "any"
                for t in tags)
    pythons = all(t.interpreter in ("cp310", "cp311", "cp312", "py3") or t.abi in ("abi3", "none") for t in tags)
    return linux and pythons


def record_roundtrip(out: Path) -> None:
    """Refresh the ROUNDTRIP releases back into a trimmed copy of the shipped matrix on the real index, and
    keep what it read (see the module doc)."""
    import shutil
    import tempfile

    from packaging.version import InvalidVersion, Version

    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import ACCEPT_JSON, IndexClient, IndexFile, Project, parse_project_page
    from glmcompat.matrix.store import default_matrix_dir
    from glmcompat.ops import refresh as rf
    from tests.matrixtrim import ROUNDTRIP, trim

    pages: dict[str, dict[str, object]] = {}
    metadata: dict[str, str] = {}
    probes: dict[str, object] = {}

    def trimmed(name: str, data: dict[str, object], base: str) -> dict[str, object]:
        keep = ROUNDTRIP.get(name)
        files = []
        for f in data["files"]:  # type: ignore[union-attr]
            fn = f["filename"]
            if not _keep_file(fn):
                continue
            try:
                ver = Version(fn.split("-")[1])
            except (IndexError, InvalidVersion):
                continue
            if keep is not None and ver not in {Version(v) for v in keep}:
                continue
            if keep is None and (ver.is_prerelease or ver.is_devrelease or ver.local):
                continue
            if keep is None and not any(t in fn for t in ("-cp311-", "-abi3-", "-py3-")):
                continue  # torch: the cp311 wheels the probes read
            kept = {k: f[k] for k in KEEP_KEYS if k in f}
            kept["url"] = urljoin(base, f["url"])
            files.append(kept)
        return {"meta": data.get("meta", {"api-version": "1.1"}), "name": data.get("name", name), "files": files,
                "versions": sorted({fl["filename"].split("-")[1] for fl in files}, key=Version)}

    class Recording(IndexClient):
        def project(self, name: str) -> Project:
            url = self.project_url(name)
            if name not in pages:
                r = self.get(url, f"project {name}", {"Accept": ACCEPT_JSON})
                if r.status_code != 200:
                    raise SystemExit(f"project {name}: HTTP {r.status_code}")
                pages[name] = trimmed(name, r.json(), str(r.url))
            return parse_project_page(pages[name], url)

        def wheel_metadata(self, file: IndexFile) -> str:
            text = super().wheel_metadata(file)
            metadata[file.filename] = text
            return text

    class RecordingCache(Cache):
        def put_json(self, key: str, value: object) -> None:
            if key.split("-", 1)[0] in ("abi", "arch", "archsel", "floors"):
                probes[key] = value
            super().put_json(key, value)

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "matrix"
        shutil.copytree(default_matrix_dir(), d)
        for name, versions in ROUNDTRIP.items():
            trim(d, name, versions)
        cache = RecordingCache(Path(tmp) / "cache")
        client = rf.bounded_client(4)
        counted = Counting(client._transport)
        client._transport = counted
        with Recording(None, client=client, cache=cache) as index:
            report = rf.refresh(index=index, cache=cache, matrix=d, packages=sorted(ROUNDTRIP), jobs=4, models=False,
                                progress=False)
        rf.render_refresh(report, sys.stdout)
        print(f"refresh of the round trip: {report.seconds:.1f} s, {counted.bytes} bytes received in "
              f"{counted.requests} requests", file=sys.stderr)
    rt = out / "roundtrip"
    shutil.rmtree(rt, ignore_errors=True)
    (rt / "pages").mkdir(parents=True)
    (rt / "metadata").mkdir()
    for name, page in pages.items():
        for f in page["files"]:  # type: ignore[union-attr]
            f["url"] = placeholder(f["url"])
        (rt / "pages" / f"{name}.json").write_text(json.dumps(page, indent=1, sort_keys=True) + "\n")
    for fn, text in metadata.items():
        (rt / "metadata" / f"{fn}.METADATA").write_text(scrub_hosts(text))
    (rt / "probes.json").write_text(json.dumps(dict(sorted(probes.items())), indent=1, sort_keys=True) + "\n")
    print(f"roundtrip: {len(pages)} page(s), {len(metadata)} METADATA, {len(probes)} probe result(s)")


class Counting:
    """An httpx transport that counts the bytes of every answer body it passes on (the figures of a run)."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.bytes = 0
        self.requests = 0

    def handle_request(self, request: object) -> object:
        import httpx

        r = self.inner.handle_request(request)  # type: ignore[attr-defined]
        self.requests += 1
        outer = self

        class Stream(httpx.SyncByteStream):
            def __iter__(self):  # type: ignore[no-untyped-def]
                for chunk in r.stream:
                    outer.bytes += len(chunk)
                    yield chunk

            def close(self) -> None:
                r.stream.close()

        return httpx.Response(r.status_code, headers=r.headers, stream=Stream(), extensions=r.extensions,
                              request=request)

    def close(self) -> None:
        self.inner.close()  # type: ignore[attr-defined]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "tests" / "fixtures" / "refresh"))
    ap.add_argument("--roundtrip-only", action="store_true", help="record only the round trip")
    ap.add_argument("--no-roundtrip", action="store_true", help="record the pages and METADATA only")
    args = ap.parse_args()
    if args.roundtrip_only:
        record_roundtrip(Path(args.out))
        return 0
    from packaging.utils import parse_wheel_filename
    from packaging.version import Version

    from glmcompat.edges.cache import NoCache
    from glmcompat.edges.index import ACCEPT_JSON, IndexClient, parse_project_page
    from glmcompat.ops.refresh import pick_wheel

    out = Path(args.out)
    (out / "pages").mkdir(parents=True, exist_ok=True)
    (out / "metadata").mkdir(parents=True, exist_ok=True)
    with IndexClient(None, cache=NoCache()) as index:
        for name, releases in RELEASES.items():
            url = index.project_url(name)
            r = index.get(url, f"project {name}", {"Accept": ACCEPT_JSON})
            if r.status_code != 200:
                raise SystemExit(f"project {name}: HTTP {r.status_code}")
            data = r.json()
            keep = {Version(v) for v in releases}
            files = []
            for f in data["files"]:
                fn = f["filename"]
                if not fn.endswith(".whl"):
                    continue
                _, ver, _, tags = parse_wheel_filename(fn)
                if ver not in keep or not any("x86_64" in t.platform or t.platform == "any" for t in tags):
                    continue
                if any(t.interpreter.startswith("cp") and t.interpreter not in ("cp310", "cp311") for t in tags):
                    continue
                kept = {k: f[k] for k in KEEP_KEYS if k in f}
                kept["url"] = placeholder(urljoin(str(r.url), f["url"]))
                files.append(kept)
            page = {"meta": data.get("meta", {"api-version": "1.1"}), "name": data.get("name", name),
                    "versions": sorted({str(Version(v)) for v in releases}, key=Version), "files": files}
            (out / "pages" / f"{name}.json").write_text(json.dumps(page, indent=1, sort_keys=True) + "\n")
            project = parse_project_page(data, str(r.url))
            for v, want in releases.items():
                if not want:
                    continue
                picked = pick_wheel(project.files_for(v))
                if picked is None:
                    print(f"{name} {v}: no wheel", file=sys.stderr)
                    continue
                text = scrub_hosts(index.wheel_metadata(picked[0]))
                (out / "metadata" / f"{picked[0].filename}.METADATA").write_text(text)
            print(f"{name}: {len(files)} file(s)")
    if not args.no_roundtrip:
        record_roundtrip(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Record the index pages and METADATA files that tests/test_refresh.py serves offline.

Talks to the real package index (the URL is read at run time, as glmcompat does: UV_DEFAULT_INDEX,
PIP_INDEX_URL, the installers' configuration, pip's default). Each project page (PEP 691 JSON) is
trimmed to the releases listed below and to their Linux x86_64 wheels; every URL's host is replaced
by ``index.invalid`` so no index host is written in the repository. The METADATA of the wheel
glmcompat reads for each release is stored beside it.

    python scripts/record_refresh_fixtures.py [--out tests/fixtures/refresh]
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

    return re.sub(r"(?i)\b(?:files\.)?(?:pypi|pythonhosted)\.org\b|\bdownload\.pytorch\.org\b",
                  PLACEHOLDER, text)
# project -> releases kept on its page; METADATA is recorded for those marked True
RELEASES: dict[str, dict[str, bool]] = {
    "sglang-kernel": {"0.4.8": False, "0.4.9": True, "0.4.10": True},
    "torch": {"2.12.0": False, "2.12.1": False, "2.13.0": False, "2.14.0": False, "2.14.1": False, "2.15.0": True},
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "tests" / "fixtures" / "refresh"))
    args = ap.parse_args()
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
            r.raise_for_status()
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

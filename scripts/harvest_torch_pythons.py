"""Harvest which CPython versions each torch release ships wheels for, from the real package index (issue 38).

The index URL is read at run time (glmcompat.edges.index.default_index_url: UV_DEFAULT_INDEX / PIP_INDEX_URL, pip's
configuration, pip's default); it is never written down. For every final torch release on the index's JSON simple API
(PEP 691) the script lists the cpXY interpreter tags of its wheel filenames (abi3 / py3 wheels counted for no one
Python) and prints glmcompat/matrix/data/torch-pythons.toml: one [[torch_python]] row per release (its cpXY tags),
and one [[torch_python_first]] row per Python (the first release with a wheel for it).

    python scripts/harvest_torch_pythons.py > glmcompat/matrix/data/torch-pythons.toml
"""

from __future__ import annotations

import re
import sys

from packaging.version import InvalidVersion, Version

from glmcompat.edges.index import IndexClient

_CP = re.compile(r"^cp(3)(\d{1,2})$")
SOURCE = "scripts/harvest_torch_pythons.py: the package index's JSON simple API listing of torch (PEP 691), "


def _os(plat: str) -> str | None:
    """The platform a wheel's platform tag names (None: one no row is kept for, 32-bit and the like)."""
    if plat.endswith("x86_64") and ("linux" in plat):
        return "linux-x86_64"
    if plat.endswith("aarch64") and "linux" in plat:
        return "linux-aarch64"
    if plat == "win_amd64":
        return "windows-x86_64"
    if plat.startswith("macosx") and plat.endswith("arm64"):
        return "macos-arm64"
    if plat.startswith("macosx") and plat.endswith("x86_64"):
        return "macos-x86_64"
    return None


def _pythons(tags: frozenset[str]) -> set[tuple[str, str]]:
    """(platform, CPython version) of a wheel's tags (``cp310-cp310-manylinux1_x86_64`` -> linux-x86_64, 3.10; an
    abi ending in t, free-threaded: 3.13t)."""
    out: set[tuple[str, str]] = set()
    for tag in tags:
        interp, abi, plat = tag.split("-", 2)
        m = _CP.match(interp)
        os_ = _os(plat)
        if m is None or os_ is None:
            continue
        out.add((os_, f"{m.group(1)}.{m.group(2)}" + ("t" if abi.endswith("t") else "")))
    return out


def _key(p: str) -> tuple[int, int, str]:
    major, minor = p.rstrip("t").split(".")
    return int(major), int(minor), p[-1] if p.endswith("t") else ""


def main() -> None:
    with IndexClient(None) as index:
        project = index.project("torch")
    rows: dict[tuple[Version, str], set[str]] = {}
    names: dict[tuple[Version, str], list[str]] = {}
    for f in project.files:
        if not f.is_wheel or f.version is None or f.yanked:
            continue
        try:
            v = Version(f.version)
        except InvalidVersion:
            continue
        if v.is_prerelease or v.is_devrelease or v.local:
            continue
        for os_, py in _pythons(f.tags):
            rows.setdefault((v, os_), set()).add(py)
            names.setdefault((v, os_), []).append(f.filename)
    first: dict[tuple[str, str], Version] = {}
    for v, os_ in sorted(rows):
        for p in rows[v, os_]:
            first.setdefault((os_, p), v)
    w = sys.stdout.write
    w("# torch releases: the CPython versions each release ships wheels for, per platform, read from the index's JSON\n"
      "# simple API listing of torch (the cpXY tags of each release's wheel filenames; yanked files, pre-releases, local\n"
      "# versions, abi3/py3 and 32-bit wheels left out) by scripts/harvest_torch_pythons.py. A Python none of a release's\n"
      "# wheels names cannot install that release from the index: glmcompat/decide/installcauses.py\n"
      "# (no-matching-distribution -> torch-python-unsupported).\n"
      "# Generated: python scripts/harvest_torch_pythons.py > glmcompat/matrix/data/torch-pythons.toml\n"
      "# The first release with each Python (derived from the rows):\n")
    for os_ in sorted({o for o, _p in first}):
        w(f"#   {os_}: " + ", ".join(f"{p} {first[o, p]}" for o, p in sorted(first, key=lambda k: _key(k[1]))
                                     if o == os_) + "\n")
    w("schema = 1\n")
    for v, os_ in sorted(rows):
        pys = sorted(rows[v, os_], key=_key)
        quoted = ", ".join(f'"{p}"' for p in pys)
        example = sorted(names[v, os_])[0]
        w(f'\n[[torch_python]]\nrelease = "{v}"\nos = "{os_}"\npythons = [{quoted}]\nevidence = "metadata"\n'
          f'source = "{SOURCE}the wheel filenames of torch {v} for {os_} ({len(names[v, os_])} wheels, e.g. {example})"\n')


if __name__ == "__main__":
    main()

"""Take releases out of a copy of the matrix (tests/ops/test_refresh.py, scripts/record_refresh_fixtures.py).

The round trip of ``matrix refresh``: :data:`ROUNDTRIP` releases are removed from a copy of the shipped
matrix, refreshed back from fixtures recorded from the index, and the copy must judge a fixed set of
package sets as the shipped matrix does.
"""

from __future__ import annotations

from pathlib import Path

import tomlkit
from packaging.specifiers import SpecifierSet
from packaging.version import Version

# the tables whose rows matrix refresh writes (the others -- engine floors, stacks, models -- stay)
REFRESHED = ("torch", "family", "kernel", "jit", "release", "abi_probe", "arch_probe")

# package -> releases the round trip removes and refreshes back: kernel rows on x86_64 and aarch64 (sglang-kernel),
# a permissive METADATA range a probe contradicts (torchaudio), a kernel with release pins (vLLM), an engine's pins
ROUNDTRIP: dict[str, set[str]] = {
    "sglang-kernel": {"0.4.9", "0.4.10"},
    "torchaudio": {"2.11.1"},
    "vllm": {"0.33.0"},
    "sglang": {"0.5.23"},
}


_TRIMMED: dict[tuple[str, str, frozenset[str]], str | None] = {}  # (a file's text, package, versions) -> the new text


def trim(directory: Path, package: str, versions: set[str]) -> None:
    """Remove every row about ``package`` ``versions`` from the copy (reformatting the copy is fine). The same text
    trimmed the same way is trimmed once per process (tomlkit takes a second or more for the matrix)."""
    for path in sorted(directory.glob("*.toml")):
        text = path.read_text()
        if package != "torch" and f'"{package}"' not in text and f"'{package}'" not in text:
            continue  # no row names it (a [[torch]] row may leave its package out)
        key = (text, package, frozenset(versions))
        if key not in _TRIMMED:
            _TRIMMED[key] = _trimmed(text, package, versions)
        new = _TRIMMED[key]
        if new is not None:
            path.write_text(new)


def _trimmed(text: str, package: str, versions: set[str]) -> str | None:
    """``text`` without the rows about ``package`` ``versions``; None when it has none."""
    vs = {Version(v) for v in versions}
    doc = tomlkit.parse(text)
    changed = False
    for table in list(doc.keys()):
        if table not in REFRESHED:
            continue
        rows = doc[table]
        if not isinstance(rows, tomlkit.items.AoT):
            continue
        keep = []
        for row in rows:
            pkg = row.get("package", "torch" if table == "torch" else None)
            if pkg != package:
                keep.append(row)
                continue
            if "versions" in row and isinstance(row["versions"], str):
                # a range (a [[jit]] row): exclude the trimmed releases from it
                spec = SpecifierSet(row["versions"])
                hit = sorted(str(v) for v in vs if spec.contains(v, prereleases=True))
                if hit:
                    row["versions"] = ",".join([str(row["versions"])] + [f"!={v}" for v in hit])
                    changed = True
                keep.append(row)
            elif "versions" in row and not isinstance(row["versions"], str):
                left = [x for x in row["versions"] if Version(x) not in vs]
                changed |= len(left) != len(row["versions"])
                if left:
                    row["versions"] = left
                    keep.append(row)
            elif "version" in row:
                if Version(row["version"]) in vs:
                    changed = True
                else:
                    keep.append(row)
            elif "pairs" in row:
                for v in [k for k in row["pairs"] if Version(k) in vs]:
                    del row["pairs"][v]
                    changed = True
                if row["pairs"]:
                    keep.append(row)
            else:
                keep.append(row)
        if changed:
            aot = tomlkit.aot()
            for r in keep:
                aot.append(r)
            doc[table] = aot
    return tomlkit.dumps(doc) if changed else None

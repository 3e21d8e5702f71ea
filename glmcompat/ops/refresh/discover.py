"""Which packages the matrix tracks, which releases on the index it lacks (per kind and platform): what a refresh
lists before it probes anything (pure: the index pages are already fetched)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from glmcompat.model.outputs.refresh import CandidateDoc, ListingDoc, SkippedReleaseDoc
from glmcompat.model.errors import InputError
from glmcompat.ops.refresh.common import group_files, pick_wheel, release_time

if TYPE_CHECKING:
    from glmcompat.edges.index import IndexFile, Project
    from glmcompat.matrix.rows import FamilyRule, Jit, Kernel, Release
    from glmcompat.matrix.schema import Matrix

PER_PLATFORM_KINDS = ("torch", "kernel")  # the kinds whose rows are per platform (family, jit, release: METADATA)
# The kind of row that says a release is known, per tracked package. The tracked set is read from the
# matrix's tables (see tracked_packages); these are the packages the matrix is meant to cover, for
# those it holds no row of yet (vLLM, xformers) or names only through another table (transformers).
DEFAULT_KINDS: dict[str, str] = {
    "torch": "torch",
    "torchvision": "family",
    "torchaudio": "family",
    "sgl-kernel": "kernel",
    "sglang-kernel": "kernel",
    "vllm": "kernel",
    "xformers": "kernel",
    "torchao": "kernel",
    "flashinfer-python": "jit",
    "flashinfer-cubin": "jit",
    "sglang": "release",
    "transformers": "model",
    "torchcodec": "family",  # links libtorch (no torch requirement in its METADATA: its ABI probes decide)
}
KIND_TABLE = {"torch": "torch", "family": "family", "kernel": "kernel", "jit": "jit", "release": "release",
              "model": "model"}


def tracked_packages(m: Matrix) -> dict[str, str]:
    """{package: kind} read from the matrix's tables (torch, family, kernel, jit, release; transformers
    through ``[[model]]``), then :data:`DEFAULT_KINDS` for the packages it has no row of yet."""
    out: dict[str, str] = {}
    if m.torch:
        out["torch"] = "torch"
    tables: tuple[tuple[str, Sequence[FamilyRule | Kernel | Jit | Release]], ...] = (
        ("family", m.family), ("kernel", m.kernel), ("jit", m.jit), ("release", m.release))
    for kind, rows in tables:
        for r in rows:
            out.setdefault(str(canonicalize_name(r.package)), kind)
    if m.model:
        out.setdefault("transformers", "model")
    for name, kind in DEFAULT_KINDS.items():
        out.setdefault(name, kind)
    return out


def listings_of(tracked: dict[str, str], m: Matrix, packages: Sequence[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(package, kind, platform) of every listing a refresh makes for ``packages`` ((name, kind) pairs):
    its kind on x86_64; ``[[release]]`` too for a package that also has release rows (vLLM: a kernel
    with pinned requirements); and the aarch64 wheels of the torch and kernel packages the matrix holds
    aarch64 rows of."""
    # torch's own [[release]] rows (its pins on triton and the nvidia-* libraries) are recorded by
    # scripts/record_torch_pins.py, not by a refresh (which keeps the pins on tracked packages only)
    releases = {str(canonicalize_name(r.package)) for r in m.release if r.package != "torch"}
    aarch64 = {"torch" for t in m.torch if t.platform == "aarch64" and not t.variant}
    aarch64 |= {str(canonicalize_name(k.package)) for k in m.kernel if k.platform == "aarch64" and not k.variant}
    out = []
    for name, kind in packages:
        out.append((name, kind, "x86_64"))
        if kind != "release" and name in releases:
            out.append((name, "release", "x86_64"))
        if kind in PER_PLATFORM_KINDS and name in aarch64:
            out.append((name, kind, "aarch64"))
    return out


class Coverage:
    """Which releases the matrix knows, per kind and platform (pure; built once from the rows)."""

    def __init__(self, m: Matrix) -> None:
        self.known: set[tuple[str, str, Version, str]] = set()  # (kind, package, version, platform)
        for t in m.torch:
            if not t.variant:
                self.known |= {("torch", "torch", Version(x), t.platform) for x in t.versions}
        for f in m.family:
            self.known |= {("family", f.package, Version(x), "x86_64") for x in f.pairs}
        for k in m.kernel:
            if not k.variant:
                self.known |= {("kernel", k.package, Version(x), k.platform) for x in k.versions}
        for r in m.release:
            self.known.add(("release", r.package, Version(r.version), "x86_64"))
        self.jit = [(j.package, SpecifierSet(j.versions)) for j in m.jit]
        self.probed = {(p.package, Version(p.version), p.platform) for p in m.abi_probe}

    def covers(self, kind: str, package: str, version: Version, platform: str = "x86_64") -> bool:
        """Whether the matrix holds the row of ``kind`` about ``package`` ``version``'s ``platform`` wheel."""
        if kind == "model":
            return True
        if kind == "jit":
            return any(p == package and s.contains(version, prereleases=True) for p, s in self.jit)
        return (kind, package, version, platform) in self.known

    def has_probes(self, package: str, version: Version, platform: str = "x86_64") -> bool:
        return (package, version, platform) in self.probed


@dataclass
class Candidate:
    """A release on the index that the matrix lacks."""

    package: str
    kind: str
    version: str
    uploaded: datetime | None
    files: list[IndexFile]
    probed: bool = False
    platform: str = "x86_64"  # the machine whose wheel is read

    def to_output(self) -> CandidateDoc:
        return CandidateDoc(package=self.package, version=self.version, kind=self.kind, table=KIND_TABLE[self.kind],
                            uploaded=self.uploaded.strftime("%Y-%m-%dT%H:%M:%SZ") if self.uploaded else None,
                            probed=self.probed, platform=self.platform)


@dataclass
class Listing:
    package: str
    kind: str
    on_index: int
    lacking: list[Candidate] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (version, why)
    platform: str = "x86_64"

    def to_output(self) -> ListingDoc:
        return ListingDoc(package=self.package, kind=self.kind, table=KIND_TABLE[self.kind], on_index=self.on_index,
                          platform=self.platform, lacking=tuple(c.to_output() for c in self.lacking),
                          skipped=tuple(SkippedReleaseDoc(version=v, reason=why) for v, why in self.skipped))


def list_lacking(project: Project, package: str, kind: str, coverage: Coverage, since: date | None = None,
                 pre: bool = False, platform: str = "x86_64") -> Listing:
    """The releases of ``project`` the matrix lacks on ``platform`` (pure: the page is already fetched). On
    aarch64 only releases with an aarch64 wheel are listed (most packages publish x86_64 wheels alone)."""
    by_version = group_files(project)
    listing = Listing(package, kind, len(by_version), platform=platform)
    for v in sorted(by_version):
        files = by_version[v]
        if (v.is_prerelease or v.is_devrelease) and not pre:
            continue
        if v.local is not None:
            continue
        if coverage.covers(kind, package, v, platform):
            continue
        if platform != "x86_64" and pick_wheel([replace(f, yanked=False) for f in files], platform) is None:
            continue
        uploaded = release_time(files)
        if since is not None and uploaded is not None and uploaded.date() < since:
            continue
        if all(f.yanked for f in files):
            listing.skipped.append((str(v), "yanked (every file)"))
            continue
        listing.lacking.append(Candidate(package, kind, str(v), uploaded, files,
                                         coverage.has_probes(package, v, platform), platform))
    return listing


def select_packages(tracked: dict[str, str], names: Sequence[str] | None) -> list[tuple[str, str]]:
    if not names:
        return sorted(tracked.items())
    out = []
    for n in names:
        c = str(canonicalize_name(n.strip()))
        if c not in tracked:
            raise InputError(f"--package {n!r} is not tracked by the matrix (tracked: {', '.join(sorted(tracked))})")
        out.append((c, tracked[c]))
    return list(dict.fromkeys(out))

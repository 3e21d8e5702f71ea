"""``glmcompat matrix refresh`` and ``glmcompat matrix audit``: keep the matrix current from the index.

refresh
    Lists every release of every tracked package on the index (PEP 691 JSON, PEP 700 upload times)
    and, for each release the matrix lacks, records what it can prove from the published wheel:

    * its METADATA: the torch requirement (a ``[[family]]`` pair, or the ``torch`` of a ``[[kernel]]``
      row when it is an exact pin), the CUDA runtime a torch release pins, an engine release's pins
      (sglang, and vLLM besides its ``[[kernel]]`` row; sglang up to 0.4.x under its ``srt`` extra);
    * the CUDA runtime of a kernel (its METADATA pin, else the libcudart major its modules link with the
      minor of the torch it pins) and of a family release (``cudart``): a kernel row without it is not written;
    * ``[[abi_probe]]`` rows against the torch releases in its window (the torch its METADATA pins
      exactly, else the torch releases uploaded within :data:`WINDOW_DAYS` days before it that its
      requirement admits, and for a range the oldest release it admits and the newest of each admitted
      series: a probe that contradicts a permissive range is what the range hides);
    * ``[[arch_probe]]`` rows (the GPU code of its main modules), copied into the kernel / torch row.

    Each platform is its own listing: a release is lacking on aarch64 when it has an aarch64 wheel and the
    matrix no aarch64 row of it (for torch and the kernels the matrix holds aarch64 rows of); its rows are
    read from the aarch64 wheels, carry ``platform = "aarch64"`` and go to the file of the aarch64 rows.

    Rows are complete or absent: a row is written only when every field it needs is proven, each row
    is validated by the matrix schema, the whole new matrix is loaded before any file is replaced,
    and files are replaced atomically. What could not be proven is said, per release. Rows go after
    the last row of their table (the diff shows only added lines).

    Each release's outcome is journaled in glmcompat's cache directory, keyed by the index, the
    release's files (name, sha256, yanked) and this module's version, so an interrupted run
    continues where it stopped; probes are cached by the wheels' sha256. A second run finds nothing
    new to write. Downloads share one HTTP connection pool of ``--jobs`` connections (default 4).

audit
    Re-derives every machine-checkable row from the wheels of its own platform -- METADATA pins of ``[[family]]``,
    ``[[kernel]]`` and ``[[release]]`` rows whose evidence is ``metadata``, the CUDA runtime of
    ``[[torch]]`` rows, and with ``--deep`` ``[[abi_probe]]`` / ``[[arch_probe]]`` rows by re-running
    the probes and the ``cuda`` of ``[[kernel]]`` rows against the toolkit that built their cubins (the first
    cubin of each main module, read from its header: a few MB per wheel by range requests,
    :func:`glmcompat.ops.wheelprobe.probe_toolkit`) -- and reports drift (row, claimed, found).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from glmcompat.model import platforms
from glmcompat.model.errors import EnvironmentFailure, GlmcompatError, InputError

if TYPE_CHECKING:
    import httpx

    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient, IndexFile, Project
    from glmcompat.ops.wheelprobe import AbiResult, ArchResult

SCHEMA_VERSION = 1  # of the --json output
CUBIN_CUDA = "cuda (cubins)"  # the audit's claim about a kernel row's CUDA toolkit, read from its cubins
REFRESH_VERSION = 5  # of the journal entries: bump when what a release's outcome holds changes
WINDOW_DAYS = 92  # torch releases uploaded this long before an extension are in its window
MAX_WINDOW = 4  # at most this many torch releases per window (the newest)
MAX_SERIES = 6  # a range requirement: the newest release of at most this many admitted torch series
DEFAULT_JOBS = 4
PYTHONS = ("cp311", "cp312", "cp310", "cp313", "cp39")  # wheel choice, best first
PLATFORM = "manylinux_x86_64"
# The machines whose wheels the matrix records (glmcompat.model.platforms.PLATFORMS) and the platform each
# is read with: a row without ``platform`` is about the x86_64 wheel, an aarch64 row about the aarch64 one.
PLATFORM_TAGS = {"x86_64": "manylinux_x86_64", "aarch64": "manylinux_aarch64"}
PER_PLATFORM_KINDS = ("torch", "kernel")  # the kinds whose rows are per platform (family, jit, release: METADATA)
TORCH_PYTHON = "cp311"

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
# Where a table's rows go when no file of the matrix holds a row of that table yet.
DEFAULT_FILES = {"torch": "torch.toml", "family": "torch.toml", "kernel": "kernels.toml",
                 "abi_probe": "kernels.toml", "arch_probe": "kernels.toml", "jit": "kernels.toml",
                 "release": "rules.toml", "requires": "rules.toml"}
# Keys that describe a package rather than a release: copied onto new rows when every existing row
# of the package agrees (torchao's on_mismatch = "warning" must not turn into an error for new releases).
PACKAGE_KEYS = {"kernel": ("on_mismatch", "consequence"), "family": ("failure",)}
ROW_ORDER = {"torch": 0, "family": 1, "kernel": 2, "jit": 3, "release": 4, "requires": 5, "abi_probe": 6,
             "arch_probe": 7}
# Requirements an sglang [[release]] row keeps: the tracked packages and these.
RELEASE_EXTRA = ("cuda-python",)
# Tracked packages a [[release]] row leaves out: a row holds the x86_64 pins without their markers and is
# read for aarch64 too, and sglang pins torchcodec on x86_64 only (0.5.23: torchcodec==0.17.0; its marker
# leaves aarch64 out): kept, it would make an aarch64 lock lack a package sglang does not install there.
RELEASE_SKIP = frozenset({"torchcodec"})
_CUDA_RUNTIME = re.compile(r"^(nvidia-cuda-runtime(-cu\d+)?|cuda-toolkit)$")


# ------------------------------------------------------------------------------------------------
# Small pure helpers
# ------------------------------------------------------------------------------------------------


def parse_since(text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise InputError(f"invalid --since date {text!r} (expected YYYY-MM-DD)") from None


def parse_time(text: str | None) -> datetime | None:
    """An RFC 3339 upload time (``2026-11-18T11:06:54.123Z``) as an aware datetime; None if absent/bad."""
    if not text:
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def _v(text: str) -> Version:
    return Version(text)


def _tag_env(python: str = "cp311", machine: str = "x86_64") -> dict[str, str]:
    """The marker environment of the wheels glmcompat reads: CPython on Linux ``machine``, no extras."""
    digits = python.removeprefix("cp")
    pyver = f"{digits[0]}.{digits[1:]}" if digits.isdigit() and len(digits) >= 2 else "3.11"
    return platforms.marker_env(pyver, machine)


def requirements(metadata: str, python: str = "cp311", machine: str = "x86_64",
                 extras: Iterable[str] = ()) -> list[tuple[Requirement, str]]:
    """(parsed requirement, raw text) of each ``Requires-Dist`` that applies on Linux ``machine`` without extras,
    or with one of ``extras``."""
    from glmcompat.edges.index import iter_requires_dist

    envs = [{**_tag_env(python, machine), "extra": e} for e in ("", *extras)]
    out = []
    for raw in iter_requires_dist(metadata):
        try:
            req = Requirement(raw)
        except InvalidRequirement:
            continue
        try:
            if req.marker is not None and not any(req.marker.evaluate(env) for env in envs):
                continue
        except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):  # not for this environment
            continue
        out.append((req, raw.strip()))
    return out


def extra_closure(metadata: str, package: str, start: str, python: str = "cp311") -> list[str]:
    """``start`` and the extras of ``package`` it pulls in through itself (sglang 0.4.7's ``srt`` requires
    ``sglang[runtime_common]``), in the order found."""
    name = canonicalize_name(package)
    seen = [start]
    for e in seen:
        for r, _ in requirements(metadata, python, extras=[e]):
            if canonicalize_name(r.name) == name:
                seen += [x for x in sorted(r.extras) if x not in seen]
    return seen


# The extra an engine's install instructions name when its base requirements leave the core out
# (sglang up to 0.4.x: `pip install "sglang[all]"`, whose torch, kernel and flashinfer pins sit under "srt").
ENGINE_EXTRA = {"sglang": "srt"}


def release_pins(metadata: str, package: str, keep: Iterable[str], python: str = "cp311") -> tuple[list[str], list[str]]:
    """(the requirements a ``[[release]]`` row of ``package`` keeps, the extras they were read under): the base
    requirements, else -- when they name none of ``keep`` -- those of the extra its install instructions name."""
    keep = [k for k in keep if str(canonicalize_name(k)) not in RELEASE_SKIP]

    def pins(extras: Sequence[str]) -> list[str]:
        return release_requires(requirements(metadata, python, "x86_64", extras), keep)

    reqs = pins(())
    extra = ENGINE_EXTRA.get(str(canonicalize_name(package)))
    if reqs or extra is None:
        return reqs, []
    extras = extra_closure(metadata, package, extra, python)
    return pins(extras), extras


def torch_requirement(reqs: Sequence[tuple[Requirement, str]]) -> tuple[SpecifierSet, str] | None:
    """(specifier, raw text) of the torch requirement; None when the METADATA does not name torch."""
    found = [(r, raw) for r, raw in reqs if canonicalize_name(r.name) == "torch"]
    if not found:
        return None
    spec = SpecifierSet()
    for r, _ in found:
        spec &= r.specifier
    return spec, "; ".join(raw for _, raw in found)


def exact_pin(spec: SpecifierSet) -> str | None:
    """The version of an exact ``==X`` pin (no wildcard), else None."""
    specs = list(spec)
    if len(specs) == 1 and specs[0].operator == "==" and not specs[0].version.endswith("*"):
        try:
            return str(Version(specs[0].version))
        except InvalidVersion:
            return None
    return None


def cuda_of(reqs: Sequence[tuple[Requirement, str]]) -> tuple[str, str] | None:
    """('12.8', raw requirement) from a pinned CUDA runtime (``nvidia-cuda-runtime-cu12==12.8.90``,
    ``cuda-toolkit[...]==13.0.2``); None when the METADATA pins none."""
    for r, raw in reqs:
        if not _CUDA_RUNTIME.match(str(canonicalize_name(r.name))):
            continue
        pin = exact_pin(r.specifier)
        if pin is None:
            continue
        rel = Version(pin).release
        if len(rel) >= 2:
            return f"{rel[0]}.{rel[1]}", raw
    return None


def release_requires(reqs: Sequence[tuple[Requirement, str]], keep: Iterable[str]) -> list[str]:
    """The requirements of a release that a ``[[release]]`` row keeps (canonical name + specifier)."""
    wanted = {str(canonicalize_name(n)) for n in keep} | set(RELEASE_EXTRA)
    out = []
    for r, _ in reqs:
        name = str(canonicalize_name(r.name))
        if name in wanted:
            out.append(name + str(r.specifier))
    return sorted(dict.fromkeys(out))


# An engine's floors: the minimum versions it asserts at start-up, beyond its METADATA (sglang refuses to start
# with an older flashinfer or sgl-kernel); the member of its wheel that asserts them.
ENGINE_FLOORS = {"sglang": "sglang/srt/entrypoints/engine.py"}
FLOORS_VERSION = 1  # the cache entry of what an engine file asserts
_ASSERT_PKG = re.compile(r"""assert_pkg_version\(\s*["']([A-Za-z0-9_.\-]+)["']\s*,\s*["']([^"']+)["']""")
_IF_LINE = re.compile(r"^(\s*)(?:if|elif)\s+(.*?):?\s*$")


def engine_floors(text: str) -> list[tuple[str, str, str, str]]:
    """(distribution, minimum version, condition, the name as written) of every ``assert_pkg_version("name", "version", ...)`` call of an
    engine's source (pure). The condition is the ``if`` the call sits in, as the engine writes it (``""``: none);
    a call whose version is not a literal is left out."""
    lines = text.splitlines()
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln) + 1)
    out = []
    for m in _ASSERT_PKG.finditer(text):
        try:
            version = str(Version(m.group(2)))
        except InvalidVersion:
            continue
        row = max(i for i, st in enumerate(starts) if st <= m.start())
        indent = len(lines[row]) - len(lines[row].lstrip())
        cond = ""
        closing = None  # the indent of a ``):`` that ends a condition over several lines
        for j in range(row - 1, -1, -1):
            ifm = _IF_LINE.match(lines[j])
            at = len(lines[j]) - len(lines[j].lstrip())
            if closing is None and lines[j].strip().startswith(")") and at < indent:
                closing = at
                continue
            if closing is not None and (at != closing or not ifm):
                continue
            if lines[j].strip() and at < indent:
                if ifm and "SKIP" not in ifm.group(2):
                    cond = ifm.group(2).rstrip(":").strip()
                    if cond == "(":  # a condition over several lines: its first operand
                        cond = lines[j + 1].strip()
                break
        out.append((str(canonicalize_name(m.group(1))), version, cond, m.group(1)))
    return out


def floor_note(condition: str) -> str:
    """A floor's condition said short (``(attention backend flashinfer)``, ``(on CUDA)``), else as written."""
    if "flashinfer" in condition:
        return " (attention backend flashinfer)"
    if condition in ("_is_cuda", "is_cuda()"):
        return " (on CUDA)"
    return f" (when `{condition}`)" if condition else ""


def _same_spec(a: str, b: str) -> bool:
    try:
        return set(SpecifierSet(a)) == set(SpecifierSet(b))
    except InvalidSpecifier:
        return a == b


# ------------------------------------------------------------------------------------------------
# What the matrix tracks and what it lacks
# ------------------------------------------------------------------------------------------------


def tracked_packages(data: dict[str, list[dict[str, Any]]]) -> dict[str, str]:
    """{package: kind} read from the matrix's tables (torch, family, kernel, jit, release; transformers
    through ``[[model]]``), then :data:`DEFAULT_KINDS` for the packages it has no row of yet."""
    out: dict[str, str] = {}
    if data.get("torch"):
        out["torch"] = "torch"
    for table, kind in (("family", "family"), ("kernel", "kernel"), ("jit", "jit"), ("release", "release")):
        for r in data.get(table, []):
            out.setdefault(str(canonicalize_name(r["package"])), kind)
    if data.get("model"):
        out.setdefault("transformers", "model")
    for name, kind in DEFAULT_KINDS.items():
        out.setdefault(name, kind)
    return out


def listings_of(tracked: dict[str, str], data: dict[str, list[dict[str, Any]]],
                packages: Sequence[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(package, kind, platform) of every listing a refresh makes for ``packages`` ((name, kind) pairs):
    its kind on x86_64; ``[[release]]`` too for a package that also has release rows (vLLM: a kernel
    with pinned requirements); and the aarch64 wheels of the torch and kernel packages the matrix holds
    aarch64 rows of."""
    releases = {str(canonicalize_name(r["package"])) for r in data.get("release", [])}
    aarch64: set[str] = set()
    for table in ("torch", "kernel"):
        for r in data.get(table, []):
            if r.get("platform", "x86_64") == "aarch64" and not r.get("variant"):
                aarch64.add("torch" if table == "torch" else str(canonicalize_name(r["package"])))
    out = []
    for name, kind in packages:
        out.append((name, kind, "x86_64"))
        if kind != "release" and name in releases:
            out.append((name, "release", "x86_64"))
        if kind in PER_PLATFORM_KINDS and name in aarch64:
            out.append((name, kind, "aarch64"))
    return out


class Coverage:
    """Which releases the matrix knows, per kind and platform (pure; built once from the plain rows)."""

    def __init__(self, data: dict[str, list[dict[str, Any]]]) -> None:
        self.data = data
        self.known: set[tuple[str, str, Version, str]] = set()  # (kind, package, version, platform)
        for t in data.get("torch", []):
            if not t.get("variant"):
                self.known |= {("torch", "torch", _v(x), t.get("platform", "x86_64")) for x in t["versions"]}
        for f in data.get("family", []):
            self.known |= {("family", f["package"], _v(x), "x86_64") for x in f["pairs"]}
        for k in data.get("kernel", []):
            if not k.get("variant"):
                self.known |= {("kernel", k["package"], _v(x), k.get("platform", "x86_64")) for x in k["versions"]}
        for r in data.get("release", []):
            self.known.add(("release", r["package"], _v(r["version"]), "x86_64"))
        self.jit = [(j["package"], SpecifierSet(j["versions"])) for j in data.get("jit", [])]
        self.probed = {(p["package"], _v(p["version"]), p.get("platform", "x86_64")) for p in data.get("abi_probe", [])}

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

    def to_json(self) -> dict[str, Any]:
        return {"package": self.package, "version": self.version, "kind": self.kind, "table": KIND_TABLE[self.kind],
                "uploaded": self.uploaded.strftime("%Y-%m-%dT%H:%M:%SZ") if self.uploaded else None,
                "probed": self.probed, "platform": self.platform}


@dataclass
class Listing:
    package: str
    kind: str
    on_index: int
    lacking: list[Candidate] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (version, why)
    platform: str = "x86_64"

    def to_json(self) -> dict[str, Any]:
        return {"package": self.package, "kind": self.kind, "table": KIND_TABLE[self.kind], "on_index": self.on_index,
                "platform": self.platform,
                "lacking": [c.to_json() for c in self.lacking],
                "skipped": [{"version": v, "reason": why} for v, why in self.skipped]}


def group_files(project: Project) -> dict[Version, list[IndexFile]]:
    out: dict[Version, list[IndexFile]] = {}
    for f in project.files:
        if f.version is None:
            continue
        try:
            out.setdefault(Version(f.version), []).append(f)
        except InvalidVersion:
            continue
    return out


def release_time(files: Iterable[IndexFile]) -> datetime | None:
    times = [t for t in (parse_time(f.upload_time) for f in files) if t is not None]
    return min(times) if times else None


def list_lacking(project: Project, package: str, kind: str, coverage: Coverage, since: date | None = None,
                 pre: bool = False, platform: str = "x86_64") -> Listing:
    """The releases of ``project`` the matrix lacks on ``platform`` (pure: the page is already fetched). On
    aarch64 only releases with an aarch64 wheel are listed (most packages publish x86_64 wheels alone)."""
    from dataclasses import replace

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


# ------------------------------------------------------------------------------------------------
# Index access
# ------------------------------------------------------------------------------------------------


def bounded_client(jobs: int) -> httpx.Client:
    """An httpx client whose pool holds at most ``jobs`` connections: the bound on parallel downloads."""
    from glmcompat.edges.http import make_client

    return make_client(max_connections=jobs)


def pick_wheel(files: Sequence[IndexFile], platform: str = "x86_64") -> tuple[IndexFile, str] | None:
    """The wheel glmcompat reads for a release (Linux ``platform``; CPython 3.11 first), with its Python tag."""
    from glmcompat.edges.index import select_wheel, supported_tags

    for py in PYTHONS:
        w = select_wheel(files, supported_tags(py, PLATFORM_TAGS.get(platform, platform)))
        if w is not None:
            return w, py
    return None


def _map(fn: Callable[[Any], Any], items: Sequence[Any], jobs: int) -> list[Any]:
    if len(items) <= 1 or jobs <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        return list(ex.map(fn, items))


class RefreshBar:
    """``refresh: 3/12 sgl-kernel 0.3.5`` on stderr, rewritten in place; silent unless stderr is a TTY."""

    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total = total
        self.done = 0
        self.lock = threading.Lock()
        self.t0 = time.monotonic()

    def step(self, label: str, advance: bool = True) -> None:
        if not self.enabled:
            if advance:
                with self.lock:
                    self.done += 1
            return
        with self.lock:
            if advance:
                self.done += 1
            width = 24
            filled = width * self.done // max(1, self.total)
            bar = "#" * filled + "." * (width - filled)
            line = f"\rrefresh [{bar}] {self.done}/{self.total} {time.monotonic() - self.t0:5.0f}s {label}"
            self.stream.write(line[:110].ljust(110))
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * 110 + "\r")
            self.stream.flush()


# ------------------------------------------------------------------------------------------------
# Probing one release
# ------------------------------------------------------------------------------------------------


@dataclass
class ReleaseOutcome:
    """What a refresh proved about one release (rows complete and schema-valid) and what it could not."""

    package: str
    version: str
    kind: str
    rows: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    proved: list[str] = field(default_factory=list)
    unproved: list[str] = field(default_factory=list)
    failed: str | None = None  # the network or index failed: nothing is written, the next run retries
    journaled: bool = False
    written: list[tuple[str, str]] = field(default_factory=list)  # (table, file) of rows written
    platform: str = "x86_64"

    @property
    def status(self) -> str:
        if self.failed:
            return "failed"
        if not self.rows:
            return "nothing"
        return "partial" if self.unproved else "complete"

    def to_json(self) -> dict[str, Any]:
        return {"package": self.package, "version": self.version, "kind": self.kind, "platform": self.platform,
                "status": self.status,
                "rows": [{"table": t, "row": r} for t, r in self.rows], "proved": self.proved,
                "not_proved": self.unproved, "failed": self.failed, "from_journal": self.journaled,
                "written": [{"table": t, "file": f} for t, f in self.written]}


@dataclass
class _Work:
    cand: Candidate
    out: ReleaseOutcome
    wheel: IndexFile | None = None
    python: str = "cp311"
    reqs: list[tuple[Requirement, str]] = field(default_factory=list)
    metadata: str = ""
    torch_req: tuple[SpecifierSet, str] | None = None
    pin: str | None = None
    window: list[str] = field(default_factory=list)
    abi: dict[str, AbiResult] = field(default_factory=dict)
    arch: ArchResult | None = None
    arch_error: str | None = None
    stop: bool = False  # the wheel cannot be read: no probe would succeed


class Refresher:
    """Probes releases and turns what it proves into rows. ``index`` and ``cache`` as for the probes."""

    def __init__(self, index: IndexClient, cache: Cache, data: dict[str, list[dict[str, Any]]], *,
                 jobs: int = DEFAULT_JOBS, progress: RefreshBar | None = None,
                 tracked: dict[str, str] | None = None) -> None:
        self.index = index
        self.cache = cache
        self.data = data
        self.jobs = max(1, jobs)
        self.progress = progress
        self.tracked = tracked or tracked_packages(data)
        self._torch_times: dict[str, datetime] | None = None
        self._lock = threading.Lock()

    # -- index ------------------------------------------------------------------------------------
    def torch_times(self) -> dict[str, datetime]:
        """{torch release: upload time} of the final torch releases on the index."""
        with self._lock:
            if self._torch_times is None:
                times = {}
                for v, files in group_files(self.index.project("torch")).items():
                    t = release_time(files)
                    if t is not None and not v.is_prerelease and not v.is_devrelease and v.local is None \
                            and not all(f.yanked for f in files):
                        times[str(v)] = t
                self._torch_times = times
            return self._torch_times

    def window(self, uploaded: datetime | None, spec: SpecifierSet | None) -> list[str]:
        """The torch releases an extension uploaded at ``uploaded`` is probed against (see the module doc).

        A range requirement (``torch>=2.11``) is a claim about every torch it admits, and METADATA is
        written by hand: a probe against the oldest admitted release and the newest of each admitted
        series (at most :data:`MAX_SERIES`) is what shows where the claim is wrong (torchaudio 2.11.1
        declares torch>=2.11 and cannot load next to 2.11.0 or 2.12.x)."""
        if uploaded is None:
            return []
        times = self.torch_times()
        before = sorted(((t, v) for v, t in times.items() if t <= uploaded
                         and (spec is None or spec.contains(v, prereleases=True))), reverse=True)
        recent = [v for t, v in before if t >= uploaded - timedelta(days=WINDOW_DAYS)]
        chosen = set(recent[:MAX_WINDOW] or [v for _, v in before[:1]])
        if spec is not None and str(spec) and before:
            series: dict[tuple[int, ...], Version] = {}
            for _, v in before:
                key = Version(v).release[:2]
                if key not in series or Version(v) > series[key]:
                    series[key] = Version(v)
            chosen |= {str(v) for v in sorted(series.values(), reverse=True)[:MAX_SERIES]}
            chosen.add(min((v for _, v in before), key=Version))
        return sorted(chosen, key=Version)

    # -- journal ----------------------------------------------------------------------------------
    def journal_key(self, cand: Candidate) -> str:
        from glmcompat.ops import wheelprobe as probe

        files = sorted((f.filename, f.sha256 or "", f.yanked) for f in cand.files)
        blob = json.dumps([REFRESH_VERSION, getattr(probe, "ABI_VERSION", 1), self.index.base_url, cand.package,
                           cand.kind, cand.version, files, WINDOW_DAYS, MAX_WINDOW, MAX_SERIES, cand.platform])
        return f"refresh-v{REFRESH_VERSION}-{hashlib.sha256(blob.encode()).hexdigest()[:40]}"

    def _from_journal(self, cand: Candidate) -> ReleaseOutcome | None:
        hit = self.cache.get_json(self.journal_key(cand))
        if not isinstance(hit, dict):
            return None
        try:
            return ReleaseOutcome(cand.package, cand.version, cand.kind, [(t, dict(r)) for t, r in hit["rows"]],
                           list(hit["proved"]), list(hit["unproved"]), journaled=True, platform=cand.platform)
        except (KeyError, TypeError, ValueError):
            return None

    def _journal(self, w: _Work) -> None:
        o = w.out
        if o.failed:
            return
        # rows as [key, value] pairs: the cache writes JSON objects with sorted keys, rows keep their order
        self.cache.put_json(self.journal_key(w.cand), {"rows": [[t, list(r.items())] for t, r in o.rows],
                                                       "proved": o.proved,
                                                       "unproved": o.unproved})

    # -- the run ----------------------------------------------------------------------------------
    def run(self, cands: Sequence[Candidate]) -> list[ReleaseOutcome]:
        """Probe every candidate (journaled outcomes are reused); return the outcomes in order."""
        outcomes: dict[int, ReleaseOutcome] = {}
        works: list[tuple[int, _Work]] = []
        for i, c in enumerate(cands):
            hit = self._from_journal(c)
            if hit is not None:
                outcomes[i] = hit
                self._tick(f"{c.package} {c.version} (journal)")
            else:
                works.append((i, _Work(c, ReleaseOutcome(c.package, c.version, c.kind, platform=c.platform))))
        ws = [w for _, w in works]
        # 1. METADATA, wheel choice and windows (small reads)
        _map(self._guard(self._read), ws, self.jobs)
        # 2. one probe per torch release first, so that each torch wheel is read once; then the rest
        pairs = [(w, t) for w in ws if not w.stop and not w.out.failed for t in w.window]
        leaders: dict[str, tuple[_Work, str]] = {}
        for w, t in pairs:
            leaders.setdefault(t, (w, t))
        _map(lambda p: self._guard(lambda w: self._abi(w, p[1]))(p[0]), list(leaders.values()), self.jobs)
        # 3. per release: the other probes, GPU code, rows, journal
        _map(self._guard(self._finish), ws, self.jobs)
        for i, w in works:
            outcomes[i] = w.out
        return [outcomes[i] for i in range(len(cands))]

    def _tick(self, label: str) -> None:
        if self.progress is not None:
            self.progress.step(label)

    def _guard(self, fn: Callable[[_Work], None]) -> Callable[[_Work], None]:
        def run(w: _Work) -> None:
            if w.out.failed:
                return
            try:
                fn(w)
            except EnvironmentFailure as e:
                w.out.failed = e.one_line()
        return run

    # -- step 1 -----------------------------------------------------------------------------------
    def _read(self, w: _Work) -> None:
        c, o = w.cand, w.out
        if self.progress is not None:
            self.progress.step(f"{c.package} {c.version}: METADATA", advance=False)
        picked = pick_wheel(c.files, c.platform)
        if picked is None:
            from dataclasses import replace

            names = ", ".join(sorted(f.filename for f in c.files)) or "none"
            yanked = pick_wheel([replace(f, yanked=False) for f in c.files], c.platform) is not None
            why = f"its Linux {c.platform} wheel is yanked" if yanked else \
                f"no wheel for CPython on Linux {c.platform}"
            o.unproved.append(f"{why} (files: {names}): nothing can be read")
            w.stop = True
            return
        w.wheel, w.python = picked
        try:
            text = self.index.wheel_metadata(w.wheel)
        except InputError as e:
            o.unproved.append(f"METADATA of {w.wheel.filename} cannot be read: {e.one_line()}")
            w.stop = True
            return
        w.reqs = requirements(text, w.python, c.platform)
        w.metadata = text
        kind = c.kind
        if kind == "torch":
            return
        if kind == "release":
            self._release_row(w)
            return
        w.torch_req = torch_requirement(w.reqs)
        if kind == "jit":
            return
        if w.torch_req is not None:
            w.pin = exact_pin(w.torch_req[0])
        if w.pin is not None:
            w.window = [w.pin]
        else:
            w.window = self.window(c.uploaded, w.torch_req[0] if w.torch_req else None)
            if not w.window:
                o.unproved.append("no torch release in its window on the index (upload times missing, or none "
                                  "admitted by its requirement): no ABI probe")

    # -- step 2/3: probes -------------------------------------------------------------------------
    def _abi(self, w: _Work, torch: str) -> None:
        from glmcompat.ops.wheelprobe import probe_abi

        if torch in w.abi or w.stop:
            return
        c = w.cand
        if self.progress is not None:
            self.progress.step(f"{c.package} {c.version}: abi vs torch {torch}", advance=False)
        try:
            w.abi[torch] = probe_abi(c.package, c.version, torch, index=self.index, cache=self.cache,
                                     python=w.python, platform=PLATFORM_TAGS[c.platform], torch_python=TORCH_PYTHON)
        except InputError as e:
            w.out.unproved.append(f"ABI probe against torch {torch} failed: {e.one_line()}")

    def _arch(self, w: _Work) -> None:
        c = w.cand
        if self.progress is not None:
            self.progress.step(f"{c.package} {c.version}: GPU code", advance=False)
        try:
            w.arch = arch_probe(c.package, c.version, index=self.index, cache=self.cache, python=w.python,
                                patterns=self.primary_patterns(c.package), platform=c.platform)
        except InputError as e:
            w.arch_error = e.one_line()
            w.out.unproved.append(f"GPU code could not be read: {w.arch_error}")

    def primary_patterns(self, package: str) -> list[str]:
        for r in self.data.get("primary_modules", []):
            if r["package"] == package:
                return list(r["modules"])
        return []

    def _finish(self, w: _Work) -> None:
        c = w.cand
        if not w.stop:
            for t in w.window:
                self._abi(w, t)
            if c.kind in ("torch", "kernel", "family"):
                self._arch(w)
            build = {"torch": self._torch_rows, "family": self._family_rows, "kernel": self._kernel_rows,
                     "jit": self._jit_rows}.get(c.kind)
            if build is not None and not w.out.failed:
                build(w)
        self._check_rows(w)
        self._journal(w)
        self._tick(f"{c.package} {c.version}")

    # -- rows -------------------------------------------------------------------------------------
    def _metadata_source(self, w: _Work, what: str) -> str:
        assert w.wheel is not None
        return f"{w.wheel.filename} METADATA: {what}"

    def _abi_rows(self, w: _Work) -> None:
        from glmcompat.matrix.curate import abi_row

        for t in sorted(w.abi, key=Version):
            r = w.abi[t]
            row = abi_row(r)
            w.out.rows.append(("abi_probe", row))
            verdict = "compatible" if r.ok else f"INCOMPATIBLE ({len(r.missing)} missing)"
            w.out.proved.append(f"ABI vs torch {t}: {verdict}")

    def _arch_row(self, w: _Work) -> dict[str, Any] | None:
        from glmcompat.matrix.curate import arch_row

        a = w.arch
        if a is None:
            return None
        if not (a.sass or a.ptx):
            w.out.proved.append("no GPU code in its main modules")
            return None
        row = arch_row(a)
        w.out.rows.append(("arch_probe", row))
        w.out.proved.append(f"GPU code: SASS {', '.join(a.sass) or 'none'}; PTX {', '.join(a.ptx) or 'none'}")
        return row

    def _torch_rows(self, w: _Work) -> None:
        from glmcompat.matrix.curate import arch_command

        o = w.out
        cuda = cuda_of(w.reqs)
        a = w.arch
        if cuda is None:
            o.unproved.append("no CUDA variant label on the wheel and no CUDA runtime pinned in its METADATA: "
                              "its CUDA runtime is not proven; no [[torch]] row")
        else:
            o.proved.append(f"CUDA {cuda[0]} (METADATA: {cuda[1]})")
        if a is not None and not (a.sass or a.ptx):
            o.unproved.append("no GPU code found in torch/lib: no [[torch]] row")
            return
        if cuda is None or a is None or w.wheel is None:
            if a is not None:
                o.proved.append(f"GPU code: SASS {', '.join(a.sass) or 'none'}; PTX {', '.join(a.ptx) or 'none'}")
            return
        o.proved.append(f"GPU code: SASS {', '.join(a.sass) or 'none'}; PTX {', '.join(a.ptx) or 'none'}")
        row: dict[str, Any] = {"versions": [c_version(w)]}
        if w.cand.platform != "x86_64":
            row["platform"] = w.cand.platform
        o.rows.append(("torch", {
            **row, "cuda": cuda[0], "sass": list(a.sass), "ptx": list(a.ptx),
            "evidence": "arch-probe",
            "source": f"{arch_command('torch', w.cand.version, a.wheel, w.cand.platform)}: fatbins of {a.wheel}; "
                      f"CUDA {cuda[0]}: {w.wheel.filename} METADATA: Requires-Dist {cuda[1]}"}))

    def _family_rows(self, w: _Work) -> None:
        o = w.out
        if w.torch_req is None:
            o.unproved.append("its METADATA has no torch requirement: the torch it was built for is not proven; "
                              "no [[family]] pair")
        else:
            spec, raw = w.torch_req
            if not str(spec):
                o.unproved.append(f"its METADATA names torch without a version ({raw!r}): no [[family]] pair")
            else:
                row: dict[str, Any] = {"package": w.cand.package, "pairs": {c_version(w): str(spec)}}
                source = self._metadata_source(w, f"Requires-Dist {raw}")
                runtime = self._cudart(w)
                if runtime is not None:
                    row["cudart"] = {c_version(w): runtime[0]}
                    source += f"; CUDA runtime (cudart): {runtime[1]}"
                else:
                    o.unproved.append("the CUDA runtime its modules link is not read (no ABI probe succeeded): "
                                      "no cudart")
                o.rows.append(("family", {**row, "evidence": "metadata", "source": source}))
                o.proved.append(f"torch{spec} (METADATA)")
        self._abi_rows(w)
        self._arch_row(w)

    def _kernel_rows(self, w: _Work) -> None:
        from glmcompat.matrix.curate import arch_command

        o = w.out
        a = w.arch
        if w.pin is None:
            if w.torch_req is None:
                o.unproved.append("its METADATA has no torch requirement: the torch it was built against is not "
                                  "proven; no [[kernel]] row (the [[abi_probe]] rows say which torches it loads with)")
            else:
                o.unproved.append(f"its torch requirement {w.torch_req[1]!r} is not an exact pin: the torch it was "
                                  "built against is not proven; no [[kernel]] row")
        elif a is None:
            o.unproved.append(f"METADATA pins torch=={w.pin}, but without its GPU code the [[kernel]] row would be "
                              "half a row: not written")
            o.proved.append(f"torch=={w.pin} (METADATA)")
        else:
            assert w.torch_req is not None
            row: dict[str, Any] = {"package": w.cand.package, "versions": [c_version(w)]}
            if w.cand.platform != "x86_64":
                row["platform"] = w.cand.platform
            row["torch"] = w.pin
            source = self._metadata_source(w, f"Requires-Dist {w.torch_req[1]}")
            cuda = self._kernel_cuda(w)
            if cuda is None:
                o.proved.append(f"torch=={w.pin} (METADATA)")
                o.unproved.append(f"METADATA pins torch=={w.pin}, but the CUDA runtime it was built with is not proven "
                                  "(no CUDA pin in its METADATA, and its modules' libcudart major is not that of the "
                                  "torch it pins): without it the [[kernel]] row would be half a row: not written")
            else:
                row["cuda"] = cuda[0]
                source += f"; CUDA {cuda[0]}: {cuda[1]}"
                if a.sass or a.ptx:
                    row["sass"] = list(a.sass)
                    row["ptx"] = list(a.ptx)
                    source += f"; GPU code: {arch_command(w.cand.package, w.cand.version, a.wheel, w.cand.platform)}"
                row["evidence"] = "metadata"
                row["source"] = source
                o.rows.append(("kernel", row))
                o.proved.append(f"torch=={w.pin} (METADATA); CUDA {cuda[0]}")
        self._abi_rows(w)
        self._arch_row(w)

    def _cudart(self, w: _Work) -> tuple[int, str] | None:
        """(major, what shows it) of the CUDA runtime the release's modules link (DT_NEEDED libcudart.so.N,
        read by its ABI probes; 0: none links one); None when no probe read the modules or they disagree."""
        r = next((w.abi[t] for t in sorted(w.abi, key=Version)), None)
        if r is None:
            return None
        majors = sorted({m for mod in r.modules for m in mod.cuda_majors})
        if len(majors) > 1:
            return None
        if not majors:
            return 0, f"no shared object of {r.wheel} has a DT_NEEDED libcudart.so.N"
        return majors[0], f"DT_NEEDED libcudart.so.{majors[0]} of the shared objects of {r.wheel}"

    def _kernel_cuda(self, w: _Work) -> tuple[str, str] | None:
        """(CUDA 'X.Y', what shows it) of a kernel release: a CUDA runtime pinned in its METADATA, else the
        major its modules link (DT_NEEDED libcudart.so.N) with the minor of the torch it pins exactly (that
        torch wheel's METADATA pins its CUDA runtime), when the two majors agree; None otherwise."""
        own = cuda_of(w.reqs)
        if own is not None:
            return own[0], f"METADATA Requires-Dist {own[1]}"
        runtime = self._cudart(w)
        if runtime is None or runtime[0] == 0 or w.pin is None:
            return None
        try:
            files = group_files(self.index.project("torch")).get(Version(w.pin), [])
            picked = pick_wheel(files, w.cand.platform)
            if picked is None:
                return None
            torch_cuda = cuda_of(requirements(self.index.wheel_metadata(picked[0]), picked[1], w.cand.platform))
        except InputError:
            return None
        if torch_cuda is None or Version(torch_cuda[0]).major != runtime[0]:
            return None
        return torch_cuda[0], (f"{runtime[1]} (CUDA {runtime[0]}; the wheel states no minor: {torch_cuda[0]} is that "
                               f"of the torch it pins, {picked[0].filename} METADATA Requires-Dist {torch_cuda[1]})")

    def _jit_rows(self, w: _Work) -> None:
        from glmcompat.edges.ranges import HttpRangeReader
        from glmcompat.matrix.curate import abi_command
        from glmcompat.ops.wheelprobe import elf_members
        from glmcompat.readers.wheelzip import RemoteZip

        o = w.out
        assert w.wheel is not None
        reader = HttpRangeReader(self.index.client, w.wheel.url, name=w.wheel.filename, size=w.wheel.size,
                                 retries=self.index.retries, backoff=self.index.backoff)
        try:
            members = elf_members(RemoteZip(reader))
        except InputError as e:
            o.unproved.append(f"{w.wheel.filename} cannot be read: {e.one_line()}")
            return
        torch_note = f"; METADATA: Requires-Dist {w.torch_req[1]}" if w.torch_req else ""
        row = {"package": w.cand.package, "versions": f"=={c_version(w)}"}
        if not members:
            o.rows.append(("jit", {**row, "evidence": "metadata",
                                   "source": f"{w.wheel.filename} holds no shared object (its kernels are compiled "
                                             f"or loaded at run time, not linked against torch){torch_note}"}))
            o.proved.append("no shared object in the wheel: does not link the torch C++ ABI")
            return
        window = self.window(w.cand.uploaded, None)
        if not window:
            o.unproved.append(f"{len(members)} shared object(s) and no torch release to probe them against: "
                              "no [[jit]] row")
            return
        t = window[-1]
        self._abi(w, t)
        r = w.abi.get(t)
        if r is None:
            return
        if all(m.needs_from_torch == 0 for m in r.modules):
            o.rows.append(("jit", {**row, "evidence": "abi-probe",
                                   "source": f"{abi_command(w.cand.package, w.cand.version, t, r.wheel)}: no module "
                                             f"of {r.wheel} needs a symbol from torch{torch_note}"}))
            o.proved.append(f"{len(members)} shared object(s), none needs a symbol from torch")
        else:
            o.unproved.append("its shared objects link torch: not a JIT release; record it in [[kernel]] by hand")
            self._abi_rows(w)

    def _release_row(self, w: _Work) -> None:
        o = w.out
        keep = [n for n in self.tracked if n != w.cand.package]
        # the core may sit under the extra its install instructions name (sglang[srt], pulled in by sglang[all])
        reqs, extras = release_pins(w.metadata, w.cand.package, keep, w.python)
        what = "Requires-Dist " + (", ".join(reqs) or "(none of the tracked packages)")
        if extras and reqs:
            what = (f"Requires-Dist with extra {extras[0]!r}"
                    + (f" (and {', '.join(repr(x) for x in extras[1:])}, which it requires)" if extras[1:] else "")
                    + f": {', '.join(reqs)}")
        o.rows.append(("release", {"package": w.cand.package, "version": c_version(w), "requires": reqs,
                                   "evidence": "metadata", "source": self._metadata_source(w, what)}))
        o.proved.append(f"pins {', '.join(reqs) or 'none of the tracked packages'} (METADATA)")
        if w.cand.package in ENGINE_FLOORS:
            self._floor_rows(w)

    def _floor_rows(self, w: _Work) -> None:
        """``[[requires]]`` rows of the floors the release's engine asserts (read from its own file by range
        requests: the central directory and that member)."""
        from glmcompat.edges.ranges import HttpRangeReader
        from glmcompat.readers.wheelzip import RemoteZip

        o = w.out
        assert w.wheel is not None
        member = ENGINE_FLOORS[w.cand.package]
        # what the member asserts, kept by the wheel's sha256 like the probes' results (a re-run reads nothing)
        key = f"floors-v{FLOORS_VERSION}-{w.wheel.sha256}" if w.wheel.sha256 else None
        hit = self.cache.get_json(key) if key and self.cache is not None else None
        if isinstance(hit, dict) and isinstance(hit.get("floors"), list):
            if hit.get("absent"):
                o.proved.append(f"floors: {w.wheel.filename} has no {member} (none recorded)")
                return
            floors = [(str(d), str(v), str(c), str(wr)) for d, v, c, wr in hit["floors"]]
        else:
            try:
                zf = RemoteZip(HttpRangeReader(self.index.client, w.wheel.url, name=w.wheel.filename,
                                               size=w.wheel.size))
                names = {m.name: m for m in zf.members}
                text = zf.read(names[member]).decode("utf-8", "replace") if member in names else None
            except InputError as e:
                o.unproved.append(f"floors: {member} of {w.wheel.filename} cannot be read: {e.one_line()}")
                return
            floors = engine_floors(text) if text is not None else []
            if key and self.cache is not None:
                self.cache.put_json(key, {"floors": [list(f) for f in floors], "absent": text is None})
            if text is None:
                o.proved.append(f"floors: {w.wheel.filename} has no {member} (none recorded)")
                return
        for dist, version, cond, written in floors:
            o.rows.append(("requires", {
                "package": w.cand.package, "versions": f"=={c_version(w)}", "requires": f"{dist}>={version}",
                "evidence": "metadata",
                "source": f"{w.wheel.filename}: {member} assert_pkg_version(\"{written}\", \"{version}\")"
                          + floor_note(cond)}))
        o.proved.append(f"floors {', '.join(f'{d}>={v}' for d, v, _, _ in floors) or 'none'} ({member})")

    def _check_rows(self, w: _Work) -> None:
        """Drop rows the schema rejects (a bug, or an index answer no schema admits): never a half row."""
        from pydantic import ValidationError

        from glmcompat.matrix.schema import MatrixFile

        keep = []
        for table, row in w.out.rows:
            try:
                MatrixFile.model_validate({"schema": 1, table: [row]})
            except ValidationError as e:
                err = e.errors()[0]
                w.out.unproved.append(f"[[{table}]] row rejected by the matrix schema "
                                      f"({'.'.join(map(str, err['loc']))}: {err['msg']}): not written")
                continue
            keep.append((table, row))
        w.out.rows = keep


def c_version(w: _Work) -> str:
    return w.cand.version


# ------------------------------------------------------------------------------------------------
# GPU code of the main modules only
# ------------------------------------------------------------------------------------------------


def arch_probe(package: str, version: str, *, index: IndexClient, cache: Cache | None, python: str = "cp311",
               patterns: Sequence[str] = (), platform: str = "x86_64") -> ArchResult:
    """The GPU code of ``package==version``'s main modules (``patterns``, from ``[[primary_modules]]``).

    With patterns, only the members they match are streamed (sgl-kernel: ``sm90``/``sm100``
    ``common_ops``, not the bundled flash_ops / flashmla_ops / mscclpp); without, every module, as
    ``glmcompat arch`` reads them. A cached whole-wheel result is reused either way."""
    from fnmatch import fnmatchcase

    from glmcompat.edges.ranges import HttpRangeReader
    from glmcompat.ops.wheelprobe import (
        ARCH_VERSION,
        ArchResult,
        _find,
        elf_members,
        module_arch_json,
        module_arch_of_json,
        probe_arch,
        read_gpu_code_member,
    )
    from glmcompat.readers.wheelzip import RemoteZip

    pkg = str(canonicalize_name(package))
    tag = PLATFORM_TAGS[platform]
    if not patterns:
        return probe_arch(pkg, version, index=index, cache=cache, python=python, platform=tag)
    t0 = time.perf_counter()
    f = _find(index, cache, pkg, version, python, tag)
    whole = f"arch-v{ARCH_VERSION}-{f.sha256}" if f.sha256 else None
    some = f"archsel-v{ARCH_VERSION}-{f.sha256}" if f.sha256 else None
    raw: list[dict[str, Any]] | None = None
    cached = False
    fetched = 0
    if cache is not None and whole:
        hit = cache.get_json(whole)
        if isinstance(hit, list):
            raw, cached = [d for d in hit if any(fnmatchcase(d["member"], p) for p in patterns)], True
    if raw is None and cache is not None and some:
        hit = cache.get_json(some)
        if isinstance(hit, dict) and hit.get("patterns") == list(patterns):
            raw, cached = hit["modules"], True
    if raw is None:
        reader = HttpRangeReader(index.client, f.url, name=f.filename, size=f.size, retries=index.retries,
                                 backoff=index.backoff)
        try:
            zf = RemoteZip(reader)
            members = [m for m in elf_members(zf) if any(fnmatchcase(m.name, p) for p in patterns)]

            def one(m: Any) -> dict[str, Any]:  # with the kernels grouped by code and the toolkits (wheelprobe)
                return module_arch_json(m.name, read_gpu_code_member(zf, m, payloads=True))

            raw = _map(one, members, 4)
        finally:
            fetched = reader.bytes_fetched
        if cache is not None and some:
            cache.put_json(some, {"patterns": list(patterns), "modules": raw})
    mods = [module_arch_of_json(d) for d in raw]
    primary = [m.member for m in mods if m.sass or m.ptx]
    return ArchResult(pkg, version, f.filename, mods, None, fetched, f.size or 0, round(time.perf_counter() - t0, 3),
                      cached, primary, platform)


# ------------------------------------------------------------------------------------------------
# Writing
# ------------------------------------------------------------------------------------------------


def matrix_files(matrix: str | Path | None) -> tuple[Path, list[Path]]:
    from glmcompat.matrix import store
    from glmcompat.matrix.store import default_matrix_dir

    d = Path(matrix) if matrix else default_matrix_dir()
    if not d.is_dir():
        raise InputError(f"--matrix {str(d)!r} is not a directory of matrix files")
    return d, store.matrix_files([d])


def _verdict(table: str, row: dict[str, Any]) -> Any:
    if table == "abi_probe":
        return (row["compatible"], row["missing"])
    if table == "arch_probe":
        return (tuple(row["sass"]), tuple(row.get("ptx") or ()))
    return None


def plan_writes(outcomes: Sequence[ReleaseOutcome], directory: Path, files: Sequence[Path],
                data: dict[str, list[dict[str, Any]]]) -> list[tuple[Path, str, dict[str, Any], ReleaseOutcome]]:
    """(file, table, row, outcome) for every row to add: already-recorded rows are dropped, rows that
    contradict a recorded one are refused (said in the outcome), package-level keys copied."""
    from glmcompat.matrix.curate import row_identity
    from glmcompat.matrix.schema import load_file

    loaded = [(p, load_file(p)[0]) for p in files]
    existing: dict[tuple[str, Any], Any] = {}
    for table in ROW_ORDER:
        for r in data.get(table, []):
            ident = row_identity(table, r)
            if ident is not None:
                existing[(table, ident)] = _verdict(table, r)
    plan = []
    for o in outcomes:
        if o.failed:
            continue
        for table, row in sorted(o.rows, key=lambda tr: ROW_ORDER.get(tr[0], 9)):
            if table == "requires" and _floor_recorded(row, data.get("requires", [])):
                continue
            ident = row_identity(table, row)
            key = (table, ident)
            if ident is not None and key in existing:
                if existing[key] != _verdict(table, row):
                    o.unproved.append(f"the [[{table}]] row it proved contradicts the recorded one: not written; "
                                      "review by hand")
                continue
            if ident is not None:
                existing[key] = _verdict(table, row)
            row = _with_package_keys(table, row, data)
            plan.append((target_file(directory, loaded, table, row.get("package"), row.get("platform", "x86_64")),
                         table, row, o))
    return plan


def _floor_recorded(row: dict[str, Any], rows: Sequence[dict[str, Any]]) -> bool:
    """Whether a ``[[requires]]`` row covering the release already says the floor ``row`` proves (the rows hold
    together: a lower floor recorded for a range of releases, such as sglang>=0.5.9's flashinfer-python>=0.6.3,
    does not say it)."""
    version = str(row["versions"]).removeprefix("==")
    want = Requirement(row["requires"])
    return any(canonicalize_name(r["package"]) == canonicalize_name(row["package"])
               and canonicalize_name(Requirement(r["requires"]).name) == canonicalize_name(want.name)
               and Requirement(r["requires"]).specifier == want.specifier
               and SpecifierSet(r["versions"]).contains(version, prereleases=True) for r in rows)


def _with_package_keys(table: str, row: dict[str, Any], data: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    keys = PACKAGE_KEYS.get(table)
    if not keys:
        return row
    rows = [r for r in data.get(table, []) if r.get("package") == row.get("package") and not r.get("variant")
            and r.get("platform", "x86_64") == row.get("platform", "x86_64")]
    if not rows:
        return row
    out = dict(row)
    extra = {}
    for k in keys:
        values = {json.dumps(r.get(k)) for r in rows}
        if len(values) == 1 and rows[0].get(k) is not None:
            extra[k] = rows[0][k]
    if not extra:
        return row
    # keep evidence and source last, as the curated rows do
    tail: dict[str, Any] = {k: out.pop(k) for k in ("evidence", "source") if k in out}
    out.update(extra)
    out.update(tail)
    return out


def target_file(directory: Path, loaded: Sequence[tuple[Path, Any]], table: str, package: str | None,
                platform: str = "x86_64") -> Path:
    """The file a new ``table`` row about ``platform``'s wheel goes to: the last one holding a row of that
    table for the same package and platform, else the last one holding that table's rows of that platform,
    else (aarch64) the file holding most aarch64 rows, else the table's usual file."""
    def pkg_of(r: Any) -> str | None:
        return getattr(r, "package", None)

    def plat_of(r: Any) -> str:
        return str(getattr(r, "platform", "x86_64"))

    def rows(mf: Any) -> list[Any]:
        return [r for r in getattr(mf, table, ()) if plat_of(r) == platform]

    same = [p for p, mf in loaded if any(package is None or pkg_of(r) == package for r in rows(mf))]
    if same:
        return same[-1]
    own = [p for p, _ in loaded if package is not None and p.name == f"{package}.toml" and platform == "x86_64"]
    if own:  # the package's own file (torchcodec.toml, vllm.toml)
        return own[0]
    # the file holding most rows about the package's wheels of this platform (vllm.toml for vLLM), else the one
    # holding most rows of the table on this platform
    tables = platforms.PER_PLATFORM if table in platforms.PER_PLATFORM else (table,)
    most = max(((sum(pkg_of(r) == package and plat_of(r) == platform for t in tables for r in getattr(mf, t, ())), p)
                for p, mf in loaded), default=(0, directory), key=lambda np: np[0])
    if package is not None and most[0]:
        return most[1]
    most = max(((len(rows(mf)), p) for p, mf in loaded), default=(0, directory), key=lambda np: np[0])
    if most[0]:
        return most[1]
    if platform != "x86_64":
        counts = [(sum(plat_of(r) == platform for t in platforms.PER_PLATFORM for r in getattr(mf, t, ())), p)
                  for p, mf in loaded]
        best = max(counts, default=(0, directory), key=lambda np: np[0])
        if best[0]:
            return best[1]
        return directory / f"{platform}.toml"
    return directory / DEFAULT_FILES.get(table, "kernels.toml")


# ------------------------------------------------------------------------------------------------
# The refresh command
# ------------------------------------------------------------------------------------------------


MODEL_PACKAGES = ("transformers", "sglang", "vllm")  # a release of these can change [[model]] rows


@dataclass
class ModelUpdate:
    """A ``[[model]]`` row a refresh changed in place: the bounds newer releases add."""

    model_type: str
    file: str
    changed: dict[str, tuple[Any, Any]]  # key -> (before, after)

    def to_json(self) -> dict[str, Any]:
        return {"model_type": self.model_type, "file": self.file,
                "changed": {k: {"before": a, "after": b} for k, (a, b) in sorted(self.changed.items())}}


def refresh_models(index: IndexClient, cache: Cache | None, files: Sequence[Path], packages: Iterable[str], *,
                   dry_run: bool = False, jobs: int = DEFAULT_JOBS) -> tuple[list[ModelUpdate], int]:
    """Update the ``[[model]]`` rows in place from the releases of ``packages`` (of :data:`MODEL_PACKAGES`): a row
    gains the bound of a package whose first release knowing the model came out since it was derived
    (:func:`glmcompat.ops.modelprobe.update_row`). Reads the newest release of each package once (cached by its
    sha256), more only for a row that changes. Returns (updates, bytes fetched)."""
    from glmcompat.matrix.curate import replace_rows
    from glmcompat.matrix.rows import to_plain
    from glmcompat.matrix.schema import load_file
    from glmcompat.ops import modelprobe as mp

    chosen = [p for p in MODEL_PACKAGES if p in set(packages)]
    rows: list[tuple[Path, int, dict[str, Any]]] = []
    for path in files:
        mf, _ = load_file(path)
        rows += [(path, i, to_plain("model", r, exclude_none=True)) for i, r in enumerate(mf.model)]
    if not chosen or not rows:
        return [], 0

    def prober(package: str) -> mp.Prober:
        project = index.project(package)
        return mp.Prober(package, mp.final_releases(project), mp.cached_read(index, project, cache))

    probers = dict(zip(chosen, _map(prober, chosen, jobs), strict=True))
    _map(lambda p: p.look(p.versions[-1]) if p.versions else None, list(probers.values()), jobs)  # the newest, at once
    changes: list[tuple[Path, str, int, dict[str, Any]]] = []
    updates: list[ModelUpdate] = []
    for path, i, row in rows:
        new = mp.update_row(row, probers)
        if new is None:
            continue
        changes.append((path, "model", i, new))
        diff = {k: (row.get(k), new.get(k)) for k in mp.BOUNDS if row.get(k) != new.get(k)}
        updates.append(ModelUpdate(str(row["model_type"]), str(path), diff))
    if changes:
        replace_rows(files, changes, dry_run=dry_run)
    return updates, sum(p.bytes_fetched for p in probers.values())


@dataclass
class RefreshReport:
    matrix: str
    since: str | None
    dry_run: bool
    listings: list[Listing]
    outcomes: list[ReleaseOutcome] = field(default_factory=list)
    written: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    models: list[ModelUpdate] = field(default_factory=list)  # [[model]] rows changed in place
    models_bytes: int = 0
    models_failed: str | None = None  # why the [[model]] rows could not be refreshed

    @property
    def lacking(self) -> list[Candidate]:
        return [c for lst in self.listings for c in lst.lacking]

    @property
    def failed(self) -> list[ReleaseOutcome]:
        return [o for o in self.outcomes if o.failed]

    def to_json(self) -> dict[str, Any]:
        return {"version": SCHEMA_VERSION, "kind": "matrix-refresh", "matrix": self.matrix, "since": self.since,
                "dry_run": self.dry_run, "packages": [lst.to_json() for lst in self.listings],
                "lacking": [c.to_json() for c in self.lacking],
                "releases": [o.to_json() for o in self.outcomes],
                "written": dict(sorted(self.written.items())),
                "rows_written": sum(self.written.values()),
                "failed": len(self.failed), "seconds": round(self.seconds, 3),
                "models": [u.to_json() for u in self.models], "models_bytes": self.models_bytes,
                "models_failed": self.models_failed}


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


def refresh(*, index: IndexClient, cache: Cache, matrix: str | Path | None = None,
            packages: Sequence[str] | None = None, since: date | None = None, dry_run: bool = False,
            jobs: int = DEFAULT_JOBS, progress: bool | None = None, pre: bool = False,
            stream: TextIO | None = None, models: bool = True) -> RefreshReport:
    """List what the matrix lacks and (unless ``dry_run``) probe, write and report (library entry point); with
    ``models``, also update the ``[[model]]`` rows from the newest transformers, sglang and vLLM releases when the
    refresh covers them (:func:`refresh_models`)."""
    from glmcompat.matrix.schema import load_matrix

    t0 = time.perf_counter()
    directory, files = matrix_files(matrix)
    m = load_matrix(files)
    data = m.plain()
    tracked = tracked_packages(data)
    chosen = select_packages(tracked, packages)
    coverage = Coverage(data)

    def page(item: tuple[str, str]) -> Project:
        return index.project(item[0])

    projects = dict(zip([n for n, _ in chosen], _map(page, chosen, jobs), strict=True))
    listings = [list_lacking(projects[name], name, kind, coverage, since, pre, plat)
                for name, kind, plat in listings_of(tracked, data, chosen)]
    report = RefreshReport(str(directory), since.isoformat() if since else None, dry_run, listings)
    if dry_run:
        report.seconds = time.perf_counter() - t0
        return report
    _refresh_rows(report, index, cache, data, tracked, directory, files, jobs, progress, stream)
    if models:
        try:
            report.models, report.models_bytes = refresh_models(index, cache, matrix_files(matrix)[1],
                                                                [n for n, _ in chosen], jobs=jobs)
        except (EnvironmentFailure, InputError) as e:  # the index failed, or lacks a package: no row changed
            report.models_failed = e.one_line()
    report.seconds = time.perf_counter() - t0
    return report


def _refresh_rows(report: RefreshReport, index: IndexClient, cache: Cache, data: dict[str, list[dict[str, Any]]],
                  tracked: dict[str, str], directory: Path, files: Sequence[Path], jobs: int,
                  progress: bool | None, stream: TextIO | None) -> None:
    """Probe the lacking releases and add their rows (the per-release part of :func:`refresh`)."""
    from glmcompat.matrix.curate import add_rows

    cands = report.lacking
    if not cands:
        return
    prog = RefreshBar(len(cands), stream, progress)
    try:
        r = Refresher(index, cache, data, jobs=jobs, progress=prog, tracked=tracked)
        report.outcomes = r.run(cands)
    finally:
        prog.close()
    plan = plan_writes(report.outcomes, directory, files, data)
    if plan:
        added = add_rows(files, [(p, t, row) for p, t, row, _ in plan])
        for p, t, _, o in plan:
            o.written.append((t, str(p)))
        report.written = {str(p): len(v) for p, v in added.items()}


def make_index(index_url: str | None, jobs: int, cache: Cache) -> IndexClient:
    """The index client of a refresh / audit run (tests replace this to serve recorded pages)."""
    from glmcompat.edges.index import IndexClient

    return IndexClient(index_url, client=bounded_client(jobs), cache=cache)


def configure_refresh(p: Any) -> None:
    p.add_argument("--package", action="append", metavar="NAME", help="refresh only this package (repeatable; "
                   "default: every package the matrix tracks)")
    p.add_argument("--since", default=None, metavar="DATE", help="only releases uploaded on or after DATE (YYYY-MM-DD)")
    p.add_argument("--dry-run", action="store_true", help="list the releases the matrix lacks; probe and write nothing")
    p.add_argument("--json", action="store_true", help="versioned JSON on stdout")
    p.add_argument("--matrix", default=None, metavar="DIR",
                   help="the matrix directory to extend (default: the shipped one)")
    p.add_argument("--jobs", type=int, default=DEFAULT_JOBS, metavar="N",
                   help=f"parallel downloads (HTTP connections; default {DEFAULT_JOBS})")
    p.add_argument("--pre", action="store_true", help="include pre-releases and dev releases")
    p.add_argument("--index-url", default=None, metavar="URL", help="simple-API base URL (default: the installer's)")


def _check_jobs(jobs: int) -> int:
    if not 1 <= jobs <= 32:
        raise InputError(f"--jobs {jobs} is out of range (1..32)")
    return jobs


def run_refresh(args: Any) -> int:
    from glmcompat.edges.cache import Cache

    jobs = _check_jobs(args.jobs)
    since = parse_since(args.since)
    cache = Cache()
    with make_index(args.index_url, jobs, cache) as index:
        report = refresh(index=index, cache=cache, matrix=args.matrix, packages=args.package, since=since,
                         dry_run=args.dry_run, jobs=jobs, pre=args.pre)
    if args.json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2, sort_keys=True) + "\n")
    else:
        render_refresh(report, sys.stdout)
    if report.failed:
        if not args.json:
            sys.stderr.write(f"error: the index failed for {len(report.failed)} release(s); nothing was written for "
                             f"them (run again to continue): {report.failed[0].failed}\n")
        return EnvironmentFailure.exit_code
    if report.models_failed:
        if not args.json:
            sys.stderr.write(f"error: the [[model]] rows were not refreshed: {report.models_failed}\n")
        return EnvironmentFailure.exit_code
    return 0


def _day(t: datetime | None) -> str:
    return t.strftime("%Y-%m-%d") if t else "upload time unknown"


def render_refresh(report: RefreshReport, out: TextIO) -> None:
    w = out.write
    for lst in report.listings:
        if lst.kind == "model":
            w(f"{lst.package}: {lst.on_index} release(s) on the index; no per-release rows (its model support is "
              "judged by [[model]] rows, which a refresh updates in place)\n")
            continue
        on = "" if lst.platform == "x86_64" else f" ({lst.platform} wheels)"
        if not lst.lacking:
            w(f"{lst.package}{on}: nothing lacking from [[{KIND_TABLE[lst.kind]}]] ({lst.on_index} release(s) on the "
              "index)\n")
        else:
            w(f"{lst.package}{on}: {len(lst.lacking)} release(s) lacking from [[{KIND_TABLE[lst.kind]}]]\n")
            if report.dry_run:
                for c in lst.lacking:
                    probed = "  (has [[abi_probe]] rows)" if c.probed else ""
                    w(f"  {c.version:<16} {_day(c.uploaded)}{probed}\n")
        for v, why in lst.skipped:
            w(f"  {v}: skipped, {why}\n")
    if report.dry_run:
        w(f"{len(report.lacking)} release(s) lacking; dry run: nothing probed or written\n")
        return
    for o in report.outcomes:
        src = " (journal)" if o.journaled else ""
        on = "" if o.platform == "x86_64" else f" ({o.platform})"
        w(f"{o.package} {o.version}{on} [[{KIND_TABLE[o.kind]}]]: {o.status}{src}\n")
        for p in o.proved:
            w(f"    proved: {p}\n")
        for u in o.unproved:
            w(f"    not proved: {u}\n")
        if o.failed:
            w(f"    failed: {o.failed}\n")
        for t, f in o.written:
            w(f"    + [[{t}]] -> {f}\n")
    if report.written:
        files = ", ".join(f"{f} (+{n})" for f, n in sorted(report.written.items()))
        w(f"wrote {sum(report.written.values())} row(s): {files}\n")
    else:
        w("nothing new to write\n")
    for mu in report.models:
        ch = ", ".join(f"{k} {_show(a)} -> {b}" for k, (a, b) in sorted(mu.changed.items()))
        w(f"[[model]] {mu.model_type}: {ch} -> {mu.file}\n")
    if report.models_failed:
        w(f"[[model]] rows not refreshed: {report.models_failed}\n")


# ------------------------------------------------------------------------------------------------
# Audit
# ------------------------------------------------------------------------------------------------


@dataclass
class Check:
    file: str
    line: int | None
    table: str
    package: str
    version: str
    what: str  # the claim checked: "torch", "cuda", "requires", "vs torch 2.9.1", "gpu code"
    claimed: Any
    found: Any = None
    status: str = "pending"  # ok | drift | unverifiable | error
    detail: str = ""
    row: dict[str, Any] = field(default_factory=dict, repr=False)
    platform: str = "x86_64"  # the machine whose wheels the row is about, and which are read

    @property
    def where(self) -> str:
        f = self.file
        try:
            rel = os.path.relpath(f)
            f = rel if not rel.startswith("..") else f
        except ValueError:
            pass
        return f"{f}:{self.line}" if self.line else f

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "table": self.table, "package": self.package,
                "version": self.version, "platform": self.platform, "field": self.what, "claimed": self.claimed,
                "found": self.found, "status": self.status, "detail": self.detail}


def audit_checks(files: Sequence[Path], *, deep: bool = False, packages: Sequence[str] | None = None) -> list[Check]:
    """Every machine-checkable claim of the matrix files, in file order (pure: reads only the files)."""
    from glmcompat.matrix.rows import to_plain
    from glmcompat.matrix.schema import _locate, load_file

    wanted = {str(canonicalize_name(p)) for p in packages} if packages else None
    out: list[Check] = []
    for path in files:
        mf, text = load_file(path)

        def add(table: str, i: int, pkg: str, ver: str, fld: str, claimed: Any, row: dict[str, Any],
                key: str | None = None, path: Path = path, text: str = text) -> None:
            if wanted is None or pkg in wanted:
                out.append(Check(str(path), _locate(text, table, i, key), table, pkg, ver, fld, claimed, row=row,
                                 platform=str(row.get("platform") or "x86_64")))

        for i, r in enumerate(mf.family):
            if r.evidence == "metadata":
                for v, spec in r.pairs.items():
                    add("family", i, r.package, v, "torch", spec, to_plain("family", r), v)
        for i, r in enumerate(getattr(mf, "kernel", ())):
            if r.evidence == "metadata" and not r.variant:
                for v in r.versions:
                    add("kernel", i, r.package, v, "torch", f"=={r.torch}", to_plain("kernel", r), "torch")
        for i, r in enumerate(getattr(mf, "release", ())):
            if r.evidence == "metadata":
                add("release", i, r.package, r.version, "requires", sorted(r.requires), to_plain("release", r),
                    "requires")
        for i, r in enumerate(getattr(mf, "torch", ())):
            if not r.variant:
                for v in r.versions:
                    add("torch", i, "torch", v, "cuda", r.cuda, to_plain("torch", r), "cuda")
        if deep:
            for i, r in enumerate(getattr(mf, "kernel", ())):
                if r.cuda and not r.variant:  # a labelled variant is not on the package index
                    for v in r.versions:
                        add("kernel", i, r.package, v, CUBIN_CUDA, r.cuda, to_plain("kernel", r), "cuda")
            for i, r in enumerate(getattr(mf, "abi_probe", ())):
                add("abi_probe", i, r.package, r.version, f"vs torch {r.torch}",
                    {"compatible": r.compatible, "missing": r.missing}, to_plain("abi_probe", r), "compatible")
            for i, r in enumerate(getattr(mf, "arch_probe", ())):
                if not r.variant:
                    add("arch_probe", i, r.package, r.version, "gpu code",
                        {"sass": list(r.sass), "ptx": list(r.ptx)}, to_plain("arch_probe", r), "sass")
    return out


class Auditor:
    def __init__(self, index: IndexClient, cache: Cache, tracked: dict[str, str],
                 patterns: dict[str, list[str]]) -> None:
        self.index = index
        self.cache = cache
        self.tracked = tracked
        self.patterns = patterns

    def _metadata(self, pkg: str, version: str, platform: str = "x86_64") -> tuple[IndexFile, str, str]:
        """(wheel, its Python tag, its requirements on Linux ``platform``): the wheel the row is about."""
        project = self.index.project(pkg)
        files = group_files(project).get(Version(version), [])
        if not files:
            raise _NotOnIndex(f"{pkg} {version} is not on the index")
        picked = pick_wheel(files, platform)
        if picked is None:
            raise _NotOnIndex(f"{pkg} {version} has no wheel for CPython on Linux {platform}")
        wheel, py = picked
        return wheel, py, self.index.wheel_metadata(wheel)

    def run(self, c: Check) -> None:
        try:
            self._run(c)
        except _NotOnIndex as e:
            c.status, c.found, c.detail = "drift", None, str(e)
        except EnvironmentFailure:
            raise
        except GlmcompatError as e:
            c.status, c.detail = "error", e.one_line()

    def _run(self, c: Check) -> None:
        if c.what == CUBIN_CUDA:
            self._cubin_cuda(c)
            return
        if c.table in ("family", "kernel", "release", "torch"):
            wheel, py, text = self._metadata(c.package, c.version, c.platform)
            reqs = requirements(text, py, c.platform)
            c.detail = f"{wheel.filename} METADATA"
            if c.table == "torch":
                cuda = cuda_of(reqs)
                if cuda is None and c.claimed is None:  # a CPU-only build (torch's aarch64 wheels to 2.10.0)
                    c.status, c.detail = "ok", f"{wheel.filename}: no CUDA runtime pinned in METADATA (a CPU-only build)"
                    return
                if cuda is None:
                    c.status, c.detail = "unverifiable", f"{wheel.filename}: no CUDA runtime pinned in METADATA"
                    return
                c.found = cuda[0]
                c.status = "ok" if cuda[0] == c.claimed else "drift"
                return
            if c.table == "release":
                claimed_names = {str(canonicalize_name(Requirement(x).name)) for x in c.claimed}
                keep = set(self.tracked) | claimed_names
                keep.discard(c.package)
                found, _ = release_pins(text, c.package, sorted(keep), py)
                c.found = found
                c.status = "ok" if _req_map(found) == _req_map(c.claimed) else "drift"
                return
            tr = torch_requirement(reqs)
            c.found = str(tr[0]) if tr else None
            if tr is None:
                c.status = "drift"
                c.detail += ": no torch requirement"
                return
            c.status = "ok" if _same_spec(str(tr[0]), c.claimed) else "drift"
            return
        if c.table == "abi_probe":
            from glmcompat.ops.wheelprobe import probe_abi

            from glmcompat.matrix.curate import abi_command

            torch = c.row["torch"]
            r = probe_abi(c.package, c.version, torch, index=self.index, cache=self.cache, torch_python=TORCH_PYTHON,
                          platform=PLATFORM_TAGS[c.platform])
            c.found = {"compatible": r.ok, "missing": len(r.missing)}
            c.detail = abi_command(c.package, c.version, torch, r.wheel, c.platform)
            c.status = "ok" if c.found == c.claimed else "drift"
            return
        if c.table == "arch_probe":
            from glmcompat.matrix.curate import arch_command

            a = arch_probe(c.package, c.version, index=self.index, cache=self.cache,
                           patterns=self.patterns.get(c.package, []), platform=c.platform)
            c.found = {"sass": list(a.sass), "ptx": list(a.ptx)}
            c.detail = arch_command(c.package, c.version, a.wheel, c.platform)
            c.status = "ok" if (set(a.sass), set(a.ptx)) == (set(c.claimed["sass"]), set(c.claimed["ptx"])) else "drift"
            return
        c.status = "unverifiable"  # pragma: no cover


    def _cubin_cuda(self, c: Check) -> None:
        """A kernel row's ``cuda`` against the CUDA release that built the cubins of the release's main modules
        (as :func:`glmcompat.ops.wheelprobe.kernel_cuda_drift` judges a row: one release and no other)."""
        from glmcompat.matrix.curate import arch_command
        from glmcompat.ops.wheelprobe import probe_toolkit

        r = probe_toolkit(c.package, c.version, index=self.index, cache=self.cache,
                          platform=PLATFORM_TAGS[c.platform], modules=self.patterns.get(c.package) or None)
        c.found = r.toolkits
        read = f"{r.bytes_fetched} bytes read" if r.bytes_fetched else "cached"
        c.detail = f"{r.wheel}: the toolkit in its cubins' headers, {read} (`" \
            + arch_command(c.package, c.version, r.wheel, c.platform) + " --json`: toolkits)"
        if not r.toolkits:
            c.status = "unverifiable"
            c.detail = f"{r.wheel}: no cubin in its main modules"
            return
        c.status = "ok" if r.toolkits == [c.claimed] else "drift"


class _NotOnIndex(Exception):
    pass


def _req_map(reqs: Iterable[str]) -> dict[str, frozenset[Any]]:
    out: dict[str, frozenset[Any]] = {}
    for x in reqs:
        r = Requirement(x)
        out[str(canonicalize_name(r.name))] = frozenset(r.specifier)
    return out


@dataclass
class AuditReport:
    matrix: str
    checks: list[Check]
    total: int
    deep: bool
    seconds: float = 0.0

    def count(self, status: str) -> int:
        return sum(1 for c in self.checks if c.status == status)

    def to_json(self) -> dict[str, Any]:
        return {"version": SCHEMA_VERSION, "kind": "matrix-audit", "matrix": self.matrix, "deep": self.deep,
                "checks_total": self.total, "checks": [c.to_json() for c in self.checks],
                "drift": [c.to_json() for c in self.checks if c.status == "drift"],
                "summary": {s: self.count(s) for s in ("ok", "drift", "unverifiable", "error")},
                "seconds": round(self.seconds, 3)}


def audit(*, index: IndexClient, cache: Cache, matrix: str | Path | None = None,
          packages: Sequence[str] | None = None, sample: int | None = None, seed: int = 0, deep: bool = False,
          jobs: int = DEFAULT_JOBS) -> AuditReport:
    from glmcompat.matrix.schema import load_matrix

    t0 = time.perf_counter()
    directory, files = matrix_files(matrix)
    data = load_matrix(files).plain()
    tracked = tracked_packages(data)
    if packages:
        probed = {r["package"]: "probe" for t in ("abi_probe", "arch_probe") for r in data.get(t, [])}
        select_packages({**tracked, **probed}, packages)  # an unknown name is an error (exit 2)
    checks = audit_checks(files, deep=deep, packages=packages)
    total = len(checks)
    if sample is not None and sample < total:
        picked = set(random.Random(seed).sample(range(total), sample))
        checks = [c for i, c in enumerate(checks) if i in picked]
    patterns = {r["package"]: list(r["modules"]) for r in data.get("primary_modules", [])}
    auditor = Auditor(index, cache, tracked, patterns)
    _map(auditor.run, checks, jobs)
    return AuditReport(str(directory), checks, total, deep, time.perf_counter() - t0)


def configure_audit(p: Any) -> None:
    p.add_argument("--package", action="append", metavar="NAME", help="audit only this package's rows (repeatable)")
    p.add_argument("--sample", type=int, default=None, metavar="N",
                   help="check N claims chosen at random (--seed)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="random seed of --sample (default 0)")
    p.add_argument("--deep", action="store_true",
                   help="also re-run the probes behind [[abi_probe]] and [[arch_probe]] rows")
    p.add_argument("--json", action="store_true", help="versioned JSON on stdout")
    p.add_argument("--matrix", default=None, metavar="DIR", help="the matrix directory (default: the shipped one)")
    p.add_argument("--jobs", type=int, default=DEFAULT_JOBS, metavar="N",
                   help=f"parallel downloads (default {DEFAULT_JOBS})")
    p.add_argument("--index-url", default=None, metavar="URL", help="simple-API base URL (default: the installer's)")


def run_audit(args: Any) -> int:
    from glmcompat.edges.cache import Cache

    jobs = _check_jobs(args.jobs)
    if args.sample is not None and args.sample < 1:
        raise InputError(f"--sample {args.sample}: expected a positive number")
    cache = Cache()
    with make_index(args.index_url, jobs, cache) as index:
        report = audit(index=index, cache=cache, matrix=args.matrix, packages=args.package, sample=args.sample,
                       seed=args.seed, deep=args.deep, jobs=jobs)
    if args.json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2, sort_keys=True) + "\n")
    else:
        render_audit(report, sys.stdout)
    return 1 if report.count("drift") else 0


def _show(x: Any) -> str:
    if x is None:
        return "nothing"
    if isinstance(x, list):
        return ", ".join(map(str, x)) or "[]"
    if isinstance(x, dict):
        return " ".join(f"{k}={_show(v) if isinstance(v, list) else v}" for k, v in x.items())
    return str(x)


def render_audit(report: AuditReport, out: TextIO) -> None:
    w = out.write
    for c in report.checks:
        if c.status == "ok":
            continue
        head = {"drift": "DRIFT", "error": "ERROR", "unverifiable": "UNVERIFIABLE"}.get(c.status, c.status.upper())
        on = "" if c.platform == "x86_64" else f" ({c.platform})"
        w(f"{head} {c.where} [[{c.table}]] {c.package} {c.version}{on} {c.what}: claimed {_show(c.claimed)}, "
          f"found {_show(c.found)}" + (f" ({c.detail})" if c.detail else "") + "\n")
    sampled = f" (a sample of {len(report.checks)} of {report.total})" if len(report.checks) < report.total else ""
    w(f"{len(report.checks)} claim(s) checked{sampled}: {report.count('ok')} ok, {report.count('drift')} drift, "
      f"{report.count('unverifiable')} unverifiable, {report.count('error')} error\n")

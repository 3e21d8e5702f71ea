"""A fast, plain-Python view of the validated matrix, for hot paths (``glmcompat check``).

Loading the pydantic models costs a few hundred milliseconds; the check must answer in tens.
So the validated matrix is dumped once to JSON in the user cache directory, keyed by the matrix
files' paths and content (and glmcompat's code), and later runs read that JSON (a few hundred
microseconds) once its digest line and shape check out. Queries here work on plain dicts;
:class:`glmcompat.matrix.Matrix` offers the typed API over the same data.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .errors import GlmcompatError, InputError

Row = dict[str, Any]

# The Linux machines glmcompat judges: a lock's environments, the wheels a probe reads and the matrix rows
# about wheels (``platform`` on [[torch]], [[kernel]], [[arch_probe]], [[abi_probe]]; absent: x86_64) are
# each for one of them. The aarch64 wheels are separate builds (torch's default aarch64 wheels up to 2.10.0
# carry no CUDA at all), so a fact about one platform's wheel says nothing about the other's.
PLATFORMS = ("x86_64", "aarch64")
PER_PLATFORM = frozenset({"torch", "kernel", "arch_probe", "abi_probe"})


def check_platform(platform: str) -> str:
    """``platform`` when it is one of :data:`PLATFORMS` (``arm64`` and ``amd64`` read as their Linux names);
    :class:`InputError` otherwise."""
    p = {"arm64": "aarch64", "amd64": "x86_64", "x86-64": "x86_64"}.get(platform.strip().lower(), platform.strip().lower())
    if p not in PLATFORMS:
        raise InputError(f"unknown platform {platform!r} (known: {', '.join(PLATFORMS)})")
    return p


def target_platforms(target: Row) -> list[str]:
    """The platforms some product of ``target`` (a [[target]] row) ships on, x86_64 first."""
    plats = target.get("platforms") or {}
    have = {p for v in plats.values() for p in v} if plats else {"x86_64"}
    return [p for p in PLATFORMS if p in have]


def products_on(target: Row, platform: str) -> list[str]:
    """The products of ``target`` that ship on ``platform`` (H100, H200 on x86_64; GH200 on aarch64)."""
    plats = target.get("platforms") or {}
    return [p for p in target.get("products", []) if platform in (plats.get(p) or (["x86_64"] if not plats else []))]


def cache_dir() -> Path:
    """glmcompat's user cache directory (``GLMCOMPAT_CACHE_DIR`` overrides)."""
    env = os.environ.get("GLMCOMPAT_CACHE_DIR")
    if env:
        return Path(env)
    if os.name == "posix" and not sys.platform.startswith("darwin"):
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / "glmcompat"
    import platformdirs

    return Path(platformdirs.user_cache_dir("glmcompat"))


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a unique temporary file in the same directory and a rename:
    readers never see half a file, and concurrent writers never share a temporary name."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:40]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


MAX_INPUT = 64 << 20  # bytes of one input file (a lock, a requirements file, a matrix file)


def read_input(path: Path, error: type[GlmcompatError], what: str, limit: int = MAX_INPUT) -> bytes:
    """The bytes of a user-named input file, or ``error`` (one line naming the file) — never a traceback.
    Only a regular file is read: a FIFO or a device is refused at once (opened without blocking, never
    read), and so is a file over ``limit`` bytes."""
    import stat

    p = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise error(f"is a directory, not {what}", path=p) from None
    except FileNotFoundError:
        raise error("no such file", path=p) from None
    except (OSError, ValueError) as e:
        raise error(f"cannot read: {getattr(e, 'strerror', None) or e}", path=p) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise error(f"is a directory, not {what}", path=p)
        if not stat.S_ISREG(st.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "a device"
            raise error(f"is {kind}, not a regular file; glmcompat reads {what} from a regular file only", path=p)
        if st.st_size > limit:
            raise error(f"is {st.st_size} bytes, more than the {limit >> 20} MiB glmcompat reads as {what}", path=p)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:  # grew while being read
                raise error(f"is more than the {limit >> 20} MiB glmcompat reads as {what}", path=p)
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as e:
        raise error(f"cannot read: {e.strerror or e}", path=p) from None
    finally:
        os.close(fd)


def _matrix_files(paths: Sequence[str | Path] | None) -> list[Path]:
    if paths:
        out: list[Path] = []
        for p in paths:
            pp = Path(p)
            out.extend(sorted(pp.glob("*.toml")) if pp.is_dir() else [pp])
        return out
    return sorted(default_matrix_dir().glob("*.toml"))


def default_matrix_dir() -> Path:
    """The shipped matrix: ``glmcompat/matrices`` in a wheel, ``matrices/`` in a source checkout."""
    here = Path(__file__).resolve().parent
    for cand in (here / "matrices", here.parent / "matrices"):
        if cand.is_dir():
            return cand
    from .errors import MatrixError

    raise MatrixError("the shipped matrix is missing (no matrices/ beside the glmcompat package)")


def canonicalize(name: str) -> str:
    """PEP 503 name normalization (as packaging.utils.canonicalize_name, without its import cost)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def local_cuda(version: str) -> str | None:
    """'13.0' for a ``+cu130`` local label (also ``+cu13torch2.10``-style kernel labels), else None."""
    i = version.find("+")
    if i < 0:
        return None
    m = re.match(r"cu(\d+)", version[i + 1:].lower())
    if not m:
        return None
    d = m.group(1)
    if len(d) <= 2:
        return f"{d}.0"
    return f"{d[:-1]}.{d[-1]}"


def load_facts(paths: Sequence[str | Path] | None = None) -> Facts:
    """The matrix as :class:`Facts`, validated once and then served from the cache."""
    files = _matrix_files(paths)
    from ._fingerprint import code_fingerprint

    # keyed by the files' content (an edit that keeps the size and the mtime is still seen); each file is
    # read as any input is (regular files only, size-capped): the validating loader names what is wrong
    h = hashlib.blake2b(code_fingerprint().encode(), digest_size=16)
    try:
        for f in files:
            h.update(f"{f.resolve()}\0".encode("utf-8", "surrogateescape"))
            h.update(hashlib.blake2b(read_input(f, InputError, "a matrix file")).digest())
    except (OSError, InputError):
        files = []  # let the validating loader name the missing file
    key = h.hexdigest()
    cached = cache_dir() / f"matrix-{key}.json"
    if files:
        data = _cached_matrix(cached)
        if data is not None:
            return Facts(data, key)
    from .matrix import load_matrix

    m = load_matrix(paths)
    data = m.plain()
    if files:
        body = json.dumps(data, sort_keys=True).encode()
        try:  # a digest line first: a truncated or edited entry is a miss, never wrong facts
            atomic_write(cached, hashlib.blake2b(body, digest_size=16).hexdigest().encode() + b"\n" + body)
        except OSError:
            pass  # a read-only cache only costs speed
    return Facts(data, key)


def _cached_matrix(path: Path) -> dict[str, list[Row]] | None:
    """The plain matrix a cache entry holds, when its digest line matches its body and its shape is a
    matrix's ({table: [row, ...]}); None (a miss, rewritten by the caller) otherwise."""
    try:
        raw = path.read_bytes()
        digest, _, body = raw.partition(b"\n")
        if hashlib.blake2b(body, digest_size=16).hexdigest().encode() != digest:
            return None
        data = json.loads(body)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not all(isinstance(rows, list) and all(isinstance(r, dict) for r in rows)
                                             for rows in data.values()):
        return None
    return data


def _v(text: str) -> Any:
    from packaging.version import Version

    return Version(text)


class Facts:
    """Queries over the plain matrix data (rows are dicts shaped like the TOML rows)."""

    def __init__(self, data: dict[str, list[Row]], key: str = "", platform: str = "x86_64") -> None:
        self.data = data
        self.key = key  # identifies the matrix files (paths and content) and glmcompat's code
        self.platform = check_platform(platform)
        self._kernels: dict[tuple[str, Any], int] | None = None
        self._filtered: dict[str, list[Row]] = {}
        self._views: dict[str, Facts] = {platform: self}

    def on(self, platform: str) -> Facts:
        """The same facts, answering for the wheels of ``platform`` (a view sharing the data)."""
        p = check_platform(platform)
        view = self._views.get(p)
        if view is None:
            view = self._views[p] = Facts(self.data, self.key, p)
            view._views = self._views
        return view

    def rows(self, table: str) -> list[Row]:
        """The rows of ``table``; of the per-platform tables, only those about this view's platform."""
        if table not in PER_PLATFORM:
            return self.data.get(table, [])
        got = self._filtered.get(table)
        if got is None:
            got = self._filtered[table] = [r for r in self.data.get(table, [])
                                           if r.get("platform", "x86_64") == self.platform]
        return got

    def all_rows(self, table: str) -> list[Row]:
        """The rows of ``table`` for every platform (in file order)."""
        return self.data.get(table, [])

    def platforms_of(self, table: str, package: str, version: str) -> list[str]:
        """The platforms for which ``table`` holds a row about ``package==version`` (the public version)."""
        pv = _v(_v(version).public)
        out = set()
        for r in self.data.get(table, []):
            if table == "torch":
                if package == "torch" and any(_v(x) == pv for x in r["versions"]):
                    out.add(r.get("platform", "x86_64"))
            elif r.get("package") == package and any(_v(x) == pv for x in (r.get("versions") or [r.get("version")])):
                out.add(r.get("platform", "x86_64"))
        return [p for p in PLATFORMS if p in out]

    # -- targets ----------------------------------------------------------------------------------
    def _named(self, table: str, key: str, value: str, what: str) -> Row:
        """The row of ``table`` whose ``key`` is ``value``; InputError listing the known ones otherwise."""
        for r in self.rows(table):
            if r[key] == value:
                return r
        known = ", ".join(sorted(r[key] for r in self.rows(table)))
        raise InputError(f"unknown {what} {value!r} (known: {known})")

    def target(self, name: str) -> Row:
        key = name.strip().lower().replace("_", "")
        for t in self.rows("target"):
            if t["name"] == key or t["compute_capability"] == name:
                return t
        known = ", ".join(t["name"] for t in self.rows("target"))
        raise InputError(f"unknown target {name!r} (known: {known})")

    # -- kernels ----------------------------------------------------------------------------------
    def kernel_index(self, package: str, version: str) -> int | None:
        """Index into ``kernel`` of the row for ``package==version``: the row of its labelled variant
        (``0.3.21+cu130``) where one is recorded, else the release's own row (public version)."""
        if self._kernels is None:
            self._kernels = {}
            for i, k in enumerate(self.rows("kernel")):
                for v in k["versions"]:
                    self._kernels[(k["package"], _v(v), k.get("variant"))] = i
        pv = _v(version)
        base = _v(pv.public)
        if pv.local is not None:
            i = self._kernels.get((package, base, pv.local))
            if i is not None:
                return i
        return self._kernels.get((package, base, None))

    def kernel(self, package: str, version: str) -> Row | None:
        i = self.kernel_index(package, version)
        return None if i is None else self.rows("kernel")[i]

    def kernel_cuda(self, package: str, version: str) -> str | None:
        """The CUDA runtime a kernel wheel links: its variant row's, else its ``+cuXYZ`` label's, else the
        release row's (a label never turns a known release into an unknown one)."""
        row = self.kernel(package, version)
        label = local_cuda(version)
        if row is not None and row.get("variant") and row["variant"] == _v(version).local:
            return row.get("cuda")
        if label is not None:
            return label
        return row.get("cuda") if row else None

    def kernel_packages(self) -> set[str]:
        """Packages that are compiled torch extensions (rows on any platform: a kernel with rows only for
        x86_64 is still an extension on aarch64, and unknown there)."""
        return {k["package"] for k in self.all_rows("kernel")}

    def kernels_of(self, packages: set[str]) -> Iterator[tuple[str, Row]]:
        """(version, row) for every known release of ``packages`` (the index's builds, not labelled variants)."""
        for k in self.rows("kernel"):
            if k["package"] in packages and not k.get("variant"):
                for v in k["versions"]:
                    yield v, k

    def mismatch_severity(self, package: str) -> str:
        """'warning' for packages whose extension load failure is survivable (torchao), else 'error'."""
        sev = {k.get("on_mismatch", "error") for k in self.all_rows("kernel") if k["package"] == package}
        return "warning" if sev == {"warning"} else "error"

    def compatible_torches(self, package: str, version: str) -> set[str]:
        """Torch versions an ABI probe found ``package==version`` compatible with."""
        v = _v(_v(version).public)
        return {str(_v(p["torch"])) for p in self.rows("abi_probe")
                if p["package"] == package and _v(p["version"]) == v and p["compatible"]}

    def abi_verdict(self, package: str, version: str, torch: str) -> Row | None:
        v, t = _v(_v(version).public), _v(_v(torch).public)
        for p in self.rows("abi_probe"):
            if p["package"] == package and _v(p["version"]) == v and _v(p["torch"]) == t:
                return p
        return None

    def abi_equal(self, a: str, b: str) -> Row | None:
        """The row proving that torch ``a`` and ``b`` export the same symbols (None: not shown)."""
        va, vb = _v(_v(a).public), _v(_v(b).public)
        if va == vb:
            return {"evidence": "metadata", "source": "the same torch release"}
        for r in self.rows("abi_equal"):
            vs = {_v(x) for x in r["torch"]}
            if va in vs and vb in vs:
                return r
        return None

    # -- torch ------------------------------------------------------------------------------------
    def torch_index(self, version: str) -> int | None:
        """Index into ``torch`` of the row for the wheel ``version``: the variant row its local label
        names (``2.9.1+cu128``), or the default wheel's row when it has no label or the default's label.
        None when that build is not recorded."""
        v = _v(version)
        pub = _v(v.public)
        default = None
        for i, t in enumerate(self.rows("torch")):
            if not any(_v(x) == pub for x in t["versions"]):
                continue
            variant = t.get("variant")
            if variant is None:
                default = i
                if v.local is None or (t.get("cuda") and v.local == "cu" + t["cuda"].replace(".", "")):
                    return i
            elif v.local == variant:
                return i
        return None if v.local is not None else default

    def torch_build(self, version: str) -> Row | None:
        i = self.torch_index(version)
        return None if i is None else self.rows("torch")[i]

    def torch_cuda(self, version: str) -> str | None:
        """CUDA runtime of a torch wheel: from its local label (``+cu126`` -> '12.6', ``+cpu`` -> ''), else the default's."""
        local = _v(version).local
        if local == "cpu":
            return ""
        label = local_cuda(version)
        if label is not None:
            return label
        tb = self.torch_build(version)
        if tb is None:
            return None
        return tb.get("cuda") or ""  # a CPU-only build: no CUDA

    def gpu_code(self, package: str, version: str) -> tuple[list[str], list[str], Row] | None:
        """(SASS, PTX, evidence row) of the wheel ``package==version``; None when unknown."""
        v = _v(version)
        for p in self.rows("arch_probe"):
            if p["package"] == package and _v(p["version"]) == _v(v.public) and p.get("variant") == v.local:
                return p["sass"], p.get("ptx") or [], p
        if package == "torch":
            if v.local == "cpu":
                return [], [], {"evidence": "metadata", "source": "the +cpu local label: a CPU-only build"}
            tb = self.torch_build(version)
            return (tb["sass"], tb.get("ptx") or [], tb) if tb else None
        for p in self.rows("arch_probe"):
            if p["package"] == package and _v(p["version"]) == _v(v.public) and not p.get("variant"):
                return p["sass"], p.get("ptx") or [], p
        k = self.kernel(package, version)
        if k is not None and k.get("sass") is not None:
            return k["sass"], k.get("ptx") or [], k
        return None

    def torch_common_code(self, version: str) -> tuple[list[str], Row] | None:
        """For a torch build whose variant is not recorded (``2.10.0+cu129``): the SASS that every recorded
        build of the same release carries (at least two of them), as a lower bound. A target that code runs
        on is covered whatever the unrecorded build adds or drops at the edges; one it does not run on stays
        unknown (absence from the intersection proves nothing)."""
        pub = _v(_v(version).public)
        builds = [t for t in self.rows("torch") if any(_v(x) == pub for x in t["versions"])]
        if len(builds) < 2:
            return None
        common = set(builds[0]["sass"])
        for b in builds[1:]:
            common &= set(b["sass"])
        if any(not b.get("cuda") for b in builds):
            return None  # a CPU-only build of the release: the builds share no GPU code to rely on
        labels = sorted(("+" + b["variant"]) if b.get("variant") else f"default (+cu{b['cuda'].replace('.', '')})" for b in builds)
        row = {"evidence": "inferred",
               "source": f"the SASS every recorded build of torch {pub} carries ({', '.join(labels)}): "
                         f"the unrecorded +{_v(version).local} build is taken to carry at least that"}
        return sorted(common, key=lambda c: (len(c), c)), row

    # -- pairs and families -----------------------------------------------------------------------
    def family(self, package: str, version: str) -> tuple[str, Row] | None:
        """(torch specifier, row) that ``torchvision``/``torchaudio`` ``version`` was built for."""
        v = _v(_v(version).public)
        for f in self.rows("family"):
            if f["package"] == package:
                for ver, spec in f["pairs"].items():
                    if _v(ver) == v:
                        return spec, f
        return None

    def family_packages(self) -> set[str]:
        return {f["package"] for f in self.rows("family")}

    def family_for_torch(self, package: str, torch: str) -> str | None:
        """The newest ``package`` release built for exactly ``torch`` (an ``==`` pin); failing that, the
        newest whose torch requirement admits it (torchvision 0.29.1: ``>=2.14.0``)."""
        from packaging.specifiers import SpecifierSet

        t = _v(_v(torch).public)
        exact = None
        admits = None
        for f in self.rows("family"):
            if f["package"] != package:
                continue
            for ver, spec in f["pairs"].items():
                if spec.startswith("==") and "*" not in spec:
                    if _v(spec[2:]) == t and (exact is None or _v(ver) > exact):
                        exact = _v(ver)
                elif SpecifierSet(spec).contains(t, prereleases=True) and (admits is None or _v(ver) > admits):
                    admits = _v(ver)
        best = exact or admits
        return str(best) if best else None

    def primary_modules(self, package: str) -> tuple[str, ...]:
        """Glob patterns of the modules whose GPU code decides for ``package`` (empty: every module)."""
        for r in self.rows("primary_modules"):
            if r["package"] == package:
                return tuple(r["modules"])
        return ()

    def jit(self, package: str, version: str) -> Row | None:
        from packaging.specifiers import SpecifierSet

        for j in self.rows("jit"):
            if j["package"] == package and SpecifierSet(j["versions"]).contains(version, prereleases=True):
                return j
        return None

    def model(self, model_type: str) -> Row:
        return self._named("model", "model_type", model_type, "model type")

    def target_requirements(self, target: str) -> list[Row]:
        return [r for r in self.rows("target_requirement") if target in r["targets"]]

    def stack(self, name: str) -> Row:
        return self._named("stack", "name", name, "stack")

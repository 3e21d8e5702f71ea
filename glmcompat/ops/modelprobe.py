"""Which releases know a model: the probe behind the ``[[model]]`` rows (``matrix refresh``, ``scripts/model_support.py``).

Each package says what it knows in its own files, read out of the published wheels by HTTP range requests
(the central directory and the members named here; no wheel is downloaded whole):

* transformers: the ``model_type`` keys of ``CONFIG_MAPPING_NAMES``, in ``models/auto/configuration_auto.py``
  up to 4.x and in ``models/auto/auto_mappings.py`` (generated, imported by configuration_auto.py) in the 5.x line;
* sglang: the ``EntryClass`` of each ``sglang/srt/models/*.py`` (its ``ModelRegistry`` imports every module of that
  package and registers the classes ``EntryClass`` names; the members sit next to each other in the wheel, so one
  range request of at most a few MB holds them all);
* vLLM: the quoted architecture keys of ``vllm/model_executor/models/registry.py``.

:func:`first_knowing` finds the first release from which every later release knows a name (bisection over the
final releases, then the release before it and the newest are read as well). Parsing is pure; the reading goes
through :mod:`glmcompat.edges`. The rows :func:`model_row` and :func:`update_row` make are
:class:`glmcompat.matrix.rows.ModelSupport` rows, checked against the matrix schema
(:func:`glmcompat.matrix.curate.check_row`); :mod:`glmcompat.matrix.curate` writes them (``KEY_ORDER``).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from glmcompat.edges.index import select_wheel, supported_tags
from glmcompat.edges.ranges import HttpRangeReader
from glmcompat.matrix.curate import check_row
from glmcompat.matrix.rows import ModelSupport
from glmcompat.model.errors import EnvironmentFailure, MatrixError
from glmcompat.readers.wheelzip import RemoteZip

if TYPE_CHECKING:
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient, IndexFile, Project
    from glmcompat.readers.wheelzip import ZipMember

TRANSFORMERS_FILES = ("transformers/models/auto/auto_mappings.py", "transformers/models/auto/configuration_auto.py")
SGLANG_MODELS = "sglang/srt/models/"
# Up to 0.1.9 sglang chose the class with ``if arch == "LlamaForCausalLM":`` lines in its model runner.
SGLANG_RUNNER = "sglang/srt/managers/router/model_runner.py"
VLLM_REGISTRY = "vllm/model_executor/models/registry.py"
# Before registry.py (0.6.x) the table sat in models/__init__.py (``_MODELS``), before that in model_loader.py.
VLLM_FILES = (VLLM_REGISTRY, "vllm/model_executor/models/__init__.py", "vllm/model_executor/model_loader.py")
# The engines and the file that says what each serves (for a row's source).
WHERE = {"transformers": "transformers/models/auto/configuration_auto.py CONFIG_MAPPING_NAMES",
         "sglang": "sglang/srt/models/*.py EntryClass",
         "vllm": VLLM_REGISTRY}
# The engines' own config classes for model types (transformers need not know those): ``_CONFIG_REGISTRY``.
# Their keys are written many ways (``x="XConfig"``, ``"x": XConfig``, ``XConfig.model_type: XConfig``,
# ``_CONFIG_REGISTRY["x"] = ...``), so a model type counts when the registry file names it as a key or a config module
# of the engine declares ``model_type = "x"``.
CONFIG_FILES = {"sglang": ("sglang/srt/hf_transformers_utils.py", "sglang/srt/utils/hf_transformers_utils.py",
                           "sglang/srt/utils/hf_transformers/common.py"),
                "vllm": ("vllm/transformers_utils/config.py",)}
CONFIG_DIRS = {"sglang": "sglang/srt/configs/", "vllm": "vllm/transformers_utils/configs/"}
PYTHONS = ("cp311", "cp312", "cp310", "cp313", "cp39", "cp38")
PLATFORM = "manylinux_x86_64"

_CONFIG_PAIR = re.compile(r"""\(\s*["']([A-Za-z0-9_\-]+)["']\s*,\s*["'](\w+Config)["']\s*\)""")
_CONFIG_KEY = re.compile(r"""^\s*["']([A-Za-z0-9_\-]+)["']\s*:\s*["'](\w+Config)["']""", re.M)
_ENTRY = re.compile(r"^EntryClass\s*\+?=\s*(\[[^\]]*\]|\([^)]*\)|[A-Za-z_][\w.]*)", re.M)
_ARCH_EQ = re.compile(r"""\barch\s*==\s*["']([A-Za-z_]\w*)["']""")
_REGISTRY_START = re.compile(r"^_CONFIG_REGISTRY\b[^=\n]*=", re.M)
_REGISTRY_KEY = re.compile(r"""^\s*(?:([A-Za-z_]\w*)\s*=|["']([A-Za-z0-9_\-]+)["']\s*:)\s*["'A-Za-z_]""", re.M)
_REGISTRY_SET = re.compile(r"""_CONFIG_REGISTRY\[\s*["']([A-Za-z0-9_\-]+)["']\s*\]\s*=""")
_MODEL_TYPE_ATTR = re.compile(r"""^\s+model_type(?:\s*:\s*str)?\s*=\s*["']([A-Za-z0-9_\-]+)["']""", re.M)
_IDENT = re.compile(r"[A-Za-z_][\w.]*")
_VLLM_KEY = re.compile(r"""^\s*["']([A-Z]\w*)["']\s*:\s*[(A-Za-z_]""", re.M)


# ------------------------------------------------------------------------------------------------
# Parsing (pure)
# ------------------------------------------------------------------------------------------------


def transformers_model_types(texts: Iterable[str]) -> frozenset[str]:
    """The model types a transformers release maps to a config class: every ``("model_type", "XConfig")`` pair
    (and ``"model_type": "XConfig"`` dict entry) of the given auto files' text."""
    out: set[str] = set()
    for text in texts:
        out |= {m.group(1) for m in _CONFIG_PAIR.finditer(text)}
        out |= {m.group(1) for m in _CONFIG_KEY.finditer(text)}
    return frozenset(out)


def sglang_entry_classes(text: str) -> frozenset[str]:
    """The class names one sglang model module registers (``EntryClass = X`` or ``= [X, Y]``, ``+=`` too)."""
    out: set[str] = set()
    for m in _ENTRY.finditer(text):
        out |= {n.rsplit(".", 1)[-1] for n in _IDENT.findall(m.group(1))}
    return frozenset(out)


def sglang_runner_architectures(text: str) -> frozenset[str]:
    """The architectures an sglang 0.1.x model runner compares ``arch`` with."""
    return frozenset(m.group(1) for m in _ARCH_EQ.finditer(text))


def config_registry(text: str) -> frozenset[str]:
    """The model types of an engine's ``_CONFIG_REGISTRY`` (``name="XConfig",`` keywords or ``"name": XConfig,``
    entries, up to the first line that closes it)."""
    m = _REGISTRY_START.search(text)
    body = []
    for line in (text[m.end():].splitlines()[1:] if m else ()):
        if line[:1] in (")", "}"):
            break
        body.append(line)
    keys = {a or b for a, b in _REGISTRY_KEY.findall("\n".join(body))} if m else set()
    return frozenset(keys | set(_REGISTRY_SET.findall(text)))


def declared_model_types(text: str) -> frozenset[str]:
    """The ``model_type = "x"`` class attributes of a config module."""
    return frozenset(_MODEL_TYPE_ATTR.findall(text))


def vllm_architectures(text: str) -> frozenset[str]:
    """The architecture keys of vLLM's ``registry.py`` (``"Arch": ("module", "Class"),``; ``"Arch": Class,`` in the
    oldest releases' model_loader.py)."""
    return frozenset(m.group(1) for m in _VLLM_KEY.finditer(text))


# ------------------------------------------------------------------------------------------------
# Reading a release
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Known:
    """What one release knows (model types for transformers, architectures for the engines) and where it read it.
    Cached by its wheel's sha256 (kind ``modelprobe``): :meth:`to_json` is the stored form (without the bytes
    fetched), :meth:`from_json` reads it back after the cache checked its shape."""

    package: str
    version: str
    wheel: str
    sha256: str | None
    names: frozenset[str]
    files: tuple[str, ...]
    bytes_fetched: int
    where: dict[str, str] = field(default_factory=dict)  # name -> the member that names it, where files are many
    configs: frozenset[str] = frozenset()  # model types the engine carries its own config class for
    configs_file: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"package": self.package, "version": self.version, "wheel": self.wheel, "sha256": self.sha256,
                "names": sorted(self.names), "files": list(self.files), "where": dict(self.where),
                "configs": sorted(self.configs), "configs_file": self.configs_file}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Known:
        """The stored form read back (nothing fetched: ``bytes_fetched`` 0)."""
        return cls(d["package"], d["version"], d["wheel"], d["sha256"], frozenset(d["names"]), tuple(d["files"]), 0,
                   dict(d["where"]), frozenset(d["configs"]), d["configs_file"])


def final_releases(project: Project, python_tags: Sequence[str] = PYTHONS, platform: str = PLATFORM) -> list[str]:
    """The final (not pre-, dev- or local) releases that have a wheel for Linux x86_64, oldest first."""
    tags = [supported_tags(py, platform) for py in python_tags]
    out = []
    for v in project.versions:
        try:
            pv = Version(v)
        except InvalidVersion:
            continue
        if pv.is_prerelease or pv.is_devrelease or pv.local:
            continue
        files = [f for f in project.files_for(v) if not f.yanked]
        if any(select_wheel(files, t) is not None for t in tags):
            out.append(v)
    return sorted(out, key=Version)


def _pick(project: Project, version: str) -> IndexFile:
    files = [f for f in project.files_for(version) if not f.yanked]
    for py in PYTHONS:
        w = select_wheel(files, supported_tags(py, PLATFORM))
        if w is not None:
            return w
    raise EnvironmentFailure(f"{project.name} {version} has no Linux x86_64 wheel")


def read_known(ic: IndexClient, project: Project, version: str) -> Known:
    """Read what ``project`` at ``version`` knows from its wheel (range requests)."""
    f = _pick(project, version)
    reader = HttpRangeReader(ic.client, f.url, name=f.filename, size=f.size)
    zf = RemoteZip(reader)
    members = {m.name: m for m in zf.members}
    package = str(project.name).lower()
    names: frozenset[str]
    where: dict[str, str] = {}
    if package == "transformers":
        used = tuple(p for p in TRANSFORMERS_FILES if p in members)
        names = transformers_model_types(zf.read(members[p]).decode("utf-8", "replace") for p in used)
    elif package == "sglang":
        mods = _read_dir(reader, zf, members, SGLANG_MODELS)
        for name, text in mods.items():
            for n in sglang_entry_classes(text):
                where.setdefault(n, name)
        used = (SGLANG_MODELS + "*.py",) if mods else ()
        if SGLANG_RUNNER in members:
            for n in sglang_runner_architectures(zf.read(members[SGLANG_RUNNER]).decode("utf-8", "replace")):
                where.setdefault(n, SGLANG_RUNNER)
            used += (SGLANG_RUNNER,)
        names = frozenset(where)
    elif package == "vllm":
        for p in (p for p in VLLM_FILES if p in members):
            for n in vllm_architectures(zf.read(members[p]).decode("utf-8", "replace")):
                where.setdefault(n, p)
        names = frozenset(where)
        used = tuple(sorted(set(where.values())))
    else:
        raise ValueError(f"no model probe for {package}")
    configs: set[str] = set()
    cfile = None
    for p in CONFIG_FILES.get(package, ()):
        if p in members:
            found = config_registry(zf.read(members[p]).decode("utf-8", "replace"))
            cfile = cfile or (p if found else None)
            configs |= found
    if package in CONFIG_DIRS:
        for text in _read_dir(reader, zf, members, CONFIG_DIRS[package]).values():
            configs |= declared_model_types(text)
        cfile = f"{cfile} _CONFIG_REGISTRY / {CONFIG_DIRS[package]}*.py model_type" if cfile else \
            f"{CONFIG_DIRS[package]}*.py model_type"
    return Known(package, version, f.filename, f.sha256, names, used, reader.bytes_fetched, where, frozenset(configs),
                 cfile)


def _read_dir(reader: HttpRangeReader, zf: RemoteZip, members: dict[str, ZipMember], prefix: str) -> dict[str, str]:
    """{member: text} of the ``*.py`` directly under ``prefix``, fetched in one request (they are stored next to each
    other in a wheel)."""
    mods = [m for n, m in members.items() if n.startswith(prefix) and n.endswith(".py") and "/" not in n[len(prefix):]]
    if not mods:
        return {}
    lo = min(m.header_offset for m in mods)
    hi = max(m.header_offset + m.compressed_size for m in mods) + 1024
    blob = reader.read(lo, min(hi, reader.size) - lo)
    return {m.name: _member_text(blob, lo, m, zf) for m in sorted(mods, key=lambda m: m.name)}


def _member_text(blob: bytes, base: int, m: ZipMember, zf: RemoteZip) -> str:
    """A member's text out of a span already fetched (local header parsed here; falls back to the zip reader)."""
    at = m.header_offset - base
    head = blob[at:at + 30]
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        return zf.read(m).decode("utf-8", "replace")
    nlen = int.from_bytes(head[26:28], "little")
    xlen = int.from_bytes(head[28:30], "little")
    start = at + 30 + nlen + xlen
    data = blob[start:start + m.compressed_size]
    if len(data) < m.compressed_size:
        return zf.read(m).decode("utf-8", "replace")
    if m.method == 8:
        data = zlib.decompress(data, -15)
    elif m.method != 0:
        return zf.read(m).decode("utf-8", "replace")
    return data.decode("utf-8", "replace")


# ------------------------------------------------------------------------------------------------
# The first release that knows a name
# ------------------------------------------------------------------------------------------------


@dataclass
class First:
    """The first release of ``package`` that knows ``name`` (None: the newest does not), and the one before it."""

    package: str
    name: str
    first: Known | None
    before: Known | None
    newest: Known
    configs: bool = False  # about the engine's own config class for the model type, not its model classes


@dataclass
class Prober:
    """Reads releases once each (``look``) and bisects over them (pure but for ``read``)."""

    package: str
    versions: list[str]
    read: Callable[[str], Known]
    seen: dict[str, Known] = field(default_factory=dict)

    def look(self, version: str) -> Known:
        if version not in self.seen:
            self.seen[version] = self.read(version)
        return self.seen[version]

    @property
    def bytes_fetched(self) -> int:
        return sum(k.bytes_fetched for k in self.seen.values())

    def first_knowing(self, names: Sequence[str], configs: bool = False) -> First:
        """The first release knowing any of ``names`` from which on every release does (by bisection: an entry, once
        added, is assumed to stay; the release before the answer is read to show it does not know it)."""
        vs = self.versions
        newest = self.look(vs[-1])
        label = names[0]

        def knows(v: str) -> bool:
            k = self.look(v)
            return any(n in (k.configs if configs else k.names) for n in names)

        if not knows(vs[-1]):
            return First(self.package, label, None, None, newest)
        lo, hi = 0, len(vs) - 1  # vs[hi] knows it
        while lo < hi:
            mid = (lo + hi) // 2
            if knows(vs[mid]):
                hi = mid
            else:
                lo = mid + 1
        before = self.look(vs[hi - 1]) if hi > 0 else None
        return First(self.package, label, self.look(vs[hi]), before, newest, configs)


def model_row(model_type: str, architectures: Sequence[str], found: dict[str, First],
              old: ModelSupport | None = None) -> ModelSupport | None:
    """A ``[[model]]`` row from the probes (None when transformers does not know the model type); ``old`` gives the
    fields the probes cannot (``failure``)."""
    t = found["transformers"]
    if t.first is None and not any(found.get(f"{e}_config") and found[f"{e}_config"].first for e in ENGINES[1:]):
        return None
    # transformers that never knew it: only the engines' own configs load it (no transformers release does)
    bounds: dict[str, str] = {}
    parts = [_cite(t, model_type)]
    for engine in ENGINES[1:]:
        e = found.get(engine)
        if e is None:
            continue
        if e.first is not None:
            bounds[engine] = f">={e.first.version}"
        parts.append(_cite(e, e.name))
        c = found.get(engine + "_config")
        if c is not None and c.first is not None:
            bounds[engine + "_config"] = f">={c.first.version}"
            parts.append(_cite(c, model_type))
    source = "; ".join(parts) + f" (`python scripts/model_support.py {model_type}`)"
    row = ModelSupport(evidence="metadata", source=source, model_type=model_type, architectures=tuple(architectures),
                       transformers=f">={t.first.version}" if t.first else "<0",
                       failure=(old.failure or None) if old else None)
    return _with_bounds(row, bounds)


def _with_bounds(row: ModelSupport, bounds: Mapping[str, str]) -> ModelSupport:
    """``row`` with ``bounds`` ({a field of :data:`BOUNDS`: its specifier}) set, once the matrix schema admits it
    (:func:`glmcompat.matrix.curate.check_row`): never a half row."""
    row = replace(row, transformers=bounds.get("transformers", row.transformers),
                  sglang=bounds.get("sglang", row.sglang), sglang_config=bounds.get("sglang_config", row.sglang_config),
                  vllm=bounds.get("vllm", row.vllm), vllm_config=bounds.get("vllm_config", row.vllm_config))
    why = check_row(row)
    if why is not None:
        raise MatrixError(f"the [[model]] row derived for {row.model_type} is rejected by the matrix schema ({why})")
    return row


def _cite(f: First, name: str) -> str:
    where = ", ".join(f.newest.files) or WHERE[f.package]
    if f.first is None:
        return f"{f.newest.wheel} {where}: no {name} (newest release read)"
    if f.configs:
        where = f"{f.first.configs_file}"
    else:
        where = f.first.where.get(name) or ", ".join(f.first.files) or WHERE[f.package]
    text = f"{f.first.wheel} {where} names {name}"
    if f.before is not None:
        text += f" ({f.package} {f.before.version} does not)"
    return text


ENGINES = ("transformers", "sglang", "vllm")  # the packages read: transformers, then the serving engines
# The fields of a [[model]] row the probes derive (the order a row's source cites them in; the order a row writes its
# keys in is glmcompat.matrix.curate.KEY_ORDER's)
BOUNDS = ("transformers", "sglang", "sglang_config", "vllm", "vllm_config")
CACHE_VERSION = 1  # of the cached Known of a wheel (keyed by its sha256)


def cached_read(ic: IndexClient, project: Project, cache: Cache | None) -> Callable[[str], Known]:
    """``read_known`` of ``project``'s releases through ``cache`` (a :class:`glmcompat.edges.cache.Cache`), keyed by
    the wheel's sha256: a second run reads no wheel."""

    def read(v: str) -> Known:
        f = _pick(project, v)
        key = f"modelprobe-v{CACHE_VERSION}-{f.sha256}" if f.sha256 and cache is not None else None
        hit = cache.get_json(key) if key and cache is not None else None
        if isinstance(hit, dict):
            return Known.from_json(hit)
        k = read_known(ic, project, v)
        if key and cache is not None:
            cache.put_json(key, k.to_json())
        return k

    return read


def update_row(row: ModelSupport, probers: dict[str, Prober]) -> ModelSupport | None:
    """``row`` with the bounds that releases since it was derived add, or None when nothing changes. A bound the
    row has is kept and costs no read (an entry, once added, is assumed to stay, as :meth:`Prober.first_knowing`
    assumes); for each bound it lacks the package's newest release is read (one read per package, shared by every
    row), and only when that release knows the model is the first one bisected for. ``probers``: the packages to
    look at (those a refresh covers)."""
    mt = row.model_type
    archs = list(row.architectures)
    bounds: dict[str, str] = {}
    cites: dict[str, str] = {}
    for key in BOUNDS:
        have = getattr(row, key)
        if have and have != "<0":
            continue
        package, _, config = key.partition("_")
        pr = probers.get(package)
        if pr is None or not pr.versions:
            continue
        names = [mt] if package == "transformers" or config else archs
        if not names:
            continue
        f = pr.first_knowing(names, configs=bool(config))
        if f.first is None:
            continue
        bounds[key] = f">={f.first.version}"
        cites[key] = _cite(f, mt if config else f.name)
    if not cites:
        return None
    return _with_bounds(replace(row, source=_merge_source(row.source, mt, cites)), bounds)


def _merge_source(source: str, model_type: str, cites: dict[str, str]) -> str:
    """``source`` with the new citations in the place :func:`model_row` writes them (transformers, then each engine
    and its config), each replacing the package's "no X (newest release read)" part."""
    tail = f" (`python scripts/model_support.py {model_type}`)"
    body = source.removesuffix(tail)
    parts = [p for p in body.split("; ") if p]

    def rank(part: str) -> int:
        return next((i for i, e in enumerate(ENGINES) if part.startswith(e + "-")), len(ENGINES))

    for key in BOUNDS:
        if key not in cites:
            continue
        package, _, config = key.partition("_")
        i = ENGINES.index(package)
        if not config:
            parts = [p for p in parts if not (rank(p) == i and p.endswith("(newest release read)"))]
            at = next((j for j, p in enumerate(parts) if rank(p) >= i), len(parts))
        else:
            at = next((j for j, p in enumerate(parts) if rank(p) > i), len(parts))
        parts.insert(at, cites[key])
    return "; ".join(parts) + tail


def derive_rows(ic: IndexClient, wanted: Mapping[str, Sequence[str]], old: Mapping[str, ModelSupport] | None = None,
                *, jobs: int = 4,
                log: Callable[[str], None] | None = None) -> tuple[dict[str, ModelSupport | None], int]:
    """({model_type: [[model]] row or None}, bytes fetched) for ``wanted`` ({model_type: architectures}); ``old``:
    the matrix's rows of those model types (what the probes cannot derive is kept from them)."""
    def prober(package: str) -> Prober:
        project = ic.project(package)

        def read(v: str) -> Known:
            k = read_known(ic, project, v)
            if log:
                log(f"  {package} {v}: {len(k.names)} names [{k.bytes_fetched // 1024} KiB]")
            return k

        return Prober(package, final_releases(project), read)

    probers = {p: prober(p) for p in ENGINES}

    def derive(package: str) -> dict[str, First]:
        pr = probers[package]
        out = {mt: pr.first_knowing([mt] if package == "transformers" else list(archs))
               for mt, archs in wanted.items()}
        if package != "transformers":  # the engine's own config class: only where its newest release has one
            out |= {f"{mt}\0config": pr.first_knowing([mt], configs=True) for mt in wanted}
        return out

    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(ENGINES)))) as ex:
        per = dict(zip(ENGINES, ex.map(derive, ENGINES), strict=True))
    found = {mt: {p: per[p][mt] for p in ENGINES} | {f"{p}_config": per[p][f"{mt}\0config"] for p in ENGINES[1:]}
             for mt in wanted}
    out = {mt: model_row(mt, archs, found[mt], (old or {}).get(mt)) for mt, archs in wanted.items()}
    return out, sum(p.bytes_fetched for p in probers.values())

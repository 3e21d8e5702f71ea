"""A fast, plain-Python view of the validated matrix, for hot paths (``glmcompat check``).

Loading the pydantic models costs a few hundred milliseconds; the check must answer in tens.
So the validated matrix is dumped once to JSON in the user cache directory, keyed by the matrix
files' paths and content (and glmcompat's code), and later runs read that JSON (a few hundred
microseconds) once its digest line and shape check out. Queries here work on plain dicts;
:class:`glmcompat.matrix.schema.Matrix` offers the typed API over the same data.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from glmcompat.model.errors import InputError
from glmcompat.model.names import local_cuda, normalize_target
from glmcompat.model.platforms import PER_PLATFORM, PLATFORMS, check_platform

Row = dict[str, Any]


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
        key = normalize_target(name)
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

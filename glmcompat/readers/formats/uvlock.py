"""uv.lock, per environment: what each installable environment of a lock really installs.

A uv.lock holds every environment of a project at once: the base set, each extra and dependency
group, resolution forks (``resolution-markers``) and packages present in several versions or
sources, kept apart by markers that name the enabled extras (``extra == 'extra-7-nemo-rl-sglang'``).
Merging them into one set per Python flags combinations that no environment installs. So this module
walks the lock's dependency graph from its root projects, once per environment: each extra and group
alone, every combination its ``conflicts`` allow (or, when those are too many, the largest ones), for
Linux x86_64 and Linux aarch64 and each Python minor the lock allows. A platform the lock's
``supported-markers`` (uv's ``environments``) exclude gets no environment; an environment records the
packages it installs that have neither a wheel for its machine and Python nor an sdist (``missing_wheels``:
uv cannot install them there). Pure: the caller reads the file.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import Any

from glmcompat.model.environments import Environment, MarkerEvaluator, env_label, merge, python_envs
from glmcompat.model.errors import LockFormatError
from glmcompat.model.names import canonicalize
from glmcompat.model.platforms import PLATFORMS
from glmcompat.model.wheeltags import triple_fits, triple_glibc, wheel_fits, wheel_triple
from glmcompat.readers.formats.common import (
    Format, Entry, Lock, LockMeta, check_marker, compiled_wheels, line_of, sha256_of, package_entries, requires_python_of, toml, versioned_tables,
)

KNOWN_UV_LOCK_VERSIONS = (1,)
MAX_COMBINATIONS = 64  # beyond this many extra/group combinations: each alone plus the largest allowed sets

Item = tuple[str, str, str]  # (package, "extra" | "group", name)
# (marker, candidate packages, extras it enables, the error it raises where its marker holds: a malformed edge)
Edge = tuple[str | None, list[int], frozenset[str], str | None]
_NONE: frozenset[str] = frozenset()


def source_kind(source: Any) -> str:
    """Map a uv.lock ``source`` table to an :class:`~glmcompat.readers.formats.common.Entry` source kind."""
    if not isinstance(source, dict):
        return "registry"
    if "registry" in source:
        return "registry"
    if "url" in source:
        return "wheel" if str(source["url"]).split("?")[0].split("#")[0].endswith(".whl") else "url"
    if "path" in source:
        return "wheel" if str(source["path"]).endswith(".whl") else "path"
    for k in ("git", "directory", "editable", "virtual"):
        if k in source:
            return "editable" if k == "virtual" else k
    return "registry"


def encode(item: Item) -> str:
    """uv's marker encoding of an enabled extra or group: ``extra-7-nemo-rl-sglang``."""
    pkg, kind, name = item
    return f"{kind}-{len(pkg)}-{pkg}-{name}"


def _deps(path: str, p: dict[str, Any], key: str) -> Any:
    v = p.get(key, {} if key != "dependencies" else [])
    if key == "dependencies":
        if not isinstance(v, list):
            raise LockFormatError(f"package {p.get('name')!r}: 'dependencies' must be an array", path=path)
    elif not isinstance(v, dict):
        raise LockFormatError(f"package {p.get('name')!r}: {key!r} must be a table", path=path)
    return v


class UvLockGraph:
    def __init__(self, path: str, doc: dict[str, Any]) -> None:
        self.path = path
        pkgs = doc.get("package", [])
        if not isinstance(pkgs, list):
            raise LockFormatError("'package' must be an array of tables", path=path)
        self.pkgs: list[dict[str, Any]] = []
        self.by_name: dict[str, list[int]] = {}
        for i, p in enumerate(pkgs):
            if not isinstance(p, dict) or not isinstance(p.get("name"), str):
                raise LockFormatError(f"package entry {i + 1} has no name", path=path)
            ver = p.get("version")
            if ver is not None and not isinstance(ver, str):
                raise LockFormatError(f"package {p['name']!r} has a non-string version {ver!r}", path=path)
            self.by_name.setdefault(canonicalize(p["name"]), []).append(len(self.pkgs))
            self.pkgs.append(p)
        manifest = doc.get("manifest", {})
        manifest = manifest if isinstance(manifest, dict) else {}
        members = manifest.get("members")
        roots: list[int] = []
        if isinstance(members, list) and members:
            for m in members:
                if isinstance(m, str):
                    roots.extend(self.by_name.get(canonicalize(m), [])[:1])
        if not roots:
            for i, p in enumerate(self.pkgs):
                src = p.get("source")
                if isinstance(src, dict) and (src.get("virtual") == "." or src.get("editable") == "."):
                    roots.append(i)
        self.roots = roots
        self.overrides: dict[str, str] = {}
        for o in manifest.get("overrides", []) if isinstance(manifest.get("overrides"), list) else []:
            if isinstance(o, dict) and isinstance(o.get("name"), str):
                self.overrides[canonicalize(o["name"])] = str(o.get("specifier", ""))
        self.conflicts: list[set[Item]] = []
        for c in doc.get("conflicts", []) if isinstance(doc.get("conflicts"), list) else []:
            items: set[Item] = set()
            for it in c if isinstance(c, list) else []:
                if isinstance(it, dict):
                    pkg = canonicalize(str(it.get("package", "")))
                    if "extra" in it:
                        items.add((pkg, "extra", str(it["extra"])))
                    elif "group" in it:
                        items.add((pkg, "group", str(it["group"])))
            if len(items) > 1:
                self.conflicts.append(items)
        self.ev = MarkerEvaluator(path)
        self.doc_supported = doc.get("supported-markers")
        self._names: dict[str, str] = {}  # name as written -> canonical (the walk asks for each edge, in every environment)
        self._memo: dict[tuple[str, int, frozenset[str]], bool] = {}
        self._root_set = frozenset(roots)
        # what the walk reads of a package, the same in every environment, built at its first visit (see _edges)
        self._edge_memo: dict[tuple[int, frozenset[str], frozenset[str]], list[Edge]] = {}
        self._wheel_memo: dict[tuple[int, str, str], tuple[bool, str | None]] = {}
        self._tags_memo: dict[int, tuple[list[str | None], list[str]]] = {}  # _wheel_tags

    def _holds(self, marker: str | None, env: dict[str, str], active: frozenset[str], env_id: int) -> bool:
        """``self.ev.evaluate``, memoised per marker, environment and enabled extras (one marker guards many edges)."""
        if not marker:
            return True
        k = (marker, env_id, active)
        r = self._memo.get(k)
        if r is None:
            r = self._memo[k] = self.ev.evaluate(marker, env, active, env_id)
        return r

    def _canon(self, name: str) -> str:
        c = self._names.get(name)
        if c is None:
            c = self._names[name] = canonicalize(name)
        return c

    # -- which environments ------------------------------------------------------------------------
    def items(self) -> list[Item]:
        out: list[Item] = []
        for r in self.roots:
            p = self.pkgs[r]
            name = canonicalize(p["name"])
            out += [(name, "extra", x) for x in sorted(_deps(self.path, p, "optional-dependencies"))]
            out += [(name, "group", g) for g in sorted(_deps(self.path, p, "dev-dependencies"))]
        return out

    def allowed(self, chosen: tuple[Item, ...]) -> bool:
        s = set(chosen)
        return all(len(c & s) < 2 for c in self.conflicts)

    def selections(self) -> tuple[list[tuple[Item, ...]], str | None]:
        """The sets of extras/groups to judge, and a note when not every combination is judged."""
        items = self.items()
        allowed: list[tuple[Item, ...]] = [()]
        total = 0
        for k in range(1, len(items) + 1):
            for combo in combinations(items, k):
                if self.allowed(combo):
                    total += 1
                    if total > MAX_COMBINATIONS:
                        break
                    allowed.append(combo)
            if total > MAX_COMBINATIONS:
                break
        if total <= MAX_COMBINATIONS:
            return allowed, None
        chosen: list[tuple[Item, ...]] = [()] + [(i,) for i in items]
        for m in self._maximal(items):
            if m not in chosen:
                chosen.append(m)
        note = (f"{len(items)} extras and groups allow more than {MAX_COMBINATIONS} combinations: judged each one "
                f"alone and the {len(chosen) - len(items) - 1} largest sets the lock's conflicts allow")
        return chosen, note

    def _maximal(self, items: list[Item]) -> list[tuple[Item, ...]]:
        """Maximal sets of items no conflict forbids (Bron-Kerbosch on the compatibility graph)."""
        ok = {a: {b for b in items if b != a and self.allowed((a, b))} for a in items}
        out: list[tuple[Item, ...]] = []

        def bk(r: set[Item], p: set[Item], x: set[Item]) -> None:
            if not p and not x:
                cand = tuple(i for i in items if i in r)
                if self.allowed(cand):
                    out.append(cand)
                return
            if any(p <= ok[u] for u in x):
                # an item already tried fits with every item left: no set this branch reaches is maximal (u stays in
                # x down every path), so it would report nothing; cut, the sets found and their order are the same
                # (without it the search visits every subset of a lock with few conflicts: 2^n calls)
                return
            for v in sorted(p):
                bk(r | {v}, p & ok[v], x & ok[v])
                p = p - {v}
                x = x | {v}
                if len(out) > 256:
                    return

        bk(set(), set(items), set())
        return out

    # -- what one environment installs ---------------------------------------------------------------
    def _fork_ok(self, p: dict[str, Any], env: dict[str, str], active: frozenset[str], env_id: int) -> bool:
        rm = p.get("resolution-markers")
        if not isinstance(rm, list) or not rm:
            return True
        return any(self._holds(m, env, active, env_id) for m in rm if isinstance(m, str))

    def _edges(self, i: int, extras: frozenset[str], groups: frozenset[str]) -> list[Edge]:
        """The edges of package ``i`` with ``extras`` and ``groups`` enabled, each read once for the whole lock:
        (marker, the candidates its name, version and source leave, the extras it enables, None); a malformed one
        carries the error the walk raises on reaching it (a dependency that is no table or whose marker is no string
        at once, a nameless one where its marker holds)."""
        k = (i, extras, groups)
        memo = self._edge_memo.get(k)
        if memo is not None:
            return memo
        p = self.pkgs[i]
        out: list[Edge] = []
        for d in self._raw_edges(p, extras, groups):
            if not isinstance(d, dict):
                out.append((None, [], _NONE, f"package {p['name']!r}: a dependency is not a table"))
                continue
            marker = d.get("marker")
            if marker is not None and not isinstance(marker, str):
                out.append((None, [], _NONE, f"package {p['name']!r}: non-string marker {marker!r}"))
                continue
            if not isinstance(d.get("name"), str):
                out.append((marker, [], _NONE, f"a dependency without a name: {d!r}"[:200]))
                continue
            cands = self.by_name.get(self._canon(d["name"]), [])
            if len(cands) > 1 and "version" in d:
                cands = [c for c in cands if self.pkgs[c].get("version") == d["version"]]
            if len(cands) > 1 and "source" in d:
                cands = [c for c in cands if self.pkgs[c].get("source") == d["source"]]
            want = d.get("extra", [])
            out.append((marker, cands, frozenset(str(x) for x in want) if isinstance(want, list) else _NONE, None))
        self._edge_memo[k] = out
        return out

    def _raw_edges(self, p: dict[str, Any], extras: frozenset[str], groups: frozenset[str]) -> list[Any]:
        edges = list(_deps(self.path, p, "dependencies"))
        opt = _deps(self.path, p, "optional-dependencies")
        for x in sorted(extras):
            edges += opt.get(x, []) if isinstance(opt.get(x, []), list) else []
        if groups:
            dev = _deps(self.path, p, "dev-dependencies")
            for g in sorted(groups):
                edges += dev.get(g, []) if isinstance(dev.get(g, []), list) else []
        return edges

    def walk(self, selection: tuple[Item, ...], env: dict[str, str], env_id: int) -> dict[int, None]:
        """The packages the environment installs, in the order the walk meets them; each package's edges read once
        for the whole lock (:meth:`_edges`), each marker evaluated once a walk."""
        active = frozenset(encode(i) for i in selection)
        seen: set[tuple[int, frozenset[str]]] = set()
        installed: dict[int, None] = {}
        stack: list[tuple[int, frozenset[str], frozenset[str]]] = []
        for r in self.roots:
            rname = canonicalize(self.pkgs[r]["name"])
            ex = frozenset(n for (pk, k, n) in selection if pk == rname and k == "extra")
            gr = frozenset(n for (pk, k, n) in selection if pk == rname and k == "group")
            stack.append((r, ex, gr))
        holds: dict[str, bool] = {}  # this walk's markers (one environment, one set of extras)
        while stack:
            i, extras, groups = stack.pop()
            key = (i, extras | frozenset("group:" + g for g in groups) if groups else extras)
            if key in seen:
                continue
            seen.add(key)
            installed[i] = None
            for marker, cands, want, error in self._edges(i, extras, groups):
                if marker:
                    h = holds.get(marker)
                    if h is None:
                        h = holds[marker] = self._holds(marker, env, active, env_id)
                    if not h:
                        continue
                if error is not None:
                    raise LockFormatError(error, path=self.path)
                if len(cands) > 1:
                    fit = [c for c in cands if self._fork_ok(self.pkgs[c], env, active, env_id)]
                    stack.append((fit[0] if fit else cands[0], want, _NONE))
                elif cands:
                    stack.append((cands[0], want, _NONE))
        return installed

    def supports(self, env: dict[str, str], env_id: int) -> bool:
        """Whether the lock's ``supported-markers`` (uv's ``environments``) admit the marker environment."""
        sm = self.doc_supported
        if not isinstance(sm, list) or not sm:
            return True
        return any(self.ev.evaluate(m, env, (), env_id) for m in sm if isinstance(m, str))

    def _wheel_tags(self, i: int) -> tuple[list[str | None], list[str]]:
        """(the tag part, :func:`~glmcompat.model.wheeltags.wheel_triple`, of each wheel package ``i`` lists, in order;
        the wheel its source names, where it lists none), read once for every environment (a serving lock's 4,000
        wheels, in eight environments)."""
        got = self._tags_memo.get(i)
        if got is None:
            p = self.pkgs[i]
            files: list[str] = []
            wheels = p.get("wheels")
            if isinstance(wheels, list):
                for w in wheels:
                    if isinstance(w, dict):
                        f = w.get("url") or w.get("path") or w.get("filename")
                        if isinstance(f, str):
                            files.append(f)
            src = p.get("source")
            direct: list[str] = []
            if not files and isinstance(src, dict):
                d = src.get("url") or src.get("path")
                if isinstance(d, str) and d.split("?")[0].endswith(".whl"):
                    direct.append(d)
            got = self._tags_memo[i] = ([wheel_triple(f) for f in files], direct)
        return got

    def _missing_wheel(self, i: int, machine: str, python: str) -> bool:
        """A package uv cannot install on ``machine`` / ``python`` from this lock: it lists wheels, none of
        which fits, and no sdist (a source build would be tried otherwise)."""
        if self.pkgs[i].get("sdist") is not None:
            return False
        triples, direct = self._wheel_tags(i)
        if direct:
            return not wheel_fits(direct[0], machine, python)
        return bool(triples) and not any(t is None or triple_fits(t, machine, python) for t in triples)

    def environments(self, requires_python: str | None,
                     platforms: tuple[str, ...] = PLATFORMS) -> tuple[list[Environment], str | None]:
        if not self.roots:
            return [], None
        selections, note = self.selections()
        multi_root = len(self.roots) > 1
        out: list[Environment] = []
        env_id = 0
        for machine in platforms:
            for env in python_envs(requires_python, machine):
                env_id += 1
                if not self.supports(env, env_id):
                    continue
                for sel in selections:
                    out_env = self._environment(sel, env, env_id, machine, multi_root)
                    merge(out, out_env)
        return out, note

    def _glibc(self, i: int, machine: str, python: str) -> str | None:
        """The lowest glibc a package's wheels for ``machine`` / ``python`` need, where it is above 2.17 and no sdist
        could build it instead (None otherwise)."""
        if self.pkgs[i].get("sdist") is not None:
            return None
        floors = [g for t in self._wheel_tags(i)[0] if t is not None and (g := triple_glibc(t, machine, python)) is not None]
        low = min(floors) if floors else None
        return f"{low[0]}.{low[1]}" if low is not None and low > (2, 17) else None

    def _environment(self, sel: tuple[Item, ...], env: dict[str, str], env_id: int, machine: str,
                     multi_root: bool) -> Environment:
        installed = self.walk(sel, env, env_id)
        packages: dict[str, str] = {}
        sources: dict[str, str] = {}
        missing: dict[str, str] = {}
        glibc: dict[str, str] = {}
        python = env["python_version"]
        for i in installed:
            p = self.pkgs[i]
            if i in self._root_set or p.get("version") is None:
                continue
            n = self._canon(p["name"])
            packages[n] = p["version"]
            kind = source_kind(p.get("source"))
            if kind != "registry":
                sources[n] = kind
            else:
                sources.pop(n, None)
            wk = (i, machine, python)
            wheel = self._wheel_memo.get(wk)
            if wheel is None:  # a package's wheels and a platform: the same answer in every environment
                wheel = self._wheel_memo[wk] = (self._missing_wheel(i, machine, python), self._glibc(i, machine, python))
            if wheel[0]:
                missing[n] = p["version"]
            if wheel[1] is not None:
                glibc[n] = wheel[1]
        label = _selection_label(sel, multi_root)
        return Environment(f"{label}, {env_label(env)}", machine, dict(sorted(packages.items())),
                           dict(sorted(sources.items())), {}, dict(sorted(self.overrides.items())),
                           dict(sorted(missing.items())), glibc=dict(sorted(glibc.items())))


def _selection_label(sel: tuple[Item, ...], multi_root: bool) -> str:
    """'base', 'extra sglang', 'extras sglang, vllm + group dev', or with several workspace members
    'extras nemo-rl[fsdp,vllm] + group nemo-rl[dev]'."""
    if not sel:
        return "base"
    parts = []
    for kind in ("extra", "group"):
        by_pkg: dict[str, list[str]] = {}
        for pkg, k, name in sel:
            if k == kind:
                by_pkg.setdefault(pkg, []).append(name)
        if not by_pkg:
            continue
        n = sum(len(v) for v in by_pkg.values())
        word = kind + ("s" if n > 1 else "")
        if multi_root:
            parts.append(word + " " + " ".join(f"{pkg}[{','.join(v)}]" for pkg, v in by_pkg.items()))
        else:
            parts.append(word + " " + ", ".join(x for v in by_pkg.values() for x in v))
    return " + ".join(parts)


def parse_uv_lock(path: Path, text: str) -> Lock:
    """A uv.lock with one environment per installable extra/group combination (:class:`UvLockGraph`)."""
    doc = toml(path, text)
    version = doc.get("version")
    if version not in KNOWN_UV_LOCK_VERSIONS:
        raise LockFormatError(
            f"uv.lock version {version!r} is not supported (known: {', '.join(map(str, KNOWN_UV_LOCK_VERSIONS))})",
            path=str(path), line=line_of(text, "version"),
        )

    def marker(p: dict[str, Any]) -> str | None:
        markers = p.get("resolution-markers")
        if markers is None or markers == []:
            return None
        if not isinstance(markers, list) or not all(isinstance(m, str) for m in markers):
            raise LockFormatError(f"package {p['name']!r}: resolution-markers must be a list of strings, "
                                  f"not {markers!r}"[:300], path=str(path), line=line_of(text, f'name = "{p["name"]}"'))
        return " or ".join(f"({m})" for m in markers)

    for key in ("resolution-markers", "supported-markers", "required-markers"):  # the lock's own, at the top
        markers = doc.get(key, [])
        if not isinstance(markers, list) or not all(isinstance(m, str) for m in markers):
            raise LockFormatError(f"{key} must be a list of strings, not {markers!r}"[:300], path=str(path),
                                  line=line_of(text, key))
        for m in markers:
            check_marker(path, lambda k=key: line_of(text, k), key, m)

    entries = [Entry(e.name, e.version, e.marker, source_kind(p.get("source")))
               for e, p in zip(package_entries(path, text, doc, "package", marker), versioned_tables(doc, "package"), strict=True)]
    rp = requires_python_of(path, text, doc)
    graph = UvLockGraph(str(path), doc)
    sets, note = graph.environments(rp)
    meta = LockMeta(overrides=dict(sorted(graph.overrides.items())))
    if note:
        meta["notes"] = [note]
    wheels = _wheel_urls(entries, versioned_tables(doc, "package"))
    if wheels:
        meta["wheel_urls"] = wheels
    compiled = _lock_wheels(entries, versioned_tables(doc, "package"))
    if compiled:
        meta["lock_wheels"] = compiled
    return Lock(str(path), "uv.lock", tuple(entries), rp, tuple(sets), meta)


def _wheel_urls(entries: list[Entry], tables: Any) -> dict[str, str]:
    """``name==version`` -> the URL or path (relative to the lock) of each package the lock takes from a wheel URL or
    file, with ``#sha256=`` the hash the lock records for it (what glmcompat.ops.artifacts reads and checks)."""
    out: dict[str, str] = {}
    for e, p in zip(entries, tables, strict=True):
        if e.source != "wheel" or not e.version or not isinstance(p, dict):
            continue
        wheels = p.get("wheels")
        first = wheels[0] if isinstance(wheels, list) and wheels and isinstance(wheels[0], dict) else {}
        raw = p.get("source")
        src: dict[str, Any] = raw if isinstance(raw, dict) else {}
        loc = first.get("url") or first.get("path") or src.get("url") or src.get("path")
        digest = first.get("hash")
        if isinstance(loc, str):
            sha = digest[len("sha256:"):] if isinstance(digest, str) and digest.startswith("sha256:") else ""
            out[f"{e.name}=={e.version}"] = loc.split("#")[0] + (f"#sha256={sha}" if sha else "")
    return dict(sorted(out.items()))


def _lock_wheels(entries: list[Entry], tables: Any) -> dict[str, list[str]]:
    """``name==version`` -> the compiled Linux wheels (URL with ``#sha256=``) uv.lock records for each package it takes
    from an index (the default or a second one: the URL is where the installer reads it), for
    :mod:`glmcompat.ops.artifacts`; packages with pure wheels only are left out."""
    out: dict[str, list[str]] = {}
    for e, p in zip(entries, tables, strict=True):
        if e.source != "registry" or not e.version or not isinstance(p, dict) or not isinstance(p.get("wheels"), list):
            continue
        files = [(w["url"], sha256_of(w.get("hash"))) for w in p["wheels"]
                 if isinstance(w, dict) and isinstance(w.get("url"), str)]
        got = compiled_wheels(files)
        if got:
            out[f"{e.name}=={e.version}"] = got
    return dict(sorted(out.items()))


FORMAT = Format("uv.lock", parse_uv_lock, names=(r"uv\.lock", r".*\.uv\.lock"),
                signs=((r"^version\s*=\s*\d+\s*$", r"^\[\[package\]\]", r"^source\s*="),), beside=0)

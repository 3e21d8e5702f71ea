"""What an installer adds to a resolved-at-install file (a requirements file, conda's pip section) beyond the matrix's
rows: the exact pins the METADATA of its packages declares, read from the index. A file that names
``xformers==0.0.25.post1`` and no torch installs torch 2.2.2, because that wheel's METADATA says
``Requires-Dist: torch ==2.2.2``; the matrix need not hold a row for xformers 0.0.25.post1 for the set to be judged
with the torch it really installs.

Where the file pins torch too, a package's exact torch pin that contradicts it makes the file uninstallable
(torchtext 0.16.0 pins torch==2.1.0: next to torch==2.1.2 pip's resolver stops). Read for the packages the file pins
exactly that the matrix holds no row of pins for; from the indexes the file names (``--index-url``/
``--extra-index-url``) and the configured one, for the machine and Python of the environment. The METADATA is stored
by the wheel's sha256 (:meth:`IndexClient.wheel_metadata`), the whole answer by what was asked. What cannot be read
(an sdist, no network) adds nothing: the file is judged as it was before.

A torch pin without a local label, read from a PyTorch variant index the file names (``.../whl/cu128``), is the
build that index installs (:func:`with_index_labels`)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import replace
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from glmcompat.decide.rules.implied import RESOLVED_AT_INSTALL, resolve_named
from glmcompat.matrix.locations import hasher
from glmcompat.model.errors import GlmcompatError, InputError
from glmcompat.model.names import canonicalize
from glmcompat.ops.refresh.metadata import requirements
from glmcompat.ops.wheelprobe import _map

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient
    from glmcompat.matrix.view import Facts
    from glmcompat.model.artifacts import ArtifactFacts
    from glmcompat.readers.formats.common import Lock

PROBE_ENV = "GLMCOMPAT_NO_ARTIFACTS"  # as glmcompat.ops.artifacts: set, nothing is read over the network


def _python(names: tuple[str, ...]) -> str:
    """The CPython tag an environment's name states (``Python 3.12, Linux x86_64`` -> ``cp312``), else cp311."""
    m = re.search(r"Python 3\.(\d+)", " ".join(names))
    return f"cp3{m.group(1)}" if m else "cp311"


def _has_pins(facts: Facts, name: str, version: str) -> bool:
    """Whether the matrix already says what ``name`` ``version`` pins (an engine's release row, a kernel or family row):
    :func:`glmcompat.decide.rules.implied.resolve_named` reads those."""
    try:
        pub = Version(Version(version).public)
    except InvalidVersion:
        return True
    if any(r.package == name and Version(r.version) == pub for r in facts.rows("release")):
        return True
    try:
        return (name in facts.kernel_packages() and facts.kernel(name, version) is not None) or (
            name in facts.family_packages() and facts.family(name, version) is not None)
    except (ValueError, TypeError):
        return True


def wanted(lock: Lock, facts: Facts) -> list[tuple[str, str, str, str]]:
    """(name, version, python, machine) of the packages whose METADATA pins are to be read: in each environment, every
    package pinned exactly from an index that the matrix has no row of pins for (torch itself, its own nvidia-* and
    triton pins aside). Where the file pins no torch, their exact torch pin decides the torch that installs; where it
    does, one that contradicts the file's makes the file uninstallable (torchtext 0.16.0 pins torch==2.1.0: next to
    torch==2.1.2 pip's resolver stops)."""
    out: dict[tuple[str, str, str], str] = {}
    for env in lock.sets:
        py = _python(env.names)
        for name, ver in env.packages.items():
            if (name == "torch" or env.sources.get(name) is not None or name.startswith(("nvidia-", "triton"))
                    or _has_pins(facts, name, ver)):
                continue
            out.setdefault((name, ver, env.platform), py)
    return [(n, v, py, m) for (n, v, m), py in sorted(out.items())]


def read_pins(lock: Lock, facts: Facts, clients: list[IndexClient],
              failed: list[str] | None = None) -> dict[str, list[str]]:
    """{``name==version``: [``dep==X``, ...]} of the exact pins (no wildcard) the METADATA of each :func:`wanted`
    package declares for its machine, from the first of ``clients`` that has its wheel; a package without one (an
    sdist only) or that cannot be read is left out (the latter named in ``failed``)."""

    def one(item: tuple[str, str, str, str]) -> tuple[str, list[str]]:
        name, ver, py, machine = item
        pub = Version(ver).public
        unread = False
        for client in clients:
            try:
                f = client.find_wheel(canonicalize(name), pub, python=py, platform=f"manylinux_{machine}")
                meta = client.wheel_metadata(f)
            except InputError:  # the index's answer: not there, or no wheel for the machine
                continue
            except (GlmcompatError, OSError):  # no answer (the network)
                unread = True
                continue
            pins = []
            for req, _raw in requirements(meta, py, machine):
                specs = list(req.specifier)
                if len(specs) == 1 and specs[0].operator == "==" and not specs[0].version.endswith(".*"):
                    pins.append(f"{canonicalize(req.name)}=={specs[0].version}")
            return f"{name}=={ver}", sorted(set(pins))
        if unread and failed is not None:
            failed.append(f"{name}=={ver}")
        return f"{name}=={ver}", []

    return {k: v for k, v in _map(one, wanted(lock, facts), workers=8) if v}


def index_clients(lock: Lock, cache: Cache | None, stack: ExitStack) -> list[IndexClient]:
    """The indexes an installer reads ``lock``'s packages from, in its order: the file's ``--index-url`` (which replaces
    the configured index) or the configured one, then its ``--extra-index-url`` ones, as pip does; closed with
    ``stack``."""
    from glmcompat.edges.index import IndexClient  # lazy: only when something is to be read

    urls = list(dict.fromkeys(lock.meta.get("index_urls") or []))
    primary = lock.meta.get("index_url")
    if primary:
        urls = [primary, *(u for u in urls if u != primary)]
    clients = [stack.enter_context(IndexClient(u, cache=cache, retries=1, backoff=0.2)) for u in urls]
    if not primary:  # the configured index stays first unless --index-url replaces it
        clients.insert(0, stack.enter_context(IndexClient(None, cache=cache, retries=1, backoff=0.2)))
    return clients


# A PyTorch-style variant index names its builds' local label by its last path segment (``.../whl/cu128``: every torch
# there is ``+cu128``; ``.../whl/cu113/torch_stable.html``, a find-links page, likewise)
_INDEX_LABEL = re.compile(r"/(cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*|xpu)(?:/torch_stable\.html)?/*$")


def index_label(url: str) -> str | None:
    """The local label of the builds the index at ``url`` serves (``https://host/whl/cu128`` -> ``cu128``), else None."""
    from urllib.parse import urlsplit  # lazy: only for a file that names an index

    m = _INDEX_LABEL.search(urlsplit(url.strip()).path)
    return m.group(1) if m else None


def _installed_label(version: str, primary: str | None, extras: Sequence[str], facts: Facts) -> str | None:
    """The label of the torch ``version`` (no label) an installer takes: pip (and uv, which puts the extra indexes
    first) installs, of the builds every index it reads offers for ``==version``, the highest, and a local label
    sorts above none (``2.7.1+cu128`` > ``2.7.1``). The ``--index-url`` that replaces the configured index is the
    only place the release comes from but the extras; an extra index's CUDA build counts where it was published
    (the matrix has its row: PyTorch's cu121 index has no torch 2.6.0, so PyPI's 2.6.0 installs), its CPU, ROCm and
    XPU builds as named."""
    offered: list[str] = []
    if primary is not None and (label := index_label(primary)):
        offered.append(label)
    for url in extras:
        label = index_label(url)
        if label and (not label.startswith("cu") or facts.torch_build(f"{version}+{label}") is not None):
            offered.append(label)
    if not offered:
        return None
    try:
        return max(offered, key=lambda x: Version(f"{version}+{x}"))
    except InvalidVersion:
        return None


def _pair_torch(facts: Facts, name: str, version: str, torch: str | None) -> str | None:
    """The torch release a torchvision / torchaudio ``version`` is built for: the set's (public), else the one its row
    pins exactly; None when neither is known."""
    if torch is not None:
        try:
            return Version(torch).public
        except InvalidVersion:
            return None
    found = facts.family(name, version)
    spec = found[0] if found else ""
    return spec[2:] if spec.startswith("==") else None


def with_index_labels(lock: Lock, facts: Facts) -> Lock:
    """``lock`` (a resolved-at-install file) with the torch family's exact pins that carry no local label read as the
    build its variant index installs (``--extra-index-url https://host/whl/cu128`` + ``torch==2.7.1``: pip installs
    ``torch==2.7.1+cu128``, a CUDA 12.8 build with sm_120 code, not PyPI's CUDA 12.6 wheel); torchvision and
    torchaudio take the label the indexes offer for the torch they pair with. A torch the file does not pin but a package pins
    exactly (vllm 0.9.2: torch==2.7.0, by its row or ``meta["index_pins"]``) is that build too, and so in the set.
    Packages conda installs are left as they are."""
    from glmcompat.model.environments import BUILT_FROM_SOURCE  # lazy: keeps the start-up path light

    primary = lock.meta.get("index_url") or None
    urls = [u for u in lock.meta.get("index_urls") or [] if u != primary]
    if lock.kind not in RESOLVED_AT_INSTALL or not (urls or primary) or not any(map(index_label, [*urls, primary or ""])):
        return lock
    keep = set(lock.meta.get("conda_packages") or [])
    pins: Mapping[str, list[str]] = lock.meta.get("index_pins", {})
    family = ["torch", *sorted(facts.family_packages())]
    sets, changed = [], False
    for env in lock.sets:
        view = facts.on(env.platform)
        packages, unpinned = dict(env.packages), dict(env.unpinned)
        if "torch" not in packages and "torch" not in keep:
            implied = resolve_named(packages, unpinned, view, pins)[0].get("torch")
            if implied is not None and "+" not in implied[0]:
                if label := _installed_label(implied[0], primary, urls, view):
                    packages["torch"] = f"{implied[0]}+{label}"
                    unpinned.pop("torch", None)
        names = [n for n in family if n in packages and n not in keep and env.sources.get(n) not in BUILT_FROM_SOURCE]
        for name in names:
            version = packages[name]
            if "+" in version:
                continue
            # torchvision / torchaudio: the builds the indexes offer for the torch release they pair with (the set's
            # torch, else the one their row pins), whatever label the set's torch carries
            torch = version if name == "torch" else _pair_torch(view, name, version, packages.get("torch"))
            label = _installed_label(torch, primary, urls, view) if torch else index_label(primary or "")
            if label:
                packages[name] = f"{version}+{label}"
        if packages != env.packages:
            sets.append(replace(env, packages=packages, unpinned=unpinned))
            changed = True
        else:
            sets.append(env)
    return replace(lock, sets=tuple(sets)) if changed else lock


def with_index_pins(lock: Lock, facts: Facts) -> Lock:
    """``lock`` with ``meta["index_pins"]`` (:func:`read_pins`, the whole answer stored by what was asked) where it is a
    resolved-at-install file with packages the matrix has no pins of (unless reading over the network is off), read
    as it installs (:func:`with_index_labels`); the same ``lock`` where nothing changes."""
    todo = [] if lock.kind not in RESOLVED_AT_INSTALL or os.environ.get(PROBE_ENV) else wanted(lock, facts)
    if todo:
        from glmcompat.edges.cache import Cache  # lazy: only when something is to be read

        cache = Cache()
        # what a release's METADATA pins does not change: the whole answer is stored by what was asked and where
        h = hasher()
        h.update(json.dumps([todo, lock.meta.get("index_url") or "", lock.meta.get("index_urls") or []]).encode())
        key = f"indexpins-v1-{h.hexdigest()}"
        hit = cache.get_json(key)
        if isinstance(hit, dict):  # the kind's shape was checked on reading (glmcompat.edges.cache.SHAPES)
            pins: dict[str, list[str]] = hit
        else:
            failed: list[str] = []
            with ExitStack() as stack:
                pins = read_pins(lock, facts, index_clients(lock, cache, stack), failed)
            if not failed:  # a package not read this time (no network) is asked again next time
                cache.put_json(key, pins)
        if pins:
            lock = replace(lock, meta={**lock.meta, "index_pins": pins})
    return with_index_labels(lock, facts)


def installed_view(lock: Lock, facts: Facts) -> Lock:
    """``lock`` with what the installer adds to each environment of a resolved-at-install file (the matrix's pins and
    ``meta["index_pins"]``, :func:`~glmcompat.decide.rules.implied.resolve_named`) in its packages: what the artifacts
    a set installs are read for (the torch an extension is compared with is the one that installs)."""
    if lock.kind not in RESOLVED_AT_INSTALL:
        return lock
    pins: Mapping[str, list[str]] = lock.meta.get("index_pins", {})
    sets = []
    for e in lock.sets:
        implied, left = resolve_named(e.packages, e.unpinned, facts.on(e.platform), pins)
        sets.append(replace(e, packages={**e.packages, **{n: v for n, (v, _, _) in implied.items()}}, unpinned=left)
                    if implied else e)
    return replace(lock, sets=tuple(sets))


def judged_artifacts(lock: Lock, facts: Facts, *, platforms: Sequence[str] | None = None, ships_on: Collection[str] = (),
                     read_wheels: list[bool] | None = None) -> dict[tuple[str, ...], ArtifactFacts]:
    """What the artifacts of what ``lock`` installs say (glmcompat.ops.artifacts.read_artifacts): the one reading that
    ``check`` and ``lock`` both judge with, so a lock ``lock`` writes is the lock ``check`` passes. ``lock`` is read
    with its packages' own exact pins where the matrix has none (:func:`with_index_pins`)."""
    from glmcompat.ops.artifacts import read_artifacts  # lazy: the engine, only when something is judged

    return read_artifacts(installed_view(lock, facts), facts, resolved_at_install=lock.kind in RESOLVED_AT_INSTALL,
                          read_wheels=read_wheels, platforms=platforms, ships_on=ships_on)


NUMPY_TIMEOUT = 120.0  # seconds the resolution of a file's numpy may take; past it, numpy stays as the file has it


def with_installed_numpy(lock: Lock, artifacts: Mapping[tuple[str, ...], ArtifactFacts]) -> Lock:
    """``lock`` with the numpy its installer puts in each Linux x86_64 environment that does not pin numpy exactly,
    where that numpy is 2 or newer and an extension of the set was built against NumPy 1.x (``artifacts``): a file that
    pins numexpr 2.8.4 and leaves numpy open gets the index's newest numpy every package of it admits, and numexpr's
    extension fails to import there. Which numpy that is, is the resolver's answer (``uv pip compile`` over what the
    environment asks for, with the file's indexes, no source builds); where it gives none (a package it cannot
    resolve, no network), numpy stays as the file has it. conda's numpy is left alone."""
    from glmcompat.model.environments import BUILT_FROM_SOURCE  # lazy: keeps the start-up path light

    if lock.kind not in RESOLVED_AT_INSTALL or os.environ.get(PROBE_ENV) or os.environ.get("GLMCOMPAT_OFFLINE"):
        return lock
    if "numpy" in (lock.meta.get("conda_packages") or ()) or not any(a.numpy_abi == 1 for a in artifacts.values()):
        return lock
    conda = set(lock.meta.get("conda_packages") or ())
    sets, changed = [], False
    for env in lock.sets:
        if env.platform != "x86_64" or "numpy" in env.packages:
            sets.append(env)
            continue
        lines = [f"{n}=={v}" for n, v in sorted(env.packages.items())
                 if n not in conda and env.sources.get(n) not in BUILT_FROM_SOURCE and env.sources.get(n) is None]
        lines += [f"{n}{spec}" for n, spec in sorted(env.unpinned.items()) if n not in conda]
        found = _resolved_numpy(lock, lines, _python(env.names) if "Python" in " ".join(env.names) else
                                _python_of_file(lock.requires_python))
        if found is None or Version(found).major < 2:
            sets.append(env)
            continue
        unpinned = {n: v for n, v in env.unpinned.items() if n != "numpy"}
        sets.append(replace(env, packages={**env.packages, "numpy": found}, unpinned=unpinned))
        changed = True
    return replace(lock, sets=tuple(sets)) if changed else lock


def _python_of_file(requires_python: str | None) -> str:
    """The CPython tag of the one minor ``requires_python`` allows (``==3.9.12`` -> ``cp39``), else cp311."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # lazy: keeps the start-up path light

    try:
        spec = SpecifierSet((requires_python or "").replace(" ", ""))
    except InvalidSpecifier:
        return "cp311"
    minors = [m for m in range(8, 15) if any(spec.contains(f"3.{m}.{p}") for p in range(0, 30))]
    return f"cp3{minors[0]}" if requires_python and len(minors) == 1 else "cp311"


def _resolved_numpy(lock: Lock, lines: list[str], python: str) -> str | None:
    """The numpy ``uv pip compile`` picks for ``lines`` (requirement lines) with the file's indexes, on Linux x86_64
    and CPython ``python``; None where uv gives no resolution."""
    import subprocess  # lazy: only where a NumPy 1.x extension meets an open numpy
    import tempfile  # lazy: likewise

    from glmcompat.edges.uv import uv_binary, uv_env  # lazy: likewise

    if not lines:
        return None
    primary = lock.meta.get("index_url")
    head = ([f"--index-url {primary}"] if primary else []) + [
        f"--extra-index-url {u}" for u in dict.fromkeys(lock.meta.get("index_urls") or []) if u != primary]
    with tempfile.TemporaryDirectory(prefix="glmcompat-numpy-") as tmp:
        req = os.path.join(tmp, "requirements.in")
        with open(req, "w", encoding="utf-8") as f:
            f.write("\n".join([*head, *lines]) + "\n")
        try:
            p = subprocess.run([uv_binary(), "pip", "compile", req, "--quiet", "--no-header", "--no-annotate",
                                "--python-version", f"{python[2]}.{python[3:]}", "--python-platform",
                                "x86_64-manylinux_2_28", "--index-strategy", "unsafe-best-match"],
                               cwd=tmp, env=uv_env(None), capture_output=True, text=True, timeout=NUMPY_TIMEOUT,
                               stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired, GlmcompatError):
            return None
    if p.returncode != 0:
        return None
    m = re.search(r"^numpy==([0-9][0-9A-Za-z.+!-]*)\s*$", p.stdout, re.M)
    return m.group(1) if m else None


__all__ = ["index_clients", "index_label", "installed_view", "judged_artifacts", "read_pins", "wanted", "with_index_labels",
           "with_index_pins", "with_installed_numpy"]

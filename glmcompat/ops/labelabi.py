"""The C++ ABI a build label states, set against the ABI of the set's torch, where an artifact's own bytes cannot be
read (a URL this machine cannot reach, no network for it).

A compiled torch extension built with ``_GLIBCXX_USE_CXX11_ABI=0`` refers to torch's ``std::string``-taking functions
in the old mangling (``...RKSs``); a torch built with the C++11 ABI exports them only as
``...RKNSt7__cxx1112basic_string...``, so the extension fails to load ("undefined symbol"), and the reverse. Labels
that state the flag: flash-attn's release wheels (``+cu12torch2.8cxx11abiFALSE``, named in its setup.py from
``torch._C._GLIBCXX_USE_CXX11_ABI``) and the packages built the same way (mamba-ssm, causal-conv1d).

torch's own ABI is read from its bytes: which form of ``c10::detail::torchCheckFail`` its ``torch/lib/libc10.so``
exports (a library of about 1.4 MB, read once per torch wheel and stored by the wheel's sha256). A CUDA variant
(``+cu128``) not on the configured index is read as the same release's wheel there, as the artifact reader does for
torch's exports."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import replace
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from glmcompat.model.errors import GlmcompatError

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.edges.cache import Cache
    from glmcompat.edges.index import IndexClient
    from glmcompat.model.artifacts import ArtifactFacts
    from glmcompat.readers.formats.common import Lock

CHECK_FAIL = b"_ZN3c106detail14torchCheckFailEPKcS2_j"  # c10::detail::torchCheckFail(const char*, const char*, unsigned,
CXX11 = CHECK_FAIL + b"RKNSt7__cxx1112basic_string"  # ... const std::__cxx11::string&): the C++11 ABI
OLD = CHECK_FAIL + b"RKSs"  # ... const std::string&) in the old ABI
LIBC10 = "torch/lib/libc10.so"
VERSION = 1  # of the stored answer (kind ``cxx11``)

_LABEL = re.compile(r"cxx11abi(true|false)", re.IGNORECASE)


def label_abi(version: str) -> bool | None:
    """True when a version's local label states ``cxx11abiTRUE``, False for ``cxx11abiFALSE``, None when it states
    neither."""
    try:
        local = Version(version).local or ""
    except InvalidVersion:
        return None
    m = _LABEL.search(local)
    return None if m is None else m.group(1).lower() == "true"


def abi_of(libc10: bytes) -> bool | None:
    """Whether a ``libc10.so`` is built with the C++11 ABI (from the form of torchCheckFail it carries); None when
    it carries neither."""
    if CXX11 in libc10:
        return True
    if OLD in libc10:
        return False
    return None


def torch_cxx11(clients: Sequence[IndexClient], cache: Cache | None, torch: str, python: str, machine: str
                ) -> bool | None:
    """The C++ ABI of ``torch`` (True: C++11) from its wheel's ``libc10.so`` on the first of ``clients`` that has it
    (the release's wheel where a variant is on none); None when it cannot be read."""
    from glmcompat.edges.ranges import HttpRangeReader  # lazy: httpx, only when a torch is read
    from glmcompat.readers.wheelzip import RemoteZip  # lazy: only when a torch is read

    found = None
    for ver in dict.fromkeys((torch, Version(torch).public)):
        for client in clients:
            try:
                found = (client, client.find_wheel("torch", ver, python=python, platform=f"manylinux_{machine}"))
                break
            except GlmcompatError:
                continue
        if found is not None:
            break
    if found is None:
        return None
    client, f = found
    key = f"cxx11-v{VERSION}-{f.sha256}" if f.sha256 else None
    hit = cache.get_json(key) if cache is not None and key else None
    if isinstance(hit, dict) and isinstance(hit.get("cxx11"), bool):
        return bool(hit["cxx11"])
    try:
        zf = RemoteZip(HttpRangeReader(client.client, f.url, name=f.filename, size=f.size, retries=client.retries,
                                       backoff=client.backoff))
        got = abi_of(zf.read(zf.member(LIBC10)))
    except (GlmcompatError, OSError, KeyError):
        return None
    if got is not None and cache is not None and key:
        cache.put_json(key, {"cxx11": got})
    return got


def with_label_abi(lock: Lock, arts: Mapping[tuple[str, ...], ArtifactFacts], clients: Sequence[IndexClient],
                   cache: Cache | None, python: str = "cp311") -> dict[tuple[str, ...], ArtifactFacts]:
    """``arts`` where each artifact that was not read, and whose label states a C++ ABI, carries the ABI of every
    torch installed beside it (``ArtifactFacts.torch_cxx11``), for the rules to set against the label."""
    out = dict(arts)
    known: dict[tuple[str, str], bool | None] = {}
    for key, a in arts.items():
        if a.read or label_abi(a.version) is None:
            continue
        machine = key[2] if len(key) > 2 else "x86_64"
        found: dict[str, bool] = {}
        for env in lock.sets:
            torch = env.packages.get("torch")
            if env.platform != machine or torch is None or env.packages.get(a.name) != a.version:
                continue
            if (torch, machine) not in known:
                known[(torch, machine)] = torch_cxx11(clients, cache, torch, python, machine)
            abi = known[(torch, machine)]
            if abi is not None:
                found[Version(torch).public] = abi
        if found:
            out[key] = replace(a, torch_cxx11=found)
    return out


def read_label_abi(lock: Lock, arts: Mapping[tuple[str, ...], ArtifactFacts]) -> Mapping[tuple[str, ...], ArtifactFacts]:
    """:func:`with_label_abi` over the configured index (opened only when an unread artifact's label states a C++
    ABI); ``arts`` as they are where reading over the network is off (``GLMCOMPAT_NO_ARTIFACTS``)."""
    if os.environ.get("GLMCOMPAT_NO_ARTIFACTS") or not any(
            not a.read and label_abi(a.version) is not None for a in arts.values()):
        return arts
    from glmcompat.edges.cache import Cache  # lazy: only when something is to be read
    from glmcompat.ops.indexpins import index_clients  # lazy: only when something is to be read

    cache = Cache()
    with ExitStack() as stack:
        return with_label_abi(lock, arts, index_clients(lock, cache, stack), cache)


__all__ = ["abi_of", "label_abi", "read_label_abi", "torch_cxx11", "with_label_abi"]

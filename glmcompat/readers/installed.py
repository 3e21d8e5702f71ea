"""The distributions installed in an environment, read from the ``*.dist-info`` (and ``*.egg-info``) folders of
its site-packages: each one's name and version (a local label such as ``+cu128`` kept), as ``uv pip list``
would show them. Only the metadata headers are read (never a description), so a large environment costs a few
milliseconds.

Where two folders name one distribution (a half-finished upgrade left both), the first site directory wins and,
inside it, the newer record; such leftovers and unreadable records are returned as problems, never raised: an
environment is judged by what it will import.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from glmcompat.model.names import canonicalize

_HEAD = 64 * 1024  # the headers of any real METADATA fit in this; the description after them is never read


@dataclass(frozen=True, order=True)
class Installed:
    """One installed distribution: canonical ``name``, ``version`` as its METADATA gives it, the ``path`` of
    its metadata folder."""

    name: str
    version: str
    path: str
    direct: bool = False  # installed from a URL, a folder or editable (PEP 610 direct_url.json): no index has it

    @property
    def pin(self) -> str:
        return f"{self.name}=={self.version}"


@dataclass(frozen=True)
class InstalledEnvironment:
    """What an environment holds: its distributions by canonical name, and the problems met reading them."""

    packages: dict[str, Installed]
    problems: tuple[str, ...] = ()

    def versions(self) -> dict[str, str]:
        return {n: d.version for n, d in sorted(self.packages.items())}


def _headers(path: str) -> tuple[str, str] | None:
    """(Name, Version) from a METADATA / PKG-INFO file's header block (core metadata: one ``Key: value`` a
    line until the first blank line; both fields are single-line); None when unreadable or incomplete."""
    try:
        with open(path, "rb") as f:
            raw = f.read(_HEAD)
    except OSError:
        return None
    name = version = None
    for line in raw.decode("utf-8", "replace").splitlines():
        if not line.strip():
            break
        key, sep, value = line.partition(":")
        if not sep or line[:1] in (" ", "\t"):
            continue
        k = key.strip().lower()
        if k == "name" and name is None:
            name = value.strip()
        elif k == "version" and version is None:
            version = value.strip()
    if not name or not version:
        return None
    return name, version


def read_site(site: str) -> tuple[list[Installed], list[str]]:
    """The distributions whose metadata folder sits directly in ``site``, sorted, and the problems met."""
    found: list[Installed] = []
    problems: list[str] = []
    try:
        entries = sorted(os.listdir(site))
    except FileNotFoundError:
        return found, problems
    except OSError as e:
        return found, [f"{site}: cannot list it ({e.strerror})"]
    for entry in entries:
        if entry.endswith(".dist-info"):
            meta = os.path.join(site, entry, "METADATA")
        elif entry.endswith(".egg-info"):
            base = os.path.join(site, entry)
            meta = os.path.join(base, "PKG-INFO") if os.path.isdir(base) else base
        else:
            continue
        head = _headers(meta)
        if head is None:
            problems.append(f"{os.path.join(site, entry)}: no readable Name and Version in its metadata")
            continue
        folder = os.path.join(site, entry)
        found.append(Installed(canonicalize(head[0]), head[1], folder, os.path.isfile(os.path.join(folder, "direct_url.json"))))
    return found, problems


def read_environment(sites: Iterable[str]) -> InstalledEnvironment:
    """Every distribution in ``sites`` (an interpreter's purelib and platlib, in its ``sys.path`` order)."""
    def key(d: Installed) -> tuple[int, object]:
        try:
            return 1, Version(d.version)
        except InvalidVersion:
            return 0, d.version

    packages: dict[str, Installed] = {}
    problems: list[str] = []
    seen: set[str] = set()
    for site in sites:
        real = os.path.realpath(site)
        if real in seen:
            continue
        seen.add(real)
        dists, bad = read_site(site)
        problems.extend(bad)
        here: dict[str, list[Installed]] = {}
        for d in dists:
            here.setdefault(d.name, []).append(d)
        for name, group in sorted(here.items()):
            group.sort(key=key)
            if len(group) > 1:
                problems.append(f"{name}: {len(group)} metadata folders in {site} "
                                f"({', '.join(os.path.basename(d.path) for d in group)}); judged as {group[-1].version}")
            packages.setdefault(name, group[-1])
    return InstalledEnvironment(dict(sorted(packages.items())), tuple(problems))


__all__ = ["InstalledEnvironment", "Installed", "read_environment", "read_site"]

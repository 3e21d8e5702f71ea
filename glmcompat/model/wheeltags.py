"""Wheel tags: which tags a glibc Linux CPython accepts, best first, and whether a wheel file fits one.

The one implementation of tag logic: the resolver's wheel selection (:mod:`glmcompat.edges.index`) and the uv.lock
reader's "no wheel here" judgement (:mod:`glmcompat.readers.formats.uvlock`) both use it. On :mod:`packaging.tags`, so not
for the start-up path (:mod:`glmcompat.readers.uvlockscan` keeps its own ``any``-wheel shortcut and defers here).
"""

from __future__ import annotations

from functools import lru_cache

from packaging.tags import Tag, compatible_tags, cpython_tags, parse_tag
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from glmcompat.model.errors import InputError
from glmcompat.model.numbers import to_int

def parse_python(python: str) -> tuple[int, int]:
    """``cp312`` / ``3.12`` / ``312`` -> ``(3, 12)``."""
    text = python.strip().lower().removeprefix("cp").removeprefix("py")
    if "." in text:
        major, _, minor = text.partition(".")
    else:
        major, minor = text[:1], text[1:]
    if not (major.isdigit() and minor.isdigit()):
        raise InputError(f"invalid Python version {python!r} (expected e.g. 'cp312' or '3.12')")
    return to_int(major, "--python"), to_int(minor, "--python")


_ARCHES = ("x86_64", "aarch64", "ppc64le", "s390x")
MAX_GLIBC_MINOR = 999  # of a manylinux_2_<minor> tag


def platform_tags(platform: str = "manylinux_x86_64") -> list[str]:
    """Platform tags a Linux machine described by ``platform`` accepts, best first.

    ``platform`` is an architecture (``x86_64``), ``manylinux_x86_64`` (any glibc), a full tag
    (``manylinux_2_28_x86_64``: that glibc or older) or ``linux_x86_64``.
    """
    p = platform.strip().lower()
    arch = next((a for a in _ARCHES if p.endswith(a)), None)
    if arch is None:
        raise InputError(f"unsupported platform {platform!r} (expected e.g. 'manylinux_2_28_x86_64' or 'x86_64')")
    max_glibc = 40
    head = p[: -len(arch)].rstrip("_")
    if head.startswith("manylinux_"):
        parts = head.split("_")
        if len(parts) == 3 and parts[1] == "2" and parts[2].isdigit():
            max_glibc = to_int(parts[2], "platform")
            if max_glibc > MAX_GLIBC_MINOR:  # every tag down to 2.5 is listed: a huge minor would list millions
                raise InputError(f"unsupported platform {platform!r} (glibc 2.{max_glibc}: no glibc has a minor "
                                 f"above {MAX_GLIBC_MINOR})")
        elif head != "manylinux":
            raise InputError(f"unsupported platform {platform!r}")
    elif head == "manylinux2014":
        max_glibc = 17
    elif head not in ("", "manylinux", "linux"):
        raise InputError(f"unsupported platform {platform!r}")
    tags: list[str] = []
    for minor in range(max_glibc, 4, -1):
        tags.append(f"manylinux_2_{minor}_{arch}")
        legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}.get(minor)
        if legacy and (arch in ("x86_64",) or legacy == "manylinux2014"):
            tags.append(f"{legacy}_{arch}")
    tags.append(f"linux_{arch}")
    return tags


@lru_cache(maxsize=32)
def supported_tags(python: str = "cp311", platform: str = "manylinux_x86_64") -> tuple[Tag, ...]:
    """Tags an interpreter ``python`` on ``platform`` installs, best first (as pip orders them); computed once per
    process (a thousand tags: a cold lock asked for them 14 times, and :func:`glmcompat.edges.index.select_wheel`
    ranks each tuple once)."""
    version = parse_python(python)
    plats = platform_tags(platform)
    interp = f"cp{version[0]}{version[1]}"
    # The ABI is named, not read from the running interpreter (packaging's default): the target is a standard
    # CPython whatever build runs glmcompat (a free-threaded or debug one would add cp313t / cp312d tags).
    return (*cpython_tags(version, abis=[interp], platforms=plats), *compatible_tags(version, interp, plats))


@lru_cache(maxsize=32)
def _supported_set(python: str, machine: str) -> frozenset[str]:
    return frozenset(str(t) for t in supported_tags(python, f"manylinux_{machine}"))


@lru_cache(maxsize=4096)
def _tags(triple: str) -> tuple[str, ...]:
    """The tags a wheel name's last three parts (``cp311-cp311-manylinux_2_28_x86_64``) expand to, as text, parsed
    once per process: a lock's judge asks for each wheel in each environment (2,600 times for a 260-package lock)."""
    return tuple(str(t) for t in parse_tag(triple))


@lru_cache(maxsize=8192)
def wheel_file_tags(filename: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(its tags as text, their platforms) of a wheel file name, as :func:`packaging.utils.parse_wheel_filename` reads
    it (name, version and tags checked); None where it is not one. Parsed once a process: a serving lock names two
    thousand wheel files, and its judge asks of each twice (:func:`glmcompat.ops.artifacts.stored_key`, then
    :func:`~glmcompat.ops.artifacts.probe_lock`). The name is split as packaging splits it (its dash count, then the
    last part, the tags, after two more dashes) and each piece is judged by packaging once a process: the release's
    (name, version, build tag: the same for each of a release's thirty wheels) inside a wheel name otherwise valid,
    and the tag set (shared by many releases) likewise (a cold project lock's judge parsed 1,900 names whole, each
    version again: 15 ms)."""
    if not filename.endswith(".whl") or filename.count("-") not in (4, 5):
        return None
    release, python, abi, platform = filename[:-4].rsplit("-", 3)
    return _tagset(f"{python}-{abi}-{platform}") if _release_ok(release) else None


@lru_cache(maxsize=4096)
def _release_ok(release: str) -> bool:
    """Whether ``<name>-<version>[-<build>]`` is the start of a valid wheel file name (packaging's checks of the
    name, the version and the build tag, on the name completed with a valid tag set)."""
    try:
        parse_wheel_filename(f"{release}-py3-none-any.whl")
    except InvalidWheelFilename:
        return False
    return True


@lru_cache(maxsize=4096)
def _tagset(triple: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """:func:`wheel_file_tags` of the tag part ``<python>-<abi>-<platform>`` of a wheel name otherwise valid."""
    try:
        tags = parse_wheel_filename(f"x-0-{triple}.whl")[3]
    except InvalidWheelFilename:
        return None
    return tuple(str(t) for t in tags), tuple(t.platform for t in tags)


def supported_set(python: str, machine: str) -> frozenset[str]:
    """The tags (as text) CPython ``python`` on glibc Linux ``machine`` installs; computed once a process."""
    return _supported_set(python, machine)


def prepare(python: str, machine: str) -> None:
    """Compute now, once per process, the tags :func:`wheel_fits` and :func:`glibc_needed` compare with for CPython
    ``python`` on glibc Linux ``machine`` (about 5 ms each): for a caller that waits on something else meanwhile."""
    _supported_set(python, machine)


def wheel_triple(filename: str) -> str | None:
    """The last three parts of a wheel's file name (by its name, URL or path), its tags as written
    (``cp311-cp311-manylinux_2_28_x86_64``); None where it names no wheel (not ``.whl``, or fewer than five parts)."""
    name = filename.split("?")[0].split("#")[0].rsplit("/", 1)[-1]
    if not name.endswith(".whl"):
        return None
    parts = name[:-4].split("-")
    return None if len(parts) < 5 else "-".join(parts[-3:])


def glibc_needed(filename: str, machine: str, python: str) -> tuple[int, int] | None:
    """The lowest glibc a wheel (by its file name) needs on CPython ``python`` on glibc Linux ``machine``: of its
    tags that install there, the oldest manylinux one's (``manylinux_2_34`` -> (2, 34); ``manylinux2014`` -> (2, 17));
    (0, 0) for a pure or ``linux_`` wheel; None where the wheel does not install there or the name is no wheel's."""
    triple = wheel_triple(filename)
    return None if triple is None else triple_glibc(triple, machine, python)


@lru_cache(maxsize=4096)
def triple_glibc(triple: str, machine: str, python: str) -> tuple[int, int] | None:
    """:func:`glibc_needed` of a wheel whose name ends in ``triple`` (:func:`wheel_triple`): the same for every wheel
    of that tag set (a lock's two thousand wheels have a few dozen), so answered once a process."""
    fits = [t for t in _tags(triple) if t in _supported_set(python, machine)]
    if not fits:
        return None
    legacy = {"manylinux2014": (2, 17), "manylinux2010": (2, 12), "manylinux1": (2, 5)}
    floors = []
    for t in fits:
        plat = t.rsplit("-", 1)[-1]
        if plat.startswith("manylinux_"):
            bits = plat.split("_")
            floors.append((int(bits[1]), int(bits[2])))
        else:
            floors.append(legacy.get(plat.removesuffix(f"_{machine}"), (0, 0)))
    return min(floors)


def wheel_fits(filename: str, machine: str, python: str) -> bool:
    """Whether a wheel (by its file name, URL or path) installs on CPython ``python`` (``3.12``) on glibc Linux
    ``machine``: one of its tags (:func:`packaging.tags.parse_tag` of the name's last three parts) is among
    :func:`supported_tags` for that Python and ``manylinux_<machine>`` -- the same tags the resolver selects
    wheels by. A name that is not a wheel's counts as fitting (nothing to judge)."""
    triple = wheel_triple(filename)
    return True if triple is None else triple_fits(triple, machine, python)


@lru_cache(maxsize=4096)
def triple_fits(triple: str, machine: str, python: str) -> bool:
    """:func:`wheel_fits` of a wheel whose name ends in ``triple`` (:func:`wheel_triple`), answered once a process."""
    return not _supported_set(python, machine).isdisjoint(_tags(triple))

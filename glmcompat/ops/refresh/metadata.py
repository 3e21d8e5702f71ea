"""What a release's METADATA says, read for the matrix (pure): the requirements that apply on a Linux machine,
the torch requirement and its exact pin, the CUDA runtime it pins, an engine release's pins."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from glmcompat.edges.index import iter_requires_dist
from glmcompat.model import platforms

# Requirements an sglang [[release]] row keeps: the tracked packages and these.
RELEASE_EXTRA = ("cuda-python",)
# Tracked packages a [[release]] row leaves out: a row holds the x86_64 pins without their markers and is
# read for aarch64 too, and sglang pins torchcodec on x86_64 only (0.5.23: torchcodec==0.17.0; its marker
# leaves aarch64 out): kept, it would make an aarch64 lock lack a package sglang does not install there.
RELEASE_SKIP = frozenset({"torchcodec"})
_CUDA_RUNTIME = re.compile(r"^(nvidia-cuda-runtime(-cu\d+)?|cuda-toolkit)$")


def _tag_env(python: str = "cp311", machine: str = "x86_64") -> dict[str, str]:
    """The marker environment of the wheels glmcompat reads: CPython on Linux ``machine``, no extras."""
    digits = python.removeprefix("cp")
    pyver = f"{digits[0]}.{digits[1:]}" if digits.isdigit() and len(digits) >= 2 else "3.11"
    return platforms.marker_env(pyver, machine)


def requirements(metadata: str, python: str = "cp311", machine: str = "x86_64",
                 extras: Iterable[str] = ()) -> list[tuple[Requirement, str]]:
    """(parsed requirement, raw text) of each ``Requires-Dist`` that applies on Linux ``machine`` without extras,
    or with one of ``extras``."""
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


def same_spec(a: str, b: str) -> bool:
    try:
        return set(SpecifierSet(a)) == set(SpecifierSet(b))
    except InvalidSpecifier:
        return a == b

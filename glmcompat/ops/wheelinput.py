"""What the wheel probes are asked about, parsed once at the edge: a ``NAME==VERSION`` pin, a ``NAME @ URL`` or a wheel
path (:func:`parse_artifact`), a ``--platform`` and a ``--target``."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from glmcompat.model.numbers import check_digits, to_int
from glmcompat.model.errors import InputError
from glmcompat.model.gpu import parse_capability
from glmcompat.model.platforms import PLATFORMS
from glmcompat.model.wheeltags import platform_tags

if TYPE_CHECKING:
    pass


# ------------------------------------------------------------------------------------------------
# Input
# ------------------------------------------------------------------------------------------------


def parse_pin(text: str) -> tuple[str, str]:
    """``sgl-kernel==0.3.21`` -> ``("sgl-kernel", "0.3.21")``; raise :class:`InputError` otherwise."""
    name, sep, version = check_digits(text, "pin").strip().partition("==")
    if not sep or not re.match(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$", name.strip()):
        raise InputError(f"expected NAME==VERSION, got {text!r}")
    try:
        Version(version.strip())
    except InvalidVersion:
        raise InputError(f"invalid version {version.strip()!r} in {text!r}") from None
    return str(canonicalize_name(name.strip())), version.strip()


def machine_of(platform: str) -> str:
    """The machine (``x86_64`` / ``aarch64``: :data:`glmcompat.matrix.view.PLATFORMS`) a ``--platform`` value names:
    an architecture, ``manylinux_aarch64`` or a full tag such as ``manylinux_2_28_aarch64``. A tag glmcompat
    cannot read (``win_amd64``) or an architecture it keeps no facts for (``ppc64le``) is an InputError."""
    p = platform.strip().lower()
    if p in ("arm64", "amd64"):
        p = {"arm64": "aarch64", "amd64": "x86_64"}[p]
    arch = next((a for a in PLATFORMS if p.endswith(a)), None)
    if arch is None:
        raise InputError(f"unknown platform {platform!r} (known: {', '.join(PLATFORMS)}, or a manylinux tag of one, "
                         "e.g. 'manylinux_2_28_aarch64')")
    platform_tags(p)  # the tag's shape
    return arch


def wheel_platform(platform: str) -> str:
    """The ``--platform`` value to hand the wheel picker (``arm64`` -> ``aarch64``)."""
    p = platform.strip().lower()
    return {"arm64": "aarch64", "amd64": "x86_64"}.get(p, platform)


def parse_target(text: str) -> tuple[str, tuple[int, int]]:
    """``sm120`` / ``sm_120`` / ``12.0`` -> ``("sm120", (12, 0))``."""
    t = check_digits(text, "--target").strip().lower()
    if re.match(r"^\d+\.\d$", t):
        cap = parse_capability(t)
        return f"sm{cap[0]}{cap[1]}", cap
    m = re.match(r"^sm_?(\d+)(\d)$", t)
    if not m:
        raise InputError(f"invalid target {text!r} (expected e.g. 'sm120', 'sm_90' or '12.0')")
    cap = (to_int(m.group(1), "--target"), int(m.group(2)))
    return f"sm{cap[0]}{cap[1]}", cap


@dataclass(frozen=True, slots=True)
class Artifact:
    """What ``abi``/``arch`` are asked to read: ``name`` ``version`` from the index (``location`` None), or the wheel at
    ``location`` (a URL, ``file://`` URL or local path), whose name and version come from its file name."""

    name: str
    version: str
    location: str | None = None


def _wheel_name(filename: str, text: str) -> tuple[str, str]:
    try:
        name, version, _, _ = parse_wheel_filename(filename)
    except InvalidWheelFilename:
        raise InputError(f"{filename!r} is not a wheel file name (in {text!r})") from None
    return str(name), str(version)


def parse_artifact(text: str) -> Artifact:
    """``NAME==VERSION`` (the index's wheel), ``NAME @ URL`` (a wheel URL or ``file://``) or the path of a wheel file;
    anything else is an InputError (exit 2, one line)."""
    t = text.strip()
    if "@" in t and "==" not in t.split("@", 1)[0]:
        name, _, url = t.partition("@")
        url = url.strip()
        if not re.match(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$", name.strip()) or not url:
            raise InputError(f"expected NAME @ URL, got {text!r}")
        wname, wver = _wheel_name(url.split("#")[0].split("?")[0].rsplit("/", 1)[-1], text)
        if canonicalize_name(name.strip()) != wname:
            raise InputError(f"{name.strip()!r} names the wheel of {wname!r} in {text!r}")
        return Artifact(wname, wver, url)
    if t.endswith(".whl") or os.sep in t:
        if not os.path.isfile(t):
            raise InputError(f"no such wheel file: {t!r}")
        wname, wver = _wheel_name(os.path.basename(t), text)
        return Artifact(wname, wver, t)
    name, version = parse_pin(t)
    return Artifact(name, version)

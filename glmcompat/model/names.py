"""Names as glmcompat compares them: packages (PEP 503), versions (PEP 440), GPU targets, CUDA labels.
Imports only ``re`` (packaging's Version on demand): these run on the warm path."""

from __future__ import annotations

import re


def canonicalize(name: str) -> str:
    """PEP 503 name normalization: packaging.utils.canonicalize_name of the stripped name (a property test holds
    them equal), for the modules that do not import packaging (the model layer, the warm paths); a module that
    imports packaging anyway uses canonicalize_name itself."""
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def normalize_version(version: str) -> str:
    """The PEP 440 normal form of ``version`` (``2.9.1+CU128`` -> ``2.9.1+cu128``); InvalidVersion if none."""
    from packaging.version import Version  # lazy: the model layer leaves packaging to its callers

    return str(Version(version))


def normalize_target(name: str) -> str:
    """``sm_120`` / ``SM120`` / ``sm120`` -> ``sm120``."""
    return name.strip().lower().replace("_", "")


def product_key(name: str) -> str:
    """The one spelling a product name is looked up by: lower case, letters and digits only
    (``RTX 5090`` -> ``rtx5090``, ``RTX PRO 6000 Blackwell`` -> ``rtxpro6000blackwell``, ``DGX Spark (GB10)`` ->
    ``dgxsparkgb10``)."""
    return "".join(c for c in name.lower() if c.isascii() and c.isalnum())


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

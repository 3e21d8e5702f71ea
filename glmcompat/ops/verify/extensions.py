"""Every installed distribution that ships an extension module, imported: ``extension:<distribution>`` probes.

The parent finds them (:func:`scan`): each ``*.dist-info`` on the search path, first one of a name wins as for
Python, its ``RECORD`` read for files with an extension-module suffix (``importlib.machinery.EXTENSION_SUFFIXES``)
under importable folders; a plain ``lib*.so`` is a bundled library, not a module. Whether the matrix tracks the
distribution does not matter; the ones a probe group imports already (torch, torchvision, vLLM, ...) are left to it.
Each distribution is then imported in its own probe process (``group_ext`` of :mod:`glmcompat.ops.verify.stack`), several at once, each under the run's deadline; what does not import is
reported with the file that owns the module and the cause (:func:`cause_of`): an extension built against NumPy 1.x
next to NumPy 2, a torch symbol the installed torch does not define, a shared library that is not there.

Standard library only at module level: the probe process imports this before any package under test (not
:mod:`importlib.metadata`, which with :mod:`email` is most of a probe process's start: read only where an import
failed).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from importlib.machinery import EXTENSION_SUFFIXES
from typing import Any

# The distributions a probe group imports itself (its import:<module> probe): not imported twice.
COVERED = frozenset({"torch", "torchvision", "torchaudio", "sgl-kernel", "sglang-kernel", "flashinfer-python",
                     "triton", "transformers", "sglang", "torchao", "vllm"})
_TAGGED = tuple(s for s in sorted(EXTENSION_SUFFIXES, key=len, reverse=True) if s != ".so")
_TORCH_REQ = re.compile(r"^Requires-Dist:\s*torch(\s|[<>=!~;\[(]|$)", re.I | re.M)
NOT_A_MODULE = "does not define module export function"


@dataclass(frozen=True)
class ExtDist:
    """One installed distribution with extension modules: what its probe process imports."""

    name: str
    version: str
    modules: tuple[str, ...]
    """dotted module names, parents first"""
    files: dict[str, str]
    """module -> its file, relative to the folder holding the distribution"""
    torch: bool
    """it requires torch: torch is imported first, as the package's own import would"""

    def opts(self) -> dict[str, Any]:
        return {"dist": self.name, "version": self.version, "modules": list(self.modules), "files": self.files,
                "torch": self.torch}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def module_of(path: str) -> str | None:
    """The dotted module an extension file in RECORD is imported as, or None where it is not one (a library,
    a file outside an importable folder)."""
    name = path.rsplit("/", 1)[-1]
    stem = next((name[: -len(s)] for s in _TAGGED if name.endswith(s)), None)
    if stem is None:
        if not name.endswith(".so") or name.startswith("lib"):
            return None
        stem = name[:-3]
    parts = [*path.split("/")[:-1], stem]
    if not all(p.isidentifier() for p in parts):
        return None
    if parts[-1] == "__init__":  # a compiled package (mypyc): the package itself
        parts = parts[:-1]
    return ".".join(parts) or None


def scan(search: list[str], skip: frozenset[str] = COVERED) -> list[ExtDist]:
    """The distributions on ``search`` (folders, first wins) that ship extension modules, by name."""
    seen: set[str] = set()
    out: list[ExtDist] = []
    for folder in search:
        try:
            entries = sorted(e.name for e in os.scandir(folder or "."))
        except OSError:
            continue
        for entry in entries:
            if not entry.endswith(".dist-info"):
                continue
            name, _, rest = entry[: -len(".dist-info")].partition("-")
            key = canonical(name)
            if key in seen:
                continue
            seen.add(key)
            if key in skip:
                continue
            info = os.path.join(folder, entry)
            try:
                with open(os.path.join(info, "RECORD"), encoding="utf-8", errors="replace") as f:
                    record = f.read()
            except OSError:
                continue
            files: dict[str, str] = {}
            for line in record.splitlines():
                path = line.split(",", 1)[0].strip('"')
                if ".so" not in path or path.startswith(("..", "/")):
                    continue
                mod = module_of(path)
                if mod is not None and os.path.isfile(os.path.join(folder, path)):
                    files.setdefault(mod, path)
            if not files:
                continue
            try:
                with open(os.path.join(info, "METADATA"), encoding="utf-8", errors="replace") as f:
                    meta = f.read(1 << 20)
            except OSError:
                meta = ""
            torch = any(_TORCH_REQ.match(ln) and "extra" not in ln for ln in meta.splitlines())
            version = rest.split("-", 1)[0] or "?"
            mods = tuple(sorted(files, key=lambda m: (m.count("."), m)))
            out.append(ExtDist(name=key, version=version, modules=mods, files=files, torch=torch))
    return out


def cause_of(error: str, numpy_version: str | None) -> tuple[str, str]:
    """(kind, cause) of an extension module's import error (its text and what it printed): ``numpy-abi``,
    ``torch-symbol``, ``undefined-symbol``, ``missing-library`` or ``import``."""
    have = f"NumPy {numpy_version}" if numpy_version else "the installed NumPy"
    if "compiled against ABI version" in error or "compiled against API version" in error or (
            numpy_version and numpy_version.split(".")[0].isdigit() and int(numpy_version.split(".")[0]) < 2
            and "numpy.core.multiarray failed to import" in error):
        # NumPy 1.x's own check: "module compiled against ABI version 0x2000000 but this version of numpy is ..."
        return "numpy-abi", f"built against a newer NumPy C ABI (NumPy 2); {have} is installed, which cannot load it"
    if any(s in error for s in ("compiled using NumPy 1.x", "numpy.core.multiarray failed to import",
                                "_ARRAY_API not found", "numpy.core._multiarray_umath failed to import")):
        return "numpy-abi", f"built against the NumPy 1.x C ABI; {have} is installed, whose C ABI it cannot use"
    if "numpy.dtype size changed" in error:
        return "numpy-abi", f"built against another NumPy C ABI than NumPy {numpy_version or '(installed)'}"
    m = re.search(r"undefined symbol: (\S+)", error)
    if m:
        sym = m.group(1)
        if sym.startswith(("_ZN3c10", "_ZN2at", "_ZN5torch", "_ZNK3c10", "_ZNK2at", "_ZNK5torch", "aoti_torch_",
                           "THP")):
            return "torch-symbol", f"needs the torch symbol {sym}, which the installed torch does not define"
        return "undefined-symbol", f"needs the symbol {sym}, which nothing loaded defines"
    m = re.search(r"(\S+\.so[.\d]*): cannot open shared object file", error)
    if m:
        return "missing-library", f"links {m.group(1)}, which is not installed (the loader cannot find it)"
    return "import", "its import raised an error"


def numpy_version() -> str | None:
    from importlib import metadata  # lazy: only where an import failed; every probe process imports this module

    try:
        return metadata.version("numpy")
    except Exception:  # noqa: BLE001 - no NumPy, or unreadable metadata
        return None

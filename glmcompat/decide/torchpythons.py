"""An installer's report that torch has no release for the interpreter's Python (issue 38, fix-s), read in the words of
the installers that give no "Could not find a version" line for it (that one is
:func:`glmcompat.decide.installcauses.torch_python_wheel`'s): uv's tag check on torch's wheels ("torch>=2.2.0,<=2.4.1 has
no wheels with a matching Python ABI tag (e.g., `cp313`)" and its hint "You require CPython 3.13 (`cp313`), but we only
found wheels for `torch` (v2.4.1) with the following Python ABI tags: ..."), and pip's conflict report whose every cause
is one project's releases each pinning a torch release (none of which installs here: no user request, no other party).
Each is read against the index's torch listing (the matrix's torch_python rows, glmcompat/matrix/data/torch-pythons.toml)
and named torch-python-unsupported, a case of the installer's own reading (its family), with the Python to run and the
torch release that has the interpreter's Python. Pure: no I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from glmcompat.decide.logenv import Env
from glmcompat.matrix.rows import TorchPython
from glmcompat.matrix.view import Facts
from glmcompat.model.names import canonicalize
from glmcompat.model.signatures import Hit

ID = "torch-python-unsupported"
# uv's interpreter tag in its tag check and hint (cp313, cp313t free-threaded; astral-sh/uv tag 0.12.5
# crates/uv-distribution-types/src/prioritized_distribution.rs IncompatibleDist::context_message "(e.g., `{tag}`)")
_CP_TAG = re.compile(r"cp3(?P<minor>\d{1,2})(?P<ft>t?)")
# a requirement as uv and pip print it: the name, then its specifiers (torch>=2.2.0,<=2.4.1; torch==1.13.1)
_REQ = re.compile(r"(?P<name>[A-Za-z0-9][\w.-]{0,80})(?:\[[^\]]{0,200}\])?\s{0,2}(?P<spec>(?:[=<>!~]=?=?\s{0,2}[\w.*+!]{1,40}"
                  r"\s{0,2},?\s{0,2}){1,6})$")


def _key(p: str) -> tuple[int, int]:
    major, _, minor = p.rstrip("t").partition(".")
    return int(major), int(minor)


def _by_os(facts: Facts) -> dict[str, list[TorchPython]]:
    """The torch_python rows by platform, each list by release."""
    out: dict[str, list[TorchPython]] = {}
    for r in facts.rows("torch_python"):
        out.setdefault(r.os, []).append(r)
    return {os_: sorted(rows, key=lambda r: Version(r.release)) for os_, rows in sorted(out.items())}


def _grouped(pairs: Sequence[tuple[str, str]], python: bool = False) -> str:
    """(value, platform) pairs said once a value, in order of the values (torch releases, or Pythons where ``python``):
    "2.5.0 on linux-x86_64, 2.6.0 on linux-aarch64, windows-x86_64"."""
    got: dict[str, list[str]] = {}
    for value, os_ in pairs:
        got.setdefault(value, []).append(os_)
    order = sorted(got.items(), key=lambda kv: _key(kv[0]) if python else Version(kv[0]))
    return ", ".join(f"{value} on {', '.join(oses)}" for value, oses in order)


def _firsts(py: str, rows: dict[str, list[TorchPython]]) -> list[tuple[str, str]]:
    """(first torch release with a ``py`` wheel, platform) for each platform that has one."""
    return [(first.release, os_) for os_, order in rows.items()
            if (first := next((r for r in order if py in r.pythons), None)) is not None]


def _newest_python(allowed: Sequence[str], rows: dict[str, list[TorchPython]]) -> list[tuple[str, str]]:
    """(newest plain Python a wheel of one of the ``allowed`` releases names, platform) for each platform holding one."""
    want = {Version(a) for a in allowed}
    out = []
    for os_, order in rows.items():
        pys = [p for r in order if Version(r.release) in want for p in r.pythons if not p.endswith("t")]
        if pys:
            out.append((max(pys, key=_key), os_))
    return out


def _allowed(spec: str, rows: dict[str, list[TorchPython]]) -> list[str]:
    """The harvested torch releases ``spec`` (a specifier set, or a bare version) admits, oldest first."""
    try:
        ss = SpecifierSet(spec if re.match(r"[=<>!~]", spec) else f"=={spec}")
    except InvalidSpecifier:
        return []
    known = sorted({Version(r.release) for order in rows.values() for r in order})
    return [str(v) for v in known if ss.contains(v, prereleases=False)]


def _hit(h: Hit, facts: Facts, cause: str, remedy: str, py: str) -> Hit:
    src = next((r.source for r in facts.rows("signature") if r.id == ID), h.source)
    return replace(h, id=ID, cause=cause, remedy=remedy, package="torch", source=src,
                   groups={**h.groups, "np_python": py}, family=h.id)


def uv_torch_python(h: Hit, env: Env, facts: Facts) -> Hit:
    """uv's report that torch has no wheel for the interpreter's Python: its derivation's tag check ("torch>=2.2.0,<=2.4.1
    has no wheels with a matching Python ABI tag (e.g., `cp313`)", the Python version tag alike; astral-sh/uv tag 0.12.5
    crates/uv-distribution-types/src/prioritized_distribution.rs:227-237 IncompatibleWheel::Tag) or its hint ("You
    require CPython 3.13 (`cp313`), but we only found wheels for `torch` (v2.4.1) with the following Python ABI tags:
    ...", crates/uv-resolver/src/pubgrub/report.rs), where the releases it names are torch's harvested ones and none of
    them has a wheel for that Python on any platform the rows hold: torch-python-unsupported, with the first torch
    release that has that Python and the newest Python the named releases are built for. A platform tag, an
    implementation tag (PyPy), another package, a release the rows lack, or a Python one of the releases has: as it is."""
    g = h.groups
    if h.id == "wheel-not-supported" and g.get("uv_tag") in ("Python ABI", "Python version"):
        req, tag = g.get("uv_pkg", ""), g.get("uv_eg", "")
        m = _REQ.match(req.strip())
        name, spec = (m.group("name"), m.group("spec").replace(" ", "").rstrip(",")) if m else (req.strip(), "")
    elif h.id == "python-version-unsupported" and "hint_pkg" in g and g.get("hint_impl") == "CPython":
        req, name, spec, tag = "", g["hint_pkg"], g.get("hint_ver", "").strip(), g.get("hint_tag", "")
    else:
        return h
    cp = _CP_TAG.fullmatch(tag.strip())
    if canonicalize(name) != "torch" or not spec or cp is None:
        return h
    py = f"3.{cp.group('minor')}{cp.group('ft')}"
    rows = _by_os(facts)
    allowed = _allowed(spec, rows)
    if not allowed or any(py in r.pythons for order in rows.values() for r in order if r.release in allowed):
        return h
    firsts, newest = _firsts(py, rows), _newest_python(allowed, rows)
    shown = f"torch {spec.removeprefix('==')}" if re.match(r"\d", spec) or spec.startswith("==") else f"torch{spec}"
    since = (f"the first torch release with a Python {py} wheel is {_grouped(firsts)}" if firsts
             else f"no torch release up to {max((r.release for o in rows.values() for r in o), key=Version)} has one")
    said = (f"uv found {req.strip()}, and none of its wheels carries this interpreter's {g['uv_tag']} tag: "
            if "uv_tag" in g else f"uv found {shown} with wheels for the Python ABI tags {g.get('hint_tags', '').strip()} only: ")
    cause = (f"{said}{shown} has no wheel for Python {py} (`{tag}`): torch's wheels of "
             f"{allowed[0] if len(allowed) == 1 else f'{allowed[0]} to {allowed[-1]}'} are built for Python up to "
             f"{_grouped(newest, python=True)} only, and torch publishes no source distribution to build, so no torch file "
             f"{'of that release' if len(allowed) == 1 else 'of that range'} installs on this Python; {since}")
    first = min((f for f, _ in firsts), key=Version) if firsts else ""
    older = min((p for p, _ in newest), key=_key) if newest else ""
    remedy = ((f"allow torch {first} or newer (the release that first ships Python {py} wheels; "
               f"{_grouped(firsts)}), loosening the pin that holds torch to {spec}" if first else
               "run torch on a Python its wheels are built for") +
              (f", or run on Python {older} (uv venv --python {older}; uv sync --python {older}), the newest Python "
               f"{shown} ships wheels for on every platform" if older else ""))
    return _hit(h, facts, cause, remedy, py)


def _pin_parts(causes: Sequence[str]) -> tuple[str, list[str]] | None:
    """pip's causes when each is one project's release depending on torch ("khoj-assistant 0.2.5 depends on
    torch==1.13.1"), no user request and no other party: (the project, the torch specifiers); None otherwise."""
    parents, specs = set(), []
    for c in causes:
        parent, sep, req = c.partition(" depends on ")
        m = _REQ.match(req.strip()) if sep else None
        if m is None or canonicalize(m.group("name")) != "torch" or " " not in parent.strip():
            return None
        parents.add(canonicalize(parent.strip().split(" ")[0].split("[")[0]))
        specs.append(m.group("spec").replace(" ", "").rstrip(","))
    return (parents.pop(), specs) if len(parents) == 1 and len(specs) > 1 else None


def pip_torch_pins(h: Hit, env: Env, facts: Facts) -> Hit:
    """pip's ResolutionImpossible ("The conflict is caused by:" then "<project> <version> depends on <requirement>"
    per cause, pip-23.2.1 wheel pip/_internal/resolution/resolvelib/factory.py:630-726 get_installation_error) whose every
    cause is a release of one project depending on torch, with no "The user requested" line and no other party: pip
    backtracked through that project's releases and found no torch that any of them admits. Where the torch releases
    they admit are harvested ones (the matrix's torch_python rows) and a later torch release has a Python none of them
    has (the interpreter newer than they were built for), torch-python-unsupported: the Python to run (the newest every
    admitted release is built for on every platform) and the torch that has newer Pythons. A custom index, a
    constraint or user request, two projects, or releases the rows lack: as pip's reading."""
    if h.id != "pip-resolution-impossible" or "index" in env.notes:
        return h
    causes = list(dict.fromkeys(c for c in env.notes.get("pip_causes", "").split("; ") if c))
    parts = _pin_parts(causes)
    if parts is None:
        return h
    project, specs = parts
    rows = _by_os(facts)
    allowed = sorted({v for s in specs for v in _allowed(s, rows)}, key=Version)
    if not allowed:
        return h
    newest = _newest_python(allowed, rows)  # the newest Python the admitted releases have, per platform
    later = {p for order in rows.values() for r in order for p in r.pythons if not p.endswith("t")}
    top = max((p for p, _ in newest), key=_key)
    beyond = sorted((p for p in later if _key(p) > _key(top)), key=_key)
    if not beyond:
        return h
    older = min((p for p, _ in newest), key=_key)
    nxt = f"3.{_key(older)[1] + 1}"
    firsts = _firsts(nxt, rows)
    shown = ", ".join(allowed) if len(allowed) <= 4 else f"{allowed[0]} to {allowed[-1]}"
    cause = (f"every {project} release pip tried pins torch ({'; '.join(dict.fromkeys(specs))}), and pip found no torch "
             f"release any of them admits installable here: no other requirement takes part, so the pinned torch "
             f"releases ({shown}) have no file for this interpreter; their wheels are built for Python up to "
             f"{_grouped(newest, python=True)} only (the log names no Python: it is a newer one), and torch publishes no source "
             "distribution to build")
    remedy = (f"run on Python {older} (a venv made with it: python{older} -m venv, or conda create python={older}), "
              f"the newest Python torch {allowed[-1]} ships wheels for on every platform" +
              (f"; or use a {project} release that allows a torch built for your Python (the first torch with a "
               f"Python {nxt} wheel: {_grouped(firsts)})" if firsts else ""))
    return _hit(h, facts, cause, remedy, older)


def hinted(out: Sequence[Hit]) -> list[Hit]:
    """uv's installer line for a locked torch ("Distribution `torch==2.3.0 @ ...` can't be installed because it doesn't
    have a source distribution or wheel for the current platform", read as wheel-not-supported of the platform) where
    its hint under it names the interpreter's Python ("You're using CPython 3.13 (`cp313`), but `torch` (v2.3.0) only
    has wheels with the following Python ABI tag: ...", read here as torch-python-unsupported): the hint's reading
    stands for both, the line's platform reading is left out."""
    told = {o.groups.get("hint_ver", "").strip() for o in out if o.id == ID and "use_pkg" in o.groups}
    if not told:
        return list(out)

    def of_hint(o: Hit) -> bool:
        dist = o.groups.get("uv_dist", "").split(" @ ", 1)[0].strip()
        name, _, ver = dist.partition("==")
        return o.id == "wheel-not-supported" and canonicalize(name) == "torch" and ver.strip() in told

    return [o for o in out if not of_hint(o)]


__all__ = ["hinted", "pip_torch_pins", "uv_torch_python"]

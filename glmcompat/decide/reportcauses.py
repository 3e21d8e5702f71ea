"""The installers' conflict reports for any package (issue 38, branch fix-r): pip's dependency-conflict report after an
install (its head, then "X 1.0 requires Y<2, but you have Y 3.0.1 which is incompatible." / "X 1.0 requires Y, which is
not installed."), read for a package outside the compiled stack as the log's cause only where nothing else is; poetry's
solver failing on the project's Python range against a dependency's (python-version-unsupported, with the range poetry's
own solution computes) and on a package the project requires twice at constraints that do not meet
(pip-double-requirement). Each wrapper reads its row's new alternatives and hands the rest to the row's own builder, as
:func:`glmcompat.decide.diagnose.diagnose` calls it. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from glmcompat.decide.logenv import Env
from glmcompat.matrix.view import Facts
from glmcompat.model.names import canonicalize
from glmcompat.model.signatures import POETRY_NEEDS, Hit
from glmcompat.readers.formats.poetry import poetry_python

Builder = Callable[[Hit, Env, Facts], "tuple[str, str] | None"]

# pip-requirement-conflict's groups of a report line of any package (pc_: another version installed, pm_: none): the
# report is a side note pip writes after an install it completed, so it is the cause only where nothing else is
SIDE_NOTE_GROUPS = frozenset({"pc_pkg", "pm_pkg"})
# python-version-unsupported's and pip-double-requirement's readings of poetry's words (the installers' sweep's and these)
POETRY_PYTHON = frozenset({"poetry_range", "poetry_pkg", "poetry_must", "poetry_dash_pkg", "poetry_every_pkg", "poetry_py_pkg",
                           "poetry_fix_pkg"})
POETRY_TWICE = frozenset({"pi_pkg", "pb_name", "pd_dup"})
# pip-resolution-impossible's readings of poetry's derivation (glmcompat.decide.buildcauses SWEEP_DROPPED)
POETRY_DERIVATION = frozenset({"poetry_because", "poetry_dep"})


def _g(h: Hit, *names: str) -> str:
    return next((h.groups[n].strip() for n in names if h.groups.get(n, "").strip()), "")


def _version(text: str) -> Version | None:
    try:
        return Version(text.strip().rstrip("."))
    except InvalidVersion:
        return None


def _spec(req: str, name: str) -> SpecifierSet | None:
    """The specifier of the requirement ``req`` (pip's "name<2,>=0.8.1", its marker after ";" left out) of ``name``."""
    body = req.split(";", 1)[0].strip()
    body = re.sub(rf"^{re.escape(name)}(?:\[[^\]]{{0,200}}\])?", "", body, flags=re.IGNORECASE).strip() if name else body
    body = re.sub(r"^[A-Za-z0-9][\w.-]{0,80}(?:\[[^\]]{0,200}\])?", "", body).strip().strip("()")
    try:
        return SpecifierSet(body) if body else None
    except InvalidSpecifier:
        return None


def _conflicts(env: Env) -> list[tuple[str, str, str, str, str]]:
    """The report's lines the log shows: (package, version, requirement, installed one, its version; "" where none)."""
    fields = [e.split("\t") for e in env.notes.get("pip_conflicts", "").split("\n")]
    return [(f[0], f[1], f[2], f[3], f[4]) for f in fields if len(f) == 5]


def _pip_line(pkg: str, ver: str, req: str, dep: str, have: str) -> tuple[str, str]:
    """The (cause, remedy) of one report line: the requiring package, and the one out of its range (or missing)."""
    need = req.split(";", 1)[0].strip()
    if not dep:
        name = re.split(r"[\s\[=<>!~;(,]", need, maxsplit=1)[0]
        return (f"{pkg} {ver} requires {need}, which is not installed: pip's report after the install lists the "
                f"requirement it left unmet (its resolver does not check what was installed before), so {pkg} fails where "
                f"it imports {name}",
                f"install it: pip install '{need}' (then `pip check` lists what still conflicts)")
    have = have.rstrip(".")
    spec, v = _spec(need, dep), _version(have)
    above = spec is not None and v is not None and any(
        s.operator in ("<", "<=", "==", "~=", "===") and not s.contains(v, prereleases=True) and (
            s.operator in ("<", "<=") or (_version(s.version.rstrip(".*")) or v) < v) for s in spec)
    ranged = f"{dep}{spec}" if spec is not None and str(spec) else need
    cause = (f"{pkg} {ver} requires {need}, but {dep} {have} is installed: pip put them side by side and only reported "
             f"it (its resolver does not check what was installed before), so {pkg} runs against a {dep} "
             + ("newer than its range allows" if above else "outside its range"))
    if above:
        remedy = (f"install a {dep} inside {pkg}'s range: pip install '{ranged}', or upgrade {pkg} to a release whose "
                  f"requirement accepts {dep} {have} (pip install -U {pkg}, if a newer one does; its Requires-Dist says); "
                  "`pip check` then lists what still conflicts")
    else:
        remedy = (f"upgrade {dep} into {pkg}'s range: pip install '{ranged}' (`pip check` then lists what still "
                  "conflicts)")
    return cause, remedy


def _req_name(req: str) -> str:
    return canonicalize(re.split(r"[\s\[=<>!~;(,]", req.strip(), maxsplit=1)[0])


def _pinned(spec: SpecifierSet) -> Version | None:
    """The version an exact pin (``==X``, no wildcard) admits alone; None for a range."""
    pins = [s for s in spec if s.operator in ("==", "===") and "*" not in s.version]
    return _version(pins[0].version) if pins else None


def _apart(a: SpecifierSet, b: SpecifierSet) -> bool:
    """Whether no version meets both ``a`` and ``b``, told only where one is an exact pin (the pinned version outside the
    other); False where neither is (two ranges are not compared)."""
    for x, y in ((a, b), (b, a)):
        if (v := _pinned(x)) is not None:
            return not y.contains(v, prereleases=True)
    return False


def pinned_apart(env: Env) -> tuple[str, str] | None:
    """fix-w: two lines of pip's report requiring one package at ranges no version meets (one an exact pin the other's
    range leaves out: "zipnerf 0.1.0 requires nerfstudio==0.2.2" and "nerfstudio-method-template 0.1.0 requires
    nerfstudio>=0.3.0"): the conflict no install resolves, whichever version of that package is installed (each install
    moves it out of one party's range, and what it pulls in with it breaks the report's other lines); the report's
    lines are pip's check of the whole environment after an install (src/pip/_internal/operations/check.py
    check_package_set), so each line is a requirement the installed set declares. None where no two lines are so."""
    if not env.notes.get("pip_report"):
        return None
    lines = _conflicts(env)
    for i, (p1, v1, r1, d1, h1) in enumerate(lines):
        for p2, v2, r2, d2, h2 in lines[i + 1:]:
            name = _req_name(r1)
            if _req_name(r2) != name or canonicalize(p1) == canonicalize(p2):
                continue
            s1, s2 = _spec(r1, name), _spec(r2, name)
            if s1 is None or s2 is None or not _apart(s1, s2):
                continue
            pin, other = ((p1, v1, r1), (p2, v2, r2)) if _pinned(s1) is not None else ((p2, v2, r2), (p1, v1, r1))
            need1, need2 = pin[2].split(";", 1)[0].strip(), other[2].split(";", 1)[0].strip()
            have = next((h.rstrip(".") for d, h in ((d1, h1), (d2, h2)) if d and h), "")
            rest = [r for r in lines if {canonicalize(r[0]), _req_name(r[2])} != {canonicalize(pin[0]), name}
                    and {canonicalize(r[0]), _req_name(r[2])} != {canonicalize(other[0]), name}]
            said = "; ".join(f"{p} {v} requires {r.split(';', 1)[0].strip()}"
                             + (f", {d} {hv.rstrip('.')} installed" if d else ", not installed") for p, v, r, d, hv in rest[:4])
            cause = (f"{pin[0]} {pin[1]} requires {need1} and {other[0]} {other[1]} requires {need2}: no {name} release "
                     f"meets both, so whichever {name} is installed (the log shows {name} {have or 'one of them'}) pip's "
                     "report names the other party, and an install for one moves it out of the other's range"
                     + (f" (the report's other lines: {said})" if said else ""))
            remedy = (f"keep {pin[0]} and {other[0]} in separate environments, or install releases whose {name} ranges "
                      f"meet: a {pin[0]} release that accepts {need2} (pip install -U {pin[0]}, if one does; its "
                      f"Requires-Dist says), or a {other[0]} release that accepts {name} {pin[2].split('==', 1)[-1].strip()}; "
                      "`pip check` then lists what still conflicts")
            return cause, remedy
    return None


def pip_report(build: Builder) -> Builder:
    """pip-requirement-conflict's builder, reading also pip's report line of a package outside the stack (or of one not
    installed): the cause only where the log shows it as pip's report (its head, the line's own ERROR: record, or pip
    10-20.1's "has requirement ..., but you'll have ... which is incompatible."); a line alone without them is a quotation,
    and `pip check`'s output a listing the user asked for, not the log's failure. The report's other lines
    are said with it."""
    def wrapped(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
        if (SIDE_NOTE_GROUPS | {"pkg"}) & h.groups.keys() and (apart := pinned_apart(env)) is not None:
            return apart
        if not SIDE_NOTE_GROUPS & h.groups.keys():
            return build(h, env, facts)
        if not env.notes.get("pip_report"):
            return None
        if "pc_pkg" in h.groups:
            first = (_g(h, "pc_pkg"), _g(h, "pc_ver"), _g(h, "pc_req"), _g(h, "pc_dep"), _g(h, "pc_have"))
        else:
            first = (_g(h, "pm_pkg"), _g(h, "pm_ver"), _g(h, "pm_req"), "", "")
        cause, remedy = _pip_line(*first)
        others = [r for r in _conflicts(env) if r[:3] != first[:3]]
        if others:
            said = "; ".join(f"{p} {v} requires {r.split(';', 1)[0].strip()}, "
                             + (f"{d} {hv.rstrip('.')} installed" if d else "not installed") for p, v, r, d, hv in others[:4])
            cause += f" (the report's other lines: {said})"
        return cause, remedy
    return wrapped


def side_notes(out: list[Hit]) -> list[Hit]:
    """``out`` without pip's report of packages outside the stack where any other signature names a cause: pip writes it
    after an install it completed, a side note of a log whose failure is elsewhere."""
    notes = [o for o in out if o.id == "pip-requirement-conflict" and SIDE_NOTE_GROUPS & o.groups.keys()]
    if notes and len(notes) < len(out):
        return [o for o in out if o not in notes]
    return out


# fix-w: the import errors of a package a failed resolution named (its parent in pip's cause list, or a requirement of
# it): the environment holds whatever release of it was there before, not the one the failed install asked for
AFTER_FAILED_INSTALL = frozenset({"companion-api-removed", "companion-too-old"})


def _failed_names(env: Env) -> set[str]:
    """The packages pip's cause list names: each parent and each requirement's package, the user's requests too."""
    named: set[str] = set()
    for c in (c for c in env.notes.get("pip_causes", "").split("; ") if c):
        if c.startswith("The user requested "):
            named.add(_req_name(c.removeprefix("The user requested ").removeprefix("(constraint) ")))
        else:
            parent, _, req = c.partition(" depends on ")
            named |= {canonicalize(parent.split(" ", 1)[0].split("[", 1)[0]), _req_name(req)}
    return named


def failed_install_run(h: Hit, hits: Sequence[Hit], env: Env) -> Hit:
    """pip's failed resolution (its "Cannot install ..." head or its ResolutionImpossible line) with the package of the
    later import error of a package its causes name, in the group ``rf_run``: the run that failed on what the install
    left in place, which makes the failed install the log's cause whatever the packages are."""
    if h.id != "pip-resolution-impossible" or not {"ri_what", "ri_any"} & h.groups.keys():
        return h
    named = _failed_names(env)
    run = next((o.package for o in hits if o.id in AFTER_FAILED_INSTALL and o.line > h.line and o.package
                and canonicalize(o.package) in named), "")
    return replace(h, groups={**h.groups, "rf_run": run}) if run else h


def after_failed_install(out: list[Hit], env: Env) -> list[Hit]:
    """``out`` without a later import error of a package pip's failed resolution names (pip installed nothing: the
    "Cannot install ... conflicting dependencies" report and its cause list, src/pip/_internal/resolution/resolvelib/
    factory.py get_installation_error): that import runs against the release the failed install left in place, a
    consequence of the failure, not a second cause."""
    failed = [o.line for o in out if o.id == "pip-resolution-impossible"]
    if not failed:
        return out
    named = _failed_names(env)
    return [o for o in out if not (o.id in AFTER_FAILED_INSTALL and o.line > min(failed) and o.package
                                   and canonicalize(o.package) in named)]


# --- poetry: the project's Python range against a dependency's ---------------------------------------------------------
# the Python releases a range is tried on (its intersection with another tested on them): every minor of 2.x and 3.x, a
# patch level each up to 30
# (and 4.0, 4.1, so that a range's upper bound, <4.0, is told from none)
_PYTHONS = tuple(Version(f"{major}.{minor}.{patch}") for major in (2, 3) for minor in range(0, 21) for patch in range(0, 31)) + (
    Version("4.0"), Version("4.1"))


def _alternatives(constraint: str) -> list[SpecifierSet] | None:
    """A poetry constraint ("~2.7 || ^3.4", ">=3.8,<4.0", "*") as the PEP 440 specifier sets it is the union of; None
    where one cannot be read."""
    out = []
    for part in re.split(r"\s*\|\|?\s*", constraint.strip()):
        if part.strip() in ("*", ""):
            out.append(SpecifierSet())
            continue
        pep = poetry_python(part.strip())
        if pep is None:
            return None
        out.append(SpecifierSet(pep))
    return out


def _pythons(sets: list[SpecifierSet]) -> frozenset[Version]:
    return frozenset(v for v in _PYTHONS if any(s.contains(v, prereleases=True) for s in sets))


def _simplest(spec: SpecifierSet, pythons: frozenset[Version]) -> str:
    """``spec`` without the clauses that leave the Pythons it admits unchanged."""
    clauses = list(spec)
    for c in sorted(clauses, key=str):
        rest = [k for k in clauses if k is not c]
        if frozenset(v for v in _PYTHONS if SpecifierSet(",".join(map(str, rest))).contains(v, prereleases=True)) == pythons:
            clauses = rest
    return ",".join(sorted(map(str, clauses), key=lambda s: (s.lstrip("<>=!~"), s))) or "*"


def intersect(root: str, need: str) -> str:
    """The part of the project's Python range ``root`` that ``need`` admits, in poetry's syntax (what poetry's own
    solution, root.intersect(constraint), suggests); ``need`` as written where the root admits every Python or none of
    the parts can be read; "" where the two do not meet."""
    a, b = _alternatives(root), _alternatives(need)
    if a is None or b is None:
        return need if root.strip() in ("*", "") else ""
    if all(not str(s) for s in a):
        return need
    parts = []
    for x in a:
        for y in b:
            both = SpecifierSet(f"{x},{y}".strip(","))
            got = frozenset(v for v in _PYTHONS if both.contains(v, prereleases=True))
            if got:
                parts.append(_simplest(both, got))
    if not parts:
        return ""
    if _pythons([SpecifierSet(",".join(p.split(","))) if p != "*" else SpecifierSet() for p in parts]) == _pythons(b):
        return need  # the dependency's whole range lies inside the project's
    return " || ".join(dict.fromkeys(parts))


def _needs(h: Hit, env: Env) -> list[tuple[str, str, str]]:
    """The dependencies poetry names with their Python range: (package, version, range), the hit's first."""
    own = [(canonicalize(_g(h, k)), _g(h, v), _g(h, r)) for k, v, r in (
        ("poetry_py_pkg", "poetry_py_ver", "poetry_py_requires"), ("poetry_every_pkg", "", "poetry_every_requires"),
        ("poetry_dash_pkg", "", "poetry_dash_requires"), ("poetry_pkg", "", "poetry_requires")) if _g(h, k)]
    fields = [e.split("\t") for e in env.notes.get("poetry_py_needs", "").split("\n")]
    noted = [(canonicalize(f[0]), f[1], f[2]) for f in fields if len(f) == 3]
    out: dict[str, tuple[str, str, str]] = {}  # one a package: the reading that names its version, else the first
    for p, v, r in [*own, *noted]:
        if p not in out or (v and not out[p][1]):
            out[p] = (p, v, r or out.get(p, ("", "", ""))[2])
    return list(out.values())


def poetry_python_range(build: Builder) -> Builder:
    """python-version-unsupported's builder, reading also poetry's Python cause in each release's words (0.12's "The
    current project must support the following Python versions: R" and "X (V) requires Python C", 1.0's "The current
    project's Python requirement (R) ..." and "  - X requires Python C", 2.x's "For X, a possible solution would be to
    set the `python` property to "..."): the dependency, its range, the project's, and the range to set (poetry's own
    solution where the log prints it, else the intersection)."""
    def wrapped(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
        if not POETRY_PYTHON & h.groups.keys():
            return build(h, env, facts)
        root = _g(h, "poetry_must", "poetry_range") or env.notes.get("poetry_py_root", "")
        needs = _needs(h, env)
        fixed = _g(h, "poetry_fix")
        if not needs:
            if "poetry_fix_pkg" in h.groups:
                needs = [(canonicalize(_g(h, "poetry_fix_pkg")), "", "")]
            elif "poetry_range" in h.groups:
                return build(h, env, facts)
            else:
                return None
        pkg, ver, need = needs[0]
        who = f"{pkg} {ver}" if ver else pkg
        fit = fixed or (intersect(root, need) if root and need else need)
        declared = ("every Python (*)" if root.strip() == "*" else f"Python {root}") if root else "a Python range"
        also = "; ".join(f"{p} requires Python {r}" for p, _, r in needs[1:4] if r)
        cause = (f"the project declares {declared}, and {who}, a dependency, requires Python {need or '(a narrower range)'}: "
                 "poetry locks one set of versions for every Python the project declares, so where a dependency "
                 f"supports only part of that range its solver forbids it and version solving fails"
                 + (f" ({also})" if also else ""))
        if fit:
            remedy = (f"set the project's Python range to \"{fit}\" (python = \"{fit}\" under [tool.poetry.dependencies], "
                      f"or requires-python in [project]), the part of {root or 'its range'} that {pkg} supports; or limit "
                      f"{pkg} to the Pythons it supports with a marker ({pkg} = {{ version = \"...\", python = "
                      f"\"{need or fit}\" }}); then poetry lock")
        else:
            remedy = (f"choose a {pkg} release whose Python range meets the project's ({root}), or change the project's "
                      f"Python range to one {pkg} supports ({need}); then poetry lock")
        return cause, remedy
    return wrapped


# --- poetry: one package required twice at constraints that do not meet -------------------------------------------------

def _facts(env: Env, name: str) -> dict[str, list[str]]:
    """The -vvv facts: each parent's constraints on ``name``, in order."""
    out: dict[str, list[str]] = {}
    for e in env.notes.get("poetry_facts", "").split("\n"):
        if e.count("\t") != 2:
            continue
        parent, x, c = e.split("\t")
        if canonicalize(x) == name and c not in out.setdefault(parent, []):
            out[parent].append(c)
    return out


def _twice(name: str, pins: list[str], parent: str, tool_line: str) -> tuple[str, str]:
    shown = " and ".join(f"{name} ({p})" for p in pins)
    keep = pins[0]
    return (f"{parent or 'the project'} requires {name} twice, {shown}, with no marker that separates them ({tool_line}): "
            f"poetry needs one {name} for both and no version satisfies all of them, so version solving fails",
            f"require {name} once: pin one version in every group that lists it (e.g. {name} = \"{keep}\" in both "
            "[tool.poetry.dependencies] and the [tool.poetry.group.<name>.dependencies] that pins the other), or give the "
            f"two requirements markers that exclude each other (python = ... / markers = ...); then poetry lock")


def poetry_twice(build: Builder) -> Builder:
    """pip-double-requirement's builder, reading also poetry's words for one package required twice: its
    IncompatibleConstraintsError (1.3+), its derivation's "depends on both X (a) and X (b)", and its -vvv trace
    ("Duplicate dependencies for X", then one parent's facts on X at two constraints and the solver's conflict on X)."""
    def wrapped(h: Hit, env: Env, facts: Facts) -> tuple[str, str] | None:
        if not POETRY_TWICE & h.groups.keys():
            return build(h, env, facts)
        if "pi_pkg" in h.groups:
            lines = [c for c in env.notes.get("poetry_incompatible", "").split("\n") if c]
            names = {canonicalize(re.split(r"[\s\[(;]", c, maxsplit=1)[0]) for c in lines}
            name = next(iter(names)) if len(names) == 1 else ", ".join(sorted(names)) or "a package"
            pins = [m.group(1) for c in lines if (m := re.search(r"\(([^()]{1,200})\)", c))] or lines
            parent = _g(h, "pi_pkg") + (f" {_g(h, 'pi_ver')}" if _g(h, "pi_ver") else "")
            return _twice(name, pins or ["one constraint", "another"], parent,
                          "poetry 1.3+'s IncompatibleConstraintsError")
        if "pb_name" in h.groups:
            name = canonicalize(_g(h, "pb_name"))
            if name != canonicalize(_g(h, "pb_name2")):
                return None  # two packages: a conflict of their ranges (pip-resolution-impossible's reading)
            return _twice(name, [_g(h, "pb_a"), _g(h, "pb_b")], "", "poetry's \"depends on both\"")
        name = canonicalize(_g(h, "pd_dup"))
        failed = name in env.notes.get("poetry_conflicts", "").split(", ")
        twice = [(p, cs) for p, cs in _facts(env, name).items() if len(cs) > 1]
        if not twice or not failed:
            return None  # a notice: poetry merges or splits duplicates whose markers allow it
        parent, pins = twice[0]
        return _twice(name, pins, parent, "poetry's -vvv facts, then its solver's conflict on it")
    return wrapped


_BOTH = re.compile(r"depends on both (?P<a>[A-Za-z0-9][\w.-]{0,80}) \((?P<av>[^()\n]{1,60})\)(?: \(\d{1,4}\))? and "
                   r"(?P<b>[A-Za-z0-9][\w.-]{0,80}) \((?P<bv>[^()\n]{1,60})\)")
DERIVED = "poetry_derived"  # the group of a hit read from pip-resolution-impossible's reading of poetry's derivation


def poetry_derivation(h: Hit, facts: Facts) -> Hit:
    """pip-resolution-impossible's reading of poetry's derivation (its "Because ..., version solving failed." line, whose
    match holds the narrower ones of the same line) where its words name a Python cause ("X (V) requires Python C",
    "every version of X requires Python C", "... which requires Python C"): python-version-unsupported; where they name one
    package twice ("depends on both X (a) and X (b)"): pip-double-requirement. Else ``h``."""
    if h.id != "pip-resolution-impossible" or not POETRY_DERIVATION & h.groups.keys():
        return h
    groups = {**h.groups, DERIVED: "1"}
    if (m := POETRY_NEEDS.search(h.text)) is not None and (m.group("pkg") or m.group("every")):
        sid = "python-version-unsupported"
        if m.group("every"):
            groups.update(poetry_every_pkg=m.group("every"), poetry_every_requires=m.group("req"))
        else:
            groups.update(poetry_py_pkg=m.group("pkg"), poetry_py_ver=m.group("ver"), poetry_py_requires=m.group("req"))
    elif (b := _BOTH.search(h.text)) is not None and canonicalize(b.group("a")) == canonicalize(b.group("b")):
        sid = "pip-double-requirement"
        groups.update(pb_name=b.group("a"), pb_a=b.group("av"), pb_name2=b.group("b"), pb_b=b.group("bv"))
    else:
        return h
    row = next((r for r in facts.rows("signature") if r.id == sid), None)
    if row is None:
        return h
    return replace(h, id=sid, cause=row.cause, remedy=row.remedy, source=row.source, groups=groups)


def poetry_readings(out: list[Hit]) -> list[Hit]:
    """``out`` without pip-resolution-impossible's reading of poetry's derivation where the log's poetry words name the
    cause sharper: the project's Python range against a dependency's, or a package required twice."""
    if any((o.id == "python-version-unsupported" and POETRY_PYTHON & o.groups.keys())
           or (o.id == "pip-double-requirement" and POETRY_TWICE & o.groups.keys()) for o in out):
        out = [o for o in out if not (o.id == "pip-resolution-impossible" and POETRY_DERIVATION & o.groups.keys())]
    # a derivation's reading where the same signature read poetry's own lines too: those lines stand
    own = {o.id for o in out if DERIVED not in o.groups}
    return [o for o in out if not (DERIVED in o.groups and o.id in own)]


REPORT_WRAPPERS: dict[str, Callable[[Builder], Builder]] = {
    "pip-requirement-conflict": pip_report,
    "python-version-unsupported": poetry_python_range,
    "pip-double-requirement": poetry_twice,
}
# the groups whose builder may find the line no failure (glmcompat.decide.diagnose.DROPPED)
REPORT_DROPPED = {"pip-requirement-conflict": ("pc_pkg", "pm_pkg"), "pip-double-requirement": ("pb_name", "pd_dup"),
                  "python-version-unsupported": ("poetry_must", "poetry_dash_pkg", "poetry_every_pkg", "poetry_py_pkg",
                                                 "poetry_fix_pkg")}


__all__ = ["AFTER_FAILED_INSTALL", "POETRY_PYTHON", "POETRY_TWICE", "REPORT_DROPPED", "REPORT_WRAPPERS",
           "SIDE_NOTE_GROUPS", "after_failed_install", "failed_install_run", "intersect", "poetry_derivation",
           "poetry_readings", "side_notes"]

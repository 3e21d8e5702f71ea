"""The pyproject.toml a cold project lock will most likely write, guessed before the command's imports (issue 39).

A project lock's predicted ``uv lock`` (:func:`glmcompat.ops.projectlock._predicted`) runs on the pyproject.toml the
matrix alone says the lock writes; computing it takes the matrix, the resolver and packaging, about 0.15 s of CPU
before uv may start, and where uv alone picks another torch (a project that pins a kernel release and leaves torch
free) that uv is the answer. But for such a project the matrix's answer is its kernel row's: a kernel release pins its
torch build, and torch its family (torchvision, torchaudio). :func:`guess` reads exactly that from a small table the
wheel's build derives from the matrix (:func:`table`, shipped as :data:`TABLE`), in a few milliseconds, so the
start-up path (:func:`glmcompat.ops.projectspec.start_early`) starts that ``uv lock`` at once, in place of the run on
the project as written.

A guess decides nothing: the lock takes that run only where the pyproject.toml it writes is byte for byte the guess
(:func:`glmcompat.ops.projectspec.settle`), and anything else is discarded as before. So only the plainest shape is
guessed -- one ``[project] dependencies`` list naming one kernel release (``==``), torch with no specifier (or the
kernel's own ``==``), the family with none (or the paired ``==``) and no other package of the core; no uv.lock, no
``[tool.uv]`` but its index settings, no extras or groups, nothing in ``[tool.glmcompat]`` but targets, no option but
``--target`` -- and anything else, or a table of another glmcompat, is no guess. tests/ops/test_projectguess.py holds each guess equal to
the prediction the lock computes itself.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from glmcompat.matrix.locations import read_bounded, read_stored

TYPE_CHECKING = False  # not typing's: :func:`guess` runs before the command's imports
if TYPE_CHECKING:
    from typing import Any

    from glmcompat.matrix.view import Facts

FORMAT = 1
TABLE = Path(__file__).resolve().parent.parent / "matrix" / "predict.json"  # in a built wheel only (hatch_build.py)
_KIND, _KEY = "predict", "predict.json"  # its seal's kind and key (the name it is shipped under)
# what a dependency may be for a guess: a name, and nothing or an ``==`` of a plain version
_DEPENDENCY = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:==\s*([0-9][0-9A-Za-z.+!-]*))?\s*")
_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
# what [tool.uv] may hold for a guess: where uv reads packages from (the matrix's prediction reads none of it; its
# exclude-newer, the user's own constraints and dev-dependencies it reads, and sources and workspaces refuse a copy)
_UV_KEYS = {"index", "index-url", "extra-index-url", "default-index", "index-strategy", "find-links", "no-index"}
_FLAGS = ("-q", "-qq", "-qqq", "--quiet", "-v", "-vv", "--verbose", "--json")
_VALUED = ("--target", "--color")


def table(facts: Facts) -> dict[str, Any]:
    """The guess's data, from the matrix on x86_64: the torch build each kernel release was built against, where the
    resolver binds the release to it and no newer torch (the index's wheels: the row
    :meth:`~glmcompat.matrix.view.Facts.kernel` reads, without a variant, that binds torch; no ABI probe found it loads
    next to a newer one), and for each such torch the release of each family package built for it
    (:meth:`~glmcompat.matrix.view.Facts.family_for_torch`)."""
    from glmcompat.decide.stacks import CORE  # lazy: the build's, never the start-up path's
    from glmcompat.model.names import canonicalize  # lazy: as above
    from glmcompat.model.public import __version__  # lazy: as above

    from packaging.version import Version  # lazy: as above

    from glmcompat.model.names import normalize_version  # lazy: as above

    x86 = facts.on("x86_64")
    kernels: dict[str, dict[str, str]] = {}
    for k in x86.rows("kernel"):
        for v in k.versions:
            # as the resolver binds it (the row it reads, unless that row lets torch go: on_mismatch "warning"): to
            # the torch it was built against or one an ABI probe found it loads next to -- guessed only where the one
            # it was built against is the newest of them (a newer one is the resolver's to weigh against the rules)
            if x86.kernel(k.package, v) is k and k.variant is None and k.on_mismatch == "error":
                built = normalize_version(k.torch)
                if max({built} | x86.compatible_torches(k.package, v), key=Version) == built:
                    kernels.setdefault(canonicalize(k.package), {})[v] = k.torch
    builds = sorted({t for pkg in kernels.values() for t in pkg.values()})
    family: dict[str, dict[str, str]] = {}
    for name in sorted(x86.family_packages()):
        paired = {t: r for t in builds if (r := x86.family_for_torch(name, t)) is not None}
        family[canonicalize(name)] = paired
    return {"format": FORMAT, "version": __version__, "core": sorted(CORE), "kernels": kernels, "family": family}


def table_file(facts: Facts) -> bytes:
    """:func:`table` as the wheel ships it (:data:`TABLE`: sealed as glmcompat stores things)."""
    import json  # lazy: the build's

    from glmcompat.matrix.locations import seal  # lazy: the build's

    return seal(_KIND, _KEY, json.dumps(table(facts), sort_keys=True, separators=(",", ":")).encode())


def load_table(path: Path | None = None) -> dict[str, Any] | None:
    """The table at ``path`` (default: the shipped :data:`TABLE`), where it is of this format and this glmcompat's;
    None otherwise (a checkout ships none)."""
    body = read_stored(str(path or TABLE), _KIND, _KEY)
    if body is None:
        return None
    import json  # lazy: a table found

    from glmcompat.model.public import __version__  # lazy: a table found

    try:
        doc = json.loads(body)
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != __version__:
        return None
    return doc


def guess(root: Path, argv: list[str], data: dict[str, Any] | None = None) -> bytes | None:
    """The pyproject.toml ``glmcompat lock ARGV`` most likely writes in the project at ``root`` (see the module's
    docstring), from ``data`` (default: :func:`load_table`); None where it is no project of the shape guessed, or the
    table says nothing of it. Never fails."""
    try:
        return _guess(root, argv, data)
    except Exception:
        return None


def _guess(root: Path, argv: list[str], data: dict[str, Any] | None) -> bytes | None:
    prev = ""
    for a in argv:
        if prev in _VALUED:
            prev = ""
            continue
        if a not in _FLAGS and a not in _VALUED and not a.startswith(("--target=", "--color=")):
            return None
        prev = a
    pyproject = root / "pyproject.toml"
    if os.path.lexists(root / "uv.lock"):
        return None
    raw = read_bounded(str(pyproject), 4 << 20)  # a regular file of a pyproject.toml's size, read without blocking
    if raw is None or raw.startswith(b"\xef\xbb\xbf") or b"\r" in raw or b"glmcompat lock" in raw:
        return None
    data = data if data is not None else load_table()
    if data is None or not _names_a_kernel(raw, data["kernels"]):
        return None
    from glmcompat.model.names import canonicalize  # lazy: a table found
    from glmcompat.readers import pyprojecttext as pp  # lazy: a table found (the text's module: no dataclasses)

    text = raw.decode("utf-8")
    doc = pp.parse(pyproject, text)
    project = doc.get("project")
    if set(doc) - {"project", "build-system", "tool"} or not isinstance(project, dict):
        return None  # dependency-groups, or no [project]
    tool = doc.get("tool", {})
    settings = tool.get("glmcompat", {}) if isinstance(tool, dict) else None
    uv = tool.get("uv", {}) if isinstance(tool, dict) else None
    if (not isinstance(settings, dict) or set(settings) - {"targets", "target"} or not isinstance(uv, dict)
            or set(uv) - _UV_KEYS or set(project) & {"optional-dependencies", "dynamic"}):
        return None
    deps = project.get("dependencies", [])
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        return None
    core, kernels, family = set(data["core"]), data["kernels"], data["family"]
    named: dict[str, str | None] = {}
    for d in deps:
        m = _NAME.match(d)
        if m is None:
            return None
        name = canonicalize(m.group(1))
        if name not in core:
            continue  # uv's to resolve: the core's roots are the core packages named
        exact = _DEPENDENCY.fullmatch(d)
        if exact is None or name in named:
            return None  # a specifier, extras, a marker or a URL on a core package: the resolver's to weigh
        named[name] = exact.group(2)
    pinned = [(n, v) for n, v in named.items() if n in kernels]
    if len(pinned) != 1 or pinned[0][1] not in kernels[pinned[0][0]]:
        return None
    kernel, release = pinned[0]
    torch = kernels[kernel][release]
    pins = {kernel: release, "torch": torch}
    if named.get("torch", "") not in (None, torch):
        return None  # torch not named (not a root), or pinned to another build
    for name, version in named.items():
        if name in pins:
            continue
        paired = family.get(name, {}).get(torch)
        if paired is None or version not in (None, paired):
            return None  # another core package, or a family release the torch build has none of
        pins[name] = paired
    entries = {"constraint-dependencies": [(f"{n}=={v}", "") for n, v in sorted(pins.items())]}
    return pp.with_core(pyproject, text, entries).encode()


def _names_a_kernel(raw: bytes, kernels: dict[str, Any]) -> bool:
    """Whether the text names one of ``kernels`` (canonical names) in some spelling (``sgl-kernel``, ``SGL_Kernel``):
    a project that names none is no guess's, told without parsing its TOML (the module that parses it and its
    dataclasses cost the start of the run on the project as written 15 ms). A name spelt with a TOML escape is
    missed: no guess, which only costs time."""
    spelt = b"|".join(b"[-_.]+".join(re.escape(part.encode()) for part in k.split("-")) for k in kernels)
    return bool(spelt) and re.search(b"(?i)" + spelt, raw) is not None


__all__ = ["TABLE", "guess", "load_table", "table", "table_file"]

"""What ``glmcompat check`` (and the library's :func:`glmcompat.check`) needs besides the rules to judge one lock
file: the settings of the pyproject.toml beside it (``[tool.glmcompat]``), the project's build-isolation settings,
the lock named by a pyproject.toml, and the integrity of an output set that ``glmcompat lock`` wrote."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from glmcompat.matrix import readlog
from glmcompat.model.errors import InputError
from glmcompat.model.findings import Finding
from glmcompat.model.memo import BoundedMemo
from glmcompat.model.names import canonicalize
from glmcompat.model.platforms import check_platform, products_on, target_platforms

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.matrix.rows import Target



# pyproject.toml documents this process read, by path and content: check reads the one beside a lock for its settings,
# its platform, its build isolation and whether it reads at all -- one parse of the bytes serves them all
_DOCS: BoundedMemo[tuple[str, bytes], dict[str, Any]] = BoundedMemo(16)


def pyproject_doc(path: Path) -> dict[str, Any]:
    from glmcompat.readers.formats import read_bytes  # lazy: start-up path (the fast path imports this module)
    from glmcompat.readers.formats.common import decode_text, toml  # lazy: start-up path

    raw = read_bytes(path)
    key = (str(path), raw)
    doc = _DOCS.get(key)
    return doc if doc is not None else _DOCS.keep(key, toml(path, decode_text(path, raw)))


def pyproject_settings(path: Path) -> dict[str, Any]:
    tool = pyproject_doc(path).get("tool", {})
    tool = tool.get("glmcompat", {}) if isinstance(tool, dict) else {}
    if not isinstance(tool, dict):
        raise InputError("[tool.glmcompat] must be a table", path=str(path))
    for key in ("targets", "target"):
        v = tool.get(key)
        if v is not None and not (isinstance(v, str) or (isinstance(v, list) and v and all(isinstance(t, str) for t in v))):
            raise InputError(f"[tool.glmcompat] {key} must be a target name or a list of them, not {v!r}"[:300],
                             path=str(path))
    if tool.get("model") is not None and not isinstance(tool["model"], str):
        raise InputError(f"[tool.glmcompat] model must be a model_type string, not {tool['model']!r}"[:300],
                         path=str(path))
    return tool


def locate(raw: str, *, beside: bool = True, needed: bool = True) -> tuple[Path, dict[str, Any], Path | None]:
    """What ``check`` judges for the path a user gave: (the lock, the ``[tool.glmcompat]`` settings, the
    pyproject.toml they come from). A pyproject.toml names the lock beside it; a lock's own settings are those of
    the pyproject.toml beside it (read only when ``beside``: ``check --target`` needs none). A pyproject.toml beside
    the lock that cannot be read is an error only where its settings are ``needed`` (no --target names the targets);
    otherwise the lock is judged without them and check notes it (:func:`unreadable_beside`)."""
    p = Path(raw)
    if readlog.is_dir(p):
        raise InputError("is a directory; pass a lock file or a pyproject.toml", path=raw)
    if not readlog.exists(p):
        raise InputError("no such file", path=raw)
    if p.name == "pyproject.toml":
        from glmcompat.readers.formats.registry import BESIDE  # lazy: start-up path (the fast path imports this module)

        lock = next((p.parent / n for n in BESIDE if readlog.exists(p.parent / n)), None)
        if lock is None:
            raise InputError(f"no lock beside it (looked for {', '.join(BESIDE)})", path=raw)
        return lock, pyproject_settings(p), p
    if beside and readlog.is_file(p.parent / "pyproject.toml"):
        try:
            return p, pyproject_settings(p.parent / "pyproject.toml"), p.parent / "pyproject.toml"
        except InputError:
            if needed:
                raise
            return p, {}, None  # not the file the user named: check says so (unreadable_beside) and judges the lock
    return p, {}, None


def unreadable_beside(lock_path: Path) -> str | None:
    """The note for a pyproject.toml beside a lock (not the file the user named) that cannot be read: what was not
    read from it, and why (a project's own broken file must not hide the verdict on the lock the user asked about).
    None when there is none, or it reads."""
    pp = lock_path.parent / "pyproject.toml"
    if lock_path.name == "pyproject.toml" or not readlog.is_file(pp):
        return None
    try:
        pyproject_settings(pp)
    except InputError as e:
        return (f"{e.one_line()}: its [tool.glmcompat] and [tool.uv] settings (targets, build isolation) were not read, "
                "and uv refuses the project until it is fixed")
    return None


def no_isolation(lock_path: Path) -> frozenset[str] | None:
    """Packages the project beside ``lock_path`` builds without build isolation (so against the torch
    installed beside them): uv's ``no-build-isolation-package``, ``no-build-isolation`` (every package,
    as ``*``) and ``extra-build-dependencies`` entries with ``match-runtime = true``. None when there is no
    pyproject.toml beside the lock."""
    pp = lock_path.parent / "pyproject.toml"
    if not readlog.is_file(pp):
        return None
    try:
        uv = pyproject_doc(pp).get("tool", {})
    except InputError:
        return None  # unreadable: not known (check's note says so: unreadable_beside)
    uv = uv.get("uv", {}) if isinstance(uv, dict) else {}
    if not isinstance(uv, dict):
        return frozenset()
    out: set[str] = set()
    if uv.get("no-build-isolation") is True:
        out.add("*")
    pkgs = uv.get("no-build-isolation-package", [])
    if isinstance(pkgs, list):
        out.update(canonicalize(p) for p in pkgs if isinstance(p, str))
    extra = uv.get("extra-build-dependencies", {})
    if isinstance(extra, dict):
        for name, reqs in extra.items():
            if isinstance(reqs, list) and any(isinstance(r, dict) and r.get("match-runtime") is True for r in reqs):
                out.add(canonicalize(str(name)))
    return frozenset(out)


def platform_setting(lock: Path, settings: dict[str, Any] | None) -> list[str] | None:
    """``[tool.glmcompat] platform`` of the pyproject.toml beside the lock (what `glmcompat lock
    --platform aarch64` writes): the machines the lock was made for, judged strictly like --platform."""
    pp = lock.parent / "pyproject.toml"
    if settings is None:
        if not readlog.is_file(pp):
            return None
        try:
            settings = pyproject_settings(pp)
        except InputError:
            return None  # unreadable, and not the file the user named: check's note says so (unreadable_beside)
    value = settings.get("platform", settings.get("platforms"))
    if value is None:
        return None
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values) or not values:
        raise InputError(f"[tool.glmcompat] platform must be a platform name or a list of them, not {value!r}", path=str(pp))
    try:
        return list(dict.fromkeys(check_platform(v) for v in values))
    except InputError as e:
        raise InputError(e.message, path=str(pp)) from None


def output_set_problems(lock_path: Path) -> list[Finding]:
    """A lock that `glmcompat lock` wrote is one of a set (pyproject.toml, uv.lock, requirements.txt,
    pylock.toml, stamped together): a set mixed from two runs, or a publish cut short, is an error here
    too, whatever the files say one by one."""
    d = lock_path.parent
    if not (readlog.exists(d / ".glmcompat-stamp") or readlog.exists(d / ".glmcompat-publish")):
        return []
    from glmcompat.ops.lockgen import verify_outputs  # lazy: lockgen (uv, the resolver) only for a glmcompat-written lock

    return [Finding(rule="output-set", severity="error", packages=(), message=p,
                    evidence=(("observed-run", f"{d / '.glmcompat-stamp'}: the per-file sha256 of the set"),),
                    remedy="run `glmcompat lock` again to rewrite the whole set") for p in verify_outputs(d)]


def check_ships(trow: Target, platforms: list[str] | None) -> None:
    """``--platform`` must name machines the target ships on (``--target sm121 --platform x86_64``: exit 2, one line)."""
    ships = target_platforms(trow)
    for p in platforms or ():
        if p not in ships:
            where = "; ".join(f"{', '.join(products_on(trow, q))} on {q}" for q in ships)
            raise InputError(f"target {trow.name} never ships on {p} ({where}): pass "
                             f"{' or '.join(f'--platform {q}' for q in ships)} (or leave --platform out)")


__all__ = ["check_ships", "no_isolation", "output_set_problems", "platform_setting", "pyproject_doc",
           "pyproject_settings"]

"""Which commit ``HEAD`` names for the repository holding a file, read from the repository's own files with ``os``
alone (no ``git`` process): what the warm ``check --against HEAD`` keys its verdict on. The file's content at
``HEAD`` is fixed by that commit and the file's path in the work tree, so a verdict judged against it holds
while both do.

Only the plain layout is read: a ``.git`` directory or a ``.git`` file naming one (a linked worktree, a
submodule), loose or packed refs. Anything this reader does not follow exactly as git would — a variable that
moves the repository (``GIT_DIR``, ``GIT_WORK_TREE``, ...), the reftable ref store, replace refs or grafts
(which change what a commit holds), a symbolic ref chain too long, an unreadable file — gives None: the caller
then asks git itself.
"""

from __future__ import annotations

import os

from glmcompat.matrix.locations import hasher

# Variables that change where git finds the repository or what its objects say: any of them set, no answer.
MOVING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
          "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_REPLACE_REF_BASE",
          "GIT_NO_REPLACE_OBJECTS", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG", "GIT_CONFIG_GLOBAL",
          "GIT_CONFIG_SYSTEM")
_MAX = 1 << 20


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX + 1)
    except OSError:
        return None
    return data if len(data) <= _MAX else None


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def find_repository(path: str) -> tuple[str, str, str] | None:
    """``(work tree top, git dir, common dir)`` of the repository holding ``path``, found as git finds it
    walking up from the file's real directory; None when there is none or it is not the plain layout."""
    d = os.path.dirname(os.path.realpath(path))
    while True:
        dotgit = os.path.join(d, ".git")
        if os.path.isdir(dotgit) and not os.path.islink(dotgit):
            gitdir = dotgit
            break
        if os.path.isfile(dotgit):
            data = _read(dotgit)
            text = data.decode("utf-8", "replace").strip() if data is not None else ""
            if not text.startswith("gitdir: ") or "\n" in text:
                return None
            gitdir = os.path.normpath(os.path.join(d, text[len("gitdir: "):]))
            if not os.path.isdir(gitdir):
                return None
            break
        if os.path.lexists(dotgit) or os.path.isfile(os.path.join(d, "HEAD")):
            return None  # a link, or a directory git may take for a bare repository: git answers
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
    common = gitdir
    named = _read(os.path.join(gitdir, "commondir"))
    if named is not None:
        common = os.path.normpath(os.path.join(gitdir, named.decode("utf-8", "replace").strip()))
    return d, gitdir, common


def _packed(common: str) -> dict[str, str] | None:
    data = _read(os.path.join(common, "packed-refs"))
    refs: dict[str, str] = {}
    if data is None:
        return refs if not os.path.exists(os.path.join(common, "packed-refs")) else None
    for line in data.decode("utf-8", "replace").splitlines():
        if not line or line[0] in "#^":
            continue
        oid, _, name = line.partition(" ")
        refs[name] = oid
    return refs


def head_state(path: str) -> str | None:
    """A text naming exactly what ``git show HEAD:<path>`` shows for ``path``: the work tree top, the file's real
    path, the commit ``HEAD`` resolves to (or the unborn branch it names) and the digest of the repository's
    configuration; None when this reader cannot tell (see the module's docstring)."""
    if any(os.environ.get(v) for v in MOVING):
        return None
    found = find_repository(path)
    if found is None:
        return None
    top, gitdir, common = found
    if (os.path.exists(os.path.join(common, "reftable")) or os.path.exists(os.path.join(common, "info", "grafts"))
            or os.path.isdir(os.path.join(common, "refs", "replace")) and os.listdir(os.path.join(common, "refs", "replace"))):
        return None
    packed = _packed(common)
    if packed is None or any(name.startswith("refs/replace/") for name in packed):
        return None
    head = _read(os.path.join(gitdir, "HEAD"))
    if head is None:
        return None
    value = head.decode("utf-8", "replace").strip()
    for _ in range(5):  # HEAD -> refs/heads/main (-> another symbolic ref ...) -> an object id
        if _is_oid(value):
            break
        if not value.startswith("ref: "):
            return None
        ref = value[len("ref: "):].strip()
        if not ref.startswith("refs/") or ".." in ref.split("/"):
            return None
        loose = _read(os.path.join(common, *ref.split("/")))
        if loose is not None:
            value = loose.decode("utf-8", "replace").strip()
        elif ref in packed:
            value = packed[ref]
        elif os.path.exists(os.path.join(common, *ref.split("/"))):
            return None  # there but unreadable
        else:
            value = f"unborn {ref}"  # a branch with no commit yet: everything is new
            break
    else:
        return None
    if not (_is_oid(value) or value.startswith("unborn ")):
        return None
    config = b""
    for name in (os.path.join(common, "config"), os.path.join(gitdir, "config.worktree")):
        data = _read(name)
        config += b"\0" + (data if data is not None else b"")
    h = hasher()
    h.update(config)
    return "\0".join((top, os.path.realpath(path), value, h.hexdigest()))

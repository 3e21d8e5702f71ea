"""Harvest what modules of a companion define at each release tag of its repository (since, and until where a release
dropped a name), for ``[[export]]`` rows (issue 38: ``AttributeError: module 'cupy' has no attribute 'scatter_add'`` or
``cannot import name 'ActivationCasting' from 'torchao.float8.inference'`` is the companion newer than the code where
a release removed the name, and too old where a later release added it: the direction is read from the source, never
guessed).

The source is read at each release tag of a clone: ``git show <tag>:<path>`` (the search tool's ``fetch github:<repo>``
gives one). Run, for example:
``python scripts/harvest_tag_api.py <git dir> cupy/cupy cupy 4.0.0 --prereleases cupy=cupy/__init__.py
> glmcompat/matrix/data/cupy-api.toml``
``python scripts/harvest_tag_api.py <git dir> pytorch/ao torchao 0.1.0 torchao.float8.inference=torchao/float8/inference.py
> glmcompat/matrix/data/torchao-api.toml``.

A name is in a module where the module's file binds it at module level (scripts/harvest_torch_api.py's ``bound``: def,
class, assignment, import; not inside a function or class) or lists it in ``__all__``; only public names (no leading
underscore) are kept. The tags read are ``v<version>`` from ``oldest`` on: final releases, and with ``--prereleases``
the alpha, beta and release-candidate tags too, for a project that publishes them on the package index (CuPy's
``cupy-cuda100==8.0.0b1``). A tag whose tree lacks the module's file is read as the module defining nothing then. A name
of the oldest tag read has ``since`` = that release (there or earlier).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
import sys
from functools import partial
from pathlib import Path

from packaging.version import InvalidVersion, Version

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harvest_exports import export_rows, grouped, since_until  # noqa: E402  (a sibling script: the one writer of [[export]] rows)
from harvest_torch_api import bound  # noqa: E402  (a sibling script)


def tags(git: str, oldest: str, prereleases: bool, postreleases: bool = False) -> list[tuple[str, Version]]:
    """The release tags ``v<version>`` from ``oldest`` on, oldest first (never a dev tag; a post tag only with
    ``postreleases``, for a project whose post releases are its releases: flash-attn's v2.8.3.post1)."""
    out = []
    for t in subprocess.run(["git", "--git-dir", git, "tag"], capture_output=True, text=True, check=True).stdout.split():
        try:
            pv = Version(t.removeprefix("v"))
        except InvalidVersion:
            continue
        if t.startswith("v") and not pv.is_devrelease and (postreleases or not pv.is_postrelease) and \
                pv >= Version(oldest) and (prereleases or not pv.is_prerelease):
            out.append((t, pv))
    return sorted(out, key=lambda x: x[1])


def source_at(git: str, tag: str, path: str) -> bytes | None:
    """The bytes of ``path`` at ``tag`` (None where the tag's tree has no such file)."""
    r = subprocess.run(["git", "--git-dir", git, "show", f"{tag}:{path}"], capture_output=True, check=False)
    return r.stdout if r.returncode == 0 else None


def names_at(git: str, tag: str, path: str) -> set[str]:
    """The public names ``path`` binds at ``tag`` (none where the tag's tree has no such file)."""
    source = source_at(git, tag, path)
    return set() if source is None else {n for n in bound(source) if not n.startswith("_")}


def tag_source(repo: str, path: str, got: list[tuple[str, Version]], since: str, until: str | None, *,
               script: str = "harvest_tag_api.py", tags_read: str = "release tag") -> str:
    """A harvested row's ``source``: ``path`` of ``repo`` at every tag of ``got`` (oldest first), read by ``script``,
    and the releases the names came and went."""
    src = (f"{repo} {path} at every {tags_read} from {got[0][0]} to {got[-1][0]} (read by scripts/{script}): "
           f"first at v{since}")
    if Version(since) == got[0][1]:
        src += " (the oldest tag read: there or earlier)"
    return src + (f", absent from v{until} on" if until else "")


def print_tag_rows(git: str, got: list[tuple[str, Version]], package: str, repo: str, modules: list[tuple[str, str]],
                   names: Callable[[str, str, str], set[str]] = names_at, keep: Callable[[str], bool] = lambda n: True,
                   **source: str) -> None:
    """Print the ``[[export]]`` rows of each (module, path) of ``modules``: what ``names`` (git dir, tag, path) reads
    at each tag of ``got``, kept where ``keep`` admits it, each row's source :func:`tag_source` (``source``: its
    script and the tags read)."""
    for module, path in modules:
        first, gone = since_until([(str(pv), names(git, tag, path)) for tag, pv in got])
        rows = export_rows(package, module, grouped(first, gone, keep), partial(tag_source, repo, path, got, **source))
        if rows:
            print("\n".join(rows))


def main(argv: list[str]) -> int:
    args = [a for a in argv[1:] if a != "--prereleases"]
    git, repo, package, oldest, modules = args[0], args[1], args[2], args[3], [m.split("=", 1) for m in args[4:]]
    got = tags(git, oldest, "--prereleases" in argv)
    print(f"# What {package}'s modules {', '.join(m for m, _ in modules)} define at each release tag (since, and until where")
    print(f"# a release dropped a name), read from the {repo} source at its tags by scripts/harvest_tag_api.py. explain")
    print(f"# reads it to tell {package} too old (a later release added the name) or newer than the code (a release removed")
    print("# it) for the code whose import or attribute fails on the name (issue 38). Generated: do not edit by hand.")
    print("schema = 1")
    print()
    print_tag_rows(git, got, package, repo, [(m, p) for m, p in modules])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

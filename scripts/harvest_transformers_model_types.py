"""Which transformers release first knows each model type: writes glmcompat/matrix/data/transformers-model-types.toml.

For the first final release of every minor line from 4.0 on (4.0.0, 4.1.0, ..., 4.14.1 where no 4.14.0 was
published, ..., the newest minor the index has), it reads transformers' own table of model types out of the
published wheel by HTTP range requests (the central directory and the one or two members; no wheel is downloaded
whole):

* ``transformers/models/auto/configuration_auto.py``: the keys of ``CONFIG_MAPPING_NAMES`` (4.12 on:
  ``("model_type", "XConfig")`` pairs) or, before it existed, of ``CONFIG_MAPPING`` (``("model_type", XConfig)``);
* ``transformers/models/auto/auto_mappings.py`` (the 5.x line's generated table that configuration_auto.py imports
  ``CONFIG_MAPPING_NAMES`` from), where the wheel has it.

Each model type is recorded under the first harvested release that knows it and, where a later release no longer
knows it (a removed model), under the first release without it. The table is parsed with :mod:`ast`, so a comment or
a string elsewhere in the file is never read as a model type.

    python scripts/harvest_transformers_model_types.py            # rewrite the data file
    python scripts/harvest_transformers_model_types.py --check    # exit 1 if the data file differs

The index is the one pip/uv would use; no index host is written here. Exit 0 on success, 1 when --check finds a
difference, 3 when the index fails.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # glmcompat from this checkout

from packaging.version import Version  # noqa: E402

from glmcompat.edges.index import IndexClient, IndexFile  # noqa: E402
from glmcompat.edges.ranges import HttpRangeReader  # noqa: E402
from glmcompat.model.errors import EnvironmentFailure, InputError  # noqa: E402
from glmcompat.readers.wheelzip import RemoteZip  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "glmcompat", "matrix", "data",
                   "transformers-model-types.toml")
AUTO = "transformers/models/auto/"
FILES = (AUTO + "configuration_auto.py", AUTO + "auto_mappings.py")
TABLES = ("CONFIG_MAPPING_NAMES", "CONFIG_MAPPING")
FIRST = Version("4.0.0")


def table_keys(text: str) -> set[str]:
    """The model types of the file's ``CONFIG_MAPPING_NAMES`` (else ``CONFIG_MAPPING``) literals: the string first
    items of the ``(key, value)`` pairs, or the string keys of the dict literals, assigned to it or passed to its
    ``.update``."""
    tree = ast.parse(text)
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets, value = list(node.targets), node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update"
              and isinstance(node.func.value, ast.Name) and node.args):
            # CONFIG_MAPPING_NAMES.update({...}): the 5.x line's non-standard types added in configuration_auto.py
            targets, value = [node.func.value], node.args[0]
        else:
            continue
        names = [t.id for t in targets if isinstance(t, ast.Name) and t.id in TABLES]
        if not names:
            continue
        keys: set[str] = set()
        for sub in ast.walk(value):
            if isinstance(sub, ast.Dict):
                keys |= {k.value for k in sub.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            elif isinstance(sub, (ast.List, ast.Tuple)):
                for e in sub.elts:
                    if (isinstance(e, ast.Tuple) and len(e.elts) == 2 and isinstance(e.elts[0], ast.Constant)
                            and isinstance(e.elts[0].value, str)):
                        keys.add(e.elts[0].value)
        if keys:
            found.setdefault(names[0], set()).update(keys)
    return found.get("CONFIG_MAPPING_NAMES") or found.get("CONFIG_MAPPING") or set()


def first_of_each_minor(versions: Iterable[str]) -> list[str]:
    """The first final release of each minor line from 4.0 on, oldest first (``versions``: those with a wheel)."""
    by_minor: dict[tuple[int, int], Version] = {}
    for v in versions:
        try:
            pv = Version(v)
        except ValueError:
            continue
        if pv.is_prerelease or pv.is_devrelease or pv.local or pv < FIRST:
            continue
        key = (pv.major, pv.minor)
        if key not in by_minor or pv < by_minor[key]:
            by_minor[key] = pv
    return [str(by_minor[k]) for k in sorted(by_minor)]


def wheel_of(files: list[IndexFile]) -> IndexFile | None:
    """The release's pure-Python wheel (not yanked), if it published one."""
    return next((f for f in files if f.filename.endswith("-py3-none-any.whl") and not f.yanked), None)


def read_release(ic: IndexClient, wheel: IndexFile) -> tuple[str, set[str], list[str]]:
    """(wheel, model types, members read) of one release."""
    reader = HttpRangeReader(ic.client, wheel.url, name=wheel.filename, size=wheel.size)
    zf = RemoteZip(reader)
    members = {m.name: m for m in zf.members}
    used = [p for p in FILES if p in members]
    types: set[str] = set()
    for p in used:
        types |= table_keys(zf.read(members[p]).decode("utf-8"))
    if not types:
        raise EnvironmentFailure(f"{wheel.filename}: no CONFIG_MAPPING_NAMES / CONFIG_MAPPING read from {used}")
    return wheel.filename, types, used


def render(releases: list[str], read: dict[str, tuple[str, set[str], list[str]]]) -> str:
    first: dict[str, list[str]] = {}
    gone: dict[str, list[str]] = {}
    seen: set[str] = set()
    prev: set[str] = set()
    for v in releases:
        types = read[v][1]
        new = sorted(types - seen)
        if new:
            first[v] = new
        left = sorted(prev - types)
        if left:
            gone[v] = left
        seen |= types
        prev = types
    back = sorted(prev & {t for ts in gone.values() for t in ts})  # removed, then known again
    newest = releases[-1]
    wheels = sorted({read[v][0] for v in releases}, key=lambda w: Version(w.split("-")[1]))
    members = sorted({p for v in releases for p in read[v][2]})
    lines = [
        "# Every model type (config.json's \"model_type\") a transformers release knows, and the first release that "
        "knows it:",
        "# the keys of transformers' CONFIG_MAPPING_NAMES (CONFIG_MAPPING before 4.12) in "
        "models/auto/configuration_auto.py",
        "# (the 5.x line: also the generated models/auto/auto_mappings.py it imports them from), read at the first "
        "final release",
        "# of every minor line. Written by scripts/harvest_transformers_model_types.py; do not edit by hand.",
        "# first: release -> the model types it is the first harvested release to know. removed: release -> the model",
        "# types the harvested release before it knew and it no longer does. A type in no first list is known by no",
        "# release up to `newest` (a checkpoint's own remote-code type, or a config.json that is wrong).",
        "",
        "schema = 1",
        "",
        "[[model_types]]",
        'package = "transformers"',
        f'newest = "{newest}"',
        "harvested = [" + ", ".join(f'"{v}"' for v in releases) + "]",
        'evidence = "metadata"',
        f'source = "{" and ".join(members)} (CONFIG_MAPPING_NAMES, CONFIG_MAPPING before 4.12, and 5.x\'s '
        f'CONFIG_MAPPING_NAMES.update) of each harvested release\'s wheel, {wheels[0]} to {wheels[-1]}, read with '
        'ast by scripts/harvest_transformers_model_types.py"',
        "",
        "[model_types.first]",
    ]
    for v in releases:
        if v in first:
            lines.append(f'"{v}" = [' + ", ".join(f'"{t}"' for t in first[v]) + "]")
    lines += ["", "[model_types.removed]"]
    for v in releases:
        if v in gone:
            lines.append(f'"{v}" = [' + ", ".join(f'"{t}"' for t in gone[v]) + "]")
    if back:
        raise EnvironmentFailure(f"model types removed and known again: {back} (the format records one removal)")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the data file differs from what is read now")
    ap.add_argument("--through", help="harvest up to this release only (the newest the index has by default)")
    a = ap.parse_args(argv)
    try:
        with IndexClient() as ic:
            project = ic.project("transformers")
            wheels = {v: w for v in project.versions if (w := wheel_of(project.files_for(v))) is not None}
            releases = first_of_each_minor(wheels)
            if a.through:
                releases = [v for v in releases if Version(v) <= Version(a.through)]
            with ThreadPoolExecutor(4) as pool:
                got = dict(zip(releases, pool.map(lambda v: read_release(ic, wheels[v]), releases), strict=True))
    except (InputError, EnvironmentFailure) as e:
        print(f"error: {e}", file=sys.stderr)
        return 3
    for v in releases:
        print(f"{v}: {len(got[v][1])} model types ({', '.join(got[v][2])})", file=sys.stderr)
    text = render(releases, got)
    if a.check:
        with open(OUT, encoding="utf-8") as f:
            same = f.read() == text
        print("up to date" if same else f"{OUT} differs from what the wheels say", file=sys.stderr)
        return 0 if same else 1
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Harvest which public names the ``numpy`` namespace has at each release, for ``[[export]]`` rows of
``glmcompat/matrix/data/numpy-api.toml`` (issue 38: ``ImportError: cannot import name 'BUFSIZE' from 'numpy'`` and
``AttributeError: module 'numpy' has no attribute 'product'`` are numpy too new for the calling code where a NumPy
release removed the name and the installed one is at or past it: the release is read from the wheels, never guessed).

NumPy builds its namespace from star imports of its submodules and serves the removed and deprecated names from a module
``__getattr__`` (``__deprecated_attrs__`` in 1.20-1.23, ``__former_attrs__`` from 1.24, ``_expired_attrs_2_0`` from
2.0), so the namespace is read by importing each real wheel, never by reading its source: each release's wheel is
installed with pip (``--only-binary :all: --no-deps --target``, from the index pip is configured with) into its own
directory and a fresh interpreter run on it lists ``dir(numpy)`` and the keys of those tables; then, in each release,
every name of that union is probed with ``getattr`` (warnings silenced: a deprecated alias still answers). A name a
release answers for is in its namespace, except a standard-library module its ``__init__`` imported (os, sys, warnings), the placeholder string "removed"
(numarray, oldnumeric) and a name of ``__expired_functions__`` (NEP 32's financial functions, removed in 1.20 and served
as a stub that raises when called). The releases read are each minor series' first release the running
interpreter has a wheel for (Python 3.11: 1.23.5 is the oldest), so a ``since`` of the oldest release read is "there or
earlier", and an ``until`` is the first release read without the name. Only the names some release read removed are
written (a name every release has since it first appeared tells no removal: explain reads these rows for numpy too new,
not for numpy too old); a name removed and later brought back (np.bool: gone in 1.24, an alias of np.bool_ again in 2.0)
gets a row per span. Run:
``python scripts/harvest_numpy_api.py > glmcompat/matrix/data/numpy-api.toml`` (needs the index and pip).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

RELEASES = ("1.23.5", "1.24.0", "1.25.0", "1.26.0", "2.0.0", "2.1.0", "2.2.0", "2.3.0")
WHEEL = "numpy-{v}-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"

_LIST = """
import json, numpy
out = set(dir(numpy))
for table in ("__deprecated_attrs__", "__former_attrs__", "__expired_functions__"):
    out.update(getattr(numpy, "__dict__", {}).get(table, {}) or {})
try:
    from numpy import _expired_attrs_2_0
    out.update(_expired_attrs_2_0.__expired_attributes__)
except ImportError:
    pass
print(json.dumps(sorted(n for n in out if not n.startswith("_"))))
"""

_PROBE = """
import json, sys, warnings, numpy
warnings.simplefilter("ignore")
names = json.loads(sys.stdin.read())
expired = numpy.__dict__.get("__expired_functions__", {}) or {}
def has(n):
    if n in expired:  # NEP 32's financial functions: removed in 1.20, served as a stub that raises when called
        return False
    try:
        got = getattr(numpy, n)
    except Exception:
        return False
    # the standard library's modules numpy's __init__ imported (os, sys, warnings): no part of its namespace's API
    if type(got).__name__ == "module" and not got.__name__.startswith("numpy"):
        return False
    return not (isinstance(got, str) and got == "removed")  # numarray, oldnumeric: placeholders of removed modules
print(json.dumps(sorted(n for n in names if has(n))))
"""


def _run(target: Path, code: str, stdin: str = "") -> list[str]:
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}
    got = subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True, text=True, env=env,
                         cwd=target, check=True)
    names: list[str] = json.loads(got.stdout)
    return names


def spans(told: list[tuple[str, set[str]]]) -> dict[tuple[str, str | None], list[str]]:
    """(since, until) -> names, from ``told`` (release, the names it has), oldest first: one span per stretch of
    releases that have a name, closed by the first release read without it."""
    groups: dict[tuple[str, str | None], list[str]] = defaultdict(list)
    every = sorted(set().union(*(names for _, names in told)))
    for n in every:
        if all(n in names for _, names in told[told.index(next(t for t in told if n in t[1])):]):
            continue  # never removed once there (np.astype, new in 2.0): no removal to tell, so no row
        start: str | None = None
        for version, names in told:
            if n in names and start is None:
                start = version
            elif n not in names and start is not None:
                groups[(start, version)].append(n)
                start = None
        if start is not None:
            groups[(start, None)].append(n)
    return groups


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        dirs: dict[str, Path] = {}
        for v in RELEASES:
            dirs[v] = Path(tmp) / v
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--only-binary", ":all:",
                            "--target", str(dirs[v]), f"numpy=={v}"], check=True, capture_output=True)
        union = sorted(set().union(*(_run(d, _LIST) for d in dirs.values())))
        told = [(v, set(_run(dirs[v], _PROBE, json.dumps(union)))) for v in RELEASES]
    print("# Which public names the numpy namespace has at each release (since, and until where a release dropped it),")
    print("# from the real NumPy wheels, each imported and probed by scripts/harvest_numpy_api.py (its docstring says")
    print("# how each release is read). explain reads it to tell numpy too new for code that imports or uses a name a")
    print("# NumPy release removed (issue 38). Generated: do not edit by hand.")
    print("schema = 1")
    print()
    oldest, newest = RELEASES[0], RELEASES[-1]

    def source(since: str, until: str | None) -> str:
        first = f"first in numpy-{since}" + (" (the oldest release read: there or earlier)" if since == oldest else "")
        gone = f", absent from numpy-{until} on" if until else ""
        return (f"the numpy namespace of {WHEEL.format(v=oldest)} to {WHEEL.format(v=newest)}, each minor series' first "
                f"release (imported and probed with getattr by scripts/harvest_numpy_api.py): {first}{gone}")

    for (since, until), names in sorted(spans(told).items(), key=lambda kv: (RELEASES.index(kv[0][0]),
                                                                              RELEASES.index(kv[0][1]) if kv[0][1] else 99)):
        print("[[export]]")
        print('package = "numpy"')
        print('module = "numpy"')
        print(f'since = "{since}"')
        if until:
            print(f'until = "{until}"')
        print("names = [" + ", ".join(f'"{n}"' for n in sorted(names)) + "]")
        print('evidence = "metadata"')
        print(f'source = "{source(since, until)}"')
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

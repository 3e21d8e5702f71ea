"""``-qq`` is silent through an explicit stream (``Output.out``), never by swapping ``sys.stdout``: what a command
writes under it goes nowhere, and the process's stdout is the same object throughout."""

from __future__ import annotations

import io
import sys

import pytest


def test_qq_writes_nowhere_and_leaves_stdout_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from glmcompat import cli

    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    seen: list[object] = []
    dispatch = cli._dispatch

    def spy(*args: object) -> int:
        seen.append(sys.stdout)
        return dispatch(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(cli, "_dispatch", spy)
    for argv in (["-qq", "targets"], ["targets", "--json", "-q", "-q"], ["matrix", "validate", "--quiet", "--quiet"]):
        assert cli.main(argv) == 0
    with pytest.raises(SystemExit) as e:  # a usage error: its line on stderr, its --json document nowhere
        cli.main(["-qq", "targets", "--target-typo", "--json"])
    assert e.value.code == 2
    assert seen == [stream] * 4 and stream.getvalue() == ""
    assert cli.main(["-q", "targets"]) == 0 and stream.getvalue().startswith("target ")  # -q still answers


# -- no module swaps the process's streams ------------------------------------------------------------

_STREAMS = {"stdout", "stderr", "__stdout__", "__stderr__"}


def _swaps(source: str) -> list[int]:
    """The lines of ``source`` that replace ``sys.stdout`` or ``sys.stderr``: an assignment to either (also in a
    tuple, augmented or annotated), ``setattr(sys, ...)`` on them or on a name not spelled out, and
    ``contextlib.redirect_stdout``/``redirect_stderr``. Filling a stream the caller closed is one too (issue 40: a
    closed stream stays None and is written nowhere, glmcompat.cli.streams)."""
    import ast

    tree = ast.parse(source)
    sys_names = {"sys"} | {a.asname for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
                           if a.name == "sys" and a.asname}

    def stream(t: ast.AST) -> bool:
        return (isinstance(t, ast.Attribute) and t.attr in _STREAMS and isinstance(t.value, ast.Name)
                and t.value.id in sys_names)

    def targets(t: ast.AST) -> list[ast.AST]:
        if isinstance(t, (ast.Tuple, ast.List)):
            return [x for e in t.elts for x in targets(e)]
        return [t.value] if isinstance(t, ast.Starred) else [t]

    found: list[int] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign):
            found += [t.lineno for tt in n.targets for t in targets(tt) if stream(t)]
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and stream(n.target):
            found.append(n.lineno)
        elif isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in ("redirect_stdout", "redirect_stderr"):
                found.append(n.lineno)
            elif (name == "setattr" and len(n.args) >= 2 and isinstance(n.args[0], ast.Name)
                  and n.args[0].id in sys_names
                  and not (isinstance(n.args[1], ast.Constant) and n.args[1].value not in _STREAMS)):
                found.append(n.lineno)
    return sorted(found)


def _may_swap(source: str) -> bool:
    """Whether :func:`_swaps` can find anything in ``source``: each swap it finds spells ``stdout``/``stderr`` (the
    attribute assigned), ``setattr`` or ``redirect_std`` as an identifier, which an ASCII source holds as those very
    characters; a source with other characters (an identifier may be any NFKC spelling) is always scanned."""
    return not source.isascii() or any(k in source for k in ("stdout", "stderr", "setattr", "redirect_std"))


def test_the_scan_sees_each_way_of_swapping_a_stream() -> None:
    for swap in ("import sys\nsys.stdout = x", "import sys\nsys.stdout, sys.stderr = a, b", "import sys as s\ns.stderr = x",
                 "import sys\nsetattr(sys, 'stdout', x)", "import sys\nsetattr(sys, name, x)",
                 "from contextlib import redirect_stdout\nwith redirect_stdout(x):\n    pass",
                 "import contextlib\nwith contextlib.redirect_stderr(x):\n    pass",
                 "import sys\nif sys.stdout is None:\n    sys.stdout = x\n    sys.stderr = y",
                 "import sys\nif sys.stdout is None:\n    sys.stderr = x", "import sys\nif sys.stdout is None:\n    sys.stdout = x"):
        assert _swaps(swap) and _may_swap(swap), swap
    for fine in ("import sys\nsys.stdout.write('x')",
                 "import sys\nsetattr(sys, 'argv', [])", "import sys\nout = sys.stdout"):
        assert not _swaps(fine), fine


@pytest.mark.slow
def test_no_module_swaps_stdout_or_stderr() -> None:
    """sys.stdout and sys.stderr are never replaced: a command writes its answer to the stream it is given
    (``Output.out``, ``Output.err``), and what is captured (``-qq``, the start-up paths' records) is captured there."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "glmcompat"
    found = {str(p.relative_to(root.parent)): lines for p in sorted(root.rglob("*.py"))
             for source in [p.read_text(encoding="utf-8")] if _may_swap(source) and (lines := _swaps(source))}
    assert found == {}

"""Gates that run with the test suite (and so in CI, whose one command is the README's pytest): ruff with the
rule set in pyproject.toml, the import-linter layers contract, no import cycle between modules, mypy
--strict (pyproject.toml's [tool.mypy]), and every import inside a function saying why it is there. Each gate is a test dependency (``pip install -e '.[test]'``)."""

from __future__ import annotations

import ast
import io
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> str:
    exe = Path(sys.executable).parent / name
    found = str(exe) if exe.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is a test dependency: pip install -e '.[test]'")
    return found


def test_ruff_is_clean():
    pytest.importorskip("ruff", reason="ruff is a test dependency: pip install -e '.[test]'")
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "glmcompat", "tests", "scripts", "benchmarks"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_layers_contract_is_kept():
    """Each layer imports only from the layers below it (function-level imports included)."""
    r = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "1 kept, 0 broken" in r.stdout


def test_no_import_cycle_between_modules():
    """No module reaches itself through imports (a cycle inside one layer passes the layers contract)."""
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter: pip install -e '.[test]'")
    graph = grimp.build_graph("glmcompat", cache_dir=None)
    cycles = []
    for m in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(m)):
            if graph.chain_exists(importer=imported, imported=m):
                cycles.append(f"{m} -> {imported} -> ... -> {m}")
    # a package's __init__ importing its own children is not a cycle between modules
    cycles = [c for c in cycles if not c.split(" -> ")[0] == c.split(" -> ")[1].rsplit(".", 1)[0]]
    assert not cycles, "\n".join(cycles)


def test_no_cycle_through_imports_made_by_name():
    """The imports grimp cannot see count too (issue 40 item 5): the package root imports each public name's module
    when it is asked for (glmcompat.model.public.PUBLIC) and the entry point each command's module when it runs
    (glmcompat.cli.commands.COMMANDS); none of those modules reaches back to the root or to glmcompat.cli."""
    grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter: pip install -e '.[test]'")
    from glmcompat.cli.commands import COMMANDS
    from glmcompat.model.public import PUBLIC
    from glmcompat.ops.verify.gpuchecks import GROUPS, group_function

    graph = grimp.build_graph("glmcompat", cache_dir=None)
    by_name = [("glmcompat", f"glmcompat.{m}") for m in set(PUBLIC.values())]
    by_name += [("glmcompat.cli", module) for module, _ in COMMANDS.values()]
    by_name += [("glmcompat.ops.verify.gpuchecks", f"glmcompat.ops.verify.{module}") for module, _ in GROUPS.values()]
    assert all(callable(group_function(g)) for g in GROUPS)  # every group's function is where the table says
    back = [f"{parent} -> {m} -> ... -> {parent}" for parent, m in sorted(set(by_name))
            if graph.chain_exists(importer=m, imported=parent)]
    assert not back, "\n".join(back)
    assert len(by_name) > 10  # the tables were read


def test_layers_are_the_packages():
    """Every module lives in one of the layers (a module at the top level would escape the contract): the top level
    holds the package's own files and the modules that are a layer themselves (glmcompat.api, the library)."""
    import tomllib

    contract = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]
    layers = {name.strip() for layer in contract["layers"] for name in layer.split("|")}
    top = sorted(p.name for p in (ROOT / "glmcompat").glob("*.py"))
    modules = [t for t in top if t not in ("__init__.py", "__main__.py")]
    assert all(f"glmcompat.{t.removesuffix('.py')}" in layers for t in modules), top
    assert modules == ["api.py"], top


@pytest.mark.slow
def test_mypy_strict_is_clean(tmp_path_factory: pytest.TempPathFactory) -> None:
    """mypy's incremental cache is kept beside pytest's temporary directories (:func:`tests.conftest.kept_dir`), one
    per mypy and Python, so a later session (a fresh clone too: mypy checks a module it cached by its content's hash
    where the mtime differs) re-checks only what changed: the whole package is 20 s of CPU cold, a few warm."""
    from tests.conftest import kept_dir  # lazy: conftest is imported by pytest first; kept here for the one gate

    mypy = _tool("mypy")
    version = subprocess.run([mypy, "--version"], capture_output=True, text=True).stdout.split()
    cache = kept_dir(tmp_path_factory, "glmcompat-mypy") / f"{'-'.join(version[:2])}-py{sys.version_info[0]}{sys.version_info[1]}"
    r = subprocess.run([mypy, "--cache-dir", str(cache)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]


def test_contributors_hooks_run_the_gates():
    """`.pre-commit-config.yaml` is a valid pre-commit configuration whose hooks are these gates, run with the
    development environment's tools (local hooks: nothing fetched, the versions CI uses)."""
    import yaml

    r = subprocess.run([_tool("pre-commit"), "validate-config", ".pre-commit-config.yaml"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    assert [repo["repo"] for repo in doc["repos"]] == ["local"]
    hooks = {h["id"]: h for repo in doc["repos"] for h in repo["hooks"]}
    assert {h["language"] for h in hooks.values()} == {"system"}
    assert hooks["ruff"]["entry"].split()[:2] == ["ruff", "check"]
    assert hooks["mypy"]["entry"] == "mypy" and hooks["mypy"]["pass_filenames"] is False  # [tool.mypy]'s files
    assert hooks["import-linter"]["entry"] == "lint-imports"


def test_no_class_name_is_defined_in_two_modules():
    """Each idea is declared once (issue 27): a class name names one class in the package, so a reader (and a
    grep) finds the one declaration; the matrix's rows, for one, are declared only in glmcompat/matrix/rows.py."""
    where: dict[str, list[str]] = {}
    for path, _, tree in package_modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    twice = {name: paths for name, paths in where.items() if len(set(paths)) > 1}
    assert not twice, twice
    assert len(where) > 100  # the walk saw the package


# -- imports inside functions ----------------------------------------------------------------------

LAZY = "# lazy:"


def package_modules() -> list[tuple[Path, str, ast.Module]]:
    """(path, source, parsed tree) of each module of the package, read and parsed once for the gates that walk them
    all (the trees are only read)."""
    if not _MODULES:
        _MODULES.extend((path, source, ast.parse(source)) for path in sorted((ROOT / "glmcompat").rglob("*.py"))
                        for source in [path.read_text(encoding="utf-8")])
    return _MODULES


_MODULES: list[tuple[Path, str, ast.Module]] = []


def unmarked_function_imports(source: str, tree: ast.Module | None = None) -> list[tuple[int, str]]:
    """(line, statement) of each ``import`` inside a function of ``source`` with no ``# lazy: <why>`` comment on any
    of its lines. The comment is the only allow-list: an import belongs at the top of its module unless it says why
    not (the start-up path, an optional or heavy dependency only some calls need, a cycle)."""
    lines = source.splitlines()
    reasons: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and LAZY in tok.string:
            reasons[tok.start[0]] = tok.string.split(LAZY, 1)[1].strip()
    found: list[tuple[int, str]] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                if not any(reasons.get(n) for n in range(child.lineno, (child.end_lineno or child.lineno) + 1)):
                    found.append((child.lineno, " ".join(x.strip() for x in lines[child.lineno - 1:child.end_lineno])))
            walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    walk(ast.parse(source) if tree is None else tree, False)  # tree: the one ast.parse(source) gives, made once
    return found


def test_the_lazy_import_check_finds_what_it_should():
    """The checker itself: an unmarked import in a function (or a method, or a nested block) is found; the module
    top, a marked one (the comment on any line of a statement that spans several) and a class body are not; an
    empty reason, and ``# lazy:`` inside a string, do not count."""
    source = (
        "import os\n"
        "def f():\n"
        "    import json\n"
        "    import re  # lazy: a reason\n"
        "    from typing import (Any,  # lazy: on the first line\n"
        "                        cast)\n"
        "    from typing import (Dict,\n"
        "                        List)  # lazy: on the last line\n"
        "    if os.sep:\n"
        "        from pathlib import Path\n"
        "    import csv  # lazy:\n"
        "    s = '# lazy: not a comment'; import glob\n"
        "class C:\n"
        "    import math\n"
        "    def m(self):\n"
        "        import ast\n"
    )
    assert unmarked_function_imports(source) == [
        (3, "import json"), (10, "from pathlib import Path"), (11, "import csv  # lazy:"),
        (12, "s = '# lazy: not a comment'; import glob"), (16, "import ast")]


@pytest.mark.slow
def test_every_function_level_import_says_why():
    """Issue 27 item 4: an import inside a function is the exception, and says why (``# lazy: <why>``); the rest
    are at the top of their module, where a reader finds a module's dependencies."""
    found = [f"{path.relative_to(ROOT)}:{line}: {stmt}" for path, source, tree in package_modules()
             for line, stmt in unmarked_function_imports(source, tree)]
    assert not found, (f"{len(found)} imports inside functions do not say why: move each to the top of its module, or "
                       f"end its line with `# lazy: <why>`:\n" + "\n".join(found))

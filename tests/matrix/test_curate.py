"""``matrix probe``: rows rendered by tomlkit, inserted so the diff only adds lines, file still valid."""

from __future__ import annotations

import dataclasses
import difflib
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

from glmcompat.cli import main
from glmcompat.matrix.curate import (
    KEY_ORDER,
    Addition,
    Replacement,
    abi_command,
    add_row,
    add_rows,
    arch_command,
    insert_row,
    plain_row,
    render_row,
    replace_rows,
    row_identity,
    row_of,
    table_of,
)
from glmcompat.matrix.schema import load_file, load_matrix
from glmcompat.matrix.store import default_matrix_dir
from glmcompat.model.errors import MatrixError
from glmcompat.ops.refresh.probes import abi_row, arch_row
from glmcompat.ops.wheelprobe import AbiResult, ArchResult, MissingSymbol, ModuleAbi, ModuleArch
from tests.abifakes import HAVE_GXX, LocalServer, build_fakes

KERNELS = default_matrix_dir() / "kernels.toml"


def _abi(pkg: str, ver: str, torch: str, missing: list[str]) -> AbiResult:
    mod = ModuleAbi("pkg/_C.so", ["libc10.so"], [12], 10, [MissingSymbol(s, s) for s in missing])
    return AbiResult(pkg, ver, torch, f"{pkg}-{ver}.whl", f"torch-{torch}.whl", [mod], 100, [12],
                     bytes_fetched=1, bytes_total=2, seconds=0.1, cached=False)


def _only_added(old: str, new: str) -> list[str]:
    diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0))
    body = [d for d in diff if not d.startswith(("---", "+++", "@@"))]
    assert body and all(d.startswith("+") for d in body), body
    return [d[1:] for d in body]


@pytest.fixture
def kernels(tmp_path: Path) -> Path:
    p = tmp_path / "kernels.toml"
    shutil.copy(KERNELS, p)
    return p


def test_abi_row_added_with_minimal_diff(kernels: Path) -> None:
    old = kernels.read_text()
    # a release the shipped matrix has no row for (0.3.20.post9 was never published), so nothing contradicts it
    added = add_row(kernels, "abi_probe", abi_row(_abi("sgl-kernel", "0.3.20.post9", "2.10.0", ["_ZN3c101xEv"])))
    assert added is not None
    new = kernels.read_text()
    lines = _only_added(old, new)
    assert "[[abi_probe]]" in lines and 'version = "0.3.20.post9"' in lines and "compatible = false" in lines
    # the new row sits right after the last abi_probe row, before whatever table follows it
    at = new.index('version = "0.3.20.post9"')
    assert new.rfind("[[abi_probe]]", 0, at) > new.rfind("[[kernel]]", 0, at)
    load_file(kernels)
    m = load_matrix([p for p in sorted(default_matrix_dir().glob("*.toml")) if p.name != "kernels.toml"] + [kernels])
    assert any(a.version == "0.3.20.post9" and not a.compatible for a in m.abi_probe)


def test_arch_row_goes_to_the_end_when_no_table(kernels: Path) -> None:
    old = kernels.read_text()
    r = ArchResult("sgl-kernel", "0.3.21", "w.whl",
                   [ModuleArch("sgl_kernel/sm100/common_ops.abi3.so", ["sm_80", "sm_120a"], [], {})],
                   None, ["sgl_kernel/sm100/common_ops.abi3.so"], bytes_fetched=1, bytes_total=2, seconds=0.1,
                   cached=False)
    assert add_row(kernels, "arch_probe", arch_row(r)) is not None
    lines = _only_added(old, kernels.read_text())
    assert lines[-5:-2] == ['version = "0.3.21"', 'sass = ["sm_80", "sm_120a"]', "ptx = []"]
    assert load_file(kernels)[0].arch_probe[0].sass == ("sm_80", "sm_120a")
    # a second arch row lands right after the first
    r2 = ArchResult("sgl-kernel", "0.3.20", "w.whl", r.modules, None, r.primary, bytes_fetched=1, bytes_total=2,
                    seconds=0.1, cached=False)
    add_row(kernels, "arch_probe", arch_row(r2))
    assert [a.version for a in load_file(kernels)[0].arch_probe] == ["0.3.21", "0.3.20"]


def test_already_recorded_is_left_alone(kernels: Path) -> None:
    before = kernels.read_bytes()
    assert add_row(kernels, "abi_probe", abi_row(_abi("sgl-kernel", "0.3.21", "2.9.1", []))) is None
    assert kernels.read_bytes() == before


def test_contradiction_is_refused(kernels: Path) -> None:
    before = kernels.read_bytes()
    with pytest.raises(MatrixError, match="contradicts"):
        add_row(kernels, "abi_probe", abi_row(_abi("sgl-kernel", "0.3.21", "2.9.1", ["_ZN3c101xEv"])))
    assert kernels.read_bytes() == before


def test_dry_run_writes_nothing(kernels: Path) -> None:
    before = kernels.read_bytes()
    assert add_row(kernels, "abi_probe", abi_row(_abi("x", "1.0", "2.9.1", [])), dry_run=True)
    assert kernels.read_bytes() == before


def test_insert_row_pure() -> None:
    text = "schema = 1\n\n[[a]]\nx = 1\n\n# lead-in for b\n[[b]]\ny = 2\n"
    row = render_row("a", {"x": 2})
    assert insert_row(text, "a", row) == "schema = 1\n\n[[a]]\nx = 1\n\n[[a]]\nx = 2\n\n# lead-in for b\n[[b]]\ny = 2\n"
    assert insert_row("schema = 1", "c", render_row("c", {"z": [1]})) == "schema = 1\n\n[[c]]\nz = [1]\n"


@pytest.mark.slow
def test_run_probe_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """End to end through the CLI: fake wheels on a local server, a copy of kernels.toml."""
    if not HAVE_GXX:
        pytest.skip("needs g++")
    kern = tmp_path / "kernels.toml"
    shutil.copy(KERNELS, kern)
    old = kern.read_text()
    with LocalServer(build_fakes(tmp_path / "fakes")) as srv:
        rc = main(["matrix", "probe", "ext==1.0", "--torch", "9.0.0", "--torch", "9.1.0", "--file", str(kern),
                   "--index-url", srv.base])
        assert rc == 0
        rc = main(["matrix", "probe", "ext==1.0", "--arch", "--file", str(kern), "--index-url", srv.base])
        assert rc == 0
    out = capsys.readouterr().out
    assert "ext 1.0 vs torch 9.1.0: INCOMPATIBLE (1 missing): added to" in out
    added = _only_added(old, kern.read_text())
    assert added.count("[[abi_probe]]") == 2 and added.count("[[arch_probe]]") == 1
    assert main(["matrix", "validate", str(kern)]) == 0


# -- batch writing (matrix refresh) ----------------------------------------------------------------


def test_abi_and_arch_rows_cite_the_command_that_reproduces_them() -> None:
    row = abi_row(_abi("sgl-kernel", "0.3.20", "2.10.0", []))
    assert row.source.startswith("glmcompat abi sgl-kernel==0.3.20 --torch 2.10.0: ")
    assert abi_command("torchvision", "0.24.1", "2.9.1", "torchvision-0.24.1-cp312-cp312-manylinux_2_28_x86_64.whl") \
        == "glmcompat abi torchvision==0.24.1 --torch 2.9.1 --python cp312"
    assert arch_command("x", "1", "x-1-cp310-abi3-manylinux2014_x86_64.whl") == "glmcompat arch x==1"


def test_render_row_writes_dicts_inline() -> None:
    text = render_row("family", {"package": "torchaudio", "pairs": {"2.11.1": ">=2.11"}, "evidence": "metadata"})
    assert 'pairs = {"2.11.1" = ">=2.11"}' in text and "[family.pairs]" not in text
    assert tomllib.loads(text)["family"][0]["pairs"] == {"2.11.1": ">=2.11"}


def test_add_rows_validates_the_whole_matrix_and_only_adds_lines(tmp_path: Path) -> None:
    d = tmp_path / "m"
    shutil.copytree(default_matrix_dir(), d)
    files = sorted(d.glob("*.toml"))
    before = {p.name: p.read_text() for p in files}
    kern, torch = d / "kernels.toml", d / "torch.toml"
    added = add_rows(files, [
        Addition(kern, abi_row(_abi("sgl-kernel", "0.3.19.post9", "2.9.1", []))),
        Addition(torch, row_of("family", {"package": "torchvision", "pairs": {"0.30.0": "==2.15.0"},
                                          "evidence": "metadata",
                                          "source": "torchvision 0.30.0 METADATA: Requires-Dist torch==2.15.0"})),
        Addition(kern, abi_row(_abi("sgl-kernel", "0.3.19.post9", "2.10.0", ["_ZN3c101xEv"]))),
    ])
    assert sorted(p.name for p in added) == ["kernels.toml", "torch.toml"] and len(added[kern]) == 2
    for p in (kern, torch):
        _only_added(before[p.name], p.read_text())
    m = load_matrix([d])
    assert m.view().family("torchvision", "0.30.0") is not None
    assert [a.torch for a in m.abi_probe if a.version == "0.3.19.post9"] == ["2.9.1", "2.10.0"]
    # a contradiction with another file: nothing is written at all
    snap = {p.name: p.read_text() for p in files}
    with pytest.raises(MatrixError, match="torch.toml"):
        add_rows(files, [Addition(kern, abi_row(_abi("sgl-kernel", "0.3.18.post9", "2.9.1", []))),
                         Addition(torch, row_of("family", {"package": "torchvision", "pairs": {"0.30.0": "==2.14.0"},
                                                           "evidence": "metadata", "source": "s"}))])
    assert {p.name: p.read_text() for p in files} == snap
    # a new file starts as `schema = 1`
    add_rows(files, [Addition(d / "new.toml", row_of("arch_probe", {
        "package": "x", "version": "1", "sass": ["sm_90"], "ptx": [], "evidence": "arch-probe", "source": "s"}))])
    assert (d / "new.toml").read_text().startswith("schema = 1\n\n[[arch_probe]]\n")


def test_row_identity() -> None:
    def row(table: str, **kw: object) -> Any:
        return row_of(table, {"evidence": "metadata", "source": "s", **kw})

    probe = {"compatible": True, "missing": 0}
    a = row_identity(row("abi_probe", package="SGL_Kernel", version="0.3.21", torch="2.9.1", **probe))
    assert a == row_identity(row("abi_probe", package="sgl-kernel", version="0.3.21.0", torch="2.9.1", **probe))
    assert row_identity(row("kernel", package="x", versions=["1.0", "0.9"], torch="2.9.1")) == \
        row_identity(row("kernel", package="x", versions=["0.9", "1"], torch="2.9.1"))
    stack = load_matrix().stack[0]
    assert row_identity(stack) is None


def test_rows_and_their_plain_form_round_trip() -> None:
    """Every row of the tables refresh writes, as the matrix file holds it (plain_row) and back (row_of), is the same
    row; the keys come in KEY_ORDER, defaults left out unless the table writes them always."""
    m = load_matrix()
    seen = 0
    for table in KEY_ORDER:
        for row in getattr(m, table):
            plain = plain_row(row)
            assert table_of(row) == table and row_of(table, plain) == row
            order = [k for k in KEY_ORDER[table] if k in plain]
            assert list(plain)[: len(order)] == order
            seen += 1
    assert seen > 100
    a = next(r for r in m.abi_probe if r.platform == "x86_64" and not r.symbols)
    assert "platform" not in plain_row(a) and "symbols" not in plain_row(a)
    arch = next(r for r in m.arch_probe if not r.ptx)
    assert plain_row(arch)["ptx"] == []  # an empty ptx says "no PTX": written
    with pytest.raises(KeyError):
        row_of("abi_probe", {**plain_row(a), "colour": "blue"})


def test_replace_rows_renders_typed_rows_in_place(tmp_path: Path) -> None:
    """replace_rows takes typed rows and writes them as plain_row renders them: every shipped [[model]] row replaced
    by itself gives the same bytes (KEY_ORDER is the curated files' order); a changed row changes its lines only;
    dry_run and a row the matrix rejects write nothing."""
    d = tmp_path / "m"
    shutil.copytree(default_matrix_dir(), d)
    files = sorted(d.glob("*.toml"))
    models = d / "models.toml"
    before = models.read_text()
    rows = load_file(models)[0].model
    assert len(rows) > 10
    out = replace_rows(files, [Replacement(models, i, r) for i, r in enumerate(rows)])
    assert len(out[models]) == len(rows) and models.read_text() == before

    failing = dataclasses.replace(rows[1], failure="KeyError: 'x'")
    assert replace_rows(files, [Replacement(models, 1, failing)], dry_run=True)[models][0].endswith(
        "failure = \"KeyError: 'x'\"\n")
    assert models.read_text() == before
    replace_rows(files, [Replacement(models, 1, failing)])
    assert _only_added(before, models.read_text()) == ["failure = \"KeyError: 'x'\""]
    assert load_file(models)[0].model[1] == failing

    after = models.read_text()
    with pytest.raises(MatrixError, match="models.toml"):
        replace_rows(files, [Replacement(models, 0, dataclasses.replace(rows[0], transformers="newest"))])
    with pytest.raises(MatrixError, match=r"no row 999 of \[\[model\]\]"):
        replace_rows(files, [Replacement(models, 999, rows[0])])
    assert models.read_text() == after

"""The matrix's rows (glmcompat/matrix/rows.py), declared once: the file validator (glmcompat/matrix/schema.py's
MatrixFile) builds exactly these rows, with tuples and read-only mappings all the way down; every shipped row is the
same through the plain dump and the JSON cache; rows cannot be changed or given new attributes."""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Mapping
from types import MappingProxyType

import pytest

from glmcompat.matrix import rows as R
from glmcompat.matrix import schema
from glmcompat.matrix.load import FORMAT, _cached_matrix, load_facts
from glmcompat.matrix.view import Facts
from glmcompat.model.gpu import KernelCode


def _row_class(table: str) -> type:
    """The class MatrixFile validates a row of ``table`` into: the element type of its field of that name (through
    an ``Annotated[...]`` carrying the checks spanning fields)."""
    (elem,) = {a for a in typing.get_args(schema.MatrixFile.model_fields[table].annotation) if a is not Ellipsis}
    return typing.get_args(elem)[0] if typing.get_origin(elem) is typing.Annotated else elem


@pytest.fixture(scope="module")
def matrix() -> schema.Matrix:
    return schema.load_matrix()


def test_every_table_has_one_row_class() -> None:
    assert tuple(R.ROWS) == schema.TABLES
    assert tuple(schema.MatrixFile.model_fields) == (*schema.TABLES, "schema_")
    for table in schema.TABLES:
        assert _row_class(table) is R.ROWS[table], table
        assert R.FIELDS[table] == tuple(f.name for f in dataclasses.fields(R.ROWS[table]))


def test_the_tables_are_declared_once_and_the_views_overloads_follow_them() -> None:
    """rows.Tables is the one list of the tables (name, row class, order): ROWS, MatrixFile's fields and Matrix's
    attributes derive from it; Facts.rows' overloads, there for the type checker alone, name the same tables with the
    same row classes, in the same order."""
    assert list(R.ROWS) == list(R.Tables.__annotations__) and issubclass(schema.Matrix, R.Tables)
    typed = [(o.__annotations__["table"], o.__annotations__["return"]) for o in typing.get_overloads(Facts.rows)]
    assert typed == [*((f"Literal[{t!r}]", a) for t, a in R.Tables.__annotations__.items()),
                     ("str", "tuple[Fact, ...]")], typed


def _frozen(value: object) -> bool:
    """No list, no mutable dict anywhere inside: tuples for sequences, read-only mappings, kernel groups."""
    if isinstance(value, dict | list | set):
        return False
    if isinstance(value, Mapping):
        return isinstance(value, MappingProxyType) and all(_frozen(v) for v in value.values())
    if isinstance(value, tuple):
        return all(_frozen(v) for v in value)
    if isinstance(value, KernelCode):
        return _frozen(value.code)
    return value is None or isinstance(value, str | int | bool)


def test_every_shipped_row_round_trips(matrix: schema.Matrix, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Validated row -> its view, -> cache entry -> row, and -> plain dump -> validated again: every row equal,
    of its table's class, with nothing mutable inside."""
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path))
    first = load_facts()  # validates, writes the cache entry
    (entry,) = tmp_path.glob(f"matrix-v{FORMAT}-*.json")
    cached = _cached_matrix(entry)
    assert cached is not None
    warm = load_facts()
    plain = matrix.plain()
    again = schema.MatrixFile.model_validate({"schema": 1, **plain})
    n = 0
    for table in schema.TABLES:
        validated = getattr(matrix, table)
        assert getattr(again, table) == validated, table
        for facts in (matrix.view(), first, Facts(cached), warm):
            assert len(facts.all_rows(table)) == len(validated), table
            for row, want in zip(facts.all_rows(table), validated, strict=True):
                assert type(row) is type(want) is R.ROWS[table]
                assert row == want, table
                assert all(_frozen(getattr(row, name)) for name in R.FIELDS[table]), (table, row)
                n += 1
    assert n > 4 * 500
    assert warm.data == first.data
    assert matrix.view().all_rows("kernel")[0] is matrix.kernel[0]  # the view holds the validated rows themselves


def test_a_plain_dump_is_json_data(matrix: schema.Matrix) -> None:
    """``to_plain``: lists and dicts only, every field in FIELDS order (``exclude_none``: the None ones left out)."""
    probe = next(r for r in matrix.arch_probe if r.kernel_code)
    d = R.to_plain("arch_probe", probe)
    assert list(d) == list(R.FIELDS["arch_probe"])
    assert json.loads(json.dumps(d)) == d and isinstance(d["kernel_code"][0], dict)
    m = R.to_plain("model", matrix.model[0], exclude_none=True)
    assert None not in m.values() and set(m) <= set(R.FIELDS["model"])


def test_rows_are_frozen_and_slotted(matrix: schema.Matrix) -> None:
    facts = matrix.view()
    for table, cls in R.ROWS.items():
        assert "__slots__" in cls.__dict__, table
        for row in facts.all_rows(table)[:3]:
            assert not hasattr(row, "__dict__"), table
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(row, R.FIELDS[table][0], "x")
            # a new attribute: FrozenInstanceError, or on CPython 3.11 a TypeError from the frozen __setattr__'s
            # super() call (the class is rebuilt for its slots); refused either way
            with pytest.raises((AttributeError, TypeError)):
                row.extra = 1  # type: ignore[attr-defined]
    target = facts.target("sm90")
    with pytest.raises(TypeError):
        target.platforms["H100"] = ("aarch64",)  # type: ignore[index]
    stack = facts.stack("glm5-sglang-0.5.9")
    with pytest.raises(TypeError):
        stack.pins["torch"] = "9.9"  # type: ignore[index]


def test_defaults_of_fields_a_row_leaves_out() -> None:
    """A row without its optional keys is validated into its class with that class's defaults (read-only
    mappings where the default is an empty one)."""
    v = schema.MatrixFile.model_validate({"schema": 1, "kernel": [
        {"evidence": "metadata", "source": "s", "package": "p", "versions": ["1"], "torch": "2.9.1"}], "stack": [
        {"evidence": "metadata", "source": "s", "name": "n", "description": "d", "targets": ["sm90"],
         "pins": {"torch": "2.9.1"}}], "target": [
        {"evidence": "metadata", "source": "s", "name": "sm90", "compute_capability": "9.0", "products": ["H100"],
         "min_cuda": "11.8"}], "model": [
        {"evidence": "metadata", "source": "s", "model_type": "x", "transformers": ">=1"}]})
    (k,), (s,), (t,), (m,) = v.kernel, v.stack, v.target, v.model
    assert (k.variant, k.platform, k.cuda, k.sass, k.ptx, k.on_mismatch, k.consequence) == \
        (None, "x86_64", None, None, None, "error", None)
    assert (s.engine, s.models, s.python, dict(s.overrides), s.exclude_newer) == ("sglang", (), ">=3.11,<3.13", {}, None)
    assert (dict(t.platforms), t.smem_per_block_optin, t.ships_on) == ({}, None, ("x86_64",))
    assert (m.architectures, m.for_engine("sglang"), m.for_engine("vllm"), m.for_engine("other")) == ((), None, None, None)
    assert isinstance(t.platforms, MappingProxyType) and isinstance(s.overrides, MappingProxyType)
    assert k == R.Kernel("metadata", "s", "p", ("1",), "2.9.1")  # the dataclass's own defaults


def _entry(path, doc: object) -> None:
    """A matrix cache entry as glmcompat writes it: the rows' JSON, sealed with its name."""
    from glmcompat.matrix.locations import seal

    path.write_bytes(seal("matrix", path.name, json.dumps(doc).encode()))


def test_a_cache_entry_of_another_shape_is_a_miss(tmp_path) -> None:
    """The rows are built only from the shape they were written for: an older format (a dict per row), other
    fields, or values that do not fit a row are misses, never wrong rows or a crash."""
    p = tmp_path / "entry.json"
    row = {"evidence": "metadata", "source": "s", "old": "a", "new": "b", "checkers": {}}
    good = {"format": FORMAT, "fields": R.FIELDS, "tables": {"rename": [R.to_values("rename", row)]}}
    _entry(p, good)
    got = _cached_matrix(p)
    assert got is not None and got["rename"] == (R.Rename("metadata", "s", "a", "b"),)
    for bad in ({"rename": [row]},  # format 1
                {**good, "format": FORMAT - 1},
                {**good, "fields": {**R.FIELDS, "rename": ["evidence", "source", "new", "old", "checkers"]}},
                {**good, "tables": {"rename": [["metadata", "s", "a"]]}},  # a value short
                {**good, "tables": {"rename": [row]}},  # a dict where the values belong
                {**good, "tables": {"nope": []}},
                {**good, "tables": {"torch": [["metadata", "s", 5, ["sm_90"], None, "x86_64", None, []]]}}):
        _entry(p, bad)
        assert _cached_matrix(p) is None, bad


def test_the_wheel_snapshot_answers_a_cold_run_only_for_its_own_files(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel ships the validated matrix (glmcompat/matrix/snapshot.json, written by hatch_build.py through
    ``snapshot()``): a run with an empty cache reads its rows instead of validating — only while every shipped
    matrix file is byte for byte the one it was made from, and only for the glmcompat that made it."""
    from glmcompat.matrix import load
    from glmcompat.matrix.store import matrix_files

    real = load.snapshot()
    digest, _, body = real.partition(b"\n")
    doc = json.loads(body)
    assert doc["version"] == __import__("glmcompat").__version__
    assert sorted(doc["files"]) == sorted(p.name for p in matrix_files(None))

    def snap(**change: object) -> bytes:  # the snapshot with no release rows: which loader answered is then visible
        d = {**doc, "tables": {**doc["tables"], "release": []}, **change}
        from glmcompat.matrix.locations import seal

        return seal("snapshot", "snapshot.json", json.dumps(d, sort_keys=True, separators=(",", ":")).encode())

    path = tmp_path / "snapshot.json"
    monkeypatch.setattr(load, "SNAPSHOT", path)
    n_release = len(load_facts().rows("release"))  # validated or cached, not the snapshot
    assert n_release > 0
    cases = [(snap(), 0), (snap(version="0.0.0"), n_release),
             (snap(files={**doc["files"], "rules.toml": "0" * 32}), n_release),
             (snap()[:-10], n_release), (real, n_release)]
    for i, (content, want) in enumerate(cases):
        path.write_bytes(content)
        monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / f"cold-{i}"))
        assert len(load_facts().rows("release")) == want, i
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path / "named"))
    path.write_bytes(snap())
    from glmcompat.matrix.store import default_matrix_dir

    assert len(load_facts([default_matrix_dir()]).rows("release")) == n_release  # --matrix: never the snapshot


@pytest.mark.network
def test_the_built_wheel_ships_the_snapshot(tmp_path) -> None:
    """The real build (uv build, hatchling, hatch_build.py) puts the snapshot of this checkout's matrix in the wheel,
    and the table a cold project lock guesses from (glmcompat.ops.projectguess); an editable build does not."""
    import shutil
    import subprocess
    import zipfile
    from pathlib import Path

    from glmcompat.matrix.load import _rows, snapshot

    root = Path(__file__).resolve().parents[2]
    uv = shutil.which("uv")
    assert uv is not None
    subprocess.run([uv, "build", "--wheel", "-q", "-o", str(tmp_path), str(root)], check=True)
    (wheel,) = tmp_path.glob("glmcompat-*.whl")
    with zipfile.ZipFile(wheel) as z:
        shipped = z.read("glmcompat/matrix/snapshot.json")
        guesses = z.read("glmcompat/matrix/predict.json")
    assert shipped == snapshot()
    from glmcompat.matrix.schema import load_matrix
    from glmcompat.matrix.view import Facts
    from glmcompat.ops.projectguess import table_file

    assert guesses == table_file(Facts(load_matrix(None)))
    from glmcompat.matrix.locations import unseal

    body = unseal("snapshot", "snapshot.json", shipped)  # sealed like every stored thing
    assert body is not None
    doc = json.loads(body)
    assert _rows(body, doc["files"]) is not None

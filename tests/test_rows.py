"""The hot path's rows (glmcompat/matrix/rows.py) against the validated models (glmcompat/matrix/schema.py): the same
fields with the same defaults for every table, every shipped row the same through the JSON cache, and rows
that cannot be changed or given new attributes."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import typing
from collections.abc import Mapping

import pytest
from pydantic_core import PydanticUndefined

from glmcompat.matrix import rows as R
from glmcompat.matrix import schema
from glmcompat.matrix.load import FORMAT, _cached_matrix, load_facts
from glmcompat.matrix.view import Facts


def _model(table: str) -> type[schema.Fact]:
    """The pydantic model of ``table``: the element type of MatrixFile's field of that name."""
    (model,) = {a for a in typing.get_args(schema.MatrixFile.model_fields[table].annotation) if a is not Ellipsis}
    return model


@pytest.fixture(scope="module")
def matrix() -> schema.Matrix:
    return schema.load_matrix()


def test_every_table_has_a_row_class() -> None:
    assert tuple(R.ROWS) == schema.TABLES
    assert [_model(t).__name__ for t in schema.TABLES] == [cls.__name__ for cls in R.ROWS.values()]


@pytest.mark.parametrize("table", schema.TABLES)
def test_row_fields_are_the_model_fields(table: str) -> None:
    model, cls = _model(table), R.ROWS[table]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    assert set(fields) == set(model.model_fields), table
    assert R.FIELDS[table] == tuple(fields)
    for name, info in model.model_fields.items():
        f = fields[name]
        if info.is_required():
            assert f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING, (table, name)
        else:
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            assert info.default is not PydanticUndefined and default == info.default, (table, name)


def _same(value: object, model_value: object) -> bool:
    """The row's value is the model's, with tuples for sequences and read-only mappings for dicts (no list, no
    mutable dict anywhere inside)."""
    if isinstance(model_value, dict):
        return (isinstance(value, Mapping) and not isinstance(value, dict) and value.keys() == model_value.keys()
                and all(_same(value[k], v) for k, v in model_value.items()))
    if isinstance(model_value, schema.KernelGroup):  # a nested row: the same fields, as a frozen dataclass
        return (dataclasses.is_dataclass(value) and not isinstance(value, type)
                and all(_same(getattr(value, k), v) for k, v in model_value))
    if isinstance(model_value, tuple | list):
        return (isinstance(value, tuple) and len(value) == len(model_value)
                and all(_same(a, b) for a, b in zip(value, model_value, strict=True)))
    return type(value) is type(model_value) and value == model_value


def test_every_shipped_row_round_trips(matrix: schema.Matrix, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Model -> plain dump -> row, and model -> cache entry -> row: every field equal to the model's."""
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(tmp_path))
    first = load_facts()  # validates, writes the cache entry
    (entry,) = tmp_path.glob(f"matrix-v{FORMAT}-*.json")
    cached = _cached_matrix(entry)
    assert cached is not None
    warm = load_facts()
    n = 0
    for table in schema.TABLES:
        models = getattr(matrix, table)
        for facts in (matrix.view(), first, Facts(cached), warm):
            assert len(facts.all_rows(table)) == len(models), table
            for row, model in zip(facts.all_rows(table), models, strict=True):
                assert type(row) is R.ROWS[table]
                for name in R.FIELDS[table]:
                    assert _same(getattr(row, name), getattr(model, name)), (table, name, getattr(row, name))
                n += 1
    assert n > 4 * 500
    assert warm.data == first.data


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
    """A plain row without its optional keys reads as the validated model would have it."""
    k = R.from_plain("kernel", {"evidence": "metadata", "source": "s", "package": "p", "versions": ["1"], "torch": "2.9.1"})
    assert (k.variant, k.platform, k.cuda, k.sass, k.ptx, k.on_mismatch, k.consequence) == \
        (None, "x86_64", None, None, None, "error", None)
    s = R.from_plain("stack", {"evidence": "metadata", "source": "s", "name": "n", "description": "d",
                               "targets": ["sm90"], "pins": {"torch": "2.9.1"}})
    assert (s.engine, s.models, s.python, dict(s.overrides), s.exclude_newer) == ("sglang", (), ">=3.11,<3.13", {}, None)
    t = R.from_plain("target", {"evidence": "metadata", "source": "s", "name": "sm90", "compute_capability": "9.0",
                                "products": ["H100"], "min_cuda": "11.8"})
    assert (dict(t.platforms), t.smem_per_block_optin) == ({}, None)
    m = R.from_plain("model", {"evidence": "metadata", "source": "s", "model_type": "x", "transformers": ">=1"})
    assert (m.architectures, m.for_engine("sglang"), m.for_engine("vllm"), m.for_engine("other")) == ((), None, None, None)


def _entry(path, doc: object) -> None:
    """A matrix cache entry as glmcompat writes it: the rows' digest line and body, sealed with its name."""
    from glmcompat.matrix.locations import seal

    body = json.dumps(doc).encode()
    path.write_bytes(seal("matrix", path.name, hashlib.blake2b(body, digest_size=16).hexdigest().encode() + b"\n" + body))


def test_a_cache_entry_of_another_shape_is_a_miss(tmp_path) -> None:
    """The rows are built only from the shape they were written for: an older format (a dict per row), other
    fields, or values that do not fit a row are misses, never wrong rows or a crash."""
    p = tmp_path / "entry.json"
    row = {"evidence": "metadata", "source": "s", "old": "a", "new": "b"}
    good = {"format": FORMAT, "fields": R.FIELDS, "tables": {"rename": [R.to_values("rename", row)]}}
    _entry(p, good)
    got = _cached_matrix(p)
    assert got is not None and got["rename"] == (R.Rename("metadata", "s", "a", "b"),)
    for bad in ({"rename": [row]},  # format 1
                {**good, "format": FORMAT - 1},
                {**good, "fields": {**R.FIELDS, "rename": ["evidence", "source", "new", "old"]}},
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

    real = load.snapshot()
    digest, _, body = real.partition(b"\n")
    doc = json.loads(body)
    assert doc["version"] == __import__("glmcompat").__version__
    assert sorted(doc["files"]) == sorted(p.name for p in load.matrix_files(None))

    def snap(**change: object) -> bytes:  # the snapshot with no release rows: which loader answered is then visible
        d = {**doc, "tables": {**doc["tables"], "release": []}, **change}
        b = json.dumps(d, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.blake2b(b, digest_size=16).hexdigest().encode() + b"\n" + b

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
    """The real build (uv build, hatchling, hatch_build.py) puts the snapshot of this checkout's matrix in the wheel;
    an editable build does not."""
    import shutil
    import subprocess
    import zipfile
    from pathlib import Path

    from glmcompat.matrix.load import _rows, snapshot

    root = Path(__file__).resolve().parent.parent
    uv = shutil.which("uv")
    assert uv is not None
    subprocess.run([uv, "build", "--wheel", "-q", "-o", str(tmp_path), str(root)], check=True)
    (wheel,) = tmp_path.glob("glmcompat-*.whl")
    with zipfile.ZipFile(wheel) as z:
        shipped = z.read("glmcompat/matrix/snapshot.json")
    assert shipped == snapshot()
    doc = json.loads(shipped.partition(b"\n")[2])
    assert _rows(shipped, doc["files"]) is not None

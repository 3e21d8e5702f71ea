"""The names a log's lines are attributed by (glmcompat/matrix/data/module-packages.toml): module -> distribution,
torch.ops and C++ namespace -> distribution, a signature's own package. Data with evidence, validated as matrix rows;
glmcompat.model.signatures reads the same file (its layer imports no matrix loader): the two readings agree, a name is
listed once, and a [[signature_package]] row names a signature the matrix defines."""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.matrix.load import load_facts
from glmcompat.matrix.schema import load_matrix
from glmcompat.model.errors import MatrixError
from glmcompat.model.signatures import NAMES_FILE, mentions, module_package, name_tables


def test_the_model_reads_what_the_matrix_validates():
    facts = load_facts()
    tables = name_tables()
    assert tables.modules == {m: r.package for r in facts.rows("module") for m in r.modules}
    assert list(tables.modules) == [m for r in facts.rows("module") for m in r.modules]  # file order kept
    assert tables.ops == {n: r.package for r in facts.rows("op_namespace") for n in r.namespaces}
    assert tables.cxx == {n: r.package for r in facts.rows("cxx_namespace") for n in r.namespaces}
    assert NAMES_FILE.name in {Path(f).name for f in load_matrix().files}  # one of the shipped matrix's files


def test_names_resolve_through_the_data():
    assert module_package("cv2") == "opencv-python" and module_package("flash_attn_gpu") == "flash-attn"
    assert module_package("some_module") == "some-module"  # not listed: its own name
    assert [m[2] for m in mentions("RuntimeError: operator _moe_C::topk_softmax does not exist")] == ["vllm"]
    assert [m[2] for m in mentions("in std::__cxx11::basic_string at c10::Error")] == ["torch"]


def test_a_signature_names_its_own_package():
    facts = load_facts()
    assert facts.signature_package("xformers-built-for-other-torch") == "xformers"
    assert facts.signature_package("undefined-symbol") == ""


def _matrix(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "names.toml"
    p.write_text("schema = 1\n" + text, encoding="utf-8")
    return p


ROW = 'evidence = "metadata"\nsource = "a wheel\'s top_level.txt"\n'


@pytest.mark.parametrize(("text", "why"), [
    (f'[[module]]\npackage = "a"\nmodules = ["m"]\n{ROW}[[module]]\npackage = "b"\nmodules = ["m"]\n{ROW}',
     "module 'm' is listed twice"),
    (f'[[cxx_namespace]]\nnamespaces = ["std", "std"]\n{ROW}', "cxx_namespace 'std' is listed twice"),
    (f'[[signature_package]]\nsignature = "no-such-one"\npackage = "a"\n{ROW}'
     '[[signature]]\nid = "some-one"\npattern = "boom"\ncause = "c"\nremedy = "r"\n' + ROW,
     "signature_package names unknown signature 'no-such-one'"),
])
def test_a_name_listed_twice_or_an_unknown_signature_is_rejected(tmp_path: Path, text: str, why: str):
    with pytest.raises(MatrixError, match=why):
        load_matrix([_matrix(tmp_path, text)])


def test_a_row_is_validated(tmp_path: Path):
    with pytest.raises(MatrixError):
        load_matrix([_matrix(tmp_path, f'[[module]]\npackage = "a"\nmodules = []\nextra = 1\n{ROW}')])

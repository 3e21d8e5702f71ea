"""The messages of tests/fixtures/raise_sites/sym-signatures.toml (issue 38, branch fix-sym): an undefined symbol read by
whose it is (a name every torch release's libtorch_python.so exports: the import order; the extension's own global
function: not claimed; torch's C++ API: another torch), caffe2's cuDNN version check, and cuDNN's "Attempt to open
<sub> failed" of a missing sub-library; each near miss left unclaimed or to its own signature."""

from __future__ import annotations

import pytest

from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("sym-signatures.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m) for m in MESSAGES])
def test_each_message(m, tmp_path, capsys):
    read_as_tabled(m, tmp_path, capsys)

"""Every field of a PEP 691 project page may hold any JSON value: parsing keeps what is well-typed and drops the
rest, and never raises anything but glmcompat's own InputError (issue 26: the integer fields beyond ``size``)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glmcompat.edges.index import parse_project_page
from glmcompat.model.errors import GlmcompatError

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
_FIELDS = ["url", "hashes", "size", "yanked", "core-metadata", "dist-info-metadata", "requires-python", "upload-time"]
_FILE = st.fixed_dictionaries(
    {"filename": st.sampled_from(["torch-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl", "torch-2.9.1.tar.gz", "x"])},
    optional={k: _JSON for k in _FIELDS},
)
_PAGE = st.fixed_dictionaries(
    {"files": st.lists(_FILE | _JSON, max_size=4)},
    optional={"name": _JSON, "versions": _JSON | st.lists(_JSON, max_size=3), "meta": _JSON},
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(_PAGE)
def test_any_json_in_any_field_is_parsed_or_refused_as_input(page: dict[str, object]) -> None:
    try:
        project = parse_project_page(page, "https://index.invalid/simple/torch/")
    except GlmcompatError:
        return
    for f in project.files:
        assert f.size is None or (type(f.size) is int and 0 <= f.size < 1 << 48)
        assert f.requires_python is None or isinstance(f.requires_python, str)
        assert f.upload_time is None or isinstance(f.upload_time, str)
        assert f.sha256 is None or len(f.sha256) == 64
        project.files_for(f.version or "0")
    assert all(isinstance(v, str) for v in project.versions)

"""glmcompat.model.names.canonicalize is packaging's canonicalize_name (for the modules that do not import packaging)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.utils import canonicalize_name

from glmcompat.model.names import canonicalize

_NAME = st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,12}[A-Za-z0-9])?", fullmatch=True)


@settings(max_examples=150, deadline=None)
@given(name=_NAME | st.text(alphabet="aZ9._- ", max_size=12), pad=st.sampled_from(["", " ", "\t "]))
def test_canonicalize_is_packagings(name: str, pad: str) -> None:
    assert canonicalize(pad + name + pad) == canonicalize_name(name.strip())


def test_known_spellings() -> None:
    assert {canonicalize(n) for n in ("Sgl_Kernel", "sgl.kernel", "sgl--kernel", " sgl-kernel ")} == {"sgl-kernel"}

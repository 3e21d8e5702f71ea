"""The numpy a resolved-at-install file installs where it leaves numpy open (glmcompat.ops.indexpins.with_installed_numpy):
an extension built against NumPy 1.x meets the index's newest numpy that every package admits, which uv's resolver
names; a cap anywhere in the set (numpy<2, scipy 1.11.4's numpy<1.28.0) keeps NumPy 1.x, and the set safe."""

from __future__ import annotations

import pytest

from glmcompat.ops.indexpins import _python_of_file
from tests.conftest import run_cli


@pytest.mark.parametrize(("asked", "python"), [("==3.9.12", "cp39"), ("==3.10.*", "cp310"), (">=3.9", "cp311"),
                                               (None, "cp311")])
def test_the_python_a_file_states(asked, python):
    assert _python_of_file(asked) == python


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize(("numpy", "code", "says"), [
    ("numpy\n", 1, "numexpr 2.8.4 was compiled against NumPy 1.x"),  # open: the newest numpy 2
    ("", 1, "numexpr 2.8.4 was compiled against NumPy 1.x"),  # not named: numexpr's own numpy>=1.13.3 brings it
    ("numpy<2\n", 0, "safe"),
    ("scipy==1.11.4\n", 0, "safe"),  # its METADATA: numpy<1.28.0,>=1.21.6
])
def test_an_open_numpy_under_a_numpy_1_extension(tmp_path, numpy, code, says):
    p = tmp_path / "requirements.txt"
    p.write_text(f"torch==2.6.0\nnumexpr==2.8.4\n{numpy}")
    r = run_cli("check", str(p), "--target", "sm90", "--platform", "x86_64")
    assert r.returncode == code and says in r.stdout + r.stderr, r.stdout + r.stderr

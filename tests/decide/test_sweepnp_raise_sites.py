"""The messages of tests/fixtures/raise_sites/sweepnp-signatures.toml (issue 38, branch sweep-np): the scientific Python
packages' own compatibility checks against NumPy and the libraries they compile against, and their compiled parts
that fail to load (SciPy, pandas, scikit-learn, numba, llvmlite, Matplotlib, h5py and HDF5, PyTables, OpenCV, Shapely,
numexpr, bottleneck, pyarrow), each read from its raise site at two releases or more: every message the source can
produce is named with its words, and each near miss (a user error of the same library, a notice) stays unclaimed."""

from __future__ import annotations

from tests.decide.explaining import table

MESSAGES = table("sweepnp-signatures.toml")


def test_the_table_covers_the_area():
    libraries = {m["library"] for m in MESSAGES}
    assert {"scipy", "pandas", "scikit-learn", "numba", "llvmlite", "matplotlib", "h5py", "tables", "opencv-python",
            "shapely", "numexpr", "bottleneck", "pyarrow"} <= libraries
    assert sum(not m["expect"] for m in MESSAGES) >= 8  # the near misses kept unclaimed

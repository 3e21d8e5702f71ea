"""matrix/view.py's torch lookups: a pre-release or nightly without a row of its own takes its release's row (same
label); conda-forge's builds (+cuXYZ.cf) are found by their label and never listed among the index's builds."""

from __future__ import annotations

import pytest

from glmcompat.matrix.load import load_facts


@pytest.mark.parametrize(("build", "release"), [
    ("2.7.0rc6", "2.7.0"),  # a release candidate: the release branch's build
    ("2.8.0.dev20250501+cu128", "2.8.0+cu128"),  # a nightly of the cycle, its CUDA's row
    ("2.9.0rc3+cu126", "2.9.0+cu126"),
])
def test_a_pre_release_takes_its_release_s_row(build, release):
    facts = load_facts()
    got = facts.torch_build(build)
    assert got is not None and got is facts.torch_build(release)


def test_a_pre_release_of_an_unrecorded_build_stays_unknown():
    assert load_facts().torch_build("2.8.0.dev20250501+cu999") is None


def test_conda_forge_rows_are_found_by_label_only():
    facts = load_facts()
    row = facts.torch_build("2.5.1+cu126.cf")
    assert row is not None and row.ptx == ("compute_90",)
    assert not [r for r in facts.rows("torch") if (r.variant or "").endswith(".cf")]

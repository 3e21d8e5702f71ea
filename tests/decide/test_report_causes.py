"""The range poetry's Python cause asks the project to set (glmcompat/decide/reportcauses.py intersect): the part of the
project's Python range a dependency's range admits, in poetry's syntax (^, ~, ||, *), as poetry's own solution computes
it (python-poetry/poetry tag 1.8.5 src/poetry/mixology/solutions/solutions/python_requirement_solution.py:
root_constraint.intersect(constraint)); the messages themselves are in tests/fixtures/raise_sites/fixr-signatures.toml."""

from __future__ import annotations

import pytest

from glmcompat.decide.reportcauses import intersect


@pytest.mark.parametrize(("root", "need", "fit"), [
    ("*", "~2.7 || ^3.4", "~2.7 || ^3.4"),  # any Python: the dependency's range as poetry printed it
    ("^3.5", ">=3.6", ">=3.6,<4"),  # a caret's upper bound kept, its lower bound raised
    (">=2.7,<3.0 || >=3.5", ">=3.6.1", ">=3.6.1"),  # a part of the union that meets nothing is dropped
    (">=3.8,<4.0", ">=3.9", ">=3.9,<4.0"),
    (">=3.7", "~2.7 || ^3.4", ">=3.7,<4"),  # the dependency's union against one range
    ("^3.8", ">=3.8,<3.12", ">=3.8,<3.12"),  # the dependency's whole range lies inside the project's: as written
    ("~3.7", ">=3.8", ""),  # ranges that do not meet: no range to set
])
def test_the_range_to_set_is_the_projects_range_the_dependency_admits(root: str, need: str, fit: str) -> None:
    assert intersect(root, need) == fit

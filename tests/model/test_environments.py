"""The marker evaluator of glmcompat.model.environments: PEP 508 markers with ``extra`` bound to the set of extras
and groups a uv.lock environment enables (uv's conflict encoding), on packaging's public API."""

from __future__ import annotations

import pytest

from glmcompat.model.environments import MarkerEvaluator
from glmcompat.model.errors import LockFormatError
from glmcompat.model.platforms import marker_env

SGLANG = "extra-7-nemo-rl-sglang"
VLLM = "extra-7-nemo-rl-vllm"
CONFLICT = f"(sys_platform == 'linux' and extra == '{SGLANG}' and extra != '{VLLM}') or python_version < '3.10'"


@pytest.mark.parametrize(("active", "python", "want"), [
    ({SGLANG}, "3.12", True),  # membership
    ({SGLANG, VLLM}, "3.12", False),  # != is non-membership in the whole set
    (set(), "3.12", False),  # no extra enabled
    ({VLLM}, "3.12", False),
    (set(), "3.9", True),  # the other branch of the or
])
def test_extra_is_the_set_of_enabled_extras(active: set[str], python: str, want: bool) -> None:
    ev = MarkerEvaluator("uv.lock")
    assert ev.evaluate(CONFLICT, marker_env(python), active, env_id=1) is want
    assert ev.evaluate(CONFLICT, marker_env(python), active, env_id=1) is want  # the memoised verdict


def test_plain_markers_and_the_environment() -> None:
    ev = MarkerEvaluator("uv.lock")
    arm = "platform_machine == 'aarch64'"
    assert ev.evaluate(arm, marker_env("3.12", "aarch64"), env_id=1)
    assert not ev.evaluate(arm, marker_env("3.12", "x86_64"), env_id=2)
    assert ev.evaluate(None, marker_env("3.12")) and ev.evaluate("", marker_env("3.12"))
    # extra names compare normalised (PEP 685), whichever side spells them oddly
    assert ev.evaluate("extra == 'Foo_Bar'", marker_env("3.12"), {"foo.bar"}, env_id=3)


def test_an_undecidable_marker_is_false_and_an_invalid_one_names_the_file() -> None:
    ev = MarkerEvaluator("uv.lock")
    assert not ev.evaluate("extra > 'a'", marker_env("3.12"), {"a"}, env_id=1)  # no order on extras
    assert not ev.evaluate("'a' in extras", marker_env("3.12"), env_id=1)  # a lock-file variable this env lacks
    with pytest.raises(LockFormatError, match="invalid marker") as e:
        ev.evaluate("python_version >>> '3'", marker_env("3.12"))
    assert e.value.path == "uv.lock"

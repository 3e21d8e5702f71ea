"""glmcompat.model.environments: the :class:`Environment` record (its JSON form, merging equal sets, naming by
platform) and the marker evaluator: PEP 508 markers with ``extra`` bound to the set of extras and groups a uv.lock
environment enables (uv's conflict encoding), on packaging's public API."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from glmcompat.model.environments import Environment, MarkerEvaluator, by_platform, flat_environments, merge
from glmcompat.model.errors import LockFormatError
from glmcompat.model.platforms import marker_env
from glmcompat.readers.formats.common import Entry

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


# --- the Environment record --------------------------------------------------------------------------------------

UV_ENV = Environment("extra sglang, Python 3.12, Linux aarch64", "aarch64", {"sgl-kernel": "0.3.21", "torch": "2.9.1"},
                     {"glm-tools": "editable"}, {}, {"transformers": ">=5.2.0"}, {"sgl-kernel": "0.3.21"},
                     ("extra sglang, Python 3.13, Linux aarch64",))


@pytest.mark.parametrize("env", [UV_ENV, Environment(), Environment("", "x86_64", {"torch": "2.9.1"}, unpinned={"x": ""})])
def test_environment_json_round_trip(env: Environment) -> None:
    stored = json.loads(json.dumps(env.to_json()))
    assert Environment.from_json(stored) == env
    # the stored form is the one the parsed-lock cache has always held: empty missing_wheels / also left out
    assert ("missing_wheels" in stored) is bool(env.missing_wheels) and ("also" in stored) is bool(env.also)
    assert list(stored)[:6] == ["name", "platform", "packages", "sources", "unpinned", "overrides"]


@pytest.mark.parametrize("bad", [
    None, [], "x", {"name": "x"},
    {**UV_ENV.to_json(), "packages": {"torch": 1}},
    {**UV_ENV.to_json(), "platform": None},
    {**UV_ENV.to_json(), "also": "x"},
    {**UV_ENV.to_json(), "missing_wheels": ["torch"]},
    {k: v for k, v in UV_ENV.to_json().items() if k != "sources"},
])
def test_environment_from_json_refuses_other_shapes(bad: Any) -> None:
    with pytest.raises(ValueError):
        Environment.from_json(bad)


def test_environment_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        UV_ENV.name = "x"  # type: ignore[misc]
    assert not hasattr(UV_ENV, "__dict__")  # slots


def test_merge_joins_equal_sets_of_one_machine_only() -> None:
    a = Environment("Python 3.11", "x86_64", {"torch": "2.9.1"})
    out = [a]
    merge(out, dataclasses.replace(a, name="Python 3.12"))
    assert out == [dataclasses.replace(a, also=("Python 3.12",))] and a.also == ()  # a new record, a kept as it was
    merge(out, dataclasses.replace(a, name="Linux aarch64", platform="aarch64"))
    merge(out, dataclasses.replace(a, name="Python 3.13", missing_wheels={"torch": "2.9.1"}))
    assert [e.names for e in out] == [("Python 3.11", "Python 3.12"), ("Linux aarch64",), ("Python 3.13",)]


def test_by_platform_names_a_platform_and_leaves_out_one_that_installs_nothing() -> None:
    x86 = [Environment("Python 3.11, Linux x86_64", "x86_64", {"torch": "2.9.1"}, also=("Python 3.12, Linux x86_64",))]
    arm = [Environment("Python 3.11, Linux aarch64", "aarch64", {"torch": "2.9.1"})]
    assert [(e.name, e.also) for e in by_platform({"x86_64": x86, "aarch64": arm})] == [
        ("Linux x86_64", ()), ("Linux aarch64", ())]
    empty = [Environment("Python 3.11, Linux aarch64", "aarch64")]
    assert [(e.name, e.platform) for e in by_platform({"x86_64": x86, "aarch64": empty})] == [("", "x86_64")]


def test_flat_environments_are_records() -> None:
    envs = flat_environments("r.txt", [Entry("torch", "2.9.1"), Entry("glm-tools", None, source="git", spec=">=1"),
                                       Entry("glm-tools", "1.2", constraint=True)], ">=3.11", {"x": ">1"})
    assert all(isinstance(e, Environment) for e in envs)
    assert [(e.platform, dict(e.packages), dict(e.sources), dict(e.unpinned), dict(e.overrides)) for e in envs] == [
        (p, {"glm-tools": "1.2", "torch": "2.9.1"}, {"glm-tools": "git"}, {}, {"x": ">1"}) for p in ("x86_64", "aarch64")]

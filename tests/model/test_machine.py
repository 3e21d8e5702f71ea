"""The machine of one command (:mod:`glmcompat.model.machine`): the first source that names a value wins (flags,
environment, ``[tool.glmcompat]``), detection only where a value is ``auto``, and each value says where it came from."""

from __future__ import annotations

import pytest

from glmcompat.model.errors import InputError
from glmcompat.model.machine import Detected, Gpu, Machine, from_json, from_sources, manylinux, parse_glibc

FOUND = Detected(driver="580.159.04", driver_from="NVML", gpus=(Gpu(0, "NVIDIA H200", "9.0"),), gpus_from="NVML",
                 glibc="2.36", glibc_from="os.confstr", arch="x86_64")


def never() -> Detected:
    raise AssertionError("detected although nothing is auto")


def test_flag_beats_pyproject_and_nothing_is_read() -> None:
    m = from_sources({"target": "sm120", "driver": "570.86", "glibc": None}, {},
                     {"driver": "580.95.05", "glibc": "2.34"}, "/p/pyproject.toml", never)
    assert (m.driver, m.driver_from.show()) == ("570.86", "--driver")
    assert (m.glibc, m.glibc_from.show()) == ("2.34", "[tool.glmcompat] of /p/pyproject.toml")
    assert m.targets == ("sm120",) and not m.detected


def test_an_environment_value_is_named_as_such() -> None:
    m = from_sources({"target": None, "driver": "570.86", "glibc": None}, {"570.86": "GLMCOMPAT_DRIVER"}, {}, None, never)
    assert m.driver_from.show() == "GLMCOMPAT_DRIVER" and m.driver_from.origin == "env"


def test_auto_reads_the_machine_once() -> None:
    calls = []

    def detect() -> Detected:
        calls.append(1)
        return FOUND

    m = from_sources({"target": "auto", "driver": "auto", "glibc": "auto"}, {}, {}, None, detect)
    assert calls == [1] and m.targets == ("sm90",) and m.driver == "580.159.04" and m.glibc == "2.36"
    assert m.detected and m.targets_from.show() == "read from NVML"
    assert from_json(m.to_json()) == m


def test_auto_without_a_driver_is_one_line() -> None:
    with pytest.raises(InputError, match=r"--target auto: no NVIDIA driver was found on this machine"):
        from_sources({"target": "auto", "driver": None, "glibc": None}, {}, {}, None, Detected)


@pytest.mark.parametrize("bad", ["5.7x", "latest", "570..86"])
def test_a_bad_driver_names_its_source(bad: str) -> None:
    with pytest.raises(InputError, match=r"\[tool.glmcompat\] driver|--driver"):
        from_sources({"target": None, "driver": None, "glibc": None}, {}, {"driver": bad}, "/p/pyproject.toml", never)


def test_a_non_string_setting_names_the_file() -> None:
    with pytest.raises(InputError) as e:
        from_sources({"target": None, "driver": None, "glibc": None}, {}, {"driver": 570}, "/p/pyproject.toml", never)
    assert e.value.path == "/p/pyproject.toml"


@pytest.mark.parametrize(("given", "want"), [("2.34", "2.34"), ("manylinux_2_34", "2.34"), ("2_28", "2.28")])
def test_glibc_spellings(given: str, want: str) -> None:
    assert parse_glibc(given, "--glibc") == want and manylinux(want) == "manylinux_" + want.replace(".", "_")


def test_the_machine_states_each_value_and_its_source() -> None:
    m = from_sources({"target": "sm120", "driver": "570.86", "glibc": None}, {}, {}, None, never)
    assert m.lines() == ["target sm120 (--target)", "NVIDIA driver 570.86 (--driver)"]
    assert Machine().driver is None

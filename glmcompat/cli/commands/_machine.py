"""The machine of one command, built once at its edge: ``--target``/``--driver``/``--glibc`` (or their
``GLMCOMPAT_*`` variables, which :mod:`glmcompat.cli` gives as those flags), then ``[tool.glmcompat]``, then what
:mod:`glmcompat.edges.machine` reads where a value is ``auto`` (:func:`glmcompat.model.machine.from_sources`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import argparse

    from glmcompat.model.machine import Detected, Machine

DRIVER_HELP = ("the NVIDIA driver of the machine judged, e.g. 570.86, or auto: read it from this machine "
               "(default: GLMCOMPAT_DRIVER, else [tool.glmcompat] driver; none: the driver is not judged)")
GLIBC_HELP = ("the machine's glibc, e.g. 2.34 (or manylinux_2_34, or auto) (default: GLMCOMPAT_GLIBC, else "
              "[tool.glmcompat] glibc{}")


def add_machine_options(p: argparse.ArgumentParser, *, glibc_default: str = "; none: not judged") -> None:
    """``--driver`` and ``--glibc`` (with ``--manylinux`` as another spelling of the glibc)."""
    p.add_argument("--driver", metavar="VERSION", help=DRIVER_HELP)
    p.add_argument("--glibc", "--manylinux", dest="glibc", metavar="X.Y", help=GLIBC_HELP.format(glibc_default + ")"))


def _detect_at(root: str | None, nvml: str | None) -> Detected:
    from glmcompat.edges.machine import detect  # lazy: only where a value is auto (reads /sys, /proc, NVML)

    return detect(root, nvml)


def _detected() -> Detected:
    """The machine as it is now (no memo kept past the call: a long-lived caller, or a test that points
    GLMCOMPAT_MACHINE_ROOT / GLMCOMPAT_NVML_LIBRARY elsewhere, reads the machine it asks about)."""
    import os  # lazy: start-up path (the command's engine)

    from glmcompat.edges.machine import NVML_ENV, ROOT_ENV  # lazy: only where a value is auto

    return _detect_at(os.environ.get(ROOT_ENV) or None, os.environ.get(NVML_ENV) or None)


def env_given() -> Mapping[str, str]:
    """Which option values a GLMCOMPAT_* variable gave (value -> variable): the dispatcher gives each as its flag
    where no flag does, so a flag value equal to its variable's is the variable's."""
    import os  # lazy: start-up path (the command's engine)

    out: dict[str, str] = {}
    for var in ("GLMCOMPAT_TARGET", "GLMCOMPAT_DRIVER", "GLMCOMPAT_GLIBC"):
        for v in os.environ.get(var, "").replace(",", " ").split():
            out[v] = var
    return out


def machine_for(target: Sequence[str] | str | None, driver: str | None, glibc: str | None,
                settings: Mapping[str, object], settings_path: str | None, *, glibc_default: bool = False,
                with_targets: bool = True) -> Machine:
    """The :class:`~glmcompat.model.machine.Machine` of a command's options and ``[tool.glmcompat]`` ``settings``
    (of ``settings_path``; None: no project)."""
    from glmcompat.model.machine import from_sources  # lazy: start-up path (the command's engine)

    t: str | None = target if isinstance(target, str) or target is None else ",".join(target)
    flags: dict[str, str | None] = {"target": t or None, "driver": driver, "glibc": glibc}
    given = dict(env_given())
    if not isinstance(target, str) and target and all(given.get(x) == "GLMCOMPAT_TARGET" for x in target):
        given[t or ""] = "GLMCOMPAT_TARGET"
    return from_sources(flags, given, settings, settings_path, _detected, glibc_default=glibc_default,
                        with_targets=with_targets)


def read_here(m: Machine) -> Machine:
    """``m`` with the driver of this machine where it names none (a command that acts on this machine: pip install)."""
    from dataclasses import replace  # lazy: pip install only

    from glmcompat.model.machine import Provenance  # lazy: pip install only

    seen = _detected()
    if m.driver is not None or seen.driver is None:
        return m
    return replace(m, driver=seen.driver, driver_from=Provenance("detected", seen.driver_from))


__all__ = ["add_machine_options", "env_given", "machine_for", "read_here"]

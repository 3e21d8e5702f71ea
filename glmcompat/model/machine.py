"""The machine a verdict is about: its GPU targets, NVIDIA driver, glibc, CPU architecture and kernel module, each
value with where it came from. Built once at a command's edge (flags, environment, ``[tool.glmcompat]``, then
detection where a value is ``auto``: :mod:`glmcompat.edges.machine`) and handed down as one frozen value; nothing
below asks the machine or the environment again (as uv reads its accelerator once, ``crates/uv-torch``).

Pure: the detected facts come in as a :class:`Detected` value (or a callable that reads them, called only where a
value is ``auto``), never read here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from glmcompat.model.errors import InputError

Origin = Literal["flag", "env", "pyproject", "detected", "default"]
AUTO = "auto"


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a value came from: ``origin`` and, where it names one, the flag, variable, file or reader (``--driver``,
    ``GLMCOMPAT_DRIVER``, ``/work/p/pyproject.toml``, ``/sys/module/nvidia/version``, ``NVML``)."""

    origin: Origin
    where: str = ""

    def show(self) -> str:
        if self.origin == "flag":
            return self.where or "the command line"
        if self.origin == "env":
            return self.where
        if self.origin == "pyproject":
            return f"[tool.glmcompat] of {self.where}"
        if self.origin == "detected":
            return f"read from {self.where}"
        return "default" + (f": {self.where}" if self.where else "")

    def to_json(self) -> dict[str, str]:
        return {"origin": self.origin, "where": self.where}


@dataclass(frozen=True, slots=True)
class Gpu:
    """One GPU the driver reports: its index, name and compute capability (``9.0``)."""

    index: int
    name: str
    capability: str

    @property
    def target(self) -> str:
        """The target name of its compute capability: ``9.0`` -> ``sm90``."""
        major, _, minor = self.capability.partition(".")
        return f"sm{major}{minor or '0'}"


@dataclass(frozen=True, slots=True)
class Detected:
    """What :mod:`glmcompat.edges.machine` read of the machine it runs on (None: could not be read), with the reader
    of each value."""

    driver: str | None = None
    driver_from: str = ""
    gpus: tuple[Gpu, ...] = ()
    gpus_from: str = ""
    glibc: str | None = None
    glibc_from: str = ""
    arch: str | None = None
    kernel_module: str | None = None  # "open" | "proprietary"
    kernel_module_from: str = ""
    uvm_hmm: bool | None = None  # nvidia_uvm's HMM on (uvm_disable_hmm N); None: not readable
    uvm_hmm_from: str = ""


@dataclass(frozen=True, slots=True)
class Machine:
    """The machine judged: GPU targets (canonical names), the NVIDIA driver, glibc (the manylinux floor), the CPU
    architecture, the kernel module's flavour and nvidia_uvm's HMM setting, each with its :class:`Provenance`. A
    value that nothing named and that was not detected is None (``driver`` None: the driver is not judged)."""

    targets: tuple[str, ...] = ()
    targets_from: Provenance = Provenance("default")
    driver: str | None = None
    driver_from: Provenance = Provenance("default")
    glibc: str | None = None
    glibc_from: Provenance = Provenance("default")
    arch: str | None = None
    arch_from: Provenance = Provenance("default")
    gpus: tuple[Gpu, ...] = ()
    kernel_module: str | None = None
    kernel_module_from: Provenance = Provenance("default")
    uvm_hmm: bool | None = None
    uvm_hmm_from: Provenance = Provenance("default")
    notes: tuple[str, ...] = field(default=())

    @property
    def detected(self) -> bool:
        """Whether any value was read from the machine (a verdict on it must not be replayed elsewhere)."""
        return any(p.origin == "detected" for p in (self.targets_from, self.driver_from, self.glibc_from,
                                                        self.arch_from, self.kernel_module_from, self.uvm_hmm_from))

    def with_targets(self, targets: Sequence[str], origin: Provenance) -> Machine:
        return replace(self, targets=tuple(targets), targets_from=origin)

    def lines(self) -> list[str]:
        """The machine as a verdict states it, one value a line: ``driver 570.86 (--driver)``."""
        out = []
        if self.targets:
            out.append(f"target {', '.join(self.targets)} ({self.targets_from.show()})")
        out.append(f"NVIDIA driver {self.driver} ({self.driver_from.show()})" if self.driver
                   else "NVIDIA driver not named (not judged; pass --driver or --target auto)")
        if self.glibc:
            out.append(f"glibc {self.glibc} ({self.glibc_from.show()})")
        if self.arch:
            out.append(f"CPU {self.arch} ({self.arch_from.show()})")
        if self.kernel_module:
            out.append(f"kernel module {self.kernel_module} ({self.kernel_module_from.show()})")
        if self.uvm_hmm is not None:
            out.append(f"nvidia_uvm HMM {'on' if self.uvm_hmm else 'off'} ({self.uvm_hmm_from.show()})")
        return out

    def to_json(self) -> dict[str, object]:
        def val(v: object, p: Provenance) -> dict[str, object]:
            return {"value": v, **p.to_json()}

        return {"targets": val(list(self.targets), self.targets_from), "driver": val(self.driver, self.driver_from),
                "glibc": val(self.glibc, self.glibc_from), "arch": val(self.arch, self.arch_from),
                "kernel_module": val(self.kernel_module, self.kernel_module_from),
                "uvm_hmm": val(self.uvm_hmm, self.uvm_hmm_from),
                "gpus": [{"index": g.index, "name": g.name, "capability": g.capability} for g in self.gpus]}


def from_json(d: Mapping[str, object]) -> Machine:
    """The :class:`Machine` :meth:`Machine.to_json` wrote (a recorded answer), or the ``machine`` of a ``--json``
    document (``MachineDoc``: each value beside its ``*_from``; values it does not source read as defaults);
    ValueError/TypeError otherwise."""
    if isinstance(d.get("targets"), list) and "targets_from" in d:
        def doc(key: str) -> dict[str, object]:
            src = d.get(f"{key}_from")
            where = src if isinstance(src, Mapping) else {"origin": "default", "where": ""}
            return {"value": d.get(key), "origin": where.get("origin"), "where": where.get("where", "")}

        d = {**{k: doc(k) for k in ("targets", "driver", "glibc", "arch", "kernel_module", "uvm_hmm")},
             "gpus": d.get("gpus", [])}
    def val(key: str) -> tuple[object, Provenance]:
        got = d[key]
        if not isinstance(got, Mapping):
            raise TypeError(f"machine {key}: {got!r}")
        origin = got.get("origin")
        if origin not in ("flag", "env", "pyproject", "detected", "default"):
            raise ValueError(f"machine {key} origin: {origin!r}")
        return got.get("value"), Provenance(origin, str(got.get("where", "")))

    def text(v: object) -> str | None:
        return None if v is None else str(v)

    targets, tf = val("targets")
    driver, df = val("driver")
    glibc, gf = val("glibc")
    arch, af = val("arch")
    km, kf = val("kernel_module")
    hmm, hf = val("uvm_hmm")
    raw_gpus = d.get("gpus", [])
    gpus = tuple(Gpu(int(g["index"]), str(g["name"]), str(g["capability"]))
                 for g in (raw_gpus if isinstance(raw_gpus, list) else []))
    return Machine(tuple(str(t) for t in (targets if isinstance(targets, list) else [])), tf, text(driver), df,
                   text(glibc), gf, text(arch), af, gpus, text(km), kf, hmm if isinstance(hmm, bool) else None, hf)


# -- values ---------------------------------------------------------------------------------------------

_DRIVER = re.compile(r"^\d{2,4}(\.\d{1,4}){0,2}$")
_GLIBC = re.compile(r"^(?:manylinux_?)?(\d+)[._](\d+)$")


def driver_key(version: str) -> tuple[int, ...]:
    """A driver version as a comparable tuple: ``570.86.15`` -> (570, 86, 15)."""
    return tuple(int(x) for x in version.split("."))


def parse_driver(value: str, where: str) -> str:
    """``value`` as an NVIDIA driver version (``570.86``, ``580.95.05``); InputError naming ``where`` otherwise."""
    v = value.strip()
    if not _DRIVER.match(v):
        raise InputError(f"{where} {value!r}: not an NVIDIA driver version such as 570.86 or 580.95.05 "
                         "(or auto: read it from this machine)")
    return v


def parse_glibc(value: str, where: str) -> str:
    """``value`` as a glibc version ``X.Y`` (``2.34``; a manylinux name ``manylinux_2_34`` or ``2_34`` too)."""
    m = _GLIBC.match(value.strip())
    if not m:
        raise InputError(f"{where} {value!r}: not a glibc version such as 2.34 (or manylinux_2_34, or auto)")
    return f"{int(m.group(1))}.{int(m.group(2))}"


def glibc_key(version: str) -> tuple[int, int]:
    a, _, b = version.partition(".")
    return int(a), int(b or 0)


def manylinux(glibc: str) -> str:
    """The manylinux tag prefix of a glibc: ``2.34`` -> ``manylinux_2_34``."""
    a, b = glibc_key(glibc)
    return f"manylinux_{a}_{b}"


# -- choosing -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Named:
    """A value as one source names it (None: that source names none)."""

    value: str | None
    origin: Provenance


def first(*named: Named) -> Named | None:
    """The first of ``named`` that names a value (flags, environment, ``[tool.glmcompat]``, in that order)."""
    return next((n for n in named if n.value is not None and n.value.strip() != ""), None)


def _parsed(parse: Callable[[str, str], str], named: Named, key: str) -> str:
    """``named``'s value through ``parse``; an InputError names the flag, the variable or ``[tool.glmcompat] KEY``
    and its file."""
    if named.origin.origin == "pyproject":
        try:
            return parse(named.value or "", f"[tool.glmcompat] {key}")
        except InputError as e:
            raise InputError(e.message, path=named.origin.where) from None
    return parse(named.value or "", named.origin.where or f"--{key}")


def build(*, targets: Named | None, driver: Named | None, glibc: Named | None,
          detect: Callable[[], Detected] | None, glibc_default: bool = False,
          no_driver: str = "") -> Machine:
    """The :class:`Machine` of what the sources named (the first source that names each value: :func:`first`), with
    ``auto`` values read through ``detect`` (called once, only where one is ``auto``; ``glibc_default``: glibc is
    read where nothing names it, as a lock does for the machine it runs on). ``--target auto`` or ``--driver auto``
    where no NVIDIA driver is found: InputError (exit 2), with ``no_driver`` saying how to name a target."""
    want_auto = any(n is not None and (n.value or "").strip().lower() == AUTO for n in (targets, driver, glibc))
    need = want_auto or (glibc_default and glibc is None)
    found = detect() if need and detect is not None else Detected()
    kw: dict[str, object] = {}
    if targets is not None:
        if (targets.value or "").strip().lower() == AUTO:
            if not found.gpus:
                why = "no NVIDIA driver was found" if found.driver is None else "the NVIDIA driver reports no GPU"
                raise InputError(f"{targets.origin.where or '--target'} auto: {why} on this machine "
                                 f"({found.gpus_from or 'NVML'}); {no_driver or 'name a target, e.g. --target sm120'}")
            kw["targets"] = tuple(dict.fromkeys(g.target for g in found.gpus))
            kw["targets_from"] = Provenance("detected", found.gpus_from or "NVML")
            kw["gpus"] = found.gpus
        else:
            kw["targets"] = tuple(t for t in re.split(r"[,\s]+", targets.value or "") if t)
            kw["targets_from"] = targets.origin
    elif found.gpus:
        kw["gpus"] = found.gpus
    if driver is not None:
        if (driver.value or "").strip().lower() == AUTO:
            if found.driver is None:
                raise InputError(f"{driver.origin.where or '--driver'} auto: no NVIDIA driver was found on this machine "
                                 "(/sys/module/nvidia/version, /proc/driver/nvidia/version, NVML); name it, e.g. "
                                 "--driver 580.95.05")
            kw["driver"], kw["driver_from"] = found.driver, Provenance("detected", found.driver_from)
        else:
            kw["driver"] = _parsed(parse_driver, driver, "driver")
            kw["driver_from"] = driver.origin
    elif want_auto and found.driver is not None:
        kw["driver"], kw["driver_from"] = found.driver, Provenance("detected", found.driver_from)
    if glibc is not None and (glibc.value or "").strip().lower() != AUTO:
        kw["glibc"] = _parsed(parse_glibc, glibc, "glibc")
        kw["glibc_from"] = glibc.origin
    elif found.glibc is not None and (glibc is not None or glibc_default or want_auto):
        kw["glibc"], kw["glibc_from"] = found.glibc, Provenance("detected", found.glibc_from)
    if found.arch is not None:
        kw["arch"], kw["arch_from"] = found.arch, Provenance("detected", "uname")
    if found.kernel_module is not None:
        kw["kernel_module"] = found.kernel_module
        kw["kernel_module_from"] = Provenance("detected", found.kernel_module_from)
    if found.uvm_hmm is not None:
        kw["uvm_hmm"], kw["uvm_hmm_from"] = found.uvm_hmm, Provenance("detected", found.uvm_hmm_from)
    return Machine(**kw)  # type: ignore[arg-type]


def from_sources(flags: Mapping[str, str | None], env_given: Mapping[str, str], settings: Mapping[str, object],
                 settings_path: str | None, detect: Callable[[], Detected] | None, *, glibc_default: bool = False,
                 with_targets: bool = True) -> Machine:
    """The machine of one command: ``flags`` (``target``/``driver``/``glibc`` as the parser read them; a value that
    an environment variable gave is in ``env_given``, value -> variable), ``[tool.glmcompat]`` ``settings`` of
    ``settings_path``, then detection. A setting that is not a string: InputError naming the file."""
    def named(key: str, flag: str, var: str) -> Named | None:
        raw = flags.get(key)
        if raw is not None:
            v = env_given.get(raw)
            return Named(raw, Provenance("env", var) if v == var else Provenance("flag", flag))
        s = settings.get(key) if settings_path is not None else None
        if key == "target" and s is None:
            s = settings.get("targets") if settings_path is not None else None
        if isinstance(s, list) and key == "target" and all(isinstance(x, str) for x in s):
            s = ",".join(s)
        if s is None:
            return None
        if not isinstance(s, str):
            raise InputError(f"[tool.glmcompat] {key} must be a string, not {s!r}"[:300], path=settings_path)
        return Named(s, Provenance("pyproject", settings_path or ""))

    return build(targets=named("target", "--target", "GLMCOMPAT_TARGET") if with_targets else None,
                 driver=named("driver", "--driver", "GLMCOMPAT_DRIVER"),
                 glibc=named("glibc", "--glibc", "GLMCOMPAT_GLIBC"), detect=detect, glibc_default=glibc_default)


__all__ = ["AUTO", "Detected", "Gpu", "Machine", "Named", "Provenance", "build", "driver_key", "first", "from_json",
           "from_sources",
           "glibc_key", "manylinux", "parse_driver", "parse_glibc"]

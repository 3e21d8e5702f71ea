"""What every probe group of ``glmcompat verify`` shares inside its probe process: the record of one probe
(:func:`probe`, :func:`emit`), skipping, the bytecode cache, and the helpers the groups that import torch use.

Only the standard library (and :mod:`glmcompat.ops.verify.records`, which imports nothing else) is imported at
module level: this runs inside the serving container, before any package under test.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import os
import sys
import time
from collections.abc import Callable, Iterator
from importlib.util import cache_from_source
from typing import Any, cast

from glmcompat.model.outputs.probe import ProbeDoc
from glmcompat.ops.verify.records import (
    GROUP_MODULE,
    NONCE_ENV,
    ImportData,
    OpsData,
    absent,
    error_text,
    group_ids,
    marks,
)

# The parent hands the nonce over in the environment; it is taken out before any package under test is
# imported (os.environ no longer shows it to them).
MARK, EXIT, NOFORK, GATHER_MARK = marks(os.environ.pop(NONCE_ENV, ""))


class Skipped(Exception):
    """Raised inside a probe: it cannot run here (never a pass)."""


class Probe:
    """What one probe reports; filled in by the probe body."""

    def __init__(self, pid: str) -> None:
        self.id = pid
        self.summary = ""
        self.data: dict[str, Any] = {}
        self.warnings: list[str] = []
        self.degraded = False  # ran and passed what decides, but found a non-fatal problem: "warning"

    def fail(self, message: str) -> None:
        raise ProbeFailure(message)


class ProbeFailure(Exception):
    """A probe's own verdict of failure (not an exception from the code under test)."""


def emit(rec: ProbeDoc) -> None:
    # a newline first: a package may have left half a line on stdout, and the marker must start a line
    sys.stdout.write("\n" + MARK + rec.to_line() + "\n")
    sys.stdout.flush()


@contextlib.contextmanager
def probe(pid: str, results: dict[str, str]) -> Iterator[Probe]:
    p = Probe(pid)
    t0 = time.perf_counter()
    error: str | None = None
    try:
        yield p
        status = "warning" if p.degraded else "passed"
    except Skipped as e:
        status = "skipped"
        p.summary = str(e)
    except ProbeFailure as e:
        status = "failed"
        p.summary = p.summary or str(e).splitlines()[0]
        error = str(e)
    except BaseException as e:  # noqa: BLE001 - the point is to report anything the package raises
        if isinstance(e, KeyboardInterrupt):
            raise
        status = "failed"
        error = error_text(e)
        p.summary = p.summary or error.splitlines()[-1][:200]
    results[pid] = status
    emit(ProbeDoc(id=pid, status=status, summary=p.summary, seconds=round(time.perf_counter() - t0, 3),
                  error=error, data=p.data or None, warnings=tuple(p.warnings) or None))


def absent_group(group: str, opts: dict[str, Any]) -> bool:
    """Whether ``group``'s module is not installed; if so every probe of the group is reported skipped."""
    module = GROUP_MODULE[group]
    if installed(module):
        return False
    for pid in group_ids(group, opts):
        emit(absent(pid, module))
    return True


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require_torch() -> None:
    """Skip the probe where torch is not installed (its operators and kernels need it)."""
    if not installed("torch"):
        raise Skipped("torch is not installed")


def require(results: dict[str, str], pid: str, what: str) -> None:
    if results.get(pid) != "passed":
        raise Skipped(f"{what} did not pass")


def _bytecode_cached(module: str) -> bool:
    """Whether importing ``module`` will find (or leave behind) its bytecode in ``__pycache__``.

    False when its ``__init__``'s ``.pyc`` is missing or stale and Python will not write one there
    (``PYTHONDONTWRITEBYTECODE``, or a read-only installation): then every import compiles that
    package from source. Nothing is imported.
    """
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return True
    src = getattr(spec, "origin", None) if spec is not None else None
    if not src or not src.endswith(".py") or not os.path.isfile(src):
        return True
    try:
        pyc = cache_from_source(src)
    except (NotImplementedError, ValueError):
        return True  # this Python keeps no bytecode cache at all
    try:
        st = os.stat(src)
        with open(pyc, "rb") as f:
            head = f.read(16)
        flags = int.from_bytes(head[4:8], "little")
        if len(head) == 16 and head[:4] == importlib.util.MAGIC_NUMBER and (flags or (
                int.from_bytes(head[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF
                and int.from_bytes(head[12:16], "little") == st.st_size & 0xFFFFFFFF)):
            return True
    except OSError:
        pass
    if sys.dont_write_bytecode:
        return False
    d = os.path.dirname(pyc)
    return os.access(d if os.path.isdir(d) else os.path.dirname(d), os.W_OK)


def bytecode_cache(opts: dict[str, Any], group: str) -> None:
    """Compile each imported package once into glmcompat's cache, where the image keeps no bytecode.

    An image installed without ``.pyc`` files (``uv pip install`` compiles none by default) and run
    with ``PYTHONDONTWRITEBYTECODE=1`` or a read-only ``site-packages`` compiles every module from
    source on every import. Then this process reads and writes ``.pyc`` files under
    ``opts["pycache"]`` (Python's own ``sys.pycache_prefix`` mechanism; each is checked against its
    source's mtime and size, so an edited or reinstalled file is recompiled). The import is the same
    code, run for real; the installation itself is never written to.
    """
    d = opts.get("pycache")
    module = GROUP_MODULE.get(group)
    if group == "ext" and opts.get("modules"):  # an extension:<distribution> probe: torch first where it needs it
        module = "torch" if opts.get("torch") else str(opts["modules"][0]).split(".")[0]
    if not d or sys.pycache_prefix or module is None:
        return
    if opts.get("pycache_mode") != "always" and _bytecode_cached(module):
        return
    sys.pycache_prefix = d
    sys.dont_write_bytecode = False


# --------------------------------------------------------------------------------------------
# Helpers that need torch (imported inside the groups only)
# --------------------------------------------------------------------------------------------


def cuda_device(opts: dict[str, Any]) -> Any:
    import torch  # lazy: package under test, imported by its own group

    if opts.get("no_gpu"):
        raise Skipped("--no-gpu: GPU probes not run")
    if not torch.cuda.is_available() and torch.cuda.device_count() == 0:
        raise Skipped("no CUDA GPU visible to torch")
    return torch.device("cuda", int(opts.get("device", 0)))


def rmsnorm_case() -> tuple[Any, Any, Any]:
    """(x, weight, float64 reference) of the rmsnorm smoke test every kernel package is held to."""
    import torch  # lazy: package under test, imported by its own group

    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 1024, generator=g)
    w = torch.randn(1024, generator=g)
    return x, w, x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()


def silu_and_mul_case() -> tuple[Any, Any]:
    """(x, float64 reference) of the silu_and_mul smoke test."""
    import torch  # lazy: package under test, imported by its own group

    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 2048, generator=g)
    a, b = x.double().chunk(2, -1)
    return x, torch.nn.functional.silu(a) * b


def smoke_bf16(r: dict[str, str], opts: dict[str, Any], pid: str, after: str, op: str, label: str,
               case: Callable[[], tuple[Any, ...]], call: Callable[[Any, Any, list[Any]], Any]) -> None:
    """Probe ``pid`` (once ``after`` passed): one operator on the GPU in bf16 against the float64 reference.

    ``case()`` gives the inputs and, last, the reference; ``call(torch, device, inputs)`` runs the operator on the
    inputs cast to bf16 on the device and returns its output, held to the reference within 3e-2."""
    with probe(pid, r) as p:
        require(r, after, after)
        import torch  # lazy: package under test, imported by its own group

        dev = cuda_device(opts)
        *inputs, ref = case()
        out = call(torch, dev, [t.to(dev, torch.bfloat16) for t in inputs])
        close_to(op, out, ref, 3e-2, 3e-2, p)
        p.summary = f"{label} (bf16) matches the torch reference"


def close_to(name: str, got: Any, ref: Any, rtol: float, atol: float, p: Probe) -> None:
    import torch  # lazy: package under test, imported by its own group

    got = got.detach().double().cpu()
    ref = ref.detach().double().cpu()
    if got.shape != ref.shape:
        p.fail(f"{name}: shape {tuple(got.shape)} != reference {tuple(ref.shape)}")
    err = (got - ref).abs()
    bound = atol + rtol * ref.abs()
    worst = float((err - bound).max()) if err.numel() else 0.0
    p.data[f"{name}_max_abs_err"] = float(err.max()) if err.numel() else 0.0
    if not bool(torch.isfinite(got).all()) or worst > 0:
        p.fail(f"{name}: result differs from the torch reference (max abs error {float(err.max()):.3g}, "
               f"rtol {rtol}, atol {atol})")


def op_names(namespace: str) -> list[str] | None:
    import torch  # lazy: package under test, imported by its own group

    lister = getattr(getattr(torch, "_C", None), "_dispatch_get_all_op_names", None)
    if lister is None:
        return None
    prefix = namespace + "::"
    return sorted(n for n in lister() if n.startswith(prefix))


def ops_probe(p: Probe, namespace: str, expected: list[str], libs: list[str], import_ok: bool) -> None:
    """Operator registration: ``namespace::op`` for each expected op, with the loader error if missing."""
    import torch  # lazy: package under test, imported by its own group

    names = op_names(namespace)
    if names is None:
        raise Skipped("this torch has no operator registry API (torch._C._dispatch_get_all_op_names)")
    d = cast(OpsData, p.data)
    d["registered"] = len(names)
    missing = [f"{namespace}::{op}" for op in expected if f"{namespace}::{op}" not in names]
    if not names:
        missing = missing or [f"{namespace}::*"]
    if not missing:
        p.summary = f"{len(names)} {namespace}:: operators registered"
        cuda = getattr(getattr(torch, "_C", None), "_dispatch_has_kernel_for_dispatch_key", None)
        if cuda is not None and expected:
            d["cuda_kernels"] = {op: bool(cuda(f"{namespace}::{op}", "CUDA")) for op in expected}
        return
    # Load the extension library directly: its loader error is the root cause of the missing operators.
    errors = []
    for lib in libs:
        try:
            torch.ops.load_library(lib)
        except Exception as e:  # noqa: BLE001
            errors.append(f"{lib}: {error_text(e)}")
    msg = f"operator {missing[0]} does not exist"
    if len(missing) > 1:
        msg += f" (and {len(missing) - 1} more)"
    if not import_ok and not errors:
        msg += " (the package did not import)"
    p.fail("\n".join([msg, *errors]))


def locate(module: str, *patterns: str) -> list[str]:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return []
    root = list(spec.submodule_search_locations)[0]
    out: list[str] = []
    for pat in patterns:
        out.extend(sorted(glob.glob(os.path.join(root, pat))))
    return out


def import_into(p: Probe, module: str) -> Any:
    mod = importlib.import_module(module)
    ver = getattr(mod, "__version__", None)
    d = cast(ImportData, p.data)
    d["version"] = str(ver) if ver is not None else None
    d["file"] = getattr(mod, "__file__", None)
    p.summary = f"{module} {ver} imported" if ver else f"{module} imported"
    return mod


def start_group(group: str, opts: dict[str, Any],
                importer: Callable[[Probe, str], Any] | None = import_into) -> dict[str, str] | None:
    """The start of probe group ``group``: None where its module is not installed (every probe of the group is
    reported skipped, :func:`absent_group`); else the results of its probes so far (what :func:`require` reads),
    after its first probe, ``import:<module>``, which ``importer`` runs (:func:`import_into`, or one that records
    more of the import); ``importer=None``: a group whose first probe is not the import (``gpu:N``, ``peer-access``)."""
    if absent_group(group, opts):
        return None
    r: dict[str, str] = {}
    if importer is not None:
        module = GROUP_MODULE[group]
        with probe(f"import:{module}", r) as p:
            importer(p, module)
    return r

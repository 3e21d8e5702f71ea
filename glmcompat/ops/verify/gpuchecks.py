"""The child side of ``glmcompat verify``: one probe group per process.

Run as ``python -m glmcompat.ops.verify.gpuchecks GROUP OPTIONS_JSON``. A group imports one package (and
torch under it) and runs that package's probes in order: import, operator registration, kernel
smoke test. Each probe's result is printed as one marker line on stdout and flushed at once, so
when a later probe crashes the process or hangs until the parent kills it, the results before it
survive and the parent reports the rest as crashed or timed out.

Only the standard library (and :mod:`glmcompat.ops.verify.records`, which imports nothing else) is
imported at module level; each group imports what it probes, so a broken package can only break its
own group, and the module of glmcompat that holds the group (:data:`GROUPS`): a probe process imports
no other group's code. ``static`` runs the ELF readers (:mod:`glmcompat.ops.verify.static`) and imports
no GPU package at all.
"""


from __future__ import annotations

import contextlib
import importlib
import json
import os
import selectors
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from glmcompat.ops.verify.harness import EXIT, NOFORK, bytecode_cache
from glmcompat.ops.verify.records import MAX_RECORD, GroupExit


GRACE = 0.5  # seconds a group's output is still read after it ended (children.GRACE)


def forkserver(opts: dict[str, Any]) -> None:
    """Import torch once, then fork one child per group (each its own process, under its own deadline).

    Every group imports torch first; importing it once and forking (before any CUDA call, which is
    safe) saves each group that import and the contention of many at once. A child's records are
    relayed as they come; when it ends (or is killed at its deadline) one exit line says how.
    If torch itself does not import, nothing is forked and the parent runs each group fresh.
    """
    start = time.monotonic()  # the deadline counts from here: the parent's --timeout bounds the whole run
    bytecode_cache(opts, "forkserver")
    try:
        import torch  # noqa: F401  # lazy: package under test, imported by its own group
    except BaseException:  # noqa: BLE001
        sys.stdout.write("\n" + NOFORK + "\n")
        sys.stdout.flush()
        return
    for g in opts["groups"]:  # each group's module imported here once, not again in every forked child
        group_function(g)
    timeout = float(opts.get("timeout", 120))
    deadline = start + timeout
    sel = selectors.DefaultSelector()
    kids: dict[int, dict[str, Any]] = {}
    for g in opts["groups"]:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: run one group, then leave without the parent's atexit handlers
            rc = 0
            try:
                os.close(out_r)
                os.close(err_r)
                os.dup2(out_w, 1)
                os.dup2(err_w, 2)
                bytecode_cache(opts, g)
                run_group(g, opts)
            except BaseException:  # noqa: BLE001
                traceback.print_exc()
                rc = 1
            finally:
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(rc)
        os.close(out_w)
        os.close(err_w)
        kid = {"group": g, "pid": pid, "t0": time.monotonic(), "buf": b"", "err": b"", "open": 2, "timed_out": False,
               "fds": [out_r, err_r], "skip": False}
        kids[pid] = kid
        sel.register(out_r, selectors.EVENT_READ, (kid, "out"))
        sel.register(err_r, selectors.EVENT_READ, (kid, "err"))
    pending = set(kids)
    while pending:
        now = time.monotonic()
        for pid in list(pending):
            k = kids[pid]
            if not k["timed_out"] and k.get("rc") is None and now > deadline:
                k["timed_out"] = True
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        for key, _ in sel.select(timeout=0.1):
            k, what = key.data
            chunk = os.read(key.fd, 65536)
            if not chunk:
                sel.unregister(key.fd)
                os.close(key.fd)
                k["fds"].remove(key.fd)
                k["open"] -= 1
            elif what == "err":
                k["err"] = (k["err"] + chunk)[-8192:]
            else:
                k["buf"] += chunk
                *lines, k["buf"] = k["buf"].split(b"\n")
                if lines and k["skip"]:  # the end of a line too long to relay
                    lines, k["skip"] = lines[1:], False
                if len(k["buf"]) > MAX_RECORD:  # a child printing without newlines: bounded memory
                    k["buf"], k["skip"] = b"", True
                for line in lines:
                    sys.stdout.write(line.decode("utf-8", "replace") + "\n")
                sys.stdout.flush()
        for pid in list(pending):
            k = kids[pid]
            if k.get("rc") is None:
                done, status = os.waitpid(pid, 0 if k["timed_out"] else os.WNOHANG)
                if done == 0:
                    continue
                k["rc"] = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                k["ended"] = time.monotonic()
            # ended: its output is read until its pipes close, or for GRACE seconds (a daemon it started may
            # hold them open), then they are closed and its exit reported
            if k["open"] and time.monotonic() - k["ended"] < GRACE:
                continue
            for fd in k["fds"]:  # still open: a daemon holds them
                sel.unregister(fd)
                os.close(fd)
            k["fds"], k["open"] = [], 0
            pending.discard(pid)
            ended = GroupExit(group=k["group"], rc=k["rc"], timed_out=k["timed_out"],
                              stderr=k["err"].decode("utf-8", "replace"), seconds=round(k["ended"] - k["t0"], 3))
            sys.stdout.write("\n" + EXIT + ended.to_line() + "\n")
            sys.stdout.flush()


# group -> the module of glmcompat.ops.verify that holds it and its function; the module is imported by the process
# that runs the group (:func:`group_function`), not by every probe process.
GROUPS: dict[str, tuple[str, str]] = {
    "nvml": ("stack", "group_nvml"),
    "static": ("stack", "group_static"),
    "torch": ("kernels", "group_torch"),
    "torchvision": ("kernels", "group_torchvision"),
    "torchaudio": ("kernels", "group_torchaudio"),
    "sgl_kernel": ("kernels", "group_sgl_kernel"),
    "flashinfer": ("kernels", "group_flashinfer"),
    "triton": ("kernels", "group_triton"),
    "transformers": ("stack", "group_transformers"),
    "sglang": ("stack", "group_sglang"),
    "torchao": ("stack", "group_torchao"),
    "vllm": ("kernels", "group_vllm"),
    "gpu": ("stack", "group_gpu"),
    "peer": ("stack", "group_peer"),
    "nccl": ("stack", "group_nccl"),
    "ext": ("stack", "group_ext"),
}


def group_function(group: str) -> Callable[[dict[str, Any]], None]:
    """The function of ``group`` (``ext:<distribution>``: ``ext``'s), its module imported."""
    if group == "forkserver":
        return forkserver
    module, name = GROUPS["ext" if group.startswith("ext:") else group]
    fn: Callable[[dict[str, Any]], None] = getattr(importlib.import_module(f"glmcompat.ops.verify.{module}"), name)
    return fn


def run_group(group: str, opts: dict[str, Any]) -> None:
    """Run ``group``; ``ext:<distribution>``: that distribution's extension modules (its options in ``opts["ext"]``)."""
    if group.startswith("ext:"):
        group_function(group)({**opts, **opts["ext"][group[4:]]})
    else:
        group_function(group)(opts)


def main(argv: list[str]) -> int:
    group, arg = argv[0], argv[1] if len(argv) > 1 else "{}"
    if arg.startswith("@"):  # too long for one argument: the parent wrote it to this file (read once, removed)
        with open(arg[1:]) as f:
            opts = json.load(f)
        os.unlink(arg[1:])
    else:
        opts = json.loads(arg)
    if group != "forkserver":
        bytecode_cache(opts, group)
    run_group(group, opts)
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    # Every result is on stdout already. Leave without the interpreter's teardown, as the forked
    # groups do: with torch imported it takes about 0.3 s, and the parent waits for this exit.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

"""Judging a compiled package from its own bytes (what :mod:`glmcompat.ops.artifacts` read of the artifact the set
installs, handed in ``Context.artifacts``), with no curated row:

* **NumPy C ABI**: an extension built against NumPy 1.x headers imports ``numpy.core._multiarray_umath`` only; next to
  numpy >= 2 its import fails ("numpy.core.multiarray failed to import"; NumPy 2 moved the module to ``numpy._core``).
  One built against NumPy 2 imports ``numpy._core._multiarray_umath`` and falls back to the 1.x name, so it loads on
  both (NumPy's own migration guide: build against 2.x to support 1.x and 2.x).
* **torch ABI**: the torch symbols its extensions need that the set's torch does not export (a strong undefined
  symbol fails the load: ``undefined symbol``).
* **CUDA runtime**: the ``libcudart.so.N`` a torch extension links against the CUDA major of the set's torch.

A build label that names a torch or CUDA (``+cu128torch2.7``) is quoted beside the verdict; the bytes decide. What
could not be read is one warning per environment naming the packages and the command that would read them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from packaging.version import Version

from glmcompat.decide.rules.context import Context, Rule
from glmcompat.model.causes import Break
from glmcompat.model.findings import Finding
from glmcompat.model.names import local_cuda

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.model.artifacts import ArtifactFacts

ID = "artifact"


def on_machine(artifacts: Mapping[tuple[str, ...], ArtifactFacts] | None,
               machine: str) -> dict[tuple[str, str], ArtifactFacts]:
    """The facts of the artifacts read for ``machine`` (keyed (name, version) on x86_64, (name, version, machine)
    elsewhere: :func:`glmcompat.ops.artifacts.key_of`), keyed (name, version) as the rules look them up."""
    return {(k[0], k[1]): a for k, a in (artifacts or {}).items() if (k[2] if len(k) > 2 else "x86_64") == machine}


def _label(ver: str) -> str:
    local = Version(ver).local
    return f" (its build label +{local} says what it was built for; the bytes decide)" if local else ""


def judged_torch(ctx: Context, name: str) -> bool:
    """Whether the bytes of ``name``'s artifact were compared with the set's torch (so no label-based guess is due)."""
    a = ctx.artifacts.get((name, ctx.packages.get(name, "")))
    torch = ctx.packages.get("torch")
    return a is not None and a.read and (torch is None or Version(torch).public in a.torch_missing or a.torch_needs == 0)


# A package that installs one build per CUDA major as ``-cuNN`` distributions and imports the one for the CUDA of the
# torch beside it (nixl 1.3.0 installs nixl-cu12 and nixl-cu13): the other build is installed, not loaded.
def _sibling_for(ctx: Context, name: str, major: str) -> str | None:
    """The distribution of the set built for CUDA ``major`` beside a ``-cuNN`` one: the other is installed, not
    loaded (the comment above names the case)."""
    stem, sep, cu = name.rpartition("-cu")
    other = f"{stem}-cu{major}"
    return other if sep and cu.isdigit() and cu != major and other in ctx.packages else None


def check(ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    torch = ctx.packages.get("torch")
    numpy = ctx.packages.get("numpy")
    unread: list[ArtifactFacts] = []
    partial: list[ArtifactFacts] = []
    for name in sorted(ctx.packages):
        ver = ctx.packages[name]
        a = ctx.artifacts.get((name, ver))
        if a is None:
            continue
        if not a.read:
            unread.append(a)
            continue
        if a.recorded_sha256:
            out.append(Finding(
                rule="artifact", severity="error", packages=(ctx.pin(name),),
                message=f"Because the lock records sha256 {a.recorded_sha256} for {a.artifact} and the file's sha256 is "
                f"{a.sha256}, we can conclude that this is not the artifact the lock was made with",
                evidence=(("observed-run", f"sha256 of {a.artifact}: {a.sha256}"),),
                remedy="restore the wheel the lock names, or re-lock against this one"))
            continue
        if a.unverified:  # "<why>; `<command>` checks it against <sha256>" (ops.artifacts)
            why, _, how = a.unverified.partition("; ")
            out.append(Finding(
                rule="artifact", severity="warning", packages=(ctx.pin(name),),
                message=f"the sha256 the file records for {a.artifact} ({a.sha256[:12]}...) was not checked: {why}",
                evidence=(), remedy=f"run {how.split(' checks it')[0]} and compare it with the recorded {a.sha256}"))
        if a.partial:
            partial.append(a)
        where = f"{a.artifact}" + (f" (sha256 {a.sha256[:12]}...)" if a.sha256 else "")
        if numpy is not None and a.numpy_abi == 1 and Version(numpy).major >= 2:
            out.append(Finding(
                rule="numpy-abi", severity="error", packages=(ctx.pin(name), ctx.pin("numpy")),
                message=f"Because {name} {ver}'s extension {a.numpy_member} imports numpy.core._multiarray_umath, and not "
                f"NumPy 2's numpy._core._multiarray_umath, and numpy {numpy} is in the set, we can conclude that "
                + Break(rule="numpy-abi", package=name, version=ver, against=numpy).sentence()
                + " ('numpy.core.multiarray failed to import')",
                evidence=(("abi-probe", f"{where}: {a.numpy_member} names only NumPy 1.x's C-API module"),),
                remedy=f"use a {name} release built against NumPy 2 (or pin numpy<2)"))
        if torch is not None:
            tpub = Version(torch).public
            missing = a.torch_missing.get(tpub, ())
            if missing:
                shown = a.demangled.get(missing[0], missing[0])
                out.append(Finding(
                    rule="abi", severity="error", packages=(ctx.pin(name), ctx.pin("torch")),
                    message=f"Because {name} {ver} needs {len(missing)} torch symbol(s) that torch {tpub} does not export "
                    f"(e.g. {shown}), we can conclude that "
                    + Break(rule="abi", package=name, version=ver, against=tpub).sentence() + _label(ver),
                    evidence=(("abi-probe", f"`{a.command} --torch {tpub}` on {where}: {len(missing)} of the "
                               f"{a.torch_needs} torch symbols its extensions need are missing ({missing[0]})"),),
                    remedy=f"use a {name} build made against torch {tpub}, or the torch it was built against",
                    probe=f"{a.command} --torch {tpub}" if a.command else ""))
            tcuda = ctx.facts.torch_cuda(torch)
            if tcuda and a.cuda_majors and a.torch_needs and int(tcuda.split(".")[0]) not in a.cuda_majors \
                    and not _sibling_for(ctx, name, tcuda.split(".")[0]):
                # a torch extension runs on torch's CUDA runtime; a package that needs nothing from torch may bring its
                # own (its cuda_majors stay in the facts, for the driver's rule)
                out.append(Finding(
                    rule="artifact", severity="error", packages=(ctx.pin(name), ctx.pin("torch")),
                    message=f"Because {name} {ver} links the CUDA {'/'.join(map(str, a.cuda_majors))} runtime "
                    f"(libcudart.so.{a.cuda_majors[0]}) and torch {torch} is built for CUDA {tcuda}, we can conclude that "
                    f"its extension fails to load beside that torch" + _label(ver),
                    evidence=(("abi-probe", f"{where}: DT_NEEDED libcudart.so.{a.cuda_majors[0]}"),),
                    remedy=f"use the CUDA {tcuda.split('.')[0]} build of {name}"
                    + ("" if local_cuda(ver) is None else " (another build label)")))
    if partial:  # judged on the modules read; the one beyond the wheel's byte budget is named, not passed silently
        out.append(_not_all_read(ctx, partial, f"was checked except one part: {partial[0].partial}",
                                 ", which reads all of it (or `glmcompat verify` where it is installed)"))
    if unread:
        out.append(_not_all_read(ctx, unread, f"was not checked: {unread[0].unread}",
                                 " where the artifact can be read (or `glmcompat verify` on the target GPU)"))
    return out


def _not_all_read(ctx: Context, arts: Sequence[ArtifactFacts], what: str, where: str) -> Finding:
    """The one warning for the packages whose compiled code was not (all) read: ``what`` was left, and the command
    (the first package's) that reads it, ``where`` it can run."""
    first = arts[0]
    return Finding(rule="artifact", severity="warning", packages=tuple(ctx.pin(a.name) for a in arts[:4]),
                   message=f"the compiled code of {_listed(arts)} {what}", evidence=(),
                   remedy=f"run `{first.command}{_with_torch(ctx.packages.get('torch'), first)}`{where}")


def _listed(arts: Sequence[ArtifactFacts]) -> str:
    """``a 1.0, b 2.0, c 3.0, d 4.0 and 2 more``: the first four packages named, the rest counted."""
    return ", ".join(f"{a.name} {a.version}" for a in arts[:4]) + (f" and {len(arts) - 4} more" if len(arts) > 4 else "")


def _with_torch(torch: str | None, a: ArtifactFacts) -> str:
    """The ``--torch`` an ``abi`` command of an artifact takes: the set's torch."""
    return f" --torch {Version(torch).public}" if torch and a.command.startswith("glmcompat abi") else ""


RULE = Rule(id=ID, ids=(ID, "numpy-abi", "abi"), family="artifacts", check=check, reads=("torch",),
            evidence=("abi-probe", "observed-run"), remedy="replace",
            doc="a compiled package judged from its own bytes: NumPy C ABI, torch symbols, CUDA runtime, sha256",
            names=('torch',))

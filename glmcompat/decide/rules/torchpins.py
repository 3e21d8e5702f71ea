"""torch's own pins: each torch release's METADATA pins the triton and the NVIDIA libraries (cuDNN, NCCL, cuBLAS, the
CUDA runtime ...) it was built and tested with, exactly (``torch 2.9.1``: ``triton==3.5.1``,
``nvidia-cudnn-cu12==9.10.2.21``, ``nvidia-nccl-cu12==2.27.5``). Another version of one of them beside that torch is
what no installer produces without an override or ``--no-deps``, and what torch was not built for: an error naming both
versions, unless the lock overrides that package on purpose (uv ``override-dependencies``: a warning that names the
override, as for an engine's pins). The pins are the ``[[release]]`` rows of ``glmcompat/matrix/data/torch-releases.toml``
(``scripts/record_torch_pins.py`` reads them from the default Linux x86_64 wheels), so they hold for that wheel: a
``+cuXYZ`` build other than the default's own CUDA pins its own NVIDIA libraries and is not judged here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from glmcompat.decide.rules.context import Context, Rule
from glmcompat.model.findings import Finding
from glmcompat.model.names import canonicalize

if TYPE_CHECKING:  # pragma: no cover
    from glmcompat.matrix.view import Facts

ID = "torch-pins"


def _default_build(ctx: Context, torch: str) -> bool:
    """Whether ``torch`` is the build whose METADATA the rows record: the default wheel (no label, or the label of
    the default wheel's own CUDA: ``2.9.1+cu128``)."""
    local = Version(torch).local
    if local is None:
        return True
    row = ctx.facts.torch_build(Version(torch).public)
    return row is not None and bool(row.cuda) and local == "cu" + (row.cuda or "").replace(".", "")


def pinned_by(facts: Facts, torch: str) -> frozenset[str]:
    """The packages whose version ``torch``'s default wheel pins exactly (its [[release]] row's requires)."""
    return frozenset(exact_pins(facts, torch))


def exact_pins(facts: Facts, torch: str) -> dict[str, str]:
    """name -> version for each package ``torch``'s default wheel pins exactly (its [[release]] row's requires)."""
    pub = Version(Version(torch).public)
    out: dict[str, str] = {}
    for row in facts.rows("release"):
        if row.package != "torch" or Version(row.version) != pub:
            continue
        for text in row.requires:
            try:
                req = Requirement(text)
            except InvalidRequirement:  # pragma: no cover - validated when the matrix loads
                continue
            specs = list(req.specifier)
            if len(specs) == 1 and specs[0].operator == "==" and "*" not in specs[0].version:
                out[canonicalize(req.name)] = specs[0].version
    return out


def check(ctx: Context) -> list[Finding]:
    torch = ctx.packages.get("torch")
    if torch is None or ctx.machine != "x86_64" or ctx.built_from_source("torch") or not _default_build(ctx, torch):
        return []
    pub = Version(Version(torch).public)
    out: list[Finding] = []
    for row in ctx.facts.rows("release"):
        if row.package != "torch" or Version(row.version) != pub:
            continue
        for text in row.requires:
            try:
                req = Requirement(text)
                want = next(iter(req.specifier)).version
            except (InvalidRequirement, StopIteration):  # pragma: no cover - validated when the matrix loads
                continue
            dep = canonicalize(req.name)
            have = ctx.packages.get(dep)
            if have is None or ctx.built_from_source(dep):
                continue
            try:
                if Version(Version(have).public) == Version(want):
                    continue
            except InvalidVersion:  # pragma: no cover - versions are parsed when the file is read
                continue
            ev = ((row.evidence, row.source),)
            if dep in ctx.overrides:  # a deliberate departure (uv override-dependencies): said, not failed
                out.append(Finding(
                    rule="torch-pins", severity="warning", packages=(ctx.pin("torch"), ctx.pin(dep)),
                    message=f"torch {torch} pins {dep}=={want} (its METADATA), and the lock overrides it with "
                    f"{dep}{ctx.overrides[dep] or ' (any version)'}: {dep} {have} is not the one torch {pub} was built "
                    "and tested with", evidence=ev,
                    remedy=f"keep the override only if torch {pub} is proven to run with {dep} {have} (`glmcompat verify`)"))
                continue
            out.append(Finding(
                rule="torch-pins", severity="error", packages=(ctx.pin("torch"), ctx.pin(dep)),
                message=f"Because torch {torch} pins {dep}=={want} (its METADATA) and {dep} {have} is in the set, "
                f"we can conclude that this {dep} is not the one torch {pub} was built and tested with",
                evidence=ev, remedy=f"pin {dep}=={want} (or drop the {dep} pin and let torch's own pin choose it)"))
    return out


RULE = Rule(id=ID, family="torchpins", check=check, reads=("release", "torch"), evidence=("metadata",), remedy="pin",
            doc="torch's own exact pins (triton, the nvidia-* libraries) that the set departs from",
            names=('nvidia-nccl-cu12', 'torch'))


# Lock formats whose resolver records the packages of the platform the lock was made on only: pipenv resolves for
# the running machine, so a Pipfile.lock made on macOS has none of torch's Linux-only requirements. (uv, poetry, pdm
# and pylock resolve for every platform and keep markers: a pin missing there was removed on purpose.)
SINGLE_PLATFORM_LOCKS = frozenset({"Pipfile.lock"})


def missing_from_lock(packages: dict[str, str], facts: Facts, sources: dict[str, str],
                      overrides: dict[str, str]) -> list[Finding]:
    """torch's pinned NVIDIA libraries a lock of :data:`SINGLE_PLATFORM_LOCKS` leaves out. The lock is installed as it
    stands (pipenv installs it without resolving again), so a torch default wheel locked without the
    ``nvidia-*`` packages its METADATA pins on Linux x86_64 has no cuBLAS, cuDNN, NCCL to load: ``import torch`` fails
    (a lock made on another OS, whose resolver dropped the Linux-only requirements). Only for a lock, on x86_64
    (where the rows' pins hold), for the default wheel (no local label); a package the lock overrides is a deliberate
    departure."""
    # e.g. a Pipfile.lock made on macOS: torch 2.2.1 and no nvidia-cudnn-cu12 / nvidia-cublas-cu12 at all
    torch = packages.get("torch")
    if torch is None or sources.get("torch") is not None:
        return []
    if Version(torch).local is not None:
        return []  # a variant build (PyTorch's own index): its own Requires-Dist, not the default wheel's rows
    missing = {n: v for n, v in exact_pins(facts, torch).items()
               if n.startswith("nvidia-") and n not in packages and n not in overrides}
    if not missing:
        return []
    rel = next((r for r in facts.rows("release") if r.package == "torch"
                and Version(r.version) == Version(Version(torch).public)), None)
    names = sorted(missing)
    shown = ", ".join(f"{n}=={missing[n]}" for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return [Finding(
        rule="torch-pins", severity="error", packages=(("torch", torch),),
        message=(f"Because torch {torch} pins {shown} (its METADATA, on Linux x86_64) and the lock installs none of "
                 f"{'them' if len(names) > 1 else 'it'}, we can conclude that torch installed from this lock cannot load "
                 "its CUDA libraries (`import torch` fails): the lock was resolved without torch's Linux requirements"),
        evidence=((rel.evidence, rel.source),) if rel is not None else (),
        remedy="lock again on (or for) Linux x86_64 so that torch's nvidia-* requirements are in the lock")]

"""What one ``glmcompat verify`` run is asked to do: :class:`Options`, built once at the command's edge
(:mod:`glmcompat.cli.commands.verify`) and read by the run (:mod:`.core`) and the report (:mod:`.assemble`)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Options:
    """The flags of one run (``verify --help`` says what each does)."""

    target: str = "auto"
    model: str | None = None
    timeout: float = 120.0
    all_gpus: bool = False
    distributed: bool = False
    no_gpu: bool = False
    jit: bool = False
    paths: list[str] = field(default_factory=list)
    fork: bool = True  # import torch once and fork the torch groups from it (see gpuchecks.forkserver)


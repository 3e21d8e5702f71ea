"""What one command locks or judges for, resolved once at its edge: the :class:`LockPlan`.

A command's flags, ``GLMCOMPAT_*`` and ``[tool.glmcompat]`` name targets, a platform and a model as the user wrote them
(``sm_120``, ``RTX 5090``, ``arm64``); :func:`plan` looks each name up once -- a target becomes its matrix row, the
platform the Linux machine the lock is for (checked against every target) -- and everything below takes the value and
looks no name up again. Pure: the matrix comes in as :class:`Facts`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glmcompat.decide.stacks import lock_platform
from glmcompat.matrix.rows import Target
from glmcompat.matrix.view import Facts
from glmcompat.model.machine import Machine


@dataclass(frozen=True, slots=True)
class LockPlan:
    """The targets (their ``[[target]]`` rows, in the order asked, each once), the Linux machine the lock is for
    (``x86_64``, ``aarch64``; ``chosen``: named by ``--platform`` or ``[tool.glmcompat]``, not the targets' default),
    the model type (a ``[[model]]`` row's name, or None) and the machine judged (its driver and glibc; None: not
    judged)."""

    targets: tuple[Target, ...]
    platform: str
    model: str | None = None
    machine: Machine | None = None
    chosen: bool = False

    def __hash__(self) -> int:  # the rows hold dicts: a plan is known by its names
        return hash((tuple(self.names), self.platform, self.model, self.chosen))

    @property
    def target(self) -> Target:
        """The first target: the one a stack lock is for, and whose platforms decide the default machine."""
        return self.targets[0]

    @property
    def names(self) -> list[str]:
        """The targets' canonical names (``sm120``)."""
        return [t.name for t in self.targets]


class Planned:
    """A command's request that carries its :class:`LockPlan` as ``plan``: the plan's values, read through."""

    plan: LockPlan

    @property
    def targets(self) -> tuple[Target, ...]:
        return self.plan.targets

    @property
    def target(self) -> Target:
        return self.plan.target

    @property
    def platform(self) -> str:
        return self.plan.platform

    @property
    def model(self) -> str | None:
        return self.plan.model

    @property
    def machine(self) -> Machine | None:
        return self.plan.machine


def plan(facts: Facts, targets: Sequence[str], platform: str | None = None, model: str | None = None,
         machine: Machine | None = None) -> LockPlan:
    """The plan for ``targets`` (names as the user wrote them, at least one) on ``platform`` (None: the first target's
    default, :func:`lock_platform`) for ``model``: an unknown target or model, or a platform some target never ships
    on, is an :class:`~glmcompat.model.errors.InputError` (one line, exit 2)."""
    found: dict[str, Target] = {}
    for t in targets:
        row = facts.target(t)
        found.setdefault(row.name, row)
    rows = tuple(found.values())
    if model is not None:
        facts.model(model)  # unknown model: InputError before anything runs
    chosen = lock_platform(rows[0], platform)
    for other in rows[1:]:
        lock_platform(other, chosen)  # a target that never ships on that machine: one line, exit 2
    return LockPlan(rows, chosen, model, machine, platform is not None)


__all__ = ["LockPlan", "Planned", "plan"]

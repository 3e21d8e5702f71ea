"""The edge of the commands on a curated stack (``lock --stack``, ``upgrade``): the options they share, and their
:class:`~glmcompat.decide.plan.LockPlan`, built once from the flags, ``GLMCOMPAT_*`` and ``[tool.glmcompat]``."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from glmcompat.cli.commands import DEFAULT_STACK
from glmcompat.cli.commands._common import add_index_options, add_output_options, apply_settings, project_file
from glmcompat.model.errors import InputError, NoTarget

if TYPE_CHECKING:  # pragma: no cover
    import argparse

    from glmcompat.decide.plan import LockPlan
    from glmcompat.matrix.rows import Stack
    from glmcompat.matrix.view import Facts


def add_stack_tail(p: argparse.ArgumentParser) -> None:
    """The options both commands end with: ``--matrix``, the index's and the output's."""
    p.add_argument("--matrix", action="append", metavar="PATH", help="matrix file or directory (repeatable)")
    add_index_options(p)
    add_output_options(p)


def stack_plan(args: Any, command: str) -> tuple[Facts, Stack, LockPlan]:
    """(facts, the stack row, the plan: its one target, platform and model) from the options, then
    ``[tool.glmcompat]``; no target anywhere, several, unknown names, an unknown engine, an engine other than the
    stack's, an unknown platform and one the target never ships on are InputErrors (exit 2). Without --stack,
    --engine picks the stack; without --model, the stack's first model is the plan's. Sets ``args.stack``."""
    from glmcompat.decide.plan import plan  # lazy: keeps `--help` light
    from glmcompat.decide.stacks import check_engine, choose_stack  # lazy: keeps `--help` light
    from glmcompat.matrix.load import load_facts  # lazy: keeps `--help` light

    apply_settings(args, command)
    if not args.target:
        raise NoTarget(project_file())  # its [tool.glmcompat] names none
    targets = args.target if isinstance(args.target, list) else [args.target]
    if len(targets) > 1:
        raise InputError(f"a stack is locked for one target at a time (got {', '.join(targets)}); "
                         "run `glmcompat lock --stack ... --target T` once per target")
    check_engine(args.engine)
    facts = load_facts(args.matrix)
    p = plan(facts, targets, getattr(args, "platform", None))
    if args.model:
        facts.model(args.model)
    stack = facts.stack(choose_stack(facts, args.stack, args.engine, p.target, args.model, DEFAULT_STACK))
    model = args.model or (stack.models[0] if stack.models else None)
    if model:
        facts.model(model)
    args.stack = stack.name
    return facts, stack, replace(p, model=model)

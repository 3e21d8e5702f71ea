"""Which stack a command works on, for which engine and platform (on the warm path: no resolvelib here)."""

from __future__ import annotations

from packaging.version import Version

from glmcompat.matrix.rows import Stack, Target
from glmcompat.matrix.view import Facts
from glmcompat.model.errors import InputError
from glmcompat.model.platforms import check_platform, products_on, target_platforms

ENGINES = ("sglang", "vllm")
# The coupled core: the packages the resolver chooses together (the engines, torch and its family, the kernels,
# flashinfer, transformers, xformers); everything else is uv's.
CORE = ("torch", "torchvision", "torchaudio", "sgl-kernel", "sglang-kernel", "flashinfer-python",
        "flashinfer-cubin", "transformers", "sglang", "vllm", "xformers")  # a stack's ``engine``: the package its set is built around (the resolution's root)


def stack_engine(stack: Stack) -> str:
    """The engine a stack row names (rows from before the field: sglang, the field's default)."""
    return stack.engine


def check_engine(engine: str | None) -> str | None:
    """``engine`` if it names a known engine (None passes); InputError listing the known ones otherwise."""
    if engine is not None and engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    return engine


def choose_stack(facts: Facts, stack: str | None, engine: str | None, target: Target, model: str | None,
                 default: str) -> str:
    """The stack a command works on: ``stack`` (whose engine must be ``engine`` when both are given), else
    for sglang (or no engine) ``default``, else the newest stack of ``engine`` that serves the target and
    the model (failing that, the newest that serves the model, then the newest of the engine)."""
    check_engine(engine)
    if stack is not None:
        row = facts.stack(stack)
        if engine is not None and stack_engine(row) != engine:
            raise InputError(f"--engine {engine} does not match stack {row.name!r}, a {stack_engine(row)} stack "
                             f"(drop --engine, or name a {engine} stack)")
        return row.name
    if engine is None or engine == stack_engine(facts.stack(default)):
        return default
    rows = [s for s in facts.rows("stack") if stack_engine(s) == engine]
    if not rows:
        raise InputError(f"the matrix names no {engine} stack (known stacks: {', '.join(s.name for s in facts.rows('stack'))})")
    tname = target.name

    def newest(cands: list[Stack]) -> Stack:
        return max(cands, key=lambda s: Version(s.pins.get(engine, "0")))

    for pick in ([s for s in rows if tname in s.targets and (model is None or model in s.models)],
                 [s for s in rows if model is None or model in s.models], rows):
        if pick:
            return newest(pick).name
    raise AssertionError("unreachable")  # pragma: no cover


def lock_platform(trow: Target, platform: str | None) -> str:
    """The platform a lock for the target ``trow`` (its ``[[target]]`` row) is made for: ``platform`` when given (a
    known platform the target ships on; else InputError, one line), else the target's only one (sm121: aarch64), else
    x86_64 (sm90, sm100, sm103: H100/B200/B300 hosts; ``--platform aarch64`` gives the Grace ones)."""
    ships = target_platforms(trow)
    if platform is None:
        return default_platform(trow)
    p = check_platform(platform)
    if p not in ships:
        where = "; ".join(f"{', '.join(products_on(trow, q))} on {q}" for q in ships)
        other = " or ".join(f"--platform {q}" for q in ships)
        raise InputError(f"target {trow.name} never ships on {p} ({where}): no {trow.name} machine installs an "
                         f"{p} lock; pass {other} (or leave --platform out)")
    return p


def default_platform(trow: Target) -> str:
    """The platform a lock for the target ``trow`` is made for when none is named: its only one, else x86_64."""
    ships = target_platforms(trow)
    return "x86_64" if "x86_64" in ships else ships[0]

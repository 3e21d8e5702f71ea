"""A command line's value options read without argparse, for what runs before the parser: the start-up paths of
``check`` and ``lock`` (:func:`glmcompat.cli.startup.parse_options`) and the speculative ``uv lock``
(:func:`glmcompat.ops.speculate.predicted_out`). Standard library only, nothing imported."""

from __future__ import annotations


def scan_options(argv: list[str], values: set[str]) -> tuple[dict[str, list[str]], list[str]] | None:
    """``argv`` as ``{option: [value, ...]}`` for the options ``values`` (each followed by its value), and the other
    arguments in their order (flags and positional arguments alike); None where a value option ends ``argv``
    without its value."""
    opts: dict[str, list[str]] = {}
    rest: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in values:
            if i + 1 >= len(argv):
                return None
            opts.setdefault(a, []).append(argv[i + 1])
            i += 2
        else:
            rest.append(a)
            i += 1
    return opts, rest


__all__ = ["scan_options"]

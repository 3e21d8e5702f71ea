"""Helpers shared by the command modules (argparse with exit 2 and one-line errors)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, NoReturn


class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors in one line and exits 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {message}\n")


def parser(prog: str, description: str) -> Parser:
    return Parser(prog=f"glmcompat {prog}", description=description)


DEFAULT_STACK = "glm5-sglang-0.5.9"


def add_core_options(p: Parser, with_example: str) -> None:
    """The options `lock` and `upgrade` share: which stack, engine, target, machine and model, and extra
    core requirements."""
    p.add_argument("--stack", metavar="NAME",
                   help=f"named stack (default {DEFAULT_STACK}; with --engine vllm the newest vLLM stack for the target and model)")
    p.add_argument("--engine", metavar="E", help="serving engine: sglang or vllm (default: the stack's; sglang without --stack)")
    p.add_argument("--target", required=True, metavar="T", help="GPU target, e.g. sm120")
    p.add_argument("--platform", metavar="P",
                   help="the machine: x86_64 or aarch64 (default: the target's only one, else x86_64; "
                        "GH200/GB200/GB300 hosts are aarch64)")
    p.add_argument("--model", metavar="M", help="HF model_type to serve (default: the stack's first model)")
    p.add_argument("--with", dest="with_", action="append", default=[], metavar="REQ",
                   help=f"extra core requirement, e.g. {with_example} (repeatable)")


def dump_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=True) + "\n")

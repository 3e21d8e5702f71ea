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


def dump_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=True) + "\n")

"""A torch API (or a flash-attn 2 function) newer or older than the release in use, met in a companion's own frame:
companion-too-old names torch (or flash-attn), the installed release where the log shows it, and the first (or last)
release with the name, from glmcompat/matrix/data/torch-api.toml and flash-attn-api.toml (harvested from the real torch
wheels and flash-attn's tags by scripts/harvest_torch_api.py and scripts/harvest_flash_attn_api.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.matrix.load import load_facts
from tests.decide.explaining import message_id, read_as_tabled, table

MESSAGES = table("torchapi-signatures.toml")


@pytest.mark.parametrize("m", MESSAGES, ids=[message_id(m, 70) for m in MESSAGES])
def test_each_torch_api_message(m: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """tests/fixtures/raise_sites/torchapi-signatures.toml: each message is named with its floor (or bound), and the near
    misses (the installed release has the name, a typo, a user's own module or name) are not claimed."""
    read_as_tabled(m, tmp_path, capsys)


@pytest.mark.parametrize(("module", "name", "since", "until"), [
    ("torch.utils._pytree", "register_pytree_node", "2.2.0", None),
    ("torch.utils._pytree", "_register_pytree_node", "1.8.0", None),
    ("torch.compiler", "is_compiling", "2.3.0", None),
    ("torch.library", "custom_op", "2.4.0", None),
    ("torch.nn", "attention", "2.3.0", None),
    ("torch", "float8_e4m3fn", "2.1.0", None),
    ("torch.export", "export_for_training", "2.5.0", "2.11.0"),
    ("flash_attn", "flash_attn_varlen_func", "2.0.0", None),
    ("flash_attn.flash_attn_interface", "flash_attn_unpadded_func", "1.0.0", "2.0.0"),
])
def test_the_harvested_releases(module: str, name: str, since: str, until: str | None) -> None:
    row = load_facts().export(module, name)
    assert row is not None and (row.since, row.until) == (since, until), row
    assert "scripts/harvest_" in row.source


def test_the_harvest_reads_module_level_bindings() -> None:
    """A name bound at module level (also under if/try) or listed in __all__ counts; one bound inside a function
    does not."""
    import importlib.util  # lazy: the harvester is a script, loaded only here

    path = Path(__file__).resolve().parents[2] / "scripts" / "harvest_torch_api.py"
    spec = importlib.util.spec_from_file_location("harvest_torch_api", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    source = (b"__all__ = ['listed']\ntry:\n    from x import a as guarded\nexcept ImportError:\n    pass\n"
              b"def register_pytree_node():\n    inner = 1\nif True:\n    X: int = 1\n")
    assert module.bound(source) == {"__all__", "listed", "guarded", "register_pytree_node", "X"}

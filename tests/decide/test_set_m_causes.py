"""``glmcompat explain`` on the exact text each family of set M raises (quoted from the raise site its [[signature]] row
cites), its other phrasings, and the lines that share its words but must stay unclaimed. The real logs are cases of
tests/fixtures/explain/heldout_m.toml (tinygrad/open-gpu-kernel-modules#47, ...)."""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.cli import main


def _explain(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    log = tmp_path / "x.log"
    log.write_text(text + "\n", encoding="utf-8")
    code = main(["explain", "--color", "never", str(log)])
    out = capsys.readouterr().out
    return code, "\n".join(line for line in out.splitlines() if not line.lstrip().startswith("matched:"))


@pytest.mark.parametrize(("text", "words", "absent"), [
    # nvidia-smi: "Failed to initialize NVML: Driver/library version mismatch" (NVML_ERROR_LIB_RM_VERSION_MISMATCH),
    # then the user-space NVML's release: the diagnosis names it
    ("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.183", ["535.183", "reboot"], []),
    # the kernel's NVRM line names the client's (user-space) release
    ("NVRM: API mismatch: the client has the version 550.54.14, but", ["550.54.14", "reboot"], []),
    # the bare line: no release known, the generic cause
    ("Failed to initialize NVML: Driver/library version mismatch", ["reboot"], ["driver 5"]),
])
def test_driver_library_mismatch_names_the_user_space_release(text: str, words: list[str], absent: list[str],
                                                               tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _explain(text, tmp_path, capsys)
    assert code == 1 and ": driver-library-mismatch" in out, out
    assert not [w for w in words if w not in out] and not [w for w in absent if w in out], out


def test_nvml_version_line_alone_stays_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # nvidia-smi -q's header on a healthy machine shares the words
    code, out = _explain("Driver Version                            : 570.124.06\nNVML library version: 570.124", tmp_path, capsys)
    assert code == 0, out

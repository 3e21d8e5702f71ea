"""``glmcompat explain`` reads a log as users paste it (glmcompat/decide/pasted.py): the real logs of
tests/fixtures/explain/logs/ (their prefixes, quote markers, boxes, notebook tracebacks, wraps), real pip 25.3 and uv
0.13.9 output recorded on a terminal (tests/fixtures/explain/pasted/: ANSI codes, carriage returns, CRLF, backspace
spinners, box drawing, uv's wrap at 72 columns), and real logs wrapped by coreutils' fold as a terminal (hard wrap) or
a page (soft wrap at spaces) wraps them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from glmcompat.cli import main
from glmcompat.decide.pasted import clean, pasted, screen_rows, width_of
from glmcompat.model.signatures import numbered_lines
from tests.conftest import toml_file
from tests.decide.explaining import said
from tests.decide.test_real_logs import unmeasured_files

FIXTURES = Path(__file__).parent.parent / "fixtures" / "explain"
LOGS = FIXTURES / "logs"
RECORDED = FIXTURES / "pasted"


def _line(log: str, n: int) -> str:
    """Line ``n`` of a fixture log, as the reader gives it."""
    with (LOGS / log).open("rb") as f:
        return dict(numbered_lines(f))[n]


def _read(path: Path) -> list[tuple[int, str]]:
    with path.open("rb") as f:
        return list(pasted(numbered_lines(f)))


# (log, line, what the library printed: the cleaned line starts with it), each a form the survey of the logs found
FORMS = [
    ("coreweave-64-triton.log", 3, "ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler'"),  # [rank7]:
    ("kaito-2086-cudart13.log", 1, "    from vllm.model_executor.layers.fused_moe"),  # (EngineCore pid=) + vLLM logger
    ("open-instruct-620-timeout.log", 1, '  File "/home/ubuntu/anaconda3/envs/ai2/lib/python3.10/site-packages/urllib3'),
    ("tgi-1640-cuda-not-available.log", 1, "Could not import Flash Attention enabled models: CUDA is not available"),
    ("acestep-91-torchao.log", 1, "[20m 58s] Step 1020"),  # loguru
    ("q-lmdeploy-1220-gemma-transformers.log", 1, "ValueError: The checkpoint you are trying to load has model type"),
    ("ragged-56-numpy2-dtypes.log", 1, "AttributeError: module 'numpy' has no attribute '_dtypes'"),  # pytest's E
    ("numpy-26191-numpy-2rc1-abi.log", 3,  # Jupyter's frame header, as CPython prints it
     '  File "~/anaconda3/envs/dev312/lib/python3.12/site-packages/numpy/core/_multiarray_umath.py", line 44, in '),
    ("pytorch-119932-nccl.log", 3, "    import torch"),  # Jupyter's arrow
    ("chattts-595-nvcc.log", 8, "  python setup.py egg_info did not run successfully."),  # pip's box
    ("dflash-93-torch-index-tls.log", 3, "  Failed to download and build `vllm @ git+"),  # uv's box
    ("cuda-python-23-function-not-found.log", 5, "Driver 455 is associated with CUDA Toolkit 11.1"),  # a quote
    ("sglang-19408-keyerror.log", 1, "Traceback (most recent call last):"),  # [timestamp] ERROR:
    ("sd-nix-9-sm120.log", 2, "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible"),  # journald
    ("vlm-rl-12-oom.log", 1, "torch.cuda.OutOfMemoryError: CUDA out of memory."),  # &gt;
    ("huridocs-127-detectron2-isolation.log", 12, "  Getting requirements to build editable did not run"),  # docker, ×
    ("comfyui-7106-attrs-descriptor.log", 14, "!!! Exception during processing !!! cannot import name 'AttrsDescriptor'"),
    ("q-sglang-6160-flashinfer-min-version.log", 1, "flashinfer_python with minimum required version 0.2.5"),  # [Bug]
]


@pytest.mark.parametrize(("log", "n", "text"), FORMS, ids=[f"{log}:{n}" for log, n, _ in FORMS])
def test_each_form_in_the_logs_reads_as_the_library_printed_it(log: str, n: int, text: str) -> None:
    raw = _line(log, n)
    got = clean(raw)
    assert got.startswith(text) and got != raw, (raw, got)


def test_a_version_operator_at_the_start_of_a_line_is_no_quote_marker() -> None:
    # a message broken before its ">= 2.1.0" keeps the operator; a GitHub quote's "> " is still taken off
    assert clean(">= 2.1.0") == ">= 2.1.0"
    assert clean("> > ImportError: x") == "ImportError: x"
    assert clean(">>> import torch") == ">>> import torch"


def test_html_escapes_are_read_as_the_characters() -> None:
    got = clean(_line("vlm-rl-12-oom.log", 1))
    assert "If reserved memory is >> allocated memory" in got and "&gt;" not in got


def test_the_box_of_the_docker_step_keeps_pips_own_words() -> None:
    # docker's step time, then pip's box: pip's words at pip's indentation
    assert clean(_line("huridocs-127-detectron2-isolation.log", 12)) == ("  Getting requirements to build editable did "
                                                                          "not run successfully.")
    assert clean(_line("huridocs-127-detectron2-isolation.log", 13)) == "  exit code: 1"


def test_a_message_the_user_wrapped_is_joined_and_keeps_its_first_line_number() -> None:
    # sd-easy-mode-18: torchvision's CUDA check, wrapped where the user's terminal ended the line
    lines = dict(_read(LOGS / "sd-easy-mode-18-torchvision-cuda.log"))
    assert list(lines) == [1], lines
    assert "were compiled with different CUDA versions. PyTorch has CUDA Version=11.7 and torchvision has CUDA " \
           "Version=11.8. Please reinstall the torchvision that matches your PyTorch install." in lines[1], lines
    # kohya-1096: rich's log handler wraps its message at the message's column
    lines = dict(_read(LOGS / "kohya-1096-cudnn.log"))
    assert "One option to resolving this error" in lines[4], lines[4]


def test_table_rows_and_commands_are_never_joined() -> None:
    rows = _read(LOGS / "torchdata-315-conda-cpuonly.log")
    with (LOGS / "torchdata-315-conda-cpuonly.log").open("rb") as f:
        assert len(rows) == len(list(numbered_lines(f)))
    assert not width_of([raw for _, raw in numbered_lines((LOGS / "torchdata-315-conda-cpuonly.log").open("rb"))])
    # records of one kind at one length (ptxas' errors), a message's own short lines (torch's driver message): no wrap
    for log in ("chameleon-39-bf16-ptxas.log", "graphwriter-6-driver-too-old.log"):
        with (LOGS / log).open("rb") as f:
            assert not width_of([raw for _, raw in numbered_lines(f)]), log
    lines = dict(_read(LOGS / "cortex-release-1-cudart9.log"))
    assert lines[2].startswith("./bin/miner: error while loading shared libraries: libcudart.so.9.0"), lines


def _explain(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["explain", "--color", "never", str(path)])
    return code, said(capsys.readouterr().out)


# real pip and uv runs (pip 25.3, uv 0.13.9, in a fresh venv without torch: `pip install --no-cache-dir flash-attn==2.5.8`,
# `uv pip install --no-cache flash-attn==2.5.8`), the -tty ones under `script` at 72 columns (colours, CRLF, spinners)
RUNS = [
    ("pip-25.3-flash-attn-2.5.8.log", "pip"), ("pip-25.3-tty-flash-attn-2.5.8.log", "pip"),
    ("uv-0.13.9-flash-attn-2.5.8.log", "uv"), ("uv-0.13.9-tty-flash-attn-2.5.8.log", "uv"),
]


@pytest.mark.parametrize(("log", "tool"), RUNS, ids=[r[0] for r in RUNS])
def test_a_real_build_failure_names_the_package_being_built(log: str, tool: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _explain(RECORDED / log, capsys)
    assert code == 1 and ": build-isolation-no-torch" in out and ": source-build-failed" in out, out
    assert f"{tool} built flash-attn 2.5.8 from source" in out, out
    assert "install torch first" in out or "uv pip install torch" in out or "--no-build-isolation" in out, out


def test_the_terminal_recording_reads_as_the_plain_one() -> None:
    """The -tty recording (ANSI, CR, backspaces, boxes) gives the lines of the plain one, where both print them."""
    tty = [t for _, t in _read(RECORDED / "pip-25.3-tty-flash-attn-2.5.8.log")]
    plain = [t for _, t in _read(RECORDED / "pip-25.3-flash-attn-2.5.8.log")]
    for want in ("  Getting requirements to build wheel ... error", "  error: subprocess-exited-with-error",
                 "  Getting requirements to build wheel did not run successfully.",
                 "      ModuleNotFoundError: No module named 'torch'",
                 "ERROR: Failed to build 'flash-attn' when getting requirements to build wheel"):
        assert any(t.rstrip() == want.rstrip() for t in tty), (want, tty)
    assert "ERROR: Failed to build 'flash-attn' when getting requirements to build wheel" in plain
    frames = [t for _, t in _read(RECORDED / "uv-0.13.9-tty-flash-attn-2.5.8.log") if "build_meta.py" in t]
    assert frames and all(t.lstrip().startswith('File "/tmp/') and ", line " in t for t in frames), frames


# ---- real logs wrapped by a real tool: coreutils' fold, as a terminal (-w) or a page (-s, at spaces) wraps them ----
def _cases(*names: str) -> list[dict[str, object]]:
    return [c for n in names for c in toml_file(FIXTURES / n)["case"] if "known_miss" not in c]


FOLDED = [c for c in _cases("heldout_q.toml", "heldout_p.toml", "heldout_o.toml")
          if c.get("found", True) is not False]
# a log fold leaves whole (its lines fit) says nothing; these ones are wrapped where no reader can tell the wrap from
# two lines (the width is not shared by two lines, and the cut falls between two words of a sentence that could stand
# alone): their diagnosis is not claimed here
UNREAD = {
    ("fold -s -w 80", "mamba-465-causal-conv1d-warning-symbol.log"),
    ("fold -w 80", "onnxruntime-21684-cublaslt11.log"), ("fold -w 80", "reactor-503-ort-cublaslt11.log"),
    # quoted ("> > > ") before fold cut it: the cut line's rest lacks the quote marks, which a quote of a wrapped
    # terminal line always repeats
    ("fold -w 80", "q-opencv2tut-35-numpy-api-9.log"),
}
FOLDS = ("fold -w 80", "fold -s -w 80")


_SEPARATOR = b"-- glmcompat test: the next log --"  # a line between two logs folded in one run (shorter than any width)


def _folds(cmd: str, raws: list[bytes]) -> list[bytes]:
    """Each of ``raws`` as fold ``cmd`` prints it, all folded by one run of fold (hundreds of processes otherwise): fold
    wraps each line on its own (its column starts again at each newline), so the logs are given one after the other,
    each ending in a newline (taken off again where it did not) and followed by a separator line, which fold leaves as
    it is and the output is cut at."""
    given = b"".join(raw + (b"" if raw.endswith(b"\n") else b"\n") + _SEPARATOR + b"\n" for raw in raws)
    out = subprocess.run(cmd.split(), input=given, capture_output=True, check=True).stdout
    pieces = out.split(_SEPARATOR + b"\n")
    assert len(pieces) == len(raws) + 1 and pieces[-1] == b"", "fold changed a separator line"
    return [p if raw.endswith(b"\n") else p[:-1] for p, raw in zip(pieces, raws, strict=False)]


needs_fold = pytest.mark.skipif(shutil.which("fold") is None, reason="coreutils' fold is not installed")


@needs_fold
@pytest.mark.parametrize("cmd", FOLDS)
def test_real_logs_wrapped_by_a_terminal_or_a_page_keep_their_diagnosis(cmd: str, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    lost = []
    raws = [(LOGS / str(case["log"])).read_bytes() for case in FOLDED]
    for case, raw, folded in zip(FOLDED, raws, _folds(cmd, raws), strict=True):
        if folded == raw or (cmd, case["log"]) in UNREAD:
            continue
        log = tmp_path / str(case["log"])
        log.write_bytes(folded)
        code, out = _explain(log, capsys)
        if not (code == 1 and f": {case['id']}" in out and all(w in out for w in case["expect"])):  # type: ignore[union-attr]
            lost.append(str(case["log"]))
    assert not lost, lost


@needs_fold
@pytest.mark.parametrize("cmd", FOLDS + ("fold -w 120", "fold -s -w 60"))
def test_out_of_remit_logs_wrapped_stay_unclaimed(cmd: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    every = [c for f in sorted(FIXTURES.glob("*.toml")) if f.name not in unmeasured_files()
             for c in toml_file(f)["case"]]
    out_of_remit = [c for c in every if c.get("found", True) is False and "known_miss" not in c]
    assert len(out_of_remit) >= 20
    claimed = []
    folded = _folds(cmd, [(LOGS / str(case["log"])).read_bytes() for case in out_of_remit])
    for case, text in zip(out_of_remit, folded, strict=True):
        log = tmp_path / str(case["log"])
        log.write_bytes(text)
        code, out = _explain(log, capsys)
        if code != 0:
            claimed.append((case["log"], out))
    assert not claimed, claimed


def test_a_screen_copied_without_its_line_ends_is_read_as_its_rows() -> None:
    # fix-v: each row padded with blanks to the terminal's width, the rows run together on one line
    rows = [">>> from torchvision import _C", "Traceback (most recent call last):", '  File "<stdin>", line 1, in <module>',
            "ImportError: libcudart.so.10.1: cannot open shared object file: No such file or directory."]
    for width in (80, 211):
        assert screen_rows("".join(r.ljust(width) for r in rows[:-1]) + rows[-1]) == rows
    # near misses: two rows only, a first row's padding that ends below a terminal's width (a listing's columns), a row
    # of the run not padded, the padding of one row that is no multiple of the width
    two = "".join(r.ljust(80) for r in rows[:1]) + rows[-1]
    columns = "pytorch" + " " * 20 + "2.1.0" + " " * 20 + "py3.10_cuda11.8_cudnn8.7.0_0" + " " * 20 + "pytorch" * 20
    unpadded = rows[0].ljust(80) + ("x" * 80) + rows[-1]
    uneven = rows[0].ljust(80) + rows[1].ljust(90) + rows[2].ljust(80) + rows[3]
    for line in (two, columns, unpadded, uneven):
        assert screen_rows(line) == [line]


def test_a_print_statement_is_never_joined_with_its_output() -> None:
    # fix-v: "print(numpy.__version__)" then "1.9.3" (a quoted console session): the output is a line of its own
    got = [text for _, text in pasted(enumerate(["print(numpy.__version__)", "1.9.3", "import cv2"], 1))]
    assert got == ["print(numpy.__version__)", "1.9.3", "import cv2"]
    # near miss: a soname cut inside its version still joins ("libcudart.so.1" / "2: cannot ...")
    cut = [text for _, text in pasted(enumerate(["ImportError: libcudart.so.1", "2: cannot open shared object file"], 1))]
    assert cut == ["ImportError: libcudart.so.12: cannot open shared object file"]

"""fix38-system2 (issue 38): the loader's words as the log spells them next to what they mean (a symbol-version node, a
module named for its distribution), the GCC release of each CXXABI_ node, NCCL's version where a pasted terminal line
broke before it, and a cuDNN sub-library named with the dependency it could not load. The runtime raise-site table
(tests/fixtures/raise_sites/runtime-family.toml) is asserted by test_raise_site_tables.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from glmcompat.decide.loadercauses import FIRST_GCC, FIRST_GCC_CXXABI
from tests.decide.explaining import diagnoses, unclaimed

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "explain" / "logs"


@pytest.mark.parametrize(("line", "sid", "words"), [
    # glibc elf/dl-version.c match_symbol, each node as the loader prints it, then its meaning
    ("ImportError: /lib64/libc.so.6: version `GLIBC_2.28' not found (required by /opt/venv/lib/python3.10/site-packages/"
     "torch/lib/libtorch_cpu.so)", "glibc-too-old", ["needs GLIBC_2.28 (glibc >= 2.28", "manylinux_2_28"]),
    ("/usr/lib64/libstdc++.so.6: version `CXXABI_1.3.13' not found (required by /opt/venv/lib/python3.10/site-packages/"
     "torch/lib/libtorch_python.so)", "libstdcxx-too-old", ["needs CXXABI_1.3.13 (libstdc++ of GCC 11.1.0 or newer)"]),
    # a CXXABI_ node no table row names keeps its own word
    ("libstdc++.so.6: version `CXXABI_1.3.99' not found", "libstdcxx-too-old", ["needs CXXABI_1.3.99 (a symbol version"]),
    # the module the path names, next to the distribution it belongs to
    ("OSError: /usr/local/lib/python3.10/dist-packages/torch_scatter/_scatter_cuda.so: undefined symbol: "
     "_ZN3c104cuda9SetDeviceEi", "undefined-symbol", ["the log's torch_scatter is torch-scatter"]),
    # macOS dyld: the C++ symbol with its Mach-O underscore, the library its dlopen names
    ("ImportError: dlopen(/opt/venv/lib/python3.11/site-packages/torchaudio/lib/libtorchaudio.so, 0x0006): Symbol not "
     "found: __ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEE", "undefined-symbol",
     ["__ZN2at4_ops5zeros4callEN3c108ArrayRefINS2_6SymIntEEE"]),
])
def test_the_log_word_and_its_meaning(line: str, sid: str, words: list[str], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    diagnoses(line, sid, words, tmp_path, capsys)


def test_each_cxxabi_node_is_no_later_than_its_glibcxx_release() -> None:
    """GCC's abi.versioning.history pairs each release's GLIBCXX_ and CXXABI_: the CXXABI_ table's GCC releases are
    among the GLIBCXX_ table's (or the 4.8.0 / 14.1.0 ends it adds), in the same order as the nodes."""
    gccs = [tuple(int(p) for p in g.split(".")) for g in FIRST_GCC_CXXABI.values()]
    assert gccs == sorted(gccs)
    assert set(FIRST_GCC_CXXABI.values()) - set(FIRST_GCC.values()) <= {"4.8.0", "14.1.0"}


def test_nccl_version_broken_over_two_lines_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = (LOGS / "r-milabench-183-nccl-2143-container.log").read_text(encoding="utf-8")
    diagnoses(log, "nccl-too-old", ["NCCL 2.14.3", "2.15.1"], tmp_path, capsys)


def test_the_torch_nccl_error_header_alone_stays_unclaimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = (LOGS / "r-milabench-183-nccl-2143-container.log").read_text(encoding="utf-8")
    unclaimed("\n".join(line for line in log.splitlines() if "reverse path" not in line), tmp_path, capsys)


def test_a_cudnn_sublibrary_names_its_missing_dependency(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # one diagnosis (issue 38's one vocabulary): the sub-library's, naming both libraries; cuda-lib-missing's reading of
    # the quoted loader error alone is left out (glmcompat/decide/diagnose.py SUPERSEDED)
    out = diagnoses((LOGS / "s-synchformer-9-cudnn-cnn-nvrtc.log").read_text(encoding="utf-8"),
                    "cudnn-sublibrary-missing", ["libcudnn_cnn_infer.so.8 could not load because libnvrtc.so"],
                    tmp_path, capsys)
    assert ": cuda-lib-missing" not in out

"""How users paste logs into GitHub issues damages them (issue 38), and every signature survives it: the messages of the
raise-site tables (tests/fixtures/raise_sites/) damaged each way a thread damages them, and each still named by the
same signature with the same words.

1. Markdown eats backticks: a message quoted `...' (the loader, GCC, Python 2) or `...` (uv, transformers) pasted
   outside a code block loses its opening backtick (it opens a code span), or both quote marks (a pair makes a span),
   or a chat client curls them (glmcompat/model/signatures.py, :func:`unquoted`).
2. A message split at any word boundary across consecutive lines (a user's re-typing, a page's wrap at its own width):
   joined where the join completes a signature's message (glmcompat/decide/pasted.py).
3. A stored text cut mid-message after the cause's values (the xFormers row's "built for" head then its values).
4-6. A sentence break lost; a log that starts mid-message; a message retyped or lower-cased (their sections below).
7. A message cut after its first sentence: its head alone, where the head tells its raise site."""

from __future__ import annotations

import hashlib

import re
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from glmcompat.decide.pasted import pasted
from glmcompat.matrix.load import load_facts
from glmcompat.model.signatures import QUOTES, Hit, scan_numbered, tolerant, unquoted
from tests.conftest import toml_file
from tests.decide.explaining import RAISE_SITES, diagnoses, each_row, explain, message_id, unclaimed
from tests.decide.test_real_logs import unmeasured_files

FIXTURES = Path(__file__).parent.parent / "fixtures" / "explain"
SIGNATURES = load_facts().rows("signature")


def _messages() -> list[dict[str, str]]:
    return [m for f in sorted(RAISE_SITES.glob("*.toml"))
            for m in toml_file(f).get("message", ())]


MESSAGES = _messages()
NAMED = [m for m in MESSAGES if m["expect"]]


_READ: dict[str, dict[str, Hit]] = {}  # the hits of each text read in this module (the tests only read them)


def _hits(text: str) -> dict[str, Hit]:
    """The signatures found in ``text`` read as a pasted log, by id; each text read once in the module (the tables'
    messages as printed are the baseline of every kind of damage below)."""
    got = _READ.get(text)
    if got is None:
        lines = [(n, line) for n, line in enumerate(text.split("\n"), 1)]
        got = _READ[text] = {h.id: h for h in scan_numbered(pasted(lines, SIGNATURES), SIGNATURES).hits}
    return got


def _rows(messages: list[dict[str, str]]) -> list[tuple[str, dict[str, str]]]:
    """Table messages as rows of a folded test, each named by its id and the head of the sha1 of its text."""
    return [(_undone_key(m), m) for m in messages]


def _unquote(value: str) -> str:
    return value.translate(str.maketrans({q: None for q in QUOTES}))


CONTEXT = {"named_by", "frame", "importing", "frame_file", "frame_func"}  # groups a hit takes from the lines around it, not from its message


def _words(h: Hit) -> tuple[tuple[tuple[str, str], ...], str, str]:
    """What a hit says of the log: its message's groups (their quotes aside), the package and its version."""
    return tuple(sorted((k, _unquote(v)) for k, v in h.groups.items() if v and k not in CONTEXT)), h.package, h.version


def _said(h: Hit) -> tuple[frozenset[str], str, str]:
    """The words of a hit's message (:func:`_words`' values, blanks aside): what a split at a space may change is where
    a blank falls, where the reader cannot tell a break inside a word from one between words ("torch >=" / "2.1.0")."""
    return frozenset(re.sub(r"\s", "", v) for _, v in _words(h)[0]), h.package, h.version


# the signatures a diagnosis derives from another's hit, not scanned themselves (-> the hit they are read from): torch's
# own "no kernel image" (its CUDA check's tail, nothing else named) is torch-arch-unsupported (pythoncauses.arch_of_named_gpu)
# a failed build in a log where torch found no CUDA runtime and no nvcc step shows is nvcc-missing (diagnose._no_toolkit)
# an extension module's "DLL load failed while importing X: The specified procedure could not be found" (WinError 127)
# is undefined-symbol of X's package (loadercauses.proc_not_found)
# pip's refusal of a manylinux wheel whose glibc floor is above the machine's glibc the log shows is glibc-too-old
# (diagnose, installcauses.glibc_refusal; fix-i); CPython's "module 'M' has no attribute 'N'" (companion-too-old's
# words) where an [[export]] row records the release of M's distribution that removed N is companion-api-removed
# (diagnose, pythoncauses.removed_attribute; fix-m)
# fix-q: torch's DLL loader's WinError 127 on one of its CUDA library DLLs is cuda-toolkit-clash (loadercauses.dll_clash,
# the code read from the log's notes); pip's "Could not find a version ... torch==V (from versions: ...)" whose listing
# names the Python is torch-python-unsupported (installcauses.torch_python_wheel, _listed_python)
DERIVED = {"torch-arch-unsupported": "no-kernel-image", "nvcc-missing": "source-build-failed",
           "undefined-symbol": "torch-dll-load-failed", "glibc-too-old": "wheel-not-supported",
           "companion-api-removed": "companion-too-old", "cuda-toolkit-clash": "torch-dll-load-failed"}


# ... and those derived from either of several hits: torch's no-GPU words under cpp_extension's _get_cuda_arch_flags are
# build-needs-cuda-device (buildcauses.device_query_in_build; fix-n), scanned as cuda-not-available or driver-not-found
# fix-p: torch's launch failure after its own old-GPU warning is gpu-capability-too-old (sharpcauses.old_gpu_launch),
# scanned as no-kernel-image; a libcudart file named for a release it is not, under a package's extension, is
# extension-cuda-mismatch (sharpcauses.renamed_runtime), scanned as cuda-toolkit-clash
# fix-s: torch with no release for the interpreter's Python is read from pip's "Could not find a version" (fix-q), uv's
# tag check and hints (wheel-not-supported, python-version-unsupported) and pip's conflict of one project's torch pins
# (pip-resolution-impossible, the first: the report's head and pip 25.3's note under it are both scanned):
# glmcompat/decide/torchpythons.py. fix-r: poetry's derivation line naming a Python cause or one package twice is
# python-version-unsupported or pip-double-requirement (reportcauses.poetry_derivation), scanned as
# pip-resolution-impossible. fix-v: the loader's missing libcudart of torchvision's own _C, torch built for another CUDA,
# is torchvision-cuda-mismatch (extcauses.family_runtime), scanned as extension-cuda-mismatch
DERIVED_ANY = {"torchvision-cuda-mismatch": ("extension-cuda-mismatch",),
               "build-needs-cuda-device": ("cuda-not-available", "driver-not-found"),
               "gpu-capability-too-old": ("no-kernel-image",), "extension-cuda-mismatch": ("cuda-toolkit-clash",),
               "torch-python-unsupported": ("pip-resolution-impossible", "wheel-not-supported",
                                            "python-version-unsupported", "no-matching-distribution"),
               "python-version-unsupported": ("pip-resolution-impossible",),
               "pip-double-requirement": ("pip-resolution-impossible",)}


def _scanned(sid: str, want: dict[str, Hit]) -> str:
    """The id a table row's message is scanned as: its own, or the hit its diagnosis is derived from."""
    if sid in want:
        return sid
    return next((s for s in DERIVED_ANY.get(sid, ()) if s in want), DERIVED.get(sid, sid))


# ---- 1. Markdown eats backticks -----------------------------------------------------------------------------------
_BACKTICKED = re.compile(r"`(?P<inner>[^`'\n]{1,300})(?P<close>['`])")
DAMAGES: dict[str, Callable[[re.Match[str]], str]] = {
    "opening backtick lost": lambda m: m["inner"] + m["close"],
    "both quotes lost": lambda m: m["inner"],
    "quotes curled": lambda m: "\u2018" + m["inner"] + "\u2019",
    "double quotes curled": lambda m: "\u201c" + m["inner"] + "\u201d",
}
QUOTED = [m for m in NAMED if _BACKTICKED.search(m["text"])]


def test_the_tables_hold_messages_of_each_backtick_quoting_signature() -> None:
    """The messages below cover the signatures that quote with a backtick in each form their sources print: the
    loader's `...', uv's `...`, the transformers family's."""
    quoting = {s.id for s in SIGNATURES if unquoted(s.pattern) is not None}
    covered = {m["expect"] for m in QUOTED}
    assert {"glibc-too-old", "libstdcxx-too-old", "cuda-toolkit-clash", "wheel-not-supported",
            "no-matching-distribution", "python-version-unsupported", "library-needs-package"} <= covered & quoting
    assert len(QUOTED) >= 15


# left undone, each a strict expected failure (by damage, then message id and the first 8 hex digits of the sha1 of its
# text): uv's "Failed to build `X" quotes with a backtick its signature does not close: without it the words are pdm's
# notice "Failed to build package, try parsing project files" (uv's boxed form, "  × Failed to build `X`" and its "├─▶"
# line, is read without the backtick)
BACKTICK_UNDONE = {
    "opening backtick lost": {"uv:error: Failed to build `flash-attn==2.7.4.post1`#1aa90c5f"},
    "both quotes lost": {"uv:error: Failed to build `flash-attn==2.7.4.post1`#1aa90c5f"},
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_message_whose_backticks_markdown_ate_keeps_its_signature_and_words(damage: str) -> None:
    """Each message of QUOTED (a row each) damaged this way."""
    def check(m: dict[str, str]) -> None:
        text = m["text"]
        damaged = _BACKTICKED.sub(DAMAGES[damage], text)
        assert damaged != text
        want, got = _hits(text), _hits(damaged)
        sid = m["expect"]
        sid = _scanned(sid, want)
        assert sid in want and sid in got, (damaged, sorted(got))
        assert _words(got[sid]) == _words(want[sid]), damaged

    each_row(_rows(QUOTED), check, BACKTICK_UNDONE.get(damage, set()))


def test_each_signatures_tolerant_and_unquoted_forms_compile() -> None:
    """The forms the matcher builds of each signature (its quotes read as any quote, its backticks optional) are regular
    expressions: a negated class that ends in a bare "-" would read the quotes appended to it as a range."""
    for s in SIGNATURES:
        for form in (tolerant(s.pattern), tolerant(s.pattern, closed=True), unquoted(s.pattern),
                     unquoted(s.pattern, strict=True)):
            if form is not None:
                re.compile(form)


@pytest.mark.parametrize(("pattern", "damaged", "kept"), [
    # transformers' "`pip install 'accelerate>=X'`": the single quotes the pattern makes optional sit inside the
    # backtick's quotation, which the closing backtick ends (both lost: "pip install accelerate>=X")
    (r"requires: `pip install '?(?P<v>[^`'\s]{1,60})'?`", "requires: pip install accelerate>=1.1.0", "accelerate>=1.1.0"),
    # the loader's "`GLIBC_2.34'" with its close optional: still the backtick's close, the only quote after it
    (r"version `(?P<v>GLIBC_[\d.]{1,8})'? not found", "version GLIBC_2.34 not found", "GLIBC_2.34"),
])
def test_an_optional_quote_inside_a_backtick_quotation_does_not_close_it(pattern: str, damaged: str, kept: str) -> None:
    form = unquoted(pattern)
    assert form is not None and re.search(pattern, damaged) is None
    m = re.search(form, damaged)
    assert m is not None and m["v"] == kept, form


def test_the_catena_log_reads_as_the_loader_printed_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """w-catena-40: the loader's "version `GLIBCXX_3.4.32' not found" posted without its opening backtick."""
    text = (FIXTURES / "logs" / "w-catena-40-conda-libstdcxx-3432.log").read_text(encoding="utf-8")
    assert "version GLIBCXX_3.4.32' not found" in text
    diagnoses(text, "libstdcxx-too-old", ["GLIBCXX_3.4.32", "libstdc++", "connected_components"], tmp_path, capsys)


@pytest.mark.parametrize("text", [
    # prose that names a version node or a quoted word without the loader's message: no diagnosis
    "the version GLIBCXX_3.4.32 is what conda-forge ships",
    "checked: strings libstdc++.so.6 | grep GLIBCXX_3.4.32 found it",
    "the users' files are in /home",
])
def test_prose_without_the_message_stays_unclaimed(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unclaimed(text, tmp_path, capsys)


# ---- 2. a message split at word boundaries ------------------------------------------------------------------------
ONE_LINE = [m for m in NAMED if "\n" not in m["text"] and len(m["text"].split(" ")) >= 2]


def _split(text: str, at: int) -> str:
    """``text`` broken at its ``at``-th space onto a next line."""
    words = text.split(" ")
    return " ".join(words[:at]) + "\n" + " ".join(words[at:])


def test_the_tables_hold_enough_one_line_messages() -> None:
    assert len(ONE_LINE) >= 500


def test_a_message_split_at_any_word_boundary_keeps_its_signature_and_words() -> None:
    """Each message of ONE_LINE (a row each)."""
    each_row(_rows(ONE_LINE), _split_keeps_its_signature_and_words)


def _split_keeps_its_signature_and_words(m: dict[str, str]) -> None:
    text, sid = m["text"], m["expect"]
    want = _hits(text)
    sid = _scanned(sid, want)
    assert sid in want, sorted(want)
    lost = []
    # every third word boundary, the first and the last (which third: by the message, so that across the tables' 500+
    # messages each position is tried): a split's reading costs a scan of every signature
    n = len(text.split(" "))
    offset = 1 + zlib.crc32(text.encode()) % 3
    for at in sorted({1, n - 1, *range(offset, n, 3)}):
        if at < 1 or not text.split(" ")[at - 1] or not text.split(" ")[at]:
            continue  # a run of spaces: no word boundary a re-typing keeps
        split = _split(text, at)
        got = _hits(split)
        if sid not in got:
            lost.append(split)
        elif _said(got[sid]) != _said(want[sid]) and sid not in _hits(split.split("\n")[1]):
            # the words may differ only where the later line alone is the signature's message (then it is read as it
            # stands: the line before may be a record of its own, "NVIDIA" / "GeForce RTX 5090 with CUDA capability ...")
            lost.append(split)
    assert not lost, lost


# messages broken so narrow that the signature's first reading of their first lines differs from the whole's, left as
# they are (the signature is named, some of its words are not): a glog line's prefix before the break; a group the last
# of four lines ends; an alternative read first where the line holds its start (uv's "Failed to build X" before pip's
# "Failed to build installable wheels ... (X)", mamba's "__cuda is missing" before its "hence <spec>"; DeepSpeed's
# JIT refusal whose reason's torch range the last of four lines ends)
NARROW_MISREAD = {("tensorflow", 3), ("tensorflow", 4), ("triton", 4), ("dyld4", 3), ("dyld4", 4), ("pip", 4),
                  ("mamba", 4), ("deepspeed", 4)}


def test_a_message_broken_into_three_and_four_lines_keeps_its_signature() -> None:
    """Broken every few words (a narrow page), the message is still named by its signature, from up to four lines; with
    its words where no line of it alone is read by the signature (a line that is, is read as it stands: see above).
    Each message of ONE_LINE of at least 9 words without a run of spaces (a row each)."""
    each_row(_rows([m for m in ONE_LINE if len(m["text"].split(" ")) >= 9 and "  " not in m["text"]]),
             _broken_keeps_its_signature)


def _broken_keeps_its_signature(m: dict[str, str]) -> None:
    text, sid = m["text"], m["expect"]
    words = text.split(" ")
    want = _hits(text)
    sid = _scanned(sid, want)
    for parts in (3, 4):
        size = -(-len(words) // parts)
        lines = [" ".join(words[k:k + size]) for k in range(0, len(words), size)]
        got = _hits("\n".join(lines))
        assert sid in got, lines
        records = [t for _, t in pasted(list(enumerate(lines, 1)))]  # the lines as read without the signatures
        assert _said(got[sid]) == _said(want[sid]) or any(sid in _hits(r) for r in records) \
            or (m["library"], parts) in NARROW_MISREAD, lines


def test_the_animateanyone_log_reads_as_torch_printed_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """x-animateanyone-114: torch's capability warning typed with breaks mid-sentence, lines of different lengths."""
    text = (FIXTURES / "logs" / "x-animateanyone-114-h100-sm90.log").read_text(encoding="utf-8")
    assert "with CUDA capability\nsm_90 is not compatible" in text
    diagnoses(text, "torch-arch-unsupported", ["sm_90", "H100"], tmp_path, capsys)


def _out_of_remit() -> list[dict[str, object]]:
    every = [c for f in sorted(FIXTURES.glob("*.toml")) if f.name not in unmeasured_files()
             for c in toml_file(f)["case"]]
    return [c for c in every if c.get("found", True) is False and "known_miss" not in c]


def test_out_of_remit_logs_stay_unclaimed_with_their_lines_joined(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The joining of split messages claims none of the out-of-remit logs (found = false) under tests/fixtures/explain."""
    cases = _out_of_remit()
    assert len(cases) >= 20
    claimed = []
    for case in cases:
        code, out = explain((FIXTURES / "logs" / str(case["log"])).read_text(encoding="utf-8", errors="replace"),
                            tmp_path, capsys)
        if code != 0:
            claimed.append((case["log"], out))
    assert not claimed, claimed


@pytest.mark.parametrize(("text", "why"), [
    # two records that each stand alone: a traceback's frame and the exception after it
    ('  File "/venv/lib/python3.11/site-packages/torch/__init__.py", line 1, in <module>\n'
     "RuntimeError: CUDA capability sm_90 is not compatible", "a frame, then an exception's header"),
    # a logger's records, each with its own prefix: the second is no rest of the first
    ("2024-01-02 12:00:00,123 - INFO - found NVIDIA H100 PCIe with CUDA capability\n"
     "2024-01-02 12:00:01,123 - INFO - sm_90 is not compatible with the current PyTorch installation",
     "two log records"),
    # a blank line between: two paragraphs
    ("NVIDIA H100 PCIe with CUDA capability\n\nsm_90 is not compatible with the current PyTorch installation",
     "two paragraphs"),
])
def test_separate_records_are_never_joined(text: str, why: str) -> None:
    assert "torch-arch-unsupported" not in _hits(text), why


# ---- 3. a stored text cut after the cause's values ----------------------------------------------------------------
# the rows whose message is a head line, then a line of the values (the only such row: xFormers' load warning, as
# xformers/_cpp_lib.py formats it, xformers-0.0.21 wheel :46-75; the same in its current source), each message as the
# source prints it: (head, values line, the values a cut must keep)
HEAD_THEN_VALUES = [
    ("xformers-built-for-other-torch",
     "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:",
     "    PyTorch 2.6.0+cu124 with CUDA 1204 (you have 2.7.0+cu126)", "2.6.0+cu124"),
    ("xformers-built-for-other-torch",
     "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:",
     "    PyTorch 2.0.1 (you have 2.1.0+cu121)", "2.0.1"),
]


@pytest.mark.parametrize(("sid", "head", "values", "built"), HEAD_THEN_VALUES, ids=[r[2].strip() for r in HEAD_THEN_VALUES])
def test_a_message_cut_after_its_values_keeps_its_signature(sid: str, head: str, values: str, built: str) -> None:
    whole = _hits(f"{head}\n{values}")
    assert sid in whole and whole[sid].groups.get("built") == built
    start = values.index(built) + len(built)
    for end in range(start, len(values)):  # cut at each point after the values (the whole line is the case above)
        got = _hits(f"{head}\n{values[:end]}")
        assert sid in got and built in got[sid].groups.values(), values[:end]


def test_a_cut_before_the_values_names_the_head_alone_and_the_values_without_the_head_are_not_claimed() -> None:
    """Cut before its values, the head still tells xFormers' raise site (section 7): named, with no version read."""
    head, values = HEAD_THEN_VALUES[0][1], HEAD_THEN_VALUES[0][2]
    got = _hits(f"{head}\n    PyTorch")
    assert "xformers-built-for-other-torch" in got and not got["xformers-built-for-other-torch"].groups.get("built")
    assert "xformers-built-for-other-torch" not in _hits(values[:30])  # the values without the head: any torch line


def test_the_sglang_log_cut_mid_message_names_the_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """x-sglang-6958: the stored text stops at "PyTorch 2.6.0+cu124 with C"."""
    text = (FIXTURES / "logs" / "x-sglang-6958-xformers-built-torch-260.log").read_text(encoding="utf-8")
    assert text.rstrip().endswith("with C")
    diagnoses(text, "xformers-built-for-other-torch", ["xformers", "2.6.0+cu124"], tmp_path, capsys)


# ---- 4. a sentence break lost ------------------------------------------------------------------------------------
# A page, a chat client or a log viewer that joins a message's sentences drops the ". " between them ("... binary
# incompatibilityExpected 96 from C header": af-pollbot-103), or only its space ("incompatibility.Expected"). Each
# message of the tables with such a break (a word that starts lower case, ". ", a capitalised word) keeps its signature
# and words with either dropped (glmcompat/model/signatures.py, :func:`rebroken`).
_BREAK = re.compile(r"(?<![A-Za-z0-9_])[a-z][a-z0-9]{1,60}(?P<brk>\. )(?=[A-Z][a-z]{1,60}(?![A-Za-z0-9_]))")
BROKEN = [m for m in ONE_LINE if _BREAK.search(m["text"])]
SENTENCE_DAMAGES = {"sentence break lost": "", "space after the period lost": "."}


def test_the_tables_hold_enough_messages_of_two_sentences() -> None:
    assert len(BROKEN) >= 100
    assert any("size changed, may indicate binary incompatibility. Expected" in m["text"] for m in BROKEN)


@pytest.mark.parametrize("damage", sorted(SENTENCE_DAMAGES))
def test_a_message_whose_sentence_break_was_lost_keeps_its_signature_and_words(damage: str) -> None:
    """Each message of BROKEN (a row each) damaged this way."""
    def check(m: dict[str, str]) -> None:
        text, sid = m["text"], m["expect"]
        want = _hits(text)
        sid = _scanned(sid, want)
        assert sid in want, sorted(want)
        lost = []
        for brk in _BREAK.finditer(text):
            damaged = text[:brk.start("brk")] + SENTENCE_DAMAGES[damage] + text[brk.end("brk"):]
            got = _hits(damaged)
            if sid not in got or _said(got[sid]) != _said(want[sid]):
                lost.append(damaged)
        assert not lost, lost

    each_row(_rows(BROKEN), check)


@pytest.mark.parametrize("text", [
    # identifiers and prose that join a lower-case word to a capitalised one without a lost break: nothing is read
    "torch.Tensor has no attribute getDeviceCount",
    "the value of numpyArray was None",
    "numpy.ndarray size changed, may indicate binary incompatibility",  # Cython 0.23's warning: no sizes, no failure
])
def test_a_join_that_completes_no_message_is_not_claimed(text: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    unclaimed(text, tmp_path, capsys)


def test_the_pollbot_log_reads_as_cython_printed_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """af-pollbot-103: Cython's "size changed" ValueError pasted with its sentence break lost."""
    text = (FIXTURES / "logs" / "af-pollbot-103-numpy-ndarray-96-88.log").read_text(encoding="utf-8")
    assert "incompatibilityExpected 96" in text
    diagnoses(text, "numpy-too-old", ["numpy.ndarray", "96 bytes", "88 bytes"], tmp_path, capsys)


# ---- 5. a log that starts mid-message -----------------------------------------------------------------------------
# A reporter pastes from the middle, or a stored thread cuts the head off (ac-spyder-23007 starts at NumPy 2's last
# line, af-vllm-15685 at transformers' "You can update Transformers with the command ..."): each message of several
# lines or sentences with its leading ones dropped is still named by its signature wherever the rest tells its raise
# site. The rule: the rest holds a *telling sentence*, a sentence (a line's span up to ". ", "! " or "? " before a
# capital, a quote or a bracket, or the line's end) of at least TELLING plain words (words of letters only: the words
# the source prints verbatim, not the values it fills in: paths, versions, names with digits), printed in the tables by
# this signature's messages only (one another signature's message prints too, CUDA's "CUDA kernel errors might be
# asynchronously reported ...", tells no raise site), and not listed in mid-message-tails.toml as `generic` (advice or a
# trailer any library prints, a line another raise site prints). The sentences left unnamed are listed there as
# `undone`, and must stay unnamed until they are named (then their row goes).
TELLING = 8
_SENTENCE = re.compile(r"(?<=[.!?])[ \t]+(?=[A-Z`'\"(\[])")
_PLAIN = re.compile(r"[A-Za-z][a-z]*[,;:.!?]?|[a-z]+'[a-z]+[,.]?")
TAILS = toml_file(RAISE_SITES / "mid-message-tails.toml")["tail"]
GENERIC = {t["sentence"] for t in TAILS if t["kind"] == "generic"}
UNDONE = {t["sentence"] for t in TAILS if t["kind"] == "undone"}


def _sentences(text: str) -> list[str]:
    return [" ".join(s.split()) for line in text.split("\n") for s in _SENTENCE.split(line) if s.strip()]


def _printers() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for m in MESSAGES:
        for s in _sentences(m["text"]):
            out.setdefault(s, set()).add(m["expect"] or "-")
    return out


PRINTERS = _printers()


def _telling(text: str, sid: str) -> list[str]:
    """The rest's telling sentences (the rule above), the generic ones aside."""
    return [s for s in _sentences(text) if sum(bool(_PLAIN.fullmatch(w)) for w in s.split()) >= TELLING
            and PRINTERS.get(s, {sid}) <= {sid} and s not in GENERIC]


def _rests(text: str) -> list[str]:
    """``text`` with its first 1, 2, ... lines or sentences dropped (each rest as a log would start)."""
    units: list[tuple[str, str]] = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        parts = _SENTENCE.split(line)
        units += [(p, "\n" if j == len(parts) - 1 and i < len(lines) - 1 else " ") for j, p in enumerate(parts)]
    return [r for k in range(1, len(units)) if (r := "".join(p + sep for p, sep in units[k:]).strip())]


SEVERAL = [m for m in NAMED if len(_rests(m["text"])) > 0]


def test_the_tables_hold_enough_messages_of_several_lines_or_sentences() -> None:
    assert len(SEVERAL) >= 300
    assert {t["kind"] for t in TAILS} <= {"generic", "undone"} and all(t["why"] for t in TAILS)


def test_a_message_whose_head_was_cut_keeps_its_signature_where_the_rest_tells_it() -> None:
    """Each message of SEVERAL (a row each)."""
    each_row(_rows(SEVERAL), _rest_keeps_its_signature)


def _rest_keeps_its_signature(m: dict[str, str]) -> None:
    sid, lost = _scanned(m["expect"], _hits(m["text"])), []
    for rest in _rests(m["text"]):
        telling = _telling(rest, sid)
        if not telling or sid in _hits(rest):
            continue
        if not set(telling) <= UNDONE:
            lost.append((rest, telling))
    assert not lost, lost


def test_each_undone_tail_is_still_unnamed() -> None:
    """An `undone` row whose sentence now names its signature alone is stale: drop it (the test above then holds it)."""
    by_sentence = {s: m["expect"] for m in SEVERAL for r in _rests(m["text"]) for s in _telling(r, m["expect"])}
    assert UNDONE <= set(by_sentence), UNDONE - set(by_sentence)
    assert not [s for s in UNDONE if by_sentence[s] in _hits(s)]


ALONE = [
    # the generic sentences of the tails list, each alone: advice, trailers, words any library prints
    *sorted(t["sentence"] for t in TAILS if t["kind"] == "generic" and "named_by" not in t),
    # a near miss of transformers' tail: its conditional alone, and its words in other prose
    "If this does not work",
    "If this does not work, try restarting the server.",
    "the checkpoint is very new and the download failed",
    "You can update the package with the command below.",
]


def test_a_generic_tail_alone_is_not_claimed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each text of ALONE (a row each)."""
    each_row([(text, text) for text in ALONE], lambda text: unclaimed(text, tmp_path, capsys))


@pytest.mark.parametrize("t", [t for t in TAILS if "named_by" in t], ids=lambda t: t["sentence"][:50])
def test_a_generic_tail_another_raise_site_prints_is_named_by_it(t: dict[str, str], tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A line another raise site prints (the loader's dlerror text a cuDNN message quotes, CUDA's error string) is named
    alone by that site's signature, never by the one of the message it ended."""
    out = diagnoses(t["sentence"], t["named_by"], [], tmp_path, capsys)
    assert f": {t['signature']}" not in out, out


def test_the_vllm_log_starting_at_transformers_tail_names_the_model_type(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """af-vllm-15685: the stored text starts at "You can update Transformers with the command ..."."""
    text = (FIXTURES / "logs" / "af-vllm-15685-qwen25-omni-transformers.log").read_text(encoding="utf-8")
    assert text.startswith("You can update Transformers with the command")
    diagnoses(text, "model-type-unknown", ["transformers"], tmp_path, capsys)


# ---- 6. a message retyped or lower-cased --------------------------------------------------------------------------
# A reporter who retypes a message (from a screenshot, a phone, memory) or a chat client that lower-cases it keeps its
# words and loses their case ("nvidia geforce rtx 5090 with cuda capability sm_120 is not compatible with the current
# pytorch installation.": ai-latencybench-19). Each message of the tables lower-cased keeps its signature and its words
# (their case aside): the matcher reads a line no signature reads as it stands with each signature's case-ignoring form,
# only where the gate (which ignores case) lets the line through (glmcompat/model/signatures.py, :class:`_Matcher`).
def _folded(h: Hit) -> tuple[frozenset[str], str, str]:
    said, pkg, ver = _said(h)
    return frozenset(v.lower() for v in said), pkg.lower(), ver.lower()


# (a line some signature reads as it stands is read again by the near signatures' case-ignoring forms, which replace or
# join those readings where they read more of it, and on a line without a capital, where another signature reads a
# lower-cased value of theirs as it stands: "cannot import name 'iterable' from 'collections'", "impimporter";
# glmcompat/model/signatures.py, :meth:`_Matcher._recased`)
# left undone, each a strict expected failure (by message id and the first 8 hex digits of the sha1 of its text, since
# several messages can share an id): messages whose values' case is their meaning (a C++ mangled or a CUDA API symbol,
# "_ZN5cudnn..." / "cuGreenCtxStreamCreate", an extension module's "_C", a class a package's import name is read
# from: "PIL"); two damages at once (Cython's message
# with its sentence break lost, "incompatibilityExpected", lower-cased: no capital is left to tell the break; a glog
# prefix and "Traceback" lower-cased, which then no longer open a record of their own, so the message is joined to
# them); a lower-cased line that two signatures read side by side (cuDNN's "could not load library X. error: " before
# the loader's text); and a diagnosis derived from the log's lines together (ld's "-lcuda" of an extension's link,
# the package a traceback's frame names), which the hits compared here do not hold
LOWER_UNDONE = frozenset({
    'cudnn:Could not load library libcudnn_cnn_infer.so.8. Er#50a99182',
    'cudnn:Could not load symbol cudnnGetLibConfig. Error: /l#5b98fcc3',
    'cudnn:OSError: /usr/lib/x86_64-linux-gnu/libcudnn_ops.so#42f8d478',
    'cython:ValueError: numpy.dtype size changed, may indicate#2dd3ac94',
    'cython:ValueError: numpy.ndarray has the wrong size, try #764fd9e6',
    'cython:ValueError: numpy.ndarray size changed, may indica#7cdebaf6',
    'cython:ValueError: numpy.ndarray size changed, may indica#8849bd98',
    'cython:ValueError: numpy.ufunc size changed, may indicate#9e7fa3e2',
    "detectron2:ImportError: cannot import name '_C' from 'detectr#ea7d95bb",
    'dyld4:ImportError: dlopen(/Users/ana/venv/lib/python3.10#b9a44fdc',
    'dyld:ImportError: dlopen(/opt/venv/lib/python3.11/site-#58c8a10f',  # "_THPVariableClass": the case is the name
    'ld.so:ImportError: /venv/lib/python3.11/site-packages/nv#6ea36c40',
    'ld.so:ImportError: /venv/lib/python3.11/site-packages/sg#432a14d0',
    'ld.so:OSError: /venv/lib/python3.11/site-packages/nvidia#cdb04208',
    'ld:FAILED: my_ext.so\nc++ a.o b.o -shared -L/opt/conda#69e1fd03',
    'ld:g++ -pthread -shared build/temp.linux-x86_64-cpyth#ac95b0f6',
    'numpy:Some module may need to rebuild instead e.g. with #1fc1f475',
    "pytorch3d:ImportError: cannot import name '_C' from 'pytorch#17918bc2",
    'torch:W0601 12:00:00.000000 123 torch/utils/cpp_extensio#1e176e51',
    'triton:/usr/bin/gcc /tmp/tmpab12cd/main.c -O3 -shared -fP#46b16a1d',
    # a compile command's -L and -I, whose case is their meaning: lower-cased, -l names a library and -i no directory, so
    # the path after them (.../site-packages/triton/...) is read as naming its package (fixa-signatures.toml)
    'triton:torch._inductor.exc.InductorError: CalledProcessEr#deda3726',
    "triton:subprocess.CalledProcessError: Command '['/usr/bin#a8f01bea",
    'triton:/tmp/tmpab12cd/cuda_utils.c:6:10: fatal error: Pyt#446a45c3',
    # the owner of an undefined symbol is read from its case (ncclCommInitRankConfig: NCCL's; cuTensorMapEncodeTiled: the
    # driver API's, cu[A-Z]); lower-cased, vllm-undefined-symbol keeps it
    'vllm:ImportError: /usr/local/lib/python3.12/dist-packag#910aeb8a',
    'vllm:ImportError: /usr/local/lib/python3.12/dist-packag#1d3a943c',
    # torch's "Numpy is not available" is told from a program's own "numpy is not available" by its case (tensor_numpy.cpp
    # capitalises it; tests/fixtures/raise_sites/miss3a-signatures.toml): lower-cased, it is that near miss
    'torch:Traceback (most recent call last):\n  File "/app/in#f11e28b7',
    'torch:RuntimeError: Numpy is not available\n  File "/root#b0c5ca91',
    'numpy:RuntimeError: Numpy is not available#31cd1b5d',
    # pip's "Collecting X==V (from parent)" is read against the version pip's "Successfully installed" line shows; lower-
    # cased, that line's case-sensitive note is not read, so no other installed torch is known (fixi-signatures.toml)
    'pip:Successfully installed torch-2.2.2+cu121 torchaudi#6fedc118',
    # vLLM's sampler notice spells its "FlashInfer>=v0.2.3" capitalised, which names no distribution; lower-cased, the
    # same words read as the flashinfer distribution's mention, so the hit takes a package the printed line does not
    # give it (its diagnosis names FlashInfer from the line either way: fixm-signatures.toml)
    'vllm:INFO 05-03 20:21:10 [topk_topp_sampler.py:44] Curr#9308d7a8',
    # a C++ macro's name is its case (TORCH_LIBRARY_FRAGMENT): lower-cased it is another identifier, which torch's headers
    # never define (fixm-signatures.toml)
    'gcc:/root/vision/torchvision/csrc/vision.cpp:31:23: er#8f51f068',
})


def _undone_key(m: dict[str, str]) -> str:
    return f"{message_id(m)}#{hashlib.sha1(m['text'].encode()).hexdigest()[:8]}"


def test_a_message_lower_cased_keeps_its_signature_and_words() -> None:
    """Each message of NAMED that lower-casing changes (a row each); those of LOWER_UNDONE strict expected failures."""
    each_row(_rows([m for m in NAMED if m["text"].lower() != m["text"]]), _lower_cased_keeps_its_signature_and_words,
             LOWER_UNDONE)


def _lower_cased_keeps_its_signature_and_words(m: dict[str, str]) -> None:
    text, sid = m["text"], m["expect"]
    want, got = _hits(text), _hits(text.lower())
    sid = _scanned(sid, want)
    assert sid in want, sorted(want)
    assert sid in got, (text.lower(), sorted(got))
    assert _folded(got[sid]) == _folded(want[sid]), text.lower()


@pytest.mark.parametrize("text", [
    # near misses lower-cased stay unclaimed as they do in their own case: prose about a capability, a version
    "the rtx 5090 has cuda capability sm_120, which the current pytorch installation supports",
    "libcudart.so is in /usr/local/cuda/lib64",
    "cuda compiler and headers were upgraded together",
])
def test_a_lower_cased_near_miss_is_not_claimed(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unclaimed(text, tmp_path, capsys)


def test_the_latencybench_log_reads_as_torch_printed_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ai-latencybench-19: torch's capability warning retyped in lower case, with "capabilities" of its second sentence."""
    text = (FIXTURES / "logs" / "ai-latencybench-19-rtx5090-sm120.log").read_text(encoding="utf-8")
    assert "with cuda capabilities sm_120 is not compatible" in text
    diagnoses(text, "torch-arch-unsupported", ["sm_120"], tmp_path, capsys)


# ---- 7. a message cut after its first sentence --------------------------------------------------------------------
# A stored thread that ends mid-message keeps only its head: the first sentence of the message's first line, and perhaps
# the start of the next word ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFor": am-sdwebui-16439).
# Each message of the tables with more after its head is still named by its signature from the head alone wherever the
# head is a telling sentence (section 5's rule: TELLING plain words, printed by this signature's messages only), unless
# the head is listed below as generic (its words do not tell the raise site: another signature's message, or a preface
# whose cause is in the sentences it lost) or as undone (the raise site's own words that its signature does not read
# alone yet: a strict expected failure, by message id and the first 8 hex digits of the sha1 of its text, until read).
HEAD_GENERIC = {
    "CMake Error: The following variables are used in this project, but they are set to NOTFOUND.":
        "CMake's report of link items set to NOTFOUND (Source/cmGlobalGenerator.cxx CheckTargetProperties): the variable "
        "that names the library (CUDA_cublas_device_LIBRARY) is on the lines the cut lost",
    "nvcc warning : option 'host-compilation' has been deprecated and is ignored":
        "nvcc's notice of a deprecated option, printed before the build's own error (gcc unable to run cc1plus): it tells "
        "no failure, and the cause is in the line the cut lost",
    "RuntimeError: Unable to JIT load the transformer_inference op due to it not being compatible due to hardware/"
    "software issue.": "DeepSpeed's JIT refusal, whose reason (error_log, the GPU's capability) is the sentence it lost: "
                       "alone it is deepspeed-ops-mismatch's",
    "error: Build backend failed to determine requirements with `build_wheel()` (exit status: 1)":
        "uv's failed build step: its cause (torch missing from the isolated build) is in the build's output it lost",
    "╰─▶ Because only the following versions of pyarrow are available:":
        "uv's derivation's opening (crates/uv-resolver/src/pubgrub/report.rs): the versions it lists tell no cause, which "
        "is in the clause it lost (\"... has no wheels with a matching Python ABI tag\")",
    "Unable to initialize backend 'cuda': Unable to use CUDA because of the following issues with CUDA components:":
        "jax's preface to its CUDA components' checks (jax_plugins/cuda/__init__.py:335, under xla_bridge's \"Unable to "
        "initialize backend\"): which component is outdated (cuDNN's cudnn-version-mismatch, another library's "
        "cuda-lib-too-old) is in the lines it lost",
    "RuntimeError: Unable to use CUDA because of the following issues with CUDA components:":
        "the same preface raised on its own (jax-v0.4.26 jax/_src/xla_bridge.py:293): its cause is in the lines it lost",
    "ERROR: Cannot install torch==2.8.0.dev20250601+cu126 because these package versions have conflicting dependencies.":
        "pip's conflict report's head (factory.py get_installation_error): alone it is pip-resolution-impossible's; the "
        "packages no index offers (the note \"some packages in these conflicts have no matching distributions\") are in "
        "the lines it lost",
    "ERROR: Ignored the following versions that require a different python version: 1.21.2 Requires-Python >=3.7,<3.11; "
    "1.21.3 Requires-Python >=3.7,<3.11; 1.21.4 Requires-Python >=3.7,<3.11; 1.21.5 Requires-Python >=3.7,<3.11; "
    "1.21.6 Requires-Python >=3.7,<3.11":
        "pip's list of the releases its finder skipped for Requires-Python in the whole run (pip-23.2.1 wheel "
        "pip/_internal/index/package_finder.py:707-713, no project named): alone it is python-version-unsupported's; the "
        "requirement pip could not find, and whether it accepts any of those releases, is in the line the cut lost",
    "/root/vision/torchvision/csrc/vision.cpp:31:23: error: expected constructor, destructor, or type conversion before "
    "\u2018(\u2019 token":
        "g++'s error at a file-scope line it cannot parse names no identifier: that the line opens with a registration "
        "macro of torch's headers (TORCH_LIBRARY_FRAGMENT, which the torch built against predates) is in the echoed "
        "line the cut lost (fixm-signatures.toml)",
    "ERROR: pip's legacy dependency resolver does not consider dependency conflicts when selecting packages.":
        "the head of pip's conflict report under the legacy resolver (pypa/pip tag 26.2.1 src/pip/_internal/commands/"
        "install.py:678-683): a preface; the pairs it reports are in the lines it lost (fixr-signatures.toml)",
    "ERROR: After October 2020 you may experience errors when installing or updating packages.":
        "pip 20.2's preface to its conflict report (tag 20.2.4 src/pip/_internal/commands/install.py:536-545): the pairs "
        "it reports are in the lines it lost (fixr-signatures.toml)",
    "ERROR: Could not find a version that satisfies the requirement python==3.10 (from versions: none)":
        "pip's line for the interpreter asked for as a requirement: the requirement pip could not find is the next one "
        "it reports, in the line the cut lost",
}
HEAD_UNDONE = frozenset({
    'accelerate:ImportError: `torchao` was not found on your syste#1c56810c',
    "diffusers:RuntimeError: Flash Attention backend 'flash' is n#412f7ab2",
    'exllamav2:"undefined symbol" error here usually means you ar#e8455916',
    "pip:ERROR: pip's dependency resolver does not currentl#d06e946a",
    "pip:ERROR: pip's dependency resolver does not currentl#f298d2cb",  # fix-i: the same head, torch-tensorrt's report
    "pip:ERROR: pip's dependency resolver does not currentl#079e2f94",  # fix-n: the same head, the reports whose exact pin
    "pip:ERROR: pip's dependency resolver does not currentl#26d04138",  # or first line is read (fixn-signatures.toml)
    "pip:ERROR: pip's dependency resolver does not currentl#65de6455",  # fix-r: the same head, the reports of packages
    "pip:ERROR: pip's dependency resolver does not currentl#63617558",  # outside the stack and the stack line read over
    "pip:ERROR: pip's dependency resolver does not currentl#17eadab9",  # them (fixr-signatures.toml)
    "pip:ERROR: pip's dependency resolver does not currentl#8879d435",  # fix-w: the same head, the reports whose two
    "pip:ERROR: pip's dependency resolver does not currentl#5b02b6dc",  # lines pin one package apart, and the stack
    "pip:ERROR: pip's dependency resolver does not currentl#d0448ba4",  # line read where none do (fixw-signatures.toml)
    'tensorflow-addons:/home/u/.venvs/r/lib/python3.8/site-packages/tenso#273b831b',
    'tensorflow-addons:/usr/local/lib/python3.10/dist-packages/tensorflow#12896e24',
    'tensorflow-addons:UserWarning: Tensorflow Addons supports using Pyth#61f251ee',
    'tensorflow:I tensorflow/core/common_runtime/gpu/gpu_device.cc#9de70def',
    'tensorflow:W tensorflow/core/common_runtime/gpu/gpu_device.cc#681d31da',
    'torch:error: "You\'re trying to build PyTorch with a too #a4aa2374',
    'torch:torch/include/c10/util/C++17.h:16:2: error: #error#bcefdda5',
    'torchaudio:RuntimeError: Detected that PyTorch and TorchAudio#0cb52691',
    'transformers:ImportError: FlashAttention2 has been toggled on, #090017c2',
    'transformers:ImportError: This modeling file requires the follo#fbead353',
    'triton:torch._inductor.exc.GPUTooOldForTriton: Found Tesl#755c89c2',
    'vllm:ValueError: Bfloat16 is only supported on GPUs wit#2690bb25',
    'vllm:ValueError: The quantization method fp8 is not sup#174f1ae2',
    'vllm:ValueError: The quantization method gptq_marlin is#bd73a6ff',
})


def _head(text: str) -> tuple[str, str]:
    """(the message's first sentence, the start of what follows it: up to 4 characters of the next word), or ("", "")
    where nothing follows the first sentence."""
    first, _, more = text.partition("\n")
    parts = _SENTENCE.split(first)
    if len(parts) < 2 and not more.strip():
        return "", ""
    rest = (parts[1] if len(parts) > 1 else more.strip()).split(" ")[0][:4]
    return parts[0].strip(), rest


def _head_key(m: dict[str, str]) -> str:
    return _undone_key(m)


HEADED = [m for m in NAMED if (h := _head(m["text"])[0]) and _telling(h, m["expect"])]


def test_the_tables_hold_enough_messages_with_a_telling_head() -> None:
    assert len(HEADED) >= 100
    assert all(re.fullmatch(r".{1,80}#[0-9a-f]{8}", t, re.S) for t in HEAD_UNDONE) and all(HEAD_GENERIC.values())


def test_a_message_cut_after_its_first_sentence_keeps_its_signature() -> None:
    """Each message of HEADED whose head is not generic (a row each); those of HEAD_UNDONE strict expected failures."""
    each_row([(_head_key(m), m) for m in HEADED if _head(m["text"])[0] not in HEAD_GENERIC], _head_keeps_its_signature,
             HEAD_UNDONE)


def _head_keeps_its_signature(m: dict[str, str]) -> None:
    text, sid = m["text"], m["expect"]
    sid = _scanned(sid, _hits(text))
    head, start = _head(text)
    for cut in (head, f"{head} {start}"):  # the head alone, and with the start of the next word the cut left
        assert sid in _hits(cut), (cut, sorted(_hits(cut)))


@pytest.mark.parametrize("head", sorted(HEAD_GENERIC))
def test_a_generic_head_is_not_named_by_the_message_it_heads(head: str) -> None:
    sids = {m["expect"] for m in HEADED if _head(m["text"])[0] == head}
    assert sids and not sids & set(_hits(head)), (head, sorted(_hits(head)))


def test_each_undone_head_is_a_telling_head_of_the_tables() -> None:
    assert HEAD_UNDONE <= {_head_key(m) for m in HEADED}


def test_the_sdwebui_log_cut_after_xformers_head_names_xformers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """am-sdwebui-16439: the stored text stops at "xFormers can't load C++/CUDA extensions. xFor"."""
    text = (FIXTURES / "logs" / "am-sdwebui-16439-xformers-cut.log").read_text(encoding="utf-8")
    assert text.rstrip().endswith("xFor")
    diagnoses(text, "xformers-built-for-other-torch", ["xformers"], tmp_path, capsys)


@pytest.mark.parametrize("text", [
    # near misses of xFormers' head: another library's copy of the sentence, and prose about it
    "fmha can't load C++/CUDA extensions. fmha was built for a different version of PyTorch or Python.",
    "the docs say xformers can load C++/CUDA extensions when built for your torch",
])
def test_a_near_miss_of_xformers_head_is_not_claimed(text: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    unclaimed(text, tmp_path, capsys)

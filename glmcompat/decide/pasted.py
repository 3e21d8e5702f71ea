"""The text the libraries printed, from a log as users paste it (issue 38): what a terminal, a log collector, a CI
runner, a cell's output, a quoted GitHub comment or a web page added to each line is taken off before the signatures run,
and a message a terminal or a thread wrapped across lines is joined again. Each line keeps the number of the user's
line it came from (a joined message, its first line's), so what ``glmcompat explain`` reports points at the log.

Read per line (:func:`clean`), in this order:

* ANSI colour and cursor codes (``ESC[31m``), and a carriage-return progress bar: the text after the last ``\\r``
  (what the terminal showed last);
* HTML escapes of a page's source (``&gt;``, ``&#39;``, ``&quot;``), where the line holds one;
* quote markers of a (nested) GitHub quote (``> ``, ``> > >``), not the REPL's ``>>>``;
* the prefixes log collectors put before each record, repeatedly: GitHub Actions' ``2024-..Z`` and ``##[error]``,
  docker build's ``#8 12.34``, a timestamp (``2024-01-02 12:00:00,123``, ``[2025-01-02 12:00:00 TP0]``) and the level
  after it, vLLM's ``INFO 01-02 12:00:00 [file.py:12]``, torchrun's ``[rank0]:``, the actors' and vLLM's process prefixes
  (``(VllmWorker TP0 pid=123)``, ``(EngineCore_0 pid=9)``, ``(raylet, ip=...)``), mpirun's ``[1,0]<stderr>:``,
  a test runner's ``E   `` and an issue title's ``[Bug]:``;
* pip's and uv's box drawing (``× ``, ``│ ``, ``╰─> ``, ``├─▶ ``): the text they frame;
* a cell's traceback (``----> 3 import x``, ``File ~/x/site-packages/m/f.py:12``): CPython's form;
* a path's doubled backslashes (``C:\\\\Users\\\\x``, a repr's or a JSON string's): one.

Then joined (:func:`pasted`): a line wrapped where a terminal's, a thread's or a cell's width ended it, whose next line
goes on with the same message (it starts at column 0, with no word that opens a record). The break is read as a cut
inside a word (a soname, a path, a version: joined as is) or at a space (joined with one).

With the signatures (as ``glmcompat explain`` reads a log), a message broken at any word boundary, at no width the log
shares (a user's re-typing, a page's own wrap: x-animateanyone-114's "... with CUDA capability" / "sm_90 is not
compatible ..."), is joined too where the join holds a signature's message that no line of it holds alone, and a join the
width alone read as a cut inside a word is read at a space where a signature reads more of it that way. A line that opens
a record of its own (a traceback's, an exception's header, a line with its own record prefix, a shell's or a REPL's
prompt: ">>> import torch") is never joined so.
Pure: no I/O.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain

from glmcompat.model.signatures import SignatureRow, reads_more, split_message

MAX_JOIN = 8  # lines a wrapped message may span
MAX_TEXT = 8192  # a joined line stops growing here (the scanner reads a line's first 8192 characters)
LOOKAHEAD = 2000  # lines read before the first is given, to tell the width a log was hard-wrapped at
MIN_WIDTH = 60  # no terminal, page or notebook wraps narrower
WRAPPED_LINES = 3  # lines that must share the longest length for it to be read as a wrap width

_ANSI = re.compile(r"\x1b(?:\[[0-9;?]{0,40}[ -/]{0,4}[@-~]|\][^\x07\x1b]{0,400}(?:\x07|\x1b\\)|[()][A-Za-z0-9]|[=>78])")
_HTML = re.compile(r"&(?:#\d{1,7}|#[xX][0-9A-Fa-f]{1,6}|gt|lt|amp|quot|apos|nbsp);")
_QUOTE = re.compile(r"^[ \t]{0,3}(?:>(?!>>|=)[ \t]?){1,12}")  # not the REPL's >>>, nor a version's >= (">= 2.1.0")
# one record prefix each; a line may carry several (a CI runner's timestamp before a container's before vLLM's)
_PREFIXES = [re.compile(p) for p in (
    # GitHub Actions: each line's ISO timestamp, and its workflow commands
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z (?=##\[|\S)(?!(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE) )",
    r"^##\[(?:error|warning|notice|debug|group|endgroup|section|command)\]",
    # docker build (BuildKit): "#8 12.34 " before each line a step prints, or its time alone ("0.934 ", as the TTY view
    # of a failed step prints it)
    r"^#\d{1,4} \d{1,6}\.\d{1,4} ",
    r"^\d{1,5}\.\d{3} (?=\S|\s{1,16}\S)",
    # fix-p: the same time past 10 s, which BuildKit prints with 2 decimals up to 100 s and 1 after ("75.31 ", "123.4 ":
    # moby/buildkit tag v0.32.2 util/progress/progressui/display.go:768-775, prec 3 under 10 s, 2 under 100, else 1;
    # printErrorLogs at :785 repeats a failed step's lines, each with its time and without "#N", under " > [step]:")
    r"^(?:\d{2}\.\d{2}|\d{3,5}\.\d) (?=\S|\s{1,16}\S)",
    # a timestamp, the logger's name and the level after it: Python's logging ("%(asctime)s - %(name)s - %(levelname)s -
    # "), loguru's ("2026-02-04 15:04:36.023 | INFO     | mod:func:585 - "), SGLang's ("[2025-01-02 12:00:00 TP0] "),
    # Rust tracing's (TGI: "2024-03-13T15:34:11.255262Z  WARN text_generation_launcher: ")
    r"^\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?(?: (?:[A-Z]{1,4}\d{1,4} ?){1,4})?\]?"
    r"(?:\s{0,3}[-|:]\s{1,3}|\s{1,3})"
    r"(?:(?:[\w.-]{1,80}\s{0,3}[-|]\s{1,3})?\[?(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|TRACE)\]?"
    r"(?:\s{0,12}[-|:]\s{1,3}|\s{1,12}))?"
    r"(?:[a-z][a-z0-9]{0,40}(?:_|::)[\w:]{0,80}: |\[[\w./-]{1,80}:\d{1,6}(?::[\w<>.]{1,80})?\]\s{1,3}|"
    r"[\w.<>]{1,120}:[\w<>]{1,80}:\d{1,6}\s{1,3}-\s{1,3}|[\w.]{1,80}:\d{1,6}\s{0,3}[-:]\s{1,3})?",
    # rich's log handler (a time, the level padded to its column): "17:22:43-020113 INFO     "
    r"^\[?\d\d:\d\d:\d\d(?:[.,-]\d{1,9})?\]?\s{1,4}(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL)\s{1,12}",
    # vLLM's logger: "INFO 01-02 12:00:00 [file.py:12] ", older "INFO 01-02 12:00:00 file.py:12] "
    r"^(?:INFO|WARNING|ERROR|DEBUG|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})? \[?[\w./-]{1,80}:\d{1,6}\] ",
    # syslog's and journald's (journalctl): "Oct 04 13:19:39 host unit[394]: "
    r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [\w.-]{1,64} [\w.@/()-]{1,80}(?:\[\d{1,9}\])?: ",
    # glog's (absl, NCCL's C++ side): "E0102 12:00:00.123456 1234 file.cc:12] "
    r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{1,6}\s{1,8}\d{1,8} [\w./-]{1,80}:\d{1,6}\] ",
    # torchrun's per-rank prefix, and mpirun's --tag-output
    r"^\[(?:rank|default)\d{1,5}\]: ?",
    r"^\[\d{1,5},\d{1,5}\]<(?:stdout|stderr)>: ?",
    # Ray's and vLLM's process prefixes: "(VllmWorker TP0 pid=123) ", "(EngineCore_0 pid=9) ", "(pid=1, ip=10.0.0.1) "
    r"^\((?:[\w.-]{1,60} ){0,3}pid=\d{1,9}(?:, ip=[\w.:-]{1,60})?\) ?",
    r"^\([\w.-]{1,60}, ip=[\w.:-]{1,60}\) ?",
    # pytest's failure lines: "E   ImportError: ..."
    r"^E(?: {1,8}|$)",
    # an issue title's tag: "[Bug]: ", "[Installation] "
    r"^\[(?:Bug|BUG|bug|Usage|Installation|Feature|Question|Doc|Docs|Performance|Misc|Help|Error|Issue|Bugfix|"
    r"Installation Issue|Bug Report)\]:?\s{0,3}",
)]
_HAS_PREFIX = re.compile(r"^(?:\d{1,5}\.\d{3} |\d{2}\.\d{2} |\d{3,5}\.\d |[A-Z][a-z]{2} [ \d]\d \d\d:|\d{4}-\d\d-\d\d|\[?\d\d:\d\d:\d\d|##\[|#\d|\[|\(|E |E$|(?:INFO|WARNING|ERROR|DEBUG|CRITICAL) \d|[IWEF]\d{4} )")
# pip's (rich) and uv's (miette) boxes: the frame before the text it holds
_BOX = re.compile(r"^(?P<indent>\s{0,12})(?:[×│├╰┃┆║]\s?(?:[─━]{1,4}\s?[>▶➤]\s?)?|[─━]{1,4}\s?[>▶➤]\s?)(?!\S{0,40}[─│])")
# a notebook's traceback: IPython's arrow at the failing line, and its frame header
_ARROW = re.compile(r"^-{1,8}> ?\d{1,6} ")
_NB_FILE = re.compile(r"^File (?P<path>[~/.\w][^\s:]{0,500}?|[A-Za-z]:\\[^:]{0,500}?):(?P<line>\d{1,6})(?:,? in (?P<fn>\S{1,200}))?\s{0,4}$")
_DOUBLE_BACKSLASH = re.compile(r"(?<=[\w.:~-])\\\\(?=[\w.~-])")

# a line that opens a record of its own: never the continuation of the line before
_OPENS = re.compile(
    r"^(?:Traceback|File |During handling|The above exception|Caused by|Collecting|Downloading|Requirement|Installing|"
    r"Successfully|Building|Running|Using|Obtaining|Processing|Attempting|Found|Uninstalling|Looking|Preparing|Getting|"
    r"Created|Stored|Failed|ERROR|WARNING|INFO|DEBUG|note:|error:|warning:|hint:|help:|running |copying |creating |"
    r"writing |reading |adding |removing |building |compiling |gcc |g\+\+ |c\+\+ |nvcc |/|\./|\d{1,4}[:-]\d\d[:-]\d\d|[A-Za-z][\w.-]{0,60}: |[A-Za-z_][\w.]{0,100}"
    r"(?:Error|Exception|Warning|Exit|Interrupt)\b|[A-Z][\w .-]{0,40}: |\w{1,40}=)")
# a line that opens a record whatever the line before it (a traceback, a timestamp, a prompt, pip's and uv's own lines)
_STRONG = re.compile(r"^(?:Traceback |File \"|During handling|The above exception|\d{4}-\d\d-\d\d|\[|\$ |>>> |[A-Z][a-z]{2} [ \d]\d |"
                     r"Collecting |Downloading |Requirement already|Installing |Successfully |Building |Running |Using |ERROR:|"
                     r"WARNING:|INFO:|error:|warning:|note:|hint:|help:|×|│|╰)")
_WARNING_AT = re.compile(r"\.py:\d{1,6}: $")  # Python's warnings.formatwarning: "<file>:<line>: <Category>: <message>"
_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]{0,100})?(?:Error|Exception|Warning|Exit|Interrupt)\b")
# what a continuation may start with: the rest of a word, a name, a version, a path, a clause
_GOES_ON = re.compile(r"^[a-z0-9._=,;)\]'\"`/+~]")
# a line that is an item of a list of its own (pip freeze, pip list, a requirements file): never joined
_ROW = re.compile(r"^[A-Za-z0-9][\w.-]{0,80}(?:\[[\w,-]{1,80}\])?(?:\s{0,4}(?:==|===|>=|<=|~=)\s{0,4}|\s{1,40})v?\d[\w.+!-]{0,60}"
                  r"(?:\s{1,40}\S{1,300}){0,6}\s{0,4}$|^[A-Za-z0-9][\w.-]{0,80}\s{0,4}@\s{0,4}\S{1,500}$")
# a shell's or a REPL's prompt: the command typed, a line of its own
_PROMPT = re.compile(r"^\s{0,4}(?:[$#%❯➜>]|>>>|\.\.\.|In \[\d{1,6}\]:|\([\w.-]{1,60}\)\s{0,2}\S{0,200}[$#])\s")
_SPECIAL = "._/\\=<>~!+-"
# the widths terminals, notebooks and pages wrap at: a line of one of them, cut inside a word, goes on in the next
TERMINAL_WIDTHS = frozenset({80, 100, 120, 132, 140, 150, 160, 180, 200, 220, 240})
WRAP_WIDTH = 60  # a break at a space joins lines only where the first is at least this long (a wrapped message)
def clean(line: str) -> str:
    """``line`` as the library printed it: the terminal's, the collector's and the page's additions taken off."""
    return _cleaned(line)[0]


def _cleaned(line: str) -> tuple[str, int]:
    """:func:`clean`'s line, and how many characters of record prefixes it took off (a logging handler that wraps a
    long message indents its next lines by as many)."""
    line = line.rstrip("\n")
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if "\b" in line:  # a spinner drawn with backspaces ("... -\b \bdone"): each erases the character before it
        out: list[str] = []
        for ch in line:
            if ch == "\b":
                if out:
                    out.pop()
            else:
                out.append(ch)
        line = "".join(out)
    if "\r" in line:  # a progress bar redrawn in place: what the terminal showed last
        parts = [p for p in line.split("\r") if p.strip()]
        line = parts[-1] if parts else ""
    if "&" in line and _HTML.search(line) is not None:
        line = html.unescape(line).replace("\xa0", " ")
    if ">" in line[:16] and (q := _QUOTE.match(line)) is not None and q.end() > 0 and not line.startswith(">>>"):
        line = line[q.end():]
    before = len(line)
    for _ in range(6):  # prefixes in any order, each at most once per pass
        if _HAS_PREFIX.match(line) is None:
            break
        for p in _PREFIXES:
            m = p.match(line)
            if m is not None and m.end() > 0:
                line = line[m.end():]
                break
        else:
            break
    width = before - len(line)
    if line[:14].lstrip()[:1] in ("×", "│", "├", "╰", "┃", "┆", "║", "─", "━") and (b := _BOX.match(line)) is not None:
        line = b.group("indent") + line[b.end():]
        if line.rstrip().endswith("│"):  # rich's traceback panel: the text between its borders
            line = line.rstrip()[:-1].rstrip()
    if line.startswith("-") and (a := _ARROW.match(line)) is not None:
        line = "    " + line[a.end():]  # CPython's code line under its frame
    elif line.startswith("File ") and '"' not in line[:6] and (f := _NB_FILE.match(line)) is not None:
        line = f'  File "{f.group("path")}", line {f.group("line")}' + (f", in {f.group('fn')}" if f.group("fn") else "")
    if "\\\\" in line:
        line = _DOUBLE_BACKSLASH.sub(lambda _: "\\", line)
    return line, width


# a snippet's line that calls print() and writes what it printed as a comment after it ("print(torch.__version__)  #
# 2.3.1+cpu", glmcompat.model.signatures LogContext._printed): the comment, and so the line, ends where the line does
_COMMENTED_PRINT = re.compile(r"^\s{0,8}(?:>>> )?print\([^\n]{1,300}\)\s{1,40}#")
# fix-v: a snippet's whole print() call on a line of its own (a REPL's, a quoted console session's): the statement ends at
# the line's end, and what it printed (a version, "1.9.3") is the next line of its own, never the rest of a cut name
_PRINT_STATEMENT = re.compile(r"^\s{0,8}(?:>>> |In \[\d{1,5}\]: )?print\((?:[^()\n]|\([^()\n]{0,100}\)){1,300}\)\s{0,4}$")


def _joins(a: str, b: str) -> str | None:
    """The glue between ``a`` and the next line ``b`` where ``b`` goes on with ``a``'s message ("" for a cut inside a
    word, " " for a break at a space), or None where ``b`` is a line of its own."""
    if a.strip() == "File" and b.lstrip().startswith('"') or (
            a.rstrip().endswith('",') and a.lstrip().startswith(('File "', '"')) and b.lstrip().startswith("line ")):
        return " "  # a traceback's frame header wrapped at a hanging indent (uv's report: File / "path", / line N)
    if not b or len(a.strip()) < 16:
        return None
    cut_path = b[:1] == "/" and "/" in a.rsplit(None, 1)[-1]  # a path or URL cut at the width ("…/whl" / "/cpu …")
    if len(a) in TERMINAL_WIDTHS and not _framed(a) and (_OPENS.match(b.lstrip()) is None or cut_path) \
            and (not b[0].isspace() or b[1:2].strip()):
        # a line that fills a terminal's width, cut there (before a space, or inside a word); where a lowercase letter
        # meets a capital, or a clause's punctuation a word, the cut fell between two words (a page's wrap at that width)
        between = (a[-1].islower() and b[0].isupper()) or (a[-1] in ",;)" and b[0].isalpha())
        return " " if between else ""
    if _COMMENTED_PRINT.match(a) is not None or _PRINT_STATEMENT.match(a) is not None:
        return None  # fix-q: a snippet's print() call with its output as a comment: Python's comment ends at the line's end
    if b[0] == " " and b[1:2].strip() and len(a) >= WRAP_WIDTH and _OPENS.match(b[1:]) is None \
            and _GOES_ON.match(b[1:]) is not None and not a.rstrip().endswith((":", "!", "?", ";")):
        return ""  # a wrap just before a space: the space opens the next line
    if a.endswith(" ") and not a.endswith("  ") and len(a) >= 30 and not b[0].isspace() and _STRONG.match(b) is None \
            and (_WARNING_AT.search(a) is not None or _EXCEPTION.match(b) is None) and _ROW.match(a.strip()) is None:
        return ""  # a soft wrap at a space, the space left at the end of the line (fold -s, a page's copy)
    if b[0].isspace() or _GOES_ON.match(b) is None or _OPENS.match(b) is not None:
        return None
    if a.rstrip().endswith((":", "!", "?", ";")) or a.lstrip().startswith(('File "', "Traceback")) or _PROMPT.match(a):
        return None
    if _ROW.match(a.strip()) is not None or _ROW.match(b) is not None or a.endswith("\\"):
        return None
    if a.split(None, 1)[0] == b.split(None, 1)[0]:  # records of one kind, one a line ("ptxas ...", "ptxas ...")
        return None
    if a.endswith((" ", "\t")):
        return ""
    if a[-1] in "\"'" and a.count(a[-1]) % 2 == 0:
        return None  # a quoted text closed at the line's end (a shell's python -c "..." command): no word was cut there
    tail = a.rsplit(None, 1)[-1]
    head = b.split(None, 1)[0]
    if a.endswith("."):  # a sentence ends here, unless a version was cut after its dot ("torch==2.1." / "0, but")
        return "" if b[0].isdigit() and any(c.isdigit() for c in tail) else None
    if tail[-1] in _SPECIAL:  # "libcudart." / "so.12", "/usr/local/" / "cuda", "flash_" / "attn"
        return ""
    if tail[-1].isdigit():  # "libcudart.so.1" / "2: cannot", "torch==2" / ".1.0"
        return "" if b[0].isdigit() or b[0] in "._-+" else (" " if len(a) >= WRAP_WIDTH and b[0].islower() else None)
    if any(c in tail for c in _SPECIAL) and (any(c in head for c in _SPECIAL) or b[0] in "._-+"):
        return ""  # a path, soname or module cut between letters ("flash_attn_2_cu" / "da.cpython-310...so")
    return " " if len(a) >= WRAP_WIDTH and b[0].islower() else None


def _visible(raw: str) -> str:
    """What a terminal shows of ``raw``: no colour codes, the last redraw of a carriage-return line."""
    text = _ANSI.sub("", raw) if "\x1b" in raw else raw
    return text.rsplit("\r", 1)[-1] if "\r" in text else text


_FRAMED = ("|", "│", "+", "┃", "║", "━", "─", "═", "╯", "╮", "┘", "┐", "╝", "╗")
_COLUMNS = re.compile(r"\S {2,}\S{1,200} {2,}\S")  # a table's row: columns aligned with runs of spaces
_RULE = frozenset("-=*#_~. ")


def _framed(text: str) -> bool:
    """Whether ``text`` is a table's or a panel's line (it ends in a frame), or a rule: a width shared by design."""
    t = text.rstrip()
    return t.endswith(_FRAMED) or not set(t) - _RULE


def width_of(lines: Sequence[str]) -> int:
    """The width a terminal (or ``fold``, or a page) hard-wrapped these lines at, or 0 where they show none: the length of
    the longest lines where at least :data:`WRAPPED_LINES` lines have it, no line is longer, and fewer lines end in the
    15 columns before it than at it (a message's own short lines, a page's wrap at spaces, end anywhere below it; a table's
    or a panel's lines, which end in their frame, are no wrap)."""
    counts: dict[int, int] = {}
    longest = 0
    texts = [_visible(raw) for raw in lines]
    for k, text in enumerate(texts):
        size = len(text)
        longest = max(longest, size)
        after = texts[k + 1].split(None, 1)[:1] if k + 1 < len(texts) else []
        if after and text.split(None, 1)[:1] == after:
            continue  # records of one kind, one a line ("ptxas ...", "ptxas ..."): their length is no wrap's
        if size >= MIN_WIDTH - 15 and not _framed(text) and _COLUMNS.search(text) is None:
            counts[size] = counts.get(size, 0) + 1
    if longest < MIN_WIDTH:
        return 0
    full = counts.get(longest, 0)
    near = sum(counts.get(longest - k, 0) for k in range(1, 16))  # a wrap cuts every long line to the width: few end near it
    return longest if full >= WRAPPED_LINES and full > near else 0


SCREEN_MIN_WIDTH = 40  # the narrowest terminal row read as a screen's row (below it: a listing's aligned columns)
SCREEN_MIN_ROWS = 3  # rows one line must hold, each but the last padded with blanks, to be read as a screen's copy
SCREEN_INDENT = 8  # the most blanks a row may open with (a traceback's frame, its code line), past the row before's padding


def screen_rows(line: str) -> list[str]:
    """A terminal's screen copied without its line ends (each row padded with blanks to the terminal's width, the rows
    run together on one line) -> its rows, blanks at their ends taken off; ``[line]`` where the line is not one: the
    width is where the first row's padding ends, and at least :data:`SCREEN_MIN_ROWS` - 1 rows of that width each end
    in blanks (at least two, its padding) and open with at most :data:`SCREEN_INDENT` of them; the rest of the line
    is the last row (a long one wraps on the screen, unpadded)."""
    if "   " not in line or len(line) < SCREEN_MIN_WIDTH * SCREEN_MIN_ROWS:
        return [line]
    first = _PADDING.search(line)
    width = first.end() if first is not None else 0
    if width < SCREEN_MIN_WIDTH:
        return [line]
    rows, at = [], 0
    while at + width < len(line):
        row = line[at:at + width]
        if not row.endswith("  ") or not row.strip() or len(row) - len(row.lstrip(" ")) > SCREEN_INDENT:
            break
        rows.append(row)
        at += width
    rest = line[at:]
    if len(rows) < SCREEN_MIN_ROWS - 1 or not rest.strip() or len(rest) - len(rest.lstrip(" ")) > SCREEN_INDENT:
        return [line]
    return [row.rstrip() for row in (*rows, rest)]


_PADDING = re.compile(r"\S {8,}(?=\S)")


def _screens(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """``lines``, a screen's rows run together on one line (:func:`screen_rows`) given one by one, each with that line's
    number."""
    for n, raw in lines:
        if len(raw) < SCREEN_MIN_WIDTH * SCREEN_MIN_ROWS:
            yield n, raw
            continue
        for row in screen_rows(raw.rstrip("\n")):
            yield n, row


def pasted(lines: Iterable[tuple[int, str]], signatures: Sequence[SignatureRow] = ()) -> Iterator[tuple[int, str]]:
    """(number, line) pairs of a log as pasted -> the lines the libraries printed, each with its first line's number
    (:func:`clean` for each line; a message wrapped across lines joined again, at most :data:`MAX_JOIN` of them).

    The first :data:`LOOKAHEAD` lines are read before any is given, to tell the width a terminal hard-wrapped the log at
    (:func:`width_of`): a line of that width goes on in the next one, as it stands (a hard wrap cuts anywhere).

    With ``signatures``, a message a user or a page broke at any word boundary (lines of any length) is joined too: a
    line and the next ones (at most :data:`SPLIT_LINES`, each next to the one before, none a record of its own) whose
    join, at a space, holds a signature's message that runs from the first line into the last and that no line of them
    holds alone (:func:`glmcompat.model.signatures.split_message`); a message cut after its values, where the signature
    reads that cut, likewise."""
    it = iter(unshared(_screens(lines)))
    head: list[tuple[int, str]] = []
    for pair in it:
        head.append(pair)
        if len(head) >= LOOKAHEAD:
            break
    width = width_of([raw for _, raw in head])
    records = _pip_records(_joined(chain(head, it), width))
    if signatures:
        return _completed(records, signatures)
    return ((n, text) for n, text, _, _, _ in records)


SPLIT_LINES = 4  # lines a message broken at word boundaries may span (a line and the next three)
# a line that is a record of its own, never the rest of a message broken at a word: a traceback's, an exception's header
# ("RuntimeError: ..."), a prompt's, pip's and uv's own lines
_OWN = re.compile(r"^\s{0,12}(?:File \"|Traceback |During handling|The above exception|\^{2,}|~{2,})|^[A-Za-z_][\w.]{0,100}"
                  r"(?:Error|Exception|Warning|Exit|Interrupt):")


Record = tuple[int, str, int, int, tuple[int, ...]]  # first line's number, text, last line's number, prefix width, cuts


def _completed(records: Iterable[Record], signatures: Sequence[SignatureRow]) -> Iterator[tuple[int, str]]:
    """:func:`pasted`'s records, a message broken at word boundaries across them joined again (with ``signatures``)."""
    buf: list[Record] = []
    for rec in records:
        buf.append(rec)
        if len(buf) >= SPLIT_LINES:
            yield _first(buf, signatures)
    while buf:
        yield _first(buf, signatures)


def _first(buf: list[Record], signatures: Sequence[SignatureRow]) -> tuple[int, str]:
    """The first record of ``buf``, taken off it, joined with the next ones where they complete a message split
    across them. Where the record joined lines that its width alone read as cut inside a word (a line as long as a
    terminal's, a path's or a soname's end), the join at a space instead is taken where a signature reads more of it
    (:func:`glmcompat.model.signatures.reads_more`): a page's break between two words of a message."""
    n, text, last, _, cuts = buf[0]
    heads = [text]  # the readings of the first record: as joined, and at a space where its lines were read as cut
    if cuts:
        spaced = _spaced(text, cuts)
        if reads_more(text, spaced, signatures):
            text = heads[0] = spaced
        else:
            heads.append(spaced)
    if not text.lstrip().startswith(('File "', "Traceback ")) and _PROMPT.match(text) is None:
        pieces, took = [text], 0
        for k in range(1, len(buf)):
            m, nxt, _, prefixed, _ = buf[k]
            if m != buf[k - 1][2] + 1 or prefixed or _OWN.match(nxt) or _PROMPT.match(nxt) or len(" ".join(pieces)) + len(nxt) >= MAX_TEXT:
                break
            readings = [nxt.strip()] + ([_spaced(nxt, buf[k][4]).strip()] if buf[k][4] else [])
            if took:  # joined already: the next lines go on only where they read more of the message (a line that
                # reads no more alone is held for the next, "... backend. Detected" / "capability: `(7, 0)`.")
                held = pieces[took + 1:]
                more = next((r for r in readings if split_message([" ".join(pieces[:took + 1]), *held, r], signatures)),
                            None)
                if more is None:
                    pieces.append(readings[0])
                    continue
                pieces = [*pieces[:took + 1], *held, more]
                took = k
                continue
            whole = next(([h, *pieces[1:], r] for r in readings for h in heads
                          if split_message([h, *pieces[1:], r], signatures)), None)
            pieces = [*pieces, readings[0]] if whole is None else whole
            if whole is not None:
                took = k
        if took:
            del buf[:took + 1]
            return n, " ".join(pieces[:took + 1])
    del buf[0]
    return n, text


# pip's report of the installed packages' broken requirements, one record a line (pip-24.3.1
# src/pip/_internal/commands/install.py:617-640 _warn_about_conflicts: "{name} {version} requires {requirement}, which is
# not installed." and "{name} {version} requires {requirement}, but {you} have {dep_name} {dep_version} which is
# incompatible.", "you'll" under the legacy resolver, the parts joined by "\n"; src/pip/_internal/commands/check.py:40-56,
# `pip check`: "%s %s requires %s, which is not installed." and "%s %s has requirement %s, but you have %s %s."). The
# requirement is a packaging Requirement, printed with its environment marker ("triton==3.1.0; platform_system ==
# \"Linux\" and python_version < \"3.13\"", src/pip/_vendor/packaging/requirements.py _iter_parts: "; {marker}"), so a
# record is long and a page or a paste wraps it, at the marker's spaces, with blank lines between its pieces.
_PIP_HEAD = re.compile(r"^\s{0,4}[A-Za-z0-9][\w.-]{0,80} v?\d[\w.+!-]{0,60} (?:requires|has requirement)(?: |$)")
_PIP_CLOSED = re.compile(r", (?:but (?:you|you'll) have [A-Za-z0-9][\w.-]{0,80} \S|which is not installed\.)")
# what the rest of a wrapped record starts with: a specifier's or a marker's words, quotes, operators, its closing clause
_PIP_GOES_ON = re.compile(r"^\s{0,4}(?:[a-z0-9_'\"(),;<>=!~.]|\[)")
PIP_GAP = 3  # a wrapped record's pieces are at most two blank lines apart


def _pip_records(records: Iterable[Record]) -> Iterator[Record]:
    """``records``, each of pip's broken-requirement records (:data:`_PIP_HEAD`) that a paste wrapped across lines (with
    blank lines between its pieces, which end a record for :func:`_joined`) joined again: the record that opens with
    "<name> <version> requires ..." without its closing clause (", but you have ..." or ", which is not installed.") takes
    the next pieces, each going on with a requirement's words and none opening a record of its own (another package's
    "... requires ...", a traceback's, pip's own lines), up to the one that closes it. Pieces that never close it are
    left as they were: pip prints each record on a line of its own, so separate records are never joined."""
    held: list[Record] = []
    for rec in records:
        if held:
            last = held[-1]
            text = rec[1]
            goes_on = (rec[0] - last[2] <= PIP_GAP and len(held) < MAX_JOIN and _PIP_HEAD.match(text) is None
                       and _STRONG.match(text.lstrip()) is None and _OWN.match(text) is None
                       and _PIP_GOES_ON.match(text) is not None)
            if goes_on:
                held.append(rec)
                joined = " ".join(r[1].strip() for r in held)
                if _PIP_CLOSED.search(joined) is not None:
                    yield held[0][0], joined, rec[2], held[0][3], ()
                    held = []
                continue
            yield from held
            held = []
        if _PIP_HEAD.match(rec[1]) is not None and _PIP_CLOSED.search(rec[1]) is None:
            held = [rec]
        else:
            yield rec
    yield from held


def _spaced(text: str, cuts: tuple[int, ...]) -> str:
    """``text`` with a space at each of ``cuts`` (where lines were joined as cut inside a word)."""
    return "".join(text[a:b] + " " for a, b in zip((0, *cuts[:-1]), cuts, strict=True)) + text[cuts[-1]:]


def _joined(lines: Iterable[tuple[int, str]], wrap: int) -> Iterator[Record]:
    """The records of ``lines``: (the first line's number, the text, the last line's number, the width of the record
    prefix taken off the first line, where in the text lines were joined as cut inside a word by :func:`_joins`)."""
    held: tuple[int, str] | None = None
    cuts: list[int] = []
    span = held_last = indent = 0
    raw_prev = ""
    full = False  # whether the held record's last line filled the width the log was wrapped at
    for n, raw in lines:
        line, width = _cleaned(raw)
        if not line.strip():
            if held is not None:
                yield held[0], held[1], held_last, indent, tuple(cuts)
                held = None
            continue
        if held is not None:
            glue: str | None
            guessed = False  # a cut inside a word read from the lines alone (no width the whole log was wrapped at)
            if full and span < MAX_JOIN * 4 and n == held_last + 1:  # a hard wrap: the next line goes on as it stands
                glue, line = "", _visible(raw)
            else:
                glue = _joins(raw_prev, line) if span < MAX_JOIN and not width else None
                guessed = glue == "" and not line[:1].isspace() and not raw_prev.endswith((" ", "\t"))
                if glue is None and indent >= 12 and span < MAX_JOIN and len(line) > indent and line[:indent].isspace() \
                        and not line[indent].isspace():  # a logging handler's wrap: its next lines at the message's column
                    glue, line = " ", line[indent:]
                if glue == " " and line[:1].isspace():
                    line = line.lstrip()
            if glue is not None and n == held_last + 1 and len(held[1]) + len(line) < MAX_TEXT:
                if guessed:
                    cuts.append(len(held[1]))
                held = (held[0], held[1] + glue + line)
                span += 1
                held_last = n
                raw_prev = line
                full = bool(wrap) and len(_visible(raw)) == wrap
                continue
            yield held[0], held[1], held_last, indent, tuple(cuts)
        cuts = []
        held, span, held_last, raw_prev, indent = (n, line), 1, n, line, width
        full = bool(wrap) and len(_visible(raw)) == wrap and not _framed(_visible(raw))
    if held is not None:
        yield held[0], held[1], held_last, indent, tuple(cuts)


# the prefixes a log collector writes before every line of one source, the same text on each (a name, never a time):
# docker compose's service column (docker/compose cmd/formatter/logs.go, presenter.setPrefix (older releases without the blank after the bar):
# fmt.Sprintf("%-"+strconv.Itoa(width)+"s | ", p.name), the name padded to the widest; compose v1's
# compose/cli/log_printer.py build_log_prefix: name.ljust(width) + " | "), which Python's logging writes too for a
# "%(name)s | " field (FastChat's fastchat/utils.py build_logger: "%(asctime)s | %(levelname)s | %(name)s |
# %(message)s", its StreamToLogger writing stderr's lines under the logger "stderr"); `kubectl logs --prefix`'s
# "[pod/<pod>/<container>] " (kubernetes/kubectl pkg/cmd/logs/logs.go addPrefixIfNeeded: fmt.Sprintf("[%s/%s/%s] ",
# ref.Kind, ref.Name, ref.FieldPath's container)); stern's default output, the pod, the container, then the message (as stern/stern's
# README shows it; its template source is not cited here), a pod's name (a Deployment's or a
# StatefulSet's: a hyphen and a digit in it) and its container's
_SHARED = (
    re.compile(r"^[A-Za-z0-9][\w.-]{0,100}\s{1,60}\|(?: |$)"),
    re.compile(r"^\[pod/[\w.-]{1,253}/[\w.-]{1,63}\] ?"),
    re.compile(r"^(?=[a-z0-9.-]{0,252}-)(?=[a-z.-]{0,252}\d)[a-z0-9][a-z0-9.-]{0,252} [a-z0-9][a-z0-9-]{0,62} (?=\S|\s{0,40}\S|$)"),
)
SHARED_RUN = 3  # consecutive lines that must carry the same prefix for it to be read as a collector's


def _shared(text: str) -> str:
    """The collector's prefix ``text`` may carry (:data:`_SHARED`), or ""."""
    for p in _SHARED:
        m = p.match(text)
        if m is not None:
            return m.group(0)
    return ""


def unshared(lines: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
    """``lines``, a collector's prefix taken off each line of a run of at least :data:`SHARED_RUN` consecutive lines
    that carry the same one (:data:`_SHARED`: docker compose's service column, a logger's name column, kubectl's and
    stern's pod and container), after what :func:`clean` takes off (a timestamp and level before a logger's name
    column); up to three times, for a collector's prefix before another's (compose's column, then FastChat's
    "stderr | "). Text
    that differs from line to line is never taken: each prefix is the same string on every line of its run."""
    out = list(lines)
    for _ in range(3):
        cleaned = [clean(raw) for _, raw in out]
        heads = [_shared(c) for c in cleaned]
        changed = False
        k = 0
        while k < len(out):
            j = k
            while j + 1 < len(out) and heads[k] and heads[j + 1] == heads[k] and out[j + 1][0] == out[j][0] + 1:
                j += 1
            if heads[k] and j - k + 1 >= SHARED_RUN:
                for i in range(k, j + 1):
                    out[i] = (out[i][0], cleaned[i][len(heads[k]):])
                changed = True
            k = j + 1
        if not changed:
            break
    return out


__all__ = ["clean", "pasted", "screen_rows", "unshared", "width_of"]

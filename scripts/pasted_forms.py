"""Survey of the forms in which logs reach ``glmcompat explain`` (issue 38, glmcompat/decide/pasted.py): for each form the
reader takes off or joins, how many logs of tests/fixtures/explain/logs/ (or the paths given) show it at least once.

    python scripts/pasted_forms.py [LOG ...]
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from glmcompat.decide import pasted as P
from glmcompat.model.signatures import numbered_lines

PREFIX_NAMES = ["GitHub Actions timestamp", "GitHub Actions ##[cmd]", "docker build #N time", "docker build time",
                "timestamp/logger/level", "rich log handler", "vLLM logger", "journald/syslog", "glog", "torchrun [rankN]:",
                "mpirun [i,j]<stderr>:", "Ray/vLLM (Proc pid=)", "Ray (name, ip=)", "pytest E", "issue title [Bug]"]


def forms(path: Path) -> set[str]:
    """The forms ``path`` shows."""
    with path.open("rb") as f:
        raw = f.read()
    seen: set[str] = set()
    if b"\r\n" in raw:
        seen.add("CRLF")
    with path.open("rb") as f:
        lines = list(numbered_lines(f))
    if len(lines) == 1:
        seen.add("one line only (an issue title, a message)")
    for _, line in lines:
        if "\x1b" in line:
            seen.add("ANSI codes")
        if "\r" in line:
            seen.add("carriage-return redraw")
        if "\b" in line:
            seen.add("backspace spinner")
        if "&" in line and P._HTML.search(line):
            seen.add("HTML escapes")
        if P._QUOTE.match(line) and P._QUOTE.match(line).end() and not line.startswith(">>>"):
            seen.add("quote markers")
        rest = line
        for _ in range(6):
            if P._HAS_PREFIX.match(rest) is None:
                break
            for name, p in zip(PREFIX_NAMES, P._PREFIXES, strict=True):
                m = p.match(rest)
                if m is not None and m.end() > 0:
                    seen.add("prefix: " + name)
                    rest = rest[m.end():]
                    break
            else:
                break
        if rest[:14].lstrip()[:1] in ("×", "│", "├", "╰", "┃", "─", "━") and P._BOX.match(rest):
            seen.add("pip/uv/rich box drawing")
        if P._ARROW.match(rest):
            seen.add("Jupyter ----> arrow")
        if rest.startswith("File ") and P._NB_FILE.match(rest):
            seen.add("Jupyter File ~/...:N")
        if "\\\\" in rest and P._DOUBLE_BACKSLASH.search(rest):
            seen.add("doubled backslashes")
        if P.re.search(r"[A-Za-z]:\\", rest):
            seen.add("Windows paths")
        if P.re.match(r"^ {6}\S", line):
            seen.add("pip's indented subprocess output")
    cleaned = [P.clean(t) for _, t in lines]
    joined = list(P.pasted(iter(lines)))
    if len(joined) < len([c for c in cleaned if c.strip()]):
        seen.add("wrapped message joined")
    if P.width_of([t for _, t in lines]):
        seen.add("hard-wrapped at a shared width")
    return seen


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "explain"
                                               / "logs").glob("*.log"))
    counts: Counter[str] = Counter()
    for p in paths:
        counts.update(forms(p))
    print(f"{len(paths)} logs")
    for name, n in counts.most_common():
        print(f"{n:5d}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

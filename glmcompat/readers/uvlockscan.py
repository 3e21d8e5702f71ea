"""What a ``check`` verdict can depend on in a machine-written uv.lock, read at the speed its layout allows.

A pre-commit hook runs ``check`` on a lock that has just changed, so the verdict recorded for its old bytes does
not apply as such; but most edits touch nothing a verdict reads. :func:`projection` turns the lock's text into a
canonical text that keeps everything the full path (:mod:`glmcompat.readers.formats.uvlock`, then the
rules) reads and drops what it never reads, so two locks with the same projection get the same verdict, byte for
byte, and the start-up path (:mod:`glmcompat.cli.fastpath`) keys recorded verdicts by its digest. Dropped:

- comment lines (outside multi-line strings, which a lock holding any is not recognised for);
- of a package whose name no rule or matrix row can name (``relevant`` holds every name that can be: the
  caller's superset), present once in the lock, from the registry, never without a wheel or an sdist for a
  machine (an sdist, no wheel at all, or a ``py3-none-any`` wheel: no environment lists it among the packages it
  cannot install) and with a plain PEP 440 version, the version, wheels and sdist: a bump of such a package
  changes no environment the rules judge (each environment lists it with its version, and two environments hold
  the same version of it or not both before and after), so it changes no verdict.

Everything else is kept verbatim, so any other change changes the projection. Only the layout uv writes is
recognised: a dropped line must have exactly that layout (a wheel or sdist inline table of plain strings and
integers, checked in bulk; comment lines of printable text), so a file the full path would refuse never shares a
projection with one it accepts. None when the text is not recognised (the caller keys by the bytes then).

Pure and ``str`` methods only: the start-up path imports it before anything heavy (no ``re``, no ``tomllib``).
The property test (tests/readers/test_uvlockscan.py) checks, on every real lock in the fixtures and on fuzzed edits of
them, that locks with one projection give one verdict and that a change the full path sees changes the projection.
"""

from __future__ import annotations

from _blake2 import blake2b  # not hashlib, which loads OpenSSL: the start-up path imports this module

FORMAT = 2  # bump when the projection changes


def canonical(name: str) -> str:
    """PEP 503 normalisation with ``str`` methods (``re`` costs the start-up path more than the whole scan)."""
    s = name.lower().replace("_", "-").replace(".", "-")
    while "--" in s:
        s = s.replace("--", "-")
    return s


def _plain_version(v: str) -> bool:
    """Whether ``v`` is a plain PEP 440 version that :class:`packaging.version.Version` parses (conservatively:
    ``N(.N)*[{a|b|rc}N][.postN][.devN][+label(.label)*]``, at most 64 characters)."""
    if not v or len(v) > 64:
        return False
    if v.replace(".", "").isdigit() and v.isascii() and ".." not in v and v[0] != "." and v[-1] != ".":
        return True  # N(.N)*: nearly every version
    pub, plus, local = v.partition("+")
    if plus and not all(p and p.isascii() and p.isalnum() for p in local.split(".")):
        return False
    i = 0
    while i < len(pub) and (pub[i] == "." or "0" <= pub[i] <= "9"):
        i += 1
    release, rest = pub[:i], pub[i:]
    if release.endswith(".") and rest:  # "1.0.post1": the dot belongs to the suffix
        release, rest = release[:-1], "." + rest
    if not all(p and len(p) <= 18 for p in release.split(".")) or not release:
        return False
    for prefix in ("a", "b", "rc"):
        if rest.startswith(prefix) and rest[len(prefix):len(prefix) + 1].isdigit():
            rest = _digits_off(rest[len(prefix):])
            break
    for prefix in (".post", ".dev"):
        if rest.startswith(prefix) and rest[len(prefix):len(prefix) + 1].isdigit():
            rest = _digits_off(rest[len(prefix):])
    return rest == ""


def _digits_off(s: str) -> str:
    i = 0
    while i < len(s) and i < 19 and "0" <= s[i] <= "9":
        i += 1
    return s[i:] if i <= 18 else "!"


def _inline(line: str, start: int) -> dict[str, str | int] | None:
    """The inline table at ``line[start:]`` as uv writes it (``{ key = "text", key = 12 }`` to the end of the
    line, plain strings, no escape, no repeated key), or None for anything else."""
    if line[start:start + 2] != "{ " or not line.endswith(" }"):
        return None
    out: dict[str, str | int] = {}
    pos, end = start + 2, len(line) - 2
    while True:
        eq = line.find(" = ", pos, end)
        if eq < 0:
            return None
        key = line[pos:eq]
        if not key or key in out or not key.isascii() or not key.replace("-", "").replace("_", "").isalnum():
            return None
        pos = eq + 3
        if line[pos:pos + 1] == '"':
            close = line.find('"', pos + 1, end)
            if close < 0:
                return None
            text = line[pos + 1:close]
            if "\\" in text or not text.isprintable():  # no escape, no control character (nor other unprintable)
                return None
            out[key] = text
            pos = close + 1
        else:
            stop = line.find(",", pos, end)
            stop = end if stop < 0 else stop
            num = line[pos:stop]
            if not (num.isascii() and num.isdigit()) or (len(num) > 1 and num[0] == "0"):
                return None
            out[key] = int(num)
            pos = stop
        if pos == end:
            return out
        if line[pos:pos + 2] != ", ":
            return None
        pos += 2


def _wheel_tags(f: str) -> str:
    """What :func:`glmcompat.model.wheeltags.wheel_fits` reads of a wheel's location: its last three name parts."""
    name = f.split("?")[0].split("#")[0].rsplit("/", 1)[-1]
    if not name.endswith(".whl"):
        return "*"
    parts = name[:-4].split("-")
    return "*" if len(parts) < 5 else "-".join(parts[-3:])


def _fits_everywhere(tags: str) -> bool:
    if tags == "*":
        return True
    pys, _, plats = tags.split("-")
    return "any" in plats.split(".") and any(p.startswith("py") and p[2:3] in ("", "3") for p in pys.split("."))


def _without_comments(text: str) -> str | None:
    """``text`` without its comment lines (a ``#`` after anything else on its line is kept verbatim); None when a
    comment is not plain printable text. Blank lines stay: dropping them costs more than it ever saves."""
    if "#" not in text:
        return text
    keep: list[str] = []
    at = 0
    hit = text.find("#")
    while hit >= 0:
        start = text.rfind("\n", 0, hit) + 1
        if text[start:hit].strip(" ") == "":  # a comment line
            end = text.find("\n", hit)
            end = len(text) if end < 0 else end + 1
            comment = text[hit:end].rstrip("\n")
            if not comment.isprintable() or '"""' in comment or "'''" in comment:
                return None
            keep.append(text[at:start])
            at = end
            hit = text.find("#", end)
        else:
            hit = text.find("#", hit + 1)
    keep.append(text[at:])
    return "".join(keep)


_ROW = ("{ url = ", '", hash = "', '", size = ', ', upload-time = "', '" }')


def _rows_ok(rows: list[str]) -> bool:
    """Whether every line of ``rows`` is an inline table :func:`_inline` accepts: those of the shape uv writes
    (``{ url = "...", hash = "...", size = N, upload-time = "..." }``) checked in bulk (a few ``str`` calls for all of
    them), any other one by one."""
    text = "\n".join(rows)
    if not text:
        return True
    n = text.count("\n") + 1
    parts = text.split('"')
    if "\\" not in text and len(parts) == 6 * n + 1 and parts[0] == "{ url = " \
            and parts[-1] == " }" and parts[6:-1:6].count(" }\n{ url = ") == n - 1 \
            and parts[2::6].count(", hash = ") == n and "".join(parts[1::2]).isprintable():
        sizes = "\0".join(parts[4::6])  # each ", size = N, upload-time = ", N a plain integer
        if (sizes.startswith(", size = ") and sizes.endswith(", upload-time = ")
                and sizes.count("\0, size = ") == n - 1 and sizes.count(", upload-time = \0") == n - 1
                and sizes.count(", size = ") == n and sizes.count(", upload-time = ") == n):
            digits = sizes.replace(", size = ", "").replace(", upload-time = ", "")
            if "\0\0" not in digits and "\x000" not in "\0" + digits and digits.replace("\0", "").isdigit() \
                    and digits.isascii() and digits.count("\0") == n - 1 and digits[-1:] != "\0":
                return True
    return all(_inline(row, 0) is not None for row in text.split("\n"))


def _file_rows(rows: str, common: list[str], other: list[str]) -> None:
    """Put ``rows`` (lines of wheel or sdist tables) with those of uv's usual shape, or with the others."""
    n = rows.count("\n") + 1
    (common if rows.count('", size = ') == n and rows.count('"') == 6 * n else other).append(rows)


def _package(chunk: str, name: str, keep: frozenset[str] | set[str], out: list[str], rows: list[str],
             other: list[str]) -> bool:
    """Append the projection of one ``[[package]]`` table (``chunk``: its lines after the header; ``name``: its
    canonical name) to ``out``, and the wheel and sdist tables it drops to ``rows`` (those of uv's usual shape) or
    ``other`` (for the caller to check). A package named in ``keep``, or not laid out as uv writes one (name,
    version, registry source on its first three lines), is kept verbatim: a rule may read it, and it is rarely
    edited without its version. False when the layout is not uv's at all.

    No key is looked for twice: a table holding a key twice is refused by the full path whatever this makes of it,
    and the same text around the same replacements holds that key twice in any other lock of the same projection."""
    nl = chunk.find("\n")
    written = chunk[8:nl - 1]
    if not chunk.startswith('name = "') or chunk[nl - 1] != '"' or '"' in written or "\\" in written:
        return False
    vend = chunk.find("\n", nl + 1)
    send = chunk.find("\n", vend + 1)
    version = chunk[nl + 12:vend - 1]
    source = chunk[vend + 24:send]
    may_lose = not (name in keep or not chunk.startswith('version = "', nl + 1) or chunk[vend - 1] != '"'
                    or not chunk.startswith('source = { registry = "', vend + 1) or not source.endswith('" }')
                    or source.count('"') != 1 or "\\" in source or not _plain_version(version))
    if not may_lose:
        out.append(chunk)
        return True
    sub = chunk.find("\n[", nl)
    main = chunk[:sub + 1] if sub >= 0 else chunk
    cuts: list[tuple[int, int, str]] = []
    wat = main.rfind("\nwheels = [\n", nl)
    sdist = False
    dat = main.rfind("\nsdist = ", nl, wat if wat >= 0 else len(main))
    if dat >= 0:
        dend = main.find("\n", dat + 1)
        _file_rows(main[dat + 9:dend], rows, other)
        sdist = True
        cuts.append((dat + 1, dend + 1, "sdist *\n"))
    tags: list[str] = []
    if wat >= 0:
        wend = main.find("\n]\n", wat)
        if wend < 0:
            return False
        block = main[wat + 12:wend]  # "    { ... },\n    { ... }" (a comma after the last one or not)
        if block:
            n = block.count("\n") + 1
            if not block.startswith("    { ") or block.count(",\n    { ") != n - 1:
                return False
            block = block[4:].replace(",\n    { ", "\n{ ")
            block = block[:-1] if block.endswith(",") else block
            _file_rows(block, rows, other)
            if not sdist:  # which machines it installs on: read from the wheels' names
                for row in block.split("\n"):
                    w = {"url": row[9:row.find('"', 9)]} if row.startswith('{ url = "') else _inline(row, 0)
                    if w is None:
                        return False
                    f = w.get("url") or w.get("path") or w.get("filename")
                    if isinstance(f, str):
                        tags.append(_wheel_tags(f))
    if not (sdist or not tags or any(_fits_everywhere(t) for t in tags)):
        out.append(chunk)  # a machine may get neither a wheel nor an sdist of it: the verdict names its version
        return True
    cuts.append((nl + 1, vend + 1, "version *\n"))  # nothing but the rules could read it
    if wat >= 0:
        cuts.append((wat + 1, wend + 3, "wheels *\n"))
    cuts.sort()
    at = 0
    for start, end, repl in cuts:
        if start < at:
            return False
        out.append(main[at:start])
        out.append(repl)
        at = end
    out.append(chunk[at:])
    return True


def _part_ok(part: str) -> bool:
    """Whether a part of a lock (its head, or a package's lines) holds no multi-line string (the lines are read as
    lines) and no other spelling of the package array (the split misses it). A lock's parts are checked one by one,
    so that a package the memo holds, checked when it was recorded, is not read again."""
    if '"""' in part or "'''" in part:
        return False

    def other_spelling(start: int) -> bool:
        return not part.startswith("[[package]]\n", start) and "package" in part[start:part.find("\n", start)]

    if part.startswith("[[") and other_spelling(0):
        return False
    at = part.find("\n[[")
    while at >= 0:
        if other_spelling(at + 1):
            return False
        at = part.find("\n[[", at + 3)
    return True


def _scan(data: bytes, relevant: frozenset[str] | set[str]) -> tuple[str, list[str], list[str], set[str]] | None:
    """(the head before the first package, each package's lines, their canonical names, the names that keep their
    versions) of a lock whose layout is uv's, the packages not checked with :func:`_part_ok` yet; None otherwise."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\r" in text or "\t" in text or "\0" in text or text.startswith("\ufeff"):
        return None
    clean = _without_comments(text)
    if clean is None:
        return None
    chunks = clean.split("\n[[package]]\n")
    head = chunks[0] + "\n"
    if head.startswith("[[package]]\n") or not _part_ok(head):
        return None
    seen: set[str] = set()
    keep = set(relevant)
    packages = [c if c.endswith("\n") else c + "\n" for c in chunks[1:]]
    names = [canonical(c[8:c.find('"', 8)]) for c in packages]
    for name in names:  # a name with several entries keeps their versions: uv picks among them by version
        if name in seen:
            keep.add(name)
        seen.add(name)
    return head, packages, names, keep


def _rows_valid(rows: list[str], other: list[str]) -> bool:
    return _rows_ok(rows) and all(_inline(row, 0) is not None for block in other for row in block.split("\n"))


def projection(data: bytes, relevant: frozenset[str] | set[str]) -> str | None:
    """The canonical text of the uv.lock ``data`` a verdict depends on (see the module's doc), or None when its
    layout is not the one uv writes."""
    scanned = _scan(data, relevant)
    if scanned is None:
        return None
    head, packages, names, keep = scanned
    out: list[str] = [head]
    rows: list[str] = []
    other: list[str] = []
    for chunk, name in zip(packages, names, strict=True):
        out.append("[[package]]\n")
        if not _part_ok(chunk) or not _package(chunk, name, keep, out, rows, other):
            return None
    return "".join(out) if _rows_valid(rows, other) else None


Memo = dict[bytes, bytes]  # digest of a package's lines (and whether it keeps its version) -> digest of its projection


def projection_digest(data: bytes, relevant: frozenset[str] | set[str], memo: Memo) -> tuple[str, Memo] | None:
    """A digest of :func:`projection` (equal projections, equal digests; a digest of each package's projection in
    turn, so it is finer still), and the memo of this lock's packages; None when the layout is not uv's. A package
    whose lines ``memo`` holds (a lock's packages change a few at a time) is not read again: the memo was made by this
    code, for these names, from packages that were read and checked."""
    scanned = _scan(data, relevant)
    if scanned is None:
        return None
    head, packages, names, keep = scanned
    h = blake2b(digest_size=20)
    h.update(head.encode("utf-8"))
    made: Memo = {}
    rows: list[str] = []
    other: list[str] = []
    for chunk, name in zip(packages, names, strict=True):
        cd = blake2b(chunk.encode("utf-8"), digest_size=16, person=b"keep" if name in keep else b"may-lose").digest()
        pd = memo.get(cd)
        if pd is None:
            out: list[str] = []
            if not _part_ok(chunk) or not _package(chunk, name, keep, out, rows, other):
                return None
            pd = blake2b("".join(out).encode("utf-8"), digest_size=16).digest()
        made[cd] = pd
        h.update(pd)
    return (h.hexdigest(), made) if _rows_valid(rows, other) else None


def memo_bytes(memo: Memo) -> bytes:
    return b"".join(k + v for k, v in memo.items())


def memo_from(blob: bytes) -> Memo:
    """The memo :func:`memo_bytes` wrote (a blob of another length: none)."""
    if len(blob) % 32:
        return {}
    return {blob[i:i + 16]: blob[i + 16:i + 32] for i in range(0, len(blob), 32)}

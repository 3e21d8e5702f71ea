"""Warm ``glmcompat check``: answer from a content-addressed verdict cache before importing anything heavy.

A pre-commit hook runs ``check`` on every commit, mostly on files that did not change. The full path
imports packaging, argparse and the rules, reads the lock's cached environments and judges each one;
this path imports only ``os``, ``sys`` and ``_blake2`` (not ``hashlib``, which loads OpenSSL, nor ``json``,
which imports ``re``: together they cost more than the rest of a warm answer). Its records are a small
line-oriented format read without either. A verdict is keyed by glmcompat's
version, the command line, the working directory, whether stdout is a terminal, the matrix snapshot
(the shipped matrix as part of the code fingerprint; each ``--matrix`` file by its path and content digest) and
the bytes of every file named on the command line -- except a uv.lock, keyed by what a verdict reads of it (the
projection of :mod:`glmcompat.readers.uvlockscan`: a pre-commit hook runs on a lock that just changed, and most
edits, a comment, a re-uploaded wheel, a package no rule names bumped, change nothing a verdict reads; the package
names a verdict can read are recorded once per code and matrix, sealed, under ``verdicts/names-KEY``, by the first
full run); it also records every other input the full run read -- its read log
(:class:`glmcompat.matrix.readlog.ReadLog`: includes, the pyproject.toml beside a lock, the lock beside a
pyproject.toml, each with its digest or its absence, whatever a new reader opens or probes), never a list kept by
hand -- and is used only while they are unchanged. It stores exactly what the full path printed
and its exit code, so a hit prints the same bytes and exits the same way (a test compares both on every
fixture). With ``--against HEAD`` (the pre-commit hook's), the key also holds the commit ``HEAD`` names, read
from the repository's files (:mod:`glmcompat.readers.githead`). Anything the fast path does not understand
(another ``--against`` revision, an unknown option, a repository layout that reader does not follow, a cache
miss) falls through to the full path.
"""

from __future__ import annotations

import os

from glmcompat.cli.startup import (MAX_RECORD, REPLAY, keyed, load, matrix_part, parse_options, replay, save,
                                   use_color)
from glmcompat.matrix.locations import (MAX_DIGESTED, cache_dir_name, code_fingerprint, file_digest, hasher,
                                        matrix_file_names, read_bounded, read_stored, seal)
from glmcompat.model.memo import BoundedMemo

TYPE_CHECKING = False  # not typing's: importing typing costs the start-up path more than its whole answer
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from glmcompat.matrix.readlog import ReadLog
    from glmcompat.readers.uvlockscan import Memo


FORMAT = 5  # 4: a uv.lock keyed by what a verdict reads of it; 5: each input with its read-log state
MAGIC = b"glmcompat-verdict"
HEADER = b"%s %d" % (MAGIC, FORMAT)
NAMES_HEADER = b"glmcompat-verdict-names %d" % FORMAT
MEMO_HEADER = b"glmcompat-verdict-packages %d" % FORMAT
_VALUE_OPTIONS, _FLAGS = REPLAY["check"]  # -v writes timings to stderr: the full path


def _parse(argv: list[str]) -> tuple[dict[str, list[str]], list[str], str, bool] | None:
    """The options of ``check ARGV`` as parsed (:func:`glmcompat.cli.startup.parse_options`), the files it names, its
    ``--color`` and whether it judges bumps against ``HEAD``; None when the fast path does not understand the command
    line (``--help``, another ``--against`` revision, a bad ``--color``, a typo: the full path handles and reports it)."""
    parsed = parse_options(argv, _VALUE_OPTIONS, _FLAGS)
    if parsed is None or not parsed[1]:
        return None
    opts, paths = parsed
    colors, against = opts.get("--color", ["auto"]), opts.get("--against", [])
    if any(c not in ("auto", "always", "never") for c in colors) or any(rev != "HEAD" for rev in against):
        return None
    return opts, paths, colors[-1], bool(against)


def names_key(matrix_part: str) -> str:
    """The key of the names record: the package names a verdict can read, fixed by the code and the matrix."""
    from glmcompat.readers.uvlockscan import FORMAT as PROJECTION_FORMAT  # lazy: start-up path (the same bytes need none of it)

    h = hasher()
    for part in ("names", str(FORMAT), str(PROJECTION_FORMAT), code_fingerprint(), matrix_part):
        h.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return h.hexdigest()


def _memo_path(base: str, nk: str, path: str) -> tuple[str, str]:
    """(where, key) of the package memo of the uv.lock at ``path`` (:func:`glmcompat.readers.uvlockscan.projection_digest`)
    under the names record ``nk``."""
    h = hasher()
    h.update(f"{nk}\0{os.path.abspath(path)}".encode("utf-8", "surrogateescape"))
    k = h.hexdigest()
    return os.path.join(base, "verdicts", "packages-" + k), k


def _projected(path: str, relevant: frozenset[str], memo_at: tuple[str, str] | None) -> tuple[str, Memo] | None:
    """The digest of what a verdict reads of the uv.lock at ``path`` (:mod:`glmcompat.readers.uvlockscan`), read with
    the package memo stored at ``memo_at``, and the memo of its packages; None when the verdict may depend on its
    bytes (a lock of a set ``glmcompat lock`` stamped: the stamp holds its sha256) or the file is not one the scan
    recognises."""
    d = os.path.dirname(path) or "."
    if os.path.lexists(os.path.join(d, ".glmcompat-stamp")) or os.path.lexists(os.path.join(d, ".glmcompat-publish")):
        return None
    data = read_bounded(path, MAX_DIGESTED)
    if data is None:
        return None
    from glmcompat.readers.uvlockscan import memo_from, projection_digest  # lazy: start-up path (a changed lock only)

    blob = read_stored(memo_at[0], MEMO_HEADER.decode(), memo_at[1], MAX_RECORD) if memo_at is not None else None
    return projection_digest(data, relevant, memo_from(blob) if blob is not None else {})


def key(argv: list[str], relevant: frozenset[str] | None = None, names: str | None = None,
        memos: dict[str, Memo] | None = None) -> str | None:
    """The verdict key of ``glmcompat check ARGV``, or None when the fast path must not answer. With ``relevant``
    (the names record of this code and matrix), a uv.lock named on the command line is keyed by what a verdict
    reads of it (:func:`_projected`, with the package memo of the names record ``names``; each lock's memo is put in
    ``memos``), so an edit that changes nothing a verdict reads finds the recorded one; without, and for every other
    file, by its bytes."""
    parsed = _parse(argv)
    if parsed is None:
        return None
    opts, paths, color, against = parsed
    h = keyed("check", opts, paths)
    if h is None:
        return None
    h.update(f"{FORMAT}\0{use_color(color)}\0".encode())  # a verdict in colour is another verdict
    # a verdict names where its machine's values came from: a flag, or the variable that gave it
    h.update("\0".join(os.environ.get(v, "") for v in ("GLMCOMPAT_TARGET", "GLMCOMPAT_DRIVER", "GLMCOMPAT_GLIBC")).encode(
        "utf-8", "surrogateescape") + b"\0")
    h.update(f"{os.environ.get('GLMCOMPAT_NO_ARTIFACTS', '')}\0".encode())  # one without the artifacts' findings too
    base = cache_dir_name()
    for p in paths:
        proj = None
        if relevant is not None and os.path.basename(p) == "uv.lock":
            proj = _projected(p, relevant, _memo_path(base, names, p) if base and names else None)
        if proj is not None:
            if memos is not None:
                memos[p] = proj[1]
            h.update(f"{p}\0uv.lock projection {proj[0]}\n".encode("utf-8", "surrogateescape"))  # format: in names
        else:
            d = file_digest(p)
            if not d:
                return None  # a missing file: the full path says so
            h.update(f"{p}\0{d}\n".encode("utf-8", "surrogateescape"))
        if against:  # the file at HEAD: fixed by the commit HEAD names and the file's place in the work tree
            from glmcompat.readers.githead import head_state  # lazy: start-up path (--against only)

            state = head_state(p)
            if state is None:
                return None  # not a plain repository, or one this reader does not follow: git answers
            h.update(f"HEAD\0{state}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _names(base: str, argv: list[str]) -> tuple[str, frozenset[str] | None] | None:
    """(the names record's key, its names or None when none is recorded) for ``check ARGV``; None when the
    command line is not one the fast path answers."""
    parsed = _parse(argv)
    part = matrix_part(parsed[0].get("--matrix", [])) if parsed is not None else None
    if part is None:
        return None
    nk = names_key(part)
    body = read_stored(os.path.join(base, "verdicts", "names-" + nk), NAMES_HEADER.decode(), nk, MAX_RECORD)
    if body is None:
        return nk, None
    try:
        return nk, frozenset(body.decode("utf-8").split("\n"))
    except UnicodeDecodeError:
        return nk, None


def lookup(argv: list[str]) -> int | None:
    """Print the cached verdict of ``check ARGV`` and return its exit code; None on a miss. The verdict of the same
    bytes first (a digest is cheaper than a projection), then of what a verdict reads of each uv.lock."""
    base = cache_dir_name()
    k = key(argv) if base else None
    if k is None or base is None:
        return None
    rec = load(HEADER, k, os.path.join(base, "verdicts", k))
    if rec is None:
        names = _names(base, argv)
        k2 = key(argv, names[1], names[0]) if names is not None and names[1] is not None else None
        if k2 is None or k2 == k:
            return None
        rec = load(HEADER, k2, os.path.join(base, "verdicts", k2))
    return replay(rec)


SPAWNED = {"git"}  # the programs a recorded verdict may have run: git answers --against HEAD, which the key holds


def reading(argv: list[str]) -> ReadLog:
    """The read log of the full run of ``check ARGV`` (:class:`glmcompat.matrix.readlog.ReadLog`): every file it
    reads but those the key holds by content (the files named on the command line, the ``--matrix`` files)."""
    from glmcompat.matrix.readlog import ReadLog  # lazy: start-up path (only a full run logs)

    parsed = _parse(argv)
    named = list(parsed[1]) if parsed else []
    matrices = matrix_file_names(parsed[0].get("--matrix", [])) if parsed else []
    return ReadLog(exclude=named + (matrices if isinstance(matrices, list) else []))


def store(argv: list[str], before: str, log: ReadLog, stdout: str, stderr: str, rc: int,
          relevant: Callable[[], Iterable[str]] | None = None, exact: bool = False) -> None:
    """Record the full path's verdict of ``check ARGV``, whose key (:func:`key` without names) was ``before`` when
    the run began and whose inputs are what ``log`` (:func:`reading`) saw it read: nothing when an input changed
    during the run, or one is in no state to compare later, or the run started a program whose reads no key holds
    (never raises: a read-only cache costs speed only). ``relevant`` gives the package names a verdict can read
    (:func:`relevant_names`), recorded once per code and matrix, so the verdict is stored under the key a later
    lookup computes with them; ``exact``: under the key of these exact bytes only (the verdict read what no names
    record holds)."""
    base = cache_dir_name()
    if base is None or key(argv) != before or not set(log.spawned) <= SPAWNED:
        return
    deps = log.inputs()
    if deps is None:
        return  # a file the verdict read is no regular file now: nothing to compare it with later
    names = _names(base, argv)
    if names is None:
        return
    nk, rel = names
    if rel is None and relevant is not None:
        rel = frozenset(relevant())
        body = "\n".join(sorted(rel)).encode("utf-8", "surrogateescape")
        try:
            _write(os.path.join(base, "verdicts", "names-" + nk), seal(NAMES_HEADER.decode(), nk, body))
        except (OSError, UnicodeEncodeError):
            rel = None
    memos: dict[str, Memo] = {}
    k = key(argv, rel, None, memos)  # no memo read: each package read afresh, its memo written below
    if k is None:
        return
    from glmcompat.readers.uvlockscan import memo_bytes  # lazy: start-up path (only a full run stores)

    for path, memo in memos.items():
        where, mk = _memo_path(base, nk, path)
        try:
            _write(where, seal(MEMO_HEADER.decode(), mk, memo_bytes(memo)))
        except OSError:
            pass
    for each in [before] if k == before or exact else [before, k]:  # exact: these bytes' key only  # the same bytes, and what a verdict reads of them
        if not save(HEADER, each, os.path.join(base, "verdicts", each), deps, stdout, stderr, rc):
            return


def _write(path: str, data: bytes) -> None:
    from pathlib import Path  # lazy: start-up path (only a full run stores)

    from glmcompat.matrix.store import atomic_write  # lazy: start-up path (only a full run stores)

    atomic_write(Path(path), data)


_RELEVANT: BoundedMemo[str, frozenset[str]] = BoundedMemo(8)  # facts key (matrix files' content and glmcompat's code) -> relevant_names


def relevant_names(facts: object) -> frozenset[str]:
    """Every package name a verdict can read: each word of each string of the matrix's rows (names, pins, requirements,
    stacks, models) and the names the decision code reads by name, declared in :data:`glmcompat.decide.reads.NAMED`;
    canonical. A superset: a word that names no package only makes a lock's projection keep that package's version.
    Walked once per process for facts that carry a key (:func:`glmcompat.matrix.load.load_facts`'s: the matrix files'
    content and glmcompat's code), not once per cache directory."""
    fk = getattr(facts, "key", "")
    if isinstance(fk, str) and fk and (known := _RELEVANT.get(fk)) is not None:
        return known
    names = _walk_names(facts)
    if isinstance(fk, str) and fk:
        _RELEVANT.keep(fk, names)
    return names


def _walk_names(facts: object) -> frozenset[str]:
    import dataclasses  # lazy: start-up path (only a full run records names)
    import re  # lazy: start-up path (only a full run records names)

    from glmcompat.decide.reads import NAMED  # lazy: start-up path (only a full run records names)
    from glmcompat.readers.uvlockscan import canonical  # lazy: start-up path (only a full run records names)

    words: set[str] = set(NAMED)
    find = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*").findall

    def walk(v: object) -> None:
        if isinstance(v, str):
            words.update(find(v))
        elif isinstance(v, (tuple, list, set, frozenset)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(k)
                walk(x)
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            for f in dataclasses.fields(v):
                walk(getattr(v, f.name))

    for rows in getattr(facts, "data", {}).values():
        walk(rows)
    return frozenset(canonical(w) for w in words if not w.replace(".", "").isdigit())  # a version names nothing

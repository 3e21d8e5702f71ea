"""The records both start-up paths keep (:mod:`glmcompat.cli.fastpath` for ``check``,
:mod:`glmcompat.cli.fastlock` for ``lock``): what a full run printed and exited with, and the digest of
every file that answer depends on. ``os`` only: read before anything heavy is imported."""

from __future__ import annotations

import os


def encode(header: bytes, deps: dict[str, str], stdout: str, stderr: str, rc: int) -> bytes:
    """A record: ``header``, the exit code, each file the answer depends on with its digest, stdout, stderr."""
    out = [b"%s\n%d\n%d\n" % (header, rc, len(deps))]
    for path, digest in deps.items():
        out.append(os.fsencode(path) + b"\0" + digest.encode() + b"\n")
    for text in (stdout, stderr):
        data = text.encode("utf-8", "surrogateescape")
        out.append(b"%d\n" % len(data) + data)
    return b"".join(out)


def decode(header: bytes, blob: bytes) -> tuple[dict[str, str], str, str, int]:
    """Inverse of :func:`encode`; ValueError on anything else (a truncated or foreign file is a miss)."""
    head, rest = blob.split(b"\n", 1)
    if head != header:
        raise ValueError("not a record of this kind")
    rc_s, n_s, rest = rest.split(b"\n", 2)
    rc, n = int(rc_s), int(n_s)
    deps: dict[str, str] = {}
    for _ in range(n):
        line, rest = rest.split(b"\n", 1)
        path, digest = line.split(b"\0")
        deps[os.fsdecode(path)] = digest.decode()
    texts = []
    for _ in range(2):
        size_s, rest = rest.split(b"\n", 1)
        size = int(size_s)
        if len(rest) < size:
            raise ValueError("truncated")
        texts.append(rest[:size].decode("utf-8", "surrogateescape"))
        rest = rest[size:]
    if rest:
        raise ValueError("trailing data")
    return deps, texts[0], texts[1], rc

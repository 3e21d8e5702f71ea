"""Harvest the messages libraries raise, warn and log, from their wheels or sdists at given releases (issue 38's sweep
of raise sites): each ``*.py`` member is read out of the archive on the index (range requests through glmcompat's own
wheel reader; an sdist, a .tar.gz, is read whole), parsed with :mod:`ast`, and every ``raise X(...)``,
``warnings.warn(...)`` and ``logger.warning/error/critical/exception(...)`` whose first argument is a string (plain,
f-string, ``%``- or ``.format``-built) is printed as one JSON line: package, version, file, line, kind, the template
(``{}`` where a value is filled in) and an instance of it with plausible values.

    python scripts/harvest_engine_raise_sites.py vllm==0.6.3 vllm==0.11.0 ... > raise-sites.jsonl

``--cache DIR`` keeps the sources read (DIR/<package>-<version>/<path>) so a second run reads nothing. A library that
is not on the index (text-generation-inference's server, apex, detectron2) is read from a directory put there by hand:
``git archive v3.3.7 server | tar -x -C DIR/text-generation-server-3.3.7``, then ``text-generation-server==3.3.7``.

The sweep of issue 38 read: vllm 0.6.3, 0.9.2, 0.11.0, 0.34.0; sglang 0.4.6, 0.5.2, 0.5.23; sgl-kernel 0.1.0, 0.3.21;
flashinfer-python 0.2.5, 0.4.0, 0.7.4; flashinfer-cubin 0.6.13; xformers 0.0.28.post3, 0.0.35; flash-attn
2.5.9.post1, 2.8.3; bitsandbytes 0.41.3, 0.45.0, 0.50.2; deepspeed 0.14.4, 0.19.8; accelerate 0.30.0, 1.16.0; peft
0.10.0, 0.21.2; mmdet 3.3.0; mmcv 2.2.0; transformers 4.40.0, 4.57.1, 5.25.0 (--under transformers/utils and the
quantizers, integrations, models/auto, modeling_utils); text-generation-server v2.0.4 and v3.3.7, apex 22.03 and
25.09, detectron2 v0.6 and 02b5c4e2 from their repositories.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import re
import sys
import tarfile
import zlib
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # glmcompat from this checkout

from glmcompat.edges.index import IndexClient  # noqa: E402
from glmcompat.edges.ranges import HttpRangeReader  # noqa: E402
from glmcompat.readers.wheelzip import RemoteZip  # noqa: E402

GAP = 1 << 20  # members closer than this are fetched in one request
LOGGERS = {"warning", "error", "critical", "exception", "warning_once", "warn", "fatal", "info_once", "warning_rank0",
           "error_once"}


def _pick(files: list, version: str):  # type: ignore[type-arg]
    whl = [f for f in files if f.filename.endswith(".whl") and not f.yanked]
    good = [f for f in whl if "x86_64" in f.filename or "none-any" in f.filename]
    good.sort(key=lambda f: ("cp311" not in f.filename and "none-any" not in f.filename, f.size))
    if good:
        return good[0]
    sd = [f for f in files if f.filename.endswith((".tar.gz", ".zip")) and not f.yanked]
    return sd[0] if sd else None


def fetch(ic: IndexClient, name: str, version: str, cache: Path) -> dict[str, str]:
    out_dir = cache / f"{name}-{version}"
    if out_dir.is_dir():
        return {str(p.relative_to(out_dir)): p.read_text("utf-8", "replace") for p in out_dir.rglob("*.py")}
    f = _pick(list(ic.project(name).files_for(version)), version)
    if f is None:
        raise SystemExit(f"{name} {version}: no wheel or sdist")
    texts: dict[str, str] = {}
    if f.filename.endswith(".whl"):
        reader = HttpRangeReader(ic.client, f.url, name=f.filename, size=f.size)
        zf = RemoteZip(reader)
        mods = sorted((m for m in zf.members if m.name.endswith(".py") and "/tests/" not in m.name
                       and not m.name.startswith("tests/")), key=lambda m: m.header_offset)
        i = 0
        while i < len(mods):
            j = i
            while j + 1 < len(mods) and mods[j + 1].header_offset - (mods[j].header_offset + mods[j].compressed_size) < GAP:
                j += 1
            lo = mods[i].header_offset
            hi = min(mods[j].header_offset + mods[j].compressed_size + 1024, reader.size)
            blob = reader.read(lo, hi - lo)
            for m in mods[i:j + 1]:
                at = m.header_offset - lo
                head = blob[at:at + 30]
                nlen = int.from_bytes(head[26:28], "little")
                xlen = int.from_bytes(head[28:30], "little")
                data = blob[at + 30 + nlen + xlen:at + 30 + nlen + xlen + m.compressed_size]
                raw = zlib.decompress(data, -15) if m.method == 8 else data
                texts[m.name] = raw.decode("utf-8", "replace")
            i = j + 1
    else:
        data = ic.client.get(f.url).content
        with tarfile.open(fileobj=io.BytesIO(data)) as tf:
            for mem in tf.getmembers():
                if mem.isfile() and mem.name.endswith(".py") and "/tests/" not in mem.name:
                    fh = tf.extractfile(mem)
                    if fh is not None:
                        texts[mem.name.split("/", 1)[1]] = fh.read().decode("utf-8", "replace")
    for p, t in texts.items():
        dst = out_dir / p
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(t, "utf-8")
    print(f"# {name} {version}: {f.filename}, {len(texts)} files", file=sys.stderr)
    return texts


def _sample(node: ast.AST) -> str:
    """A plausible value for a filled-in expression, from its names."""
    src = ast.unparse(node).lower()
    if "version" in src or src.endswith("_ver") or "ver)" in src:
        return "2.5.1"
    if "capab" in src or "arch" in src or src.startswith("cc") or "sm" == src:
        return "8.0"
    if "path" in src or "file" in src or "dir" in src or "lib" in src:
        return "/usr/lib/x86_64-linux-gnu/libfoo.so"
    if "cuda" in src:
        return "12.1"
    return "X"


def template(node: ast.AST) -> tuple[str, str] | None:
    """(template, sample) of a message expression, or None when it is not built from a string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, node.value
    if isinstance(node, ast.JoinedStr):
        t, s = [], []
        for v in node.values:
            if isinstance(v, ast.Constant):
                t.append(str(v.value))
                s.append(str(v.value))
            elif isinstance(v, ast.FormattedValue):
                t.append("{" + ast.unparse(v.value) + "}")
                s.append(_sample(v.value))
        return "".join(t), "".join(s)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = template(node.left), template(node.right)
        if a or b:
            a = a or ("{" + ast.unparse(node.left) + "}", _sample(node.left))
            b = b or ("{" + ast.unparse(node.right) + "}", _sample(node.right))
            return a[0] + b[0], a[1] + b[1]
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        a = template(node.left)
        if a is None:
            return None
        args = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
        return _percent(a[0], a[1], args)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"):
        a = template(node.func.value)
        if a is None:
            return None
        s = a[1]
        for arg in node.args:
            s = s.replace("{}", _sample(arg), 1)
        for kw in node.keywords:
            s = s.replace("{" + str(kw.arg) + "}", _sample(kw.value))
        return a[0], s
    return None


def _percent(t: str, s: str, args: list[ast.expr]) -> tuple[str, str]:
    it = iter(args)

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "%%":
            return "%"
        a = next(it, None)
        return _sample(a) if a is not None else "X"
    return t, re.sub(r"%%|%[-#0 +]*\d*(?:\.\d+)?[sdrfix]", sub, s)


def messages(text: str) -> list[tuple[int, str, str, str]]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        call, kind = None, ""
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            call, kind = node.exc, "raise " + ast.unparse(node.exc.func)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            base = ast.unparse(node.func.value)
            if node.func.attr == "warn" and base == "warnings":
                call, kind = node, "warnings.warn"
            elif node.func.attr in LOGGERS and ("log" in base.lower()):
                call, kind = node, f"{base}.{node.func.attr}"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("print_rank_0",):
            call, kind = node, node.func.id
        if call is None or not call.args:
            continue
        got = template(call.args[0])
        if got is None:
            continue
        t, s = got
        if isinstance(call.args[0], ast.Constant) and len(call.args) > 1 and "%" in t and kind != "warnings.warn":
            t, s = _percent(t, s, list(call.args[1:]))  # logger.warning("...%s", x)
        out.append((node.lineno, kind, t, s))
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("specs", nargs="+", metavar="NAME==VERSION")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/raise-sites"))
    ap.add_argument("--under", action="append", default=[], help="only files under these path prefixes")
    a = ap.parse_args(argv)
    with IndexClient() as ic:
        for spec in a.specs:
            name, _, version = spec.partition("==")
            for path, text in sorted(fetch(ic, name, version, a.cache).items()):
                if a.under and not any(path.startswith(u) for u in a.under):
                    continue
                for line, kind, t, s in messages(text):
                    print(json.dumps({"package": name, "version": version, "file": path, "line": line, "kind": kind,
                                      "template": t, "sample": s}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

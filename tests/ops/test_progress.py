"""Progress of long network work (glmcompat/ops/progress.py): a bar with items and bytes on a terminal (stderr), nothing
when piped or with -q, and no byte count past 100%. The CLI runs are real processes whose stderr is a pty, against
the local index of tests/cli/commands/test_abi.py (real wheels built with g++, served with range requests)."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator

import pytest

from glmcompat.ops.progress import Meter, Progress, shown_bytes, size
from tests.abifakes import HAVE_GXX, LocalServer, build_fakes

pytestmark = pytest.mark.skipif(not HAVE_GXX, reason="needs g++ to build the fake wheels")

EXT = "ext-1.0-cp310-abi3-manylinux2014_x86_64.whl"


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_shown_bytes_never_past_the_total() -> None:
    assert shown_bytes(8_200_000, 8_000_000) == "8.0 MB of 8.0 MB (100.0%)"
    assert shown_bytes(4_100_000, 8_000_000) == "4.1 MB of 8.0 MB (51.2%)"
    assert shown_bytes(2048, None) == "2.0 kB"


def test_the_bar_shows_items_and_bytes() -> None:
    now = [0.0]
    out = Tty()
    m = Meter("refresh", stream=out, items=4, unit="release(s)", total_bytes=1000, clock=lambda: now[0])
    m.add_bytes(1500)
    m.advance("sgl-kernel 0.3.21")
    now[0] = 3.0
    assert m.line() == "refresh [#####...............] 1/4 release(s) · 1.0 kB of 1.0 kB (100.0%) · 3 s  sgl-kernel 0.3.21"
    m.close()
    assert out.getvalue().startswith("\r\033[2K") and out.getvalue().endswith("\r\033[2K")


def test_without_a_total_the_bar_moves() -> None:
    now = [0.0]
    m = Meter("audit", stream=Tty(), clock=lambda: now[0])
    first = m.line()
    now[0] = 0.5
    assert "###" in first and m.line() != first and "0 item(s)" in first


@pytest.mark.parametrize("stream, quiet", [(io.StringIO(), 0), (Tty(), 1)])
def test_nothing_when_piped_or_quiet(stream: io.StringIO, quiet: int) -> None:
    with Meter("x", stream=stream, quiet=quiet) as m:
        m.advance("y")
        m.add_bytes(10)
    assert stream.getvalue() == "" and not m.enabled


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    fakes = build_fakes(tmp_path_factory.mktemp("fakes"))
    files = dict(fakes)
    files["norange-1.0-cp310-abi3-manylinux2014_x86_64.whl"] = fakes[EXT]
    with LocalServer(files) as srv:
        srv.modes["norange-1.0-cp310-abi3-manylinux2014_x86_64.whl"] = "ignore-range"
        yield srv


def test_the_resolvers_progress_counts_pages_and_metadata(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real index source over the local index: a page and a METADATA read are counted, the bytes its client
    received shown; a recorded source receives no bytes and shows none."""
    from glmcompat.edges.index import IndexClient
    from glmcompat.edges.sources import IndexSource, RecordedSource

    from tests.conftest import FIXTURES

    monkeypatch.setenv("COLUMNS", "200")  # a StringIO has no terminal size: the bar is as wide as COLUMNS says
    out = Tty()
    with IndexClient(server.base, retries=0) as client:
        p = Progress(IndexSource(client), False, stream=out)
        assert p.versions("ext") == ["1.0"]
        page = client.bytes_fetched
        assert p.requires("ext", "1.0") == []
        p.done()
    assert (p.pages, p.metas) == (1, 1) and page > 0
    assert "1 project page(s), 1 METADATA: ext 1.0" in out.getvalue() and f"· {size(page)} ·" in out.getvalue()
    quiet = Tty()
    Progress(IndexSource(IndexClient(server.base)), True, stream=quiet).versions("ext")
    assert quiet.getvalue() == ""
    recorded = Tty()
    r = Progress(RecordedSource(FIXTURES / "resolver" / "index.json"), False, stream=recorded)
    r.versions("torch")
    assert "1 project page(s), 0 METADATA: torch" in recorded.getvalue() and " B ·" not in recorded.getvalue()


def _on_a_pty(*args: str) -> tuple[int, str, str]:
    """``glmcompat ARGS`` with stderr on a terminal (a pty) and stdout piped: (exit code, stdout, the terminal)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))  # 40 rows, 160 columns
    p = subprocess.Popen([sys.executable, "-m", "glmcompat", *args], stdout=subprocess.PIPE, stderr=slave,
                         stdin=subprocess.DEVNULL, text=True, env={**os.environ, "COLUMNS": "200"})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    out = p.stdout.read() if p.stdout else ""
    rc = p.wait(timeout=120)
    os.close(master)
    return rc, out, b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.parametrize("argv", [["abi", "ext==1.0", "--torch", "9.0.0"], ["arch", "ext==1.0", "--target", "sm120"]])
def test_a_probe_shows_the_bar_on_a_terminal(server: LocalServer, argv: list[str]) -> None:
    rc, out, tty = _on_a_pty(*argv, "--index-url", server.base, "--no-cache")
    assert rc == 0, tty
    bars = re.findall(r"\r\x1b\[2K(reading the wheels?[^\r]*)", tty)
    assert bars and any(re.search(r"\d+ request\(s\) · [\d.]+ k?B", b) for b in bars), tty
    assert tty.rstrip("\r\n").endswith("\x1b[2K") or "read " in tty  # the bar is cleared before the last line
    assert "\r" not in out  # stdout (the report) never gets the bar
    for pct in re.findall(r"\(([\d.]+)%\)", tty + out):
        assert float(pct) <= 100.0


@pytest.mark.slow
def test_no_bar_when_piped_or_quiet(server: LocalServer) -> None:
    r = subprocess.run([sys.executable, "-m", "glmcompat", "abi", "ext==1.0", "--torch", "9.0.0", "--index-url",
                        server.base, "--no-cache"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "\r" not in r.stderr and "request(s)" not in r.stderr
    rc, _, tty = _on_a_pty("abi", "ext==1.0", "--torch", "9.0.0", "--index-url", server.base, "--no-cache", "-q")
    assert rc == 0 and "request(s)" not in tty and "\r" not in tty


def test_bytes_received_twice_never_pass_100_percent(server: LocalServer) -> None:
    """A server that ignores Range sends the whole wheel for every span asked: more bytes arrive than the wheel
    has, and the report still says at most 100%."""
    rc, out, tty = _on_a_pty("arch", "norange==1.0", "--index-url", server.base, "--no-cache")
    assert rc in (0, 1), tty
    shares = [float(x) for x in re.findall(r"\(([\d.]+)%\)", out + tty)]
    assert shares and max(shares) <= 100.0
    assert re.search(r"fetched ([\d.]+ k?B) of \1 \(100\.0%\)", out), out

"""The suite's own guarantees (tests/conftest.py): no test reaches beyond this machine unless marked `network`, in its
own process or in the Python processes it starts; installer variables of the developer's shell never reach a test;
the matrix entry every test's cache starts with is exactly the one glmcompat writes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT, NetworkBlocked, seed_matrix
from tests.localindex import serve_wheels

TEST_NET = "192.0.2.1"  # RFC 5737: documentation only, routed nowhere (without the guard: a timeout, not a refusal)


def test_a_connection_beyond_loopback_is_refused_at_once() -> None:
    with pytest.raises(NetworkBlocked, match="not marked network"):
        socket.create_connection((TEST_NET, 443), timeout=30)
    with pytest.raises(NetworkBlocked, match="looks up 'example.org'"):
        socket.getaddrinfo("example.org", 443)


def test_loopback_is_allowed(tmp_path: Path) -> None:
    import httpx

    with serve_wheels({"tiny": "1.0"}) as url:
        assert httpx.get(f"{url}/tiny/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}).status_code == 200
        assert httpx.get(url.replace("127.0.0.1", "localhost") + "/tiny/").status_code == 200


PROBE = textwrap.dedent("""
    import socket, sys
    try:
        socket.create_connection((sys.argv[1], 443), timeout=30)
    except OSError as e:
        print("refused" if "socket guard" in str(e) else f"other: {e}")
    try:
        socket.getaddrinfo("example.org", 443)
    except OSError as e:
        print("refused" if "socket guard" in str(e) else f"other: {e}")
""")


def test_a_python_process_a_test_starts_is_guarded_too() -> None:
    r = subprocess.run([sys.executable, "-c", PROBE, TEST_NET], capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["refused", "refused"], r.stdout + r.stderr


def test_the_guard_imports_nothing_into_a_process() -> None:
    """The start-up paths' tests count the modules a process imports: the guard adds none (socket is patched only
    once something imports it)."""
    code = "import sys; print(sorted(m for m in ('socket', 'ipaddress', 'selectors') if m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "[]", r.stdout + r.stderr


@pytest.mark.network
def test_a_network_test_is_not_guarded() -> None:
    assert "guarded" not in socket.socket.connect.__qualname__ and "guarded" not in socket.getaddrinfo.__qualname__
    assert "socket-guard" not in os.environ.get("PYTHONPATH", "")


@pytest.mark.slow
def test_installer_variables_of_the_shell_never_reach_a_test(tmp_path: Path) -> None:
    """A session started with UV_* and PIP_* set (an index, offline mode, find-links) runs its tests without them."""
    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    (tmp_path / "test_env.py").write_text(
        "import os\n\ndef test_env():\n"
        "    assert sorted(k for k in os.environ if k.startswith(('UV_', 'PIP_'))) == ['UV_PYTHON_DOWNLOADS']\n")
    env = {**os.environ, "UV_OFFLINE": "1", "UV_DEFAULT_INDEX": "http://index.invalid/simple", "PIP_FIND_LINKS": "/nowhere",
           "PIP_INDEX_URL": "http://index.invalid/simple", "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-c", os.devnull,
                        "--rootdir", str(tmp_path), str(tmp_path / "test_env.py")], capture_output=True, text=True,
                       env=env, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


def test_the_seeded_matrix_entry_is_the_one_glmcompat_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from glmcompat.matrix.load import cache_entry_name, load_facts

    fresh = tmp_path / "fresh"
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(fresh))
    facts = load_facts()  # validated here, in an empty cache
    seeded = tmp_path / "seeded"
    seed_matrix(seeded)
    name = cache_entry_name()
    assert name is not None and (seeded / name).read_bytes() == (fresh / name).read_bytes()
    monkeypatch.setenv("GLMCOMPAT_CACHE_DIR", str(seeded))
    assert load_facts().data == facts.data


def test_an_edited_matrix_is_never_seeded(tmp_path: Path) -> None:
    import shutil

    matrix = tmp_path / "m"
    shutil.copytree(ROOT / "glmcompat" / "matrix" / "data", matrix)
    from glmcompat.matrix.load import cache_entry_name

    seed_matrix(tmp_path / "same", [matrix])  # a byte-identical copy: its own entry (the key holds the paths)
    assert [p.name for p in (tmp_path / "same").glob("matrix-*.json")] == [cache_entry_name([matrix])]
    first = sorted(matrix.glob("*.toml"))[0]
    first.write_text(first.read_text() + "\n")
    seed_matrix(tmp_path / "edited", [matrix])
    assert [p.name for p in (tmp_path / "edited").glob("matrix-*.json")] == []

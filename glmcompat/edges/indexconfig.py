"""The light half of :mod:`glmcompat.edges.index`: the command line's index options and where pip's configuration
lives, which a project lock needs (its record's key, its uv's environment) before it starts its predicted uv
(issue 39: a cold lock); :mod:`glmcompat.edges.index`, the client, is imported only once the index is read."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def pip_config_files() -> list[Path]:
    """pip's configuration files, lowest priority first (site < user < env file): where glmcompat reads the index
    pip is configured for (whether or not each exists)."""
    files: list[Path] = []
    xdg_dirs = os.environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(os.pathsep)
    files += [Path(d) / "pip" / "pip.conf" for d in reversed(xdg_dirs) if d]
    files.append(Path("/etc/pip.conf"))
    home = Path.home()
    files.append(home / ".pip" / "pip.conf")
    xdg_home = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    files.append(Path(xdg_home) / "pip" / "pip.conf")
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        files.append(Path(venv) / "pip.conf")
    env_file = os.environ.get("PIP_CONFIG_FILE")
    if env_file and env_file != os.devnull:
        files.append(Path(env_file))
    return files


@dataclass(frozen=True)
class IndexOptions:
    """``--index-url`` and ``--no-cache`` as the command line gave them, handed to whatever reads the index or runs uv
    (never through the process environment): ``url`` None is the configured index
    (:func:`glmcompat.edges.index.default_index_url`);
    ``no_cache``: neither glmcompat's cache nor uv's is read or written."""

    url: str | None = None
    no_cache: bool = False

    def cache(self) -> Any:
        """The cache the index client and the probes use: none with ``no_cache``."""
        from glmcompat.edges.cache import Cache, NoCache  # lazy: the index client's, not the start-up path's

        return NoCache() if self.no_cache else Cache()

    def uv_env(self) -> dict[str, str]:
        """What uv's environment gets for these options (uv reads ``UV_DEFAULT_INDEX`` first; ``UV_NO_CACHE`` is its
        --no-cache); the caller's own environment is never changed."""
        env: dict[str, str] = {}
        if self.url:
            env["UV_DEFAULT_INDEX"] = self.url
        if self.no_cache:
            env["UV_NO_CACHE"] = "1"
        return env

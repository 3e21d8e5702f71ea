"""The project lock's record: a project glmcompat locked, and nothing it depends on changed since, is answered from
what that run recorded (the same core, warnings and verdicts) without resolving or running uv.

The record is keyed by the question (:func:`_record_path`: glmcompat's code and matrix, the project, the request, the
index, the environment uv and glmcompat read, the uv binary) and holds the digest of every file the answer depends on
(:func:`_inputs`: what uv reads in the project, pip's configuration), taken after the run wrote: the run right after
finds them as the run left them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from glmcompat.edges.indexconfig import pip_config_files
from glmcompat.edges.uv import reads as uv_reads
from glmcompat.edges.uv import uv_binary
from glmcompat.matrix.locations import code_fingerprint, file_digest, read_stored, seal, text_digest
from glmcompat.matrix.store import atomic_write, cache_dir
from glmcompat.matrix.view import Facts
from glmcompat.model.errors import EnvironmentFailure
from glmcompat.ops.projectresult import ProjectLockRequest, ProjectLockResult, replayed
from glmcompat.readers import pyproject as pp

if TYPE_CHECKING:
    from glmcompat.decide.resolver import Source

RECORD_FORMAT = 2  # 2: the machine (driver, glibc) is part of the question


def _record_path(facts: Facts, project: pp.UvProject, req: ProjectLockRequest, python: str,
                 source: Source | None = None) -> Path | None:
    """Where the record of this exact question lives: keyed by glmcompat's code and matrix, the project, the request,
    the index, the environment uv and glmcompat read (``UV_*``, ``PIP_*``, ``GLMCOMPAT_*``) and the uv binary."""
    if req.index.no_cache:
        return None  # --no-cache: no record is read or written
    try:
        uv = uv_binary()
        st = os.stat(uv)
    except (OSError, EnvironmentFailure):
        return None
    if source is not None:
        from glmcompat.edges.sources import RecordedSource  # lazy: the CLI passes no source (its recall needs none)

        if not isinstance(source, RecordedSource):
            return None  # a source that cannot say what it answers (only a recorded one has a key): no record
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith(("UV_", "PIP_", "GLMCOMPAT_")))
    blob = json.dumps([RECORD_FORMAT, code_fingerprint(), facts.key, str(project.pyproject.resolve()), req.plan.names,
                       req.platform if req.plan.chosen else None, req.model, python, env, [uv, st.st_size, st.st_mtime_ns, st.st_ino],
                       os.environ.get("XDG_CONFIG_HOME", ""), None if source is None else source.key, req.index.url,
                       None if req.machine is None else req.machine.to_json()])
    return cache_dir() / "project-verdicts" / (text_digest(blob) + ".json")


def _inputs(project: pp.UvProject) -> list[str]:
    """Every file a no-op answer depends on: what uv reads in the project (:func:`glmcompat.edges.uv.reads`: each
    member's pyproject.toml, the uv.lock, uv's configuration files) and the pip configuration files glmcompat reads
    its index from (:func:`glmcompat.edges.indexconfig.pip_config_files`)."""
    files = uv_reads(str(project.root), [str(m) for m in project.members] + [str(project.pyproject)])
    files += [os.path.abspath(p) for p in pip_config_files()]
    return sorted(set(files))


def _digests(files: list[str]) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for f in files:
        d = file_digest(f)
        if d is None:
            return None
        out[f] = d
    return out


def _recall(path: Path | None, project: pp.UvProject) -> ProjectLockResult | None:
    """The recorded answer when every input is as the run that recorded it left it; None (a miss) otherwise, and for
    any record that is not exactly what :func:`_remember` wrote."""
    if path is None:
        return None
    raw = read_stored(str(path), "project-verdict", path.name, 1 << 20)  # sealed with its name, read safely
    if raw is None:
        return None
    try:
        body = json.loads(raw)
        files, data = body["files"], body["result"]
        if not isinstance(files, dict) or _digests(sorted(files)) != files or sorted(files) != _inputs(project):
            return None
        return ProjectLockResult.from_json(data)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None


def _remember(path: Path | None, project: pp.UvProject, result: ProjectLockResult) -> dict[str, str] | None:
    """Record ``result`` for :func:`_recall`; the digests of the inputs it was recorded with (what the no-op record of
    the run right after holds too: taken once, after the run wrote), None where it was not recorded."""
    if path is None:
        return None
    files = _digests(_inputs(project))
    if files is None:
        return None
    body = {"files": files, "result": replayed(result).to_json()}
    try:
        atomic_write(path, seal("project-verdict", path.name, json.dumps(body, sort_keys=True).encode()))
    except OSError:
        return None  # a read-only cache only costs speed
    return files

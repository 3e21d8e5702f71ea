"""Wheel build hook: ship the validated matrix (glmcompat/matrix/snapshot.json, see glmcompat.matrix.load) so that
the first run after an install reads it instead of validating the TOML. Editable builds skip it: a checkout's
matrix changes, and its user cache serves it after one run. A matrix that does not validate fails the build; a
build environment without pydantic or packaging (``--no-build-isolation``) only loses the snapshot."""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class MatrixSnapshotHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        sys.path.insert(0, self.root)
        try:
            from glmcompat.matrix.load import snapshot

            data = snapshot()
        except ModuleNotFoundError as e:  # a build without isolation that lacks pydantic or packaging
            print(f"glmcompat: no matrix snapshot in this wheel ({e}); the first run validates the matrix instead",
                  file=sys.stderr)
            return
        finally:
            sys.path.remove(self.root)
        fd, path = tempfile.mkstemp(prefix="glmcompat-snapshot-", suffix=".json")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        self._written = path
        build_data["force_include"][path] = "glmcompat/matrix/snapshot.json"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        path = getattr(self, "_written", None)
        if path:
            os.unlink(path)

"""Wheel build hook: ship the validated matrix (glmcompat/matrix/snapshot.json, see glmcompat.matrix.load) so that
the first run after an install reads it instead of validating the TOML, and the table a cold project lock guesses its
pyproject.toml from (glmcompat/matrix/predict.json, see glmcompat.ops.projectguess). Editable builds skip it: a checkout's
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
            from glmcompat.matrix.schema import load_matrix
            from glmcompat.matrix.view import Facts
            from glmcompat.ops.projectguess import table_file

            data = snapshot()
            guesses = table_file(Facts(load_matrix(None)))
        except ModuleNotFoundError as e:  # a build without isolation that lacks pydantic or packaging
            print(f"glmcompat: no matrix snapshot in this wheel ({e}); the first run validates the matrix instead",
                  file=sys.stderr)
            return
        finally:
            sys.path.remove(self.root)
        self._written = []
        # the snapshot, and the table a cold project lock guesses its pyproject.toml from (glmcompat.ops.projectguess)
        for name, payload in (("snapshot.json", data), ("predict.json", guesses)):
            fd, path = tempfile.mkstemp(prefix=f"glmcompat-{name.partition('.')[0]}-", suffix=".json")
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
            self._written.append(path)
            build_data["force_include"][path] = f"glmcompat/matrix/{name}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        for path in getattr(self, "_written", []):
            os.unlink(path)

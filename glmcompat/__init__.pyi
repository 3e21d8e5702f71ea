"""Type information of the package's lazily imported public API (glmcompat/__init__.py; docs/api.md)."""

from glmcompat.api import CheckResult as CheckResult
from glmcompat.api import CoreResult as CoreResult
from glmcompat.api import Verdict as Verdict
from glmcompat.api import check as check
from glmcompat.api import check_environment as check_environment
from glmcompat.api import check_versions as check_versions
from glmcompat.api import load_matrix as load_matrix
from glmcompat.api import lock as lock
from glmcompat.api import resolve_core as resolve_core
from glmcompat.matrix.schema import Matrix as Matrix
from glmcompat.model.errors import EnvironmentFailure as EnvironmentFailure
from glmcompat.model.errors import GlmcompatError as GlmcompatError
from glmcompat.model.errors import InputError as InputError
from glmcompat.model.errors import InternalError as InternalError
from glmcompat.model.errors import LockFormatError as LockFormatError
from glmcompat.model.errors import MatrixError as MatrixError
from glmcompat.model.errors import UnsafeError as UnsafeError
from glmcompat.model.findings import SEVERITIES as SEVERITIES
from glmcompat.model.findings import Finding as Finding
from glmcompat.model.machine import Machine as Machine
from glmcompat.model.machine import Provenance as Provenance
from glmcompat.ops.projectlock import ProjectLockResult as ProjectLockResult

__version__: str
__all__: list[str]

def __dir__() -> list[str]: ...

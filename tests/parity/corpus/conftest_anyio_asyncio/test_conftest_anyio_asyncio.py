"""`anyio_backend` comes from conftest.py (asyncio only); a function-scoped sync backend."""

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend

if TYPE_CHECKING:
    from workspace_conformance import WorkspaceBackendSuite
else:  # the runner writes parity_suite.py: upstream's class or ours
    from parity_suite import WorkspaceBackendSuite

CORRECT = True
DEFECTS: dict[str, str] = {}


class TestFunctionScoped(WorkspaceBackendSuite):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> WorkspaceBackend:
        return LocalWorkspaceBackend(tmp_path)

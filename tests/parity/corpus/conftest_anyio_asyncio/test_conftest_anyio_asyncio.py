"""`anyio_backend` comes from conftest.py (asyncio only); a function-scoped sync backend."""

from pathlib import Path

import pytest
from parity_suite import WorkspaceBackendSuite
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend

UPSTREAM_RULES_ONLY = True  # a plain LocalWorkspaceBackend: its extra rules are test_self_certification's


class TestFunctionScoped(WorkspaceBackendSuite):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> WorkspaceBackend:
        return LocalWorkspaceBackend(tmp_path)

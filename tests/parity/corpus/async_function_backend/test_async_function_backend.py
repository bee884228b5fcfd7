"""A function-scoped async fixture (it awaits the backend's first operation), plus attach and destroy."""

from collections.abc import Callable
from pathlib import Path

import pytest
from _local import DestroysByRemovingTheDirectory
from parity_suite import WorkspaceBackendSuite
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend, WorkspaceRef

UPSTREAM_RULES_ONLY = True  # a plain LocalWorkspaceBackend: its extra rules are test_self_certification's


class TestAsyncFixture(DestroysByRemovingTheDirectory, WorkspaceBackendSuite):
    @pytest.fixture
    async def backend(self, tmp_path: Path) -> WorkspaceBackend:
        backend = LocalWorkspaceBackend(tmp_path)
        await backend.working_dir()
        return backend

    @pytest.fixture
    def attach_backend(self) -> Callable[[WorkspaceRef], WorkspaceBackend]:
        return lambda ref: LocalWorkspaceBackend(ref.id)

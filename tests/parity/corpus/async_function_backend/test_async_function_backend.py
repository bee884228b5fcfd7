"""A function-scoped async fixture (it awaits the backend's first operation), plus attach and destroy."""

import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend, WorkspaceRef

if TYPE_CHECKING:
    from workspace_conformance import WorkspaceBackendSuite
else:  # the runner writes parity_suite.py: upstream's class or ours
    from parity_suite import WorkspaceBackendSuite

CORRECT = True
DEFECTS: dict[str, str] = {}


class TestAsyncFixture(WorkspaceBackendSuite):
    @pytest.fixture
    async def backend(self, tmp_path: Path) -> WorkspaceBackend:
        backend = LocalWorkspaceBackend(tmp_path)
        await backend.working_dir()
        return backend

    @pytest.fixture
    def attach_backend(self) -> Callable[[WorkspaceRef], WorkspaceBackend]:
        return lambda ref: LocalWorkspaceBackend(ref.id)

    @pytest.fixture
    def destroy_environment(self) -> Callable[[WorkspaceBackend], Awaitable[None]]:
        async def destroy(backend: WorkspaceBackend) -> None:
            assert backend.ref is not None
            shutil.rmtree(backend.ref.id)

        return destroy

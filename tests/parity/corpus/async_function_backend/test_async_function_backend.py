"""A function-scoped async fixture (it awaits the backend's first operation), plus attach and destroy."""

import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from parity_suite import WorkspaceBackendSuite
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend, WorkspaceRef

CORRECT = True


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

"""A module-level `anyio_backend` returning 'asyncio', over a class-scoped classmethod backend."""

import pytest
from parity_suite import WorkspaceBackendSuite
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend


@pytest.fixture
def anyio_backend() -> str:
    return 'asyncio'


class TestLocalOnAsyncio(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory: pytest.TempPathFactory) -> WorkspaceBackend:
        return LocalWorkspaceBackend(tmp_path_factory.mktemp('workspace'))

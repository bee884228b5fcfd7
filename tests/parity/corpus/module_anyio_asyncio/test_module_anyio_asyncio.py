"""A module-level `anyio_backend` returning 'asyncio', over a class-scoped classmethod backend."""

import pytest
from parity_suite import WorkspaceBackendSuite
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend

UPSTREAM_RULES_ONLY = True  # a plain LocalWorkspaceBackend: its extra rules are test_self_certification's


@pytest.fixture
def anyio_backend() -> str:
    return 'asyncio'


class TestLocalOnAsyncio(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory: pytest.TempPathFactory) -> WorkspaceBackend:
        return LocalWorkspaceBackend(tmp_path_factory.mktemp('workspace'))

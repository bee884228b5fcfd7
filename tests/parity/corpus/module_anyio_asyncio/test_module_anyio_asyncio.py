"""A module-level `anyio_backend` returning 'asyncio', over a class-scoped classmethod backend."""

from typing import TYPE_CHECKING

import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend

if TYPE_CHECKING:
    from workspace_conformance import WorkspaceBackendSuite
else:  # the runner writes parity_suite.py: upstream's class or ours
    from parity_suite import WorkspaceBackendSuite

CORRECT = True
DEFECTS: dict[str, str] = {}


@pytest.fixture
def anyio_backend() -> str:
    return 'asyncio'


class TestLocalOnAsyncio(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory: pytest.TempPathFactory) -> WorkspaceBackend:
        return LocalWorkspaceBackend(tmp_path_factory.mktemp('workspace'))

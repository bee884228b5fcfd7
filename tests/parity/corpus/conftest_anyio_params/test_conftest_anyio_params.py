"""`anyio_backend` from conftest.py with params ['asyncio', 'trio']; a class-scoped classmethod async generator."""

from collections.abc import AsyncIterator

import pytest
from parity_suite import WorkspaceBackendSuite
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend

UPSTREAM_RULES_ONLY = True  # a plain LocalWorkspaceBackend: its extra rules are test_self_certification's


class TestAsyncGenerator(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    async def backend(
        cls, tmp_path_factory: pytest.TempPathFactory, anyio_backend: str
    ) -> AsyncIterator[WorkspaceBackend]:
        backend = LocalWorkspaceBackend(tmp_path_factory.mktemp(f'workspace-{anyio_backend}'))
        yield backend
        # Whatever the rules left behind is the project's business; here: check the working dir survived.
        assert await backend.exists(await backend.working_dir())

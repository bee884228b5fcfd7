"""A backend whose client needs asyncio (`get_running_loop()`, `asyncio.sleep`); `anyio_backend` on the class."""

import asyncio
from pathlib import Path

import pytest
from _delegating import FilesAndCommandsOf
from parity_suite import WorkspaceBackendSuite
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend


class AsyncioClientBackend(FilesAndCommandsOf):
    """Every call goes through an asyncio-only client: it needs the running asyncio loop."""

    def __init__(self, root: Path) -> None:
        super().__init__(LocalWorkspaceBackend(root))

    async def _inner(self) -> LocalWorkspaceBackend:
        asyncio.get_running_loop()  # raises RuntimeError outside asyncio (on trio, say)
        await asyncio.sleep(0)
        return self._local


class TestAsyncioClient(WorkspaceBackendSuite):
    @pytest.fixture
    def anyio_backend(self) -> str:
        return 'asyncio'

    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory: pytest.TempPathFactory) -> WorkspaceBackend:
        return AsyncioClientBackend(tmp_path_factory.mktemp('client'))

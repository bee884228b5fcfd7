"""A backend whose client needs asyncio (`get_running_loop()`, `asyncio.sleep`); `anyio_backend` on the class."""

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pydantic_ai.workspaces import (
    CommandResult,
    FileEntry,
    LocalWorkspaceBackend,
    WorkspaceBackend,
    WorkspaceCommand,
    WorkspaceRef,
)

if TYPE_CHECKING:
    from workspace_conformance import WorkspaceBackendSuite
else:  # the runner writes parity_suite.py: upstream's class or ours
    from parity_suite import WorkspaceBackendSuite

CORRECT = True
DEFECTS: dict[str, str] = {}


class AsyncioClientBackend:
    """Every call goes through an asyncio-only client: it needs the running asyncio loop."""

    def __init__(self, root: Path) -> None:
        self._local = LocalWorkspaceBackend(root)

    async def _client(self) -> LocalWorkspaceBackend:
        asyncio.get_running_loop()  # raises RuntimeError outside asyncio (on trio, say)
        await asyncio.sleep(0)
        return self._local

    @property
    def ref(self) -> WorkspaceRef | None:
        return self._local.ref

    async def working_dir(self) -> str:
        return await (await self._client()).working_dir()

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        return await (await self._client()).run(command, shell=shell, env=env, timeout=timeout)

    async def read_bytes(self, path: str) -> bytes:
        return await (await self._client()).read_bytes(path)

    async def write_bytes(self, path: str, data: bytes) -> None:
        await (await self._client()).write_bytes(path, data)

    async def stat(self, path: str) -> FileEntry:
        return await (await self._client()).stat(path)

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return await (await self._client()).list_dir(path)

    async def make_dir(self, path: str) -> None:
        await (await self._client()).make_dir(path)

    async def remove(self, path: str) -> None:
        await (await self._client()).remove(path)

    async def exists(self, path: str) -> bool:
        return await (await self._client()).exists(path)


class TestAsyncioClient(WorkspaceBackendSuite):
    @pytest.fixture
    def anyio_backend(self) -> str:
        return 'asyncio'

    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory: pytest.TempPathFactory) -> WorkspaceBackend:
        return AsyncioClientBackend(tmp_path_factory.mktemp('client'))

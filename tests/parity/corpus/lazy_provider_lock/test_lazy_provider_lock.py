"""A provider backend that connects lazily under an `anyio.Lock` made in `__init__`; class-scoped, asyncio only."""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
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


@pytest.fixture(scope='module')
def anyio_backend() -> str:
    return 'asyncio'


class LazyProviderBackend:
    """Connects to its sandboxed directory on first use; the connection is made once, under a lock."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._lock = anyio.Lock()
        self._connection: LocalWorkspaceBackend | None = None
        self._ref: WorkspaceRef | None = None

    @property
    def ref(self) -> WorkspaceRef | None:
        return self._ref

    async def _connect(self) -> LocalWorkspaceBackend:
        async with self._lock:
            if self._connection is None:
                await anyio.sleep(0.01)  # the provider's handshake
                self._connection = LocalWorkspaceBackend(self._root)
                self._ref = WorkspaceRef(provider='lazy-provider', id=str(self._root))
            return self._connection

    async def working_dir(self) -> str:
        return await (await self._connect()).working_dir()

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        return await (await self._connect()).run(command, shell=shell, env=env, timeout=timeout)

    async def read_bytes(self, path: str) -> bytes:
        return await (await self._connect()).read_bytes(path)

    async def write_bytes(self, path: str, data: bytes) -> None:
        await (await self._connect()).write_bytes(path, data)

    async def stat(self, path: str) -> FileEntry:
        return await (await self._connect()).stat(path)

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return await (await self._connect()).list_dir(path)

    async def make_dir(self, path: str) -> None:
        await (await self._connect()).make_dir(path)

    async def remove(self, path: str) -> None:
        await (await self._connect()).remove(path)

    async def exists(self, path: str) -> bool:
        return await (await self._connect()).exists(path)

    async def realpath(self, path: str) -> str:
        return await (await self._connect()).realpath(path)


class TestLazyProvider(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory: pytest.TempPathFactory) -> WorkspaceBackend:
        return LazyProviderBackend(tmp_path_factory.mktemp('sandbox'))

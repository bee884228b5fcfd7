"""A provider backend that connects lazily under an `anyio.Lock` made in `__init__`; class-scoped, asyncio only."""

from pathlib import Path

import anyio
import pytest
from _delegating import FilesAndCommandsOf
from parity_suite import WorkspaceBackendSuite
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend, WorkspaceRef


@pytest.fixture(scope='module')
def anyio_backend() -> str:
    return 'asyncio'


class LazyProviderBackend(FilesAndCommandsOf):
    """Connects to its sandboxed directory on first use; the connection is made once, under a lock."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._lock = anyio.Lock()
        self._connection: LocalWorkspaceBackend | None = None
        self._ref: WorkspaceRef | None = None

    @property
    def ref(self) -> WorkspaceRef | None:
        return self._ref

    async def _inner(self) -> LocalWorkspaceBackend:
        async with self._lock:
            if self._connection is None:
                await anyio.sleep(0.01)  # the provider's handshake
                self._connection = LocalWorkspaceBackend(self._root)
                self._ref = WorkspaceRef(provider='lazy-provider', id=str(self._root))
            return self._connection

    async def realpath(self, path: str) -> str:
        return await (await self._inner()).realpath(path)


class TestLazyProvider(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory: pytest.TempPathFactory) -> WorkspaceBackend:
        return LazyProviderBackend(tmp_path_factory.mktemp('sandbox'))

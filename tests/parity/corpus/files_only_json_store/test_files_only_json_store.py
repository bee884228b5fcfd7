"""A files-only backend (a JSON document per environment) with every optional fixture: certified by our suite."""

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from json_store import JsonStoreBackend, destroy
from parity_suite import WorkspaceBackendSuite
from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef


@pytest.fixture(scope='module')
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp('json-store')


class TestJsonStore(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, store: Path) -> WorkspaceBackend:
        return JsonStoreBackend(store)

    @pytest.fixture
    def fresh_backend(self, store: Path) -> Callable[[], WorkspaceBackend]:
        return lambda: JsonStoreBackend(store)

    @pytest.fixture
    def attach_backend(self, store: Path) -> Callable[[WorkspaceRef], WorkspaceBackend]:
        return lambda ref: JsonStoreBackend(store, ref)

    @pytest.fixture
    def destroy_environment(self) -> Callable[[WorkspaceBackend], Awaitable[None]]:
        async def destroy_it(backend: WorkspaceBackend) -> None:
            assert isinstance(backend, JsonStoreBackend)
            await destroy(backend)

        return destroy_it

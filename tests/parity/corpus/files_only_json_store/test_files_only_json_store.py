"""A files-only backend (a JSON document per environment) with every optional fixture: certified by our suite."""

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef

if TYPE_CHECKING:
    from tests.parity.corpus.json_store import JsonStoreBackend, destroy

    from workspace_conformance import WorkspaceBackendSuite
else:  # the runner writes parity_suite.py: upstream's class or ours
    from json_store import JsonStoreBackend, destroy
    from parity_suite import WorkspaceBackendSuite

CORRECT = True
DEFECTS: dict[str, str] = {}


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

"""A module-scoped sync generator fixture that the class's `backend` method returns."""

import shutil
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend

if TYPE_CHECKING:
    from workspace_conformance import WorkspaceBackendSuite
else:  # the runner writes parity_suite.py: upstream's class or ours
    from parity_suite import WorkspaceBackendSuite

CORRECT = True
DEFECTS: dict[str, str] = {}


@pytest.fixture(scope='module')
def shared_workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalWorkspaceBackend]:
    root = tmp_path_factory.mktemp('shared')
    yield LocalWorkspaceBackend(root)
    shutil.rmtree(root)


class TestModuleScoped(WorkspaceBackendSuite):
    @pytest.fixture
    def backend(self, shared_workspace: LocalWorkspaceBackend) -> WorkspaceBackend:
        return shared_workspace

"""A module-scoped sync generator fixture that the class's `backend` method returns."""

import shutil
from collections.abc import Iterator

import pytest
from parity_suite import WorkspaceBackendSuite
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend

UPSTREAM_RULES_ONLY = True  # a plain LocalWorkspaceBackend: its extra rules are test_self_certification's


@pytest.fixture(scope='module')
def shared_workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalWorkspaceBackend]:
    root = tmp_path_factory.mktemp('shared')
    yield LocalWorkspaceBackend(root)
    shutil.rmtree(root)


class TestModuleScoped(WorkspaceBackendSuite):
    @pytest.fixture
    def backend(self, shared_workspace: LocalWorkspaceBackend) -> WorkspaceBackend:
        return shared_workspace

"""Upstream's switch fixtures overridden to False, as a provider documents (an E2B-like SDK and file API)."""

from typing import TYPE_CHECKING

import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend

if TYPE_CHECKING:
    from workspace_conformance import WorkspaceBackendSuite
else:  # the runner writes parity_suite.py: upstream's class or ours
    from parity_suite import WorkspaceBackendSuite

CORRECT = True
DEFECTS: dict[str, str] = {}


class TestDocumentedSwitches(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory: pytest.TempPathFactory) -> WorkspaceBackend:
        return LocalWorkspaceBackend(tmp_path_factory.mktemp('workspace'))

    @pytest.fixture
    def can_detect_exit_with_inherited_output_pipes(self) -> bool:
        return False  # documented: the SDK reports an exit only at pipe EOF

    @pytest.fixture
    def filesystem_honors_shell_permissions(self) -> bool:
        return False  # documented: the file API runs as root

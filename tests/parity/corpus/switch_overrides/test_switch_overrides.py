"""Upstream's switch fixtures overridden to False, as a provider documents (an E2B-like SDK and file API)."""

import pytest
from parity_suite import WorkspaceBackendSuite
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend

UPSTREAM_RULES_ONLY = True  # a plain LocalWorkspaceBackend: its extra rules are test_self_certification's


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

"""The files-only JSON store declaring `has_real_posix_shell` False: it has no shell at all (its documented limit)."""

from collections.abc import Callable
from pathlib import Path

import pytest
from json_store import JsonStoreBackend
from parity_suite import WorkspaceBackendSuite
from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef


class TestNoShell(WorkspaceBackendSuite):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> WorkspaceBackend:
        return JsonStoreBackend(tmp_path)

    @pytest.fixture
    def fresh_backend(self, tmp_path: Path) -> Callable[[], WorkspaceBackend]:
        return lambda: JsonStoreBackend(tmp_path)

    @pytest.fixture
    def attach_backend(self, tmp_path: Path) -> Callable[[WorkspaceRef], WorkspaceBackend]:
        return lambda ref: JsonStoreBackend(tmp_path, ref)

    @pytest.fixture
    def has_real_posix_shell(self) -> bool:
        return False

    @pytest.fixture
    def filesystem_honors_shell_permissions(self) -> bool:
        return False

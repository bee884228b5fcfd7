"""The files-only JSON store declaring `has_real_posix_shell` False: it has no shell at all (its documented limit)."""

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef

if TYPE_CHECKING:
    from tests.parity.corpus.json_store import JsonStoreBackend

    from workspace_conformance import WorkspaceBackendSuite
else:  # the runner writes parity_suite.py: upstream's class or ours
    from json_store import JsonStoreBackend
    from parity_suite import WorkspaceBackendSuite

CORRECT = True
DEFECTS: dict[str, str] = {}


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

"""A commands-only backend: `LocalWorkspaceBackend`'s `run`, `ref` and `working_dir`, files through the shell."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from _delegating import CommandsOf
from parity_suite import WorkspaceBackendSuite
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend


class ShellOnlyBackend(CommandsOf):
    """Commands only: pydantic-ai derives every file operation from this backend's shell."""

    def __init__(self, root: Path) -> None:
        super().__init__(LocalWorkspaceBackend(root))


class TestShellOnly(WorkspaceBackendSuite):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> Iterator[WorkspaceBackend]:
        backend = ShellOnlyBackend(tmp_path)
        yield backend
        assert tmp_path.is_dir(), 'a rule removed the working directory'

"""A commands-only backend: `LocalWorkspaceBackend`'s `run`, `ref` and `working_dir`, files through the shell."""

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from pydantic_ai.workspaces import (
    CommandResult,
    LocalWorkspaceBackend,
    WorkspaceBackend,
    WorkspaceCommand,
    WorkspaceRef,
)

if TYPE_CHECKING:
    from workspace_conformance import WorkspaceBackendSuite
else:  # the runner writes parity_suite.py: upstream's class or ours
    from parity_suite import WorkspaceBackendSuite

CORRECT = True
DEFECTS: dict[str, str] = {}


class ShellOnlyBackend:
    """Commands only: pydantic-ai derives every file operation from this backend's shell."""

    def __init__(self, root: Path) -> None:
        self._local = LocalWorkspaceBackend(root)

    @property
    def ref(self) -> WorkspaceRef | None:
        return self._local.ref

    async def working_dir(self) -> str:
        return await self._local.working_dir()

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        return await self._local.run(command, shell=shell, env=env, timeout=timeout)


class TestShellOnly(WorkspaceBackendSuite):
    @pytest.fixture
    def backend(self, tmp_path: Path) -> Iterator[WorkspaceBackend]:
        backend = ShellOnlyBackend(tmp_path)
        yield backend
        assert tmp_path.is_dir(), 'a rule removed the working directory'

"""A parametrized backend fixture: the native local backend ('a') and its commands only ('b')."""

from collections.abc import Mapping
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


@pytest.fixture(scope='module')
def anyio_backend() -> str:
    return 'asyncio'


class CommandsOf:
    def __init__(self, local: LocalWorkspaceBackend) -> None:
        self._local = local

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


class TestParametrized(WorkspaceBackendSuite):
    @pytest.fixture(params=['a', 'b'])
    def backend(self, request: pytest.FixtureRequest, tmp_path: Path) -> WorkspaceBackend:
        local = LocalWorkspaceBackend(tmp_path)
        return local if request.param == 'a' else CommandsOf(local)

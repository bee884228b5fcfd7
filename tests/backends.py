"""Backends the project's own tests certify: wrappers that narrow or break `LocalWorkspaceBackend`."""

from __future__ import annotations

from collections.abc import Mapping

import anyio
from pydantic_ai.workspaces import CommandResult, LocalWorkspaceBackend, WorkspaceCommand, WorkspaceRef


class CommandsOnly:
    """Only `SupportsCommands`: `Workspace` derives every file operation from its shell."""

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


class HangingWorkingDir(LocalWorkspaceBackend):
    """A backend whose `working_dir()` never returns."""

    async def working_dir(self) -> str:
        await anyio.sleep_forever()
        raise AssertionError('unreachable')

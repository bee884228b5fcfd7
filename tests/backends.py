"""Backends the project's own tests certify: wrappers that narrow or break `LocalWorkspaceBackend`."""

from __future__ import annotations

import anyio
from pydantic_ai.workspaces import LocalWorkspaceBackend


class HangingWorkingDir(LocalWorkspaceBackend):
    """A backend whose `working_dir()` never returns."""

    async def working_dir(self) -> str:
        await anyio.sleep_forever()
        raise AssertionError('unreachable')

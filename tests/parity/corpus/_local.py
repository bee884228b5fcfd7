"""A fixture several corpus projects share: destroying a `LocalWorkspaceBackend` environment removes its directory."""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable

import pytest
from pydantic_ai.workspaces import WorkspaceBackend

__all__ = ('DestroysByRemovingTheDirectory',)


async def _remove_directory(backend: WorkspaceBackend) -> None:
    assert backend.ref is not None
    shutil.rmtree(backend.ref.id)


class DestroysByRemovingTheDirectory:
    """Mixed into a suite subclass whose backend's ref id is its directory: `destroy_environment` removes it."""

    @pytest.fixture
    def destroy_environment(self) -> Callable[[WorkspaceBackend], Awaitable[None]]:
        return _remove_directory

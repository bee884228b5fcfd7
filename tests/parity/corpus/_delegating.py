"""Backends that forward each protocol method to an inner `LocalWorkspaceBackend`.

`CommandsOf` forwards `ref`, `working_dir` and `run` only (a commands-only backend); `FilesAndCommandsOf` adds the
file methods. Each call reaches the backend that `_inner()` returns: a subclass overrides it to connect lazily or to
go through a client. Neither forwards `realpath`: a subclass that has one adds it.
"""

from __future__ import annotations

from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceRef

from workspace_conformance.doubles.forwarding import ForwardsCommands, ForwardsFiles

__all__ = ('CommandsOf', 'FilesAndCommandsOf')


class CommandsOf(ForwardsCommands):
    """The commands of `local`: pydantic-ai derives every file operation from its shell."""

    def __init__(self, local: LocalWorkspaceBackend) -> None:
        self._local = local

    async def _inner(self) -> LocalWorkspaceBackend:
        return self._local

    @property
    def ref(self) -> WorkspaceRef | None:
        return self._local.ref


class FilesAndCommandsOf(ForwardsFiles, CommandsOf):
    """The commands and the file methods of the inner backend."""

"""Backends that forward each protocol method to an inner `LocalWorkspaceBackend`.

`CommandsOf` forwards `ref`, `working_dir` and `run` only (a commands-only backend); `FilesAndCommandsOf` adds the
file methods. Each call reaches the backend that `_inner()` returns: a subclass overrides it to connect lazily or to
go through a client. Neither forwards `realpath`: a subclass that has one adds it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic_ai.workspaces import CommandResult, FileEntry, LocalWorkspaceBackend, WorkspaceCommand, WorkspaceRef

__all__ = ('CommandsOf', 'FilesAndCommandsOf')


class CommandsOf:
    """The commands of `local`: pydantic-ai derives every file operation from its shell."""

    def __init__(self, local: LocalWorkspaceBackend) -> None:
        self._local = local

    async def _inner(self) -> LocalWorkspaceBackend:
        return self._local

    @property
    def ref(self) -> WorkspaceRef | None:
        return self._local.ref

    async def working_dir(self) -> str:
        return await (await self._inner()).working_dir()

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        return await (await self._inner()).run(command, shell=shell, env=env, timeout=timeout)


class FilesAndCommandsOf(CommandsOf):
    """The commands and the file methods of the inner backend."""

    async def read_bytes(self, path: str) -> bytes:
        return await (await self._inner()).read_bytes(path)

    async def write_bytes(self, path: str, data: bytes) -> None:
        await (await self._inner()).write_bytes(path, data)

    async def stat(self, path: str) -> FileEntry:
        return await (await self._inner()).stat(path)

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return await (await self._inner()).list_dir(path)

    async def make_dir(self, path: str) -> None:
        await (await self._inner()).make_dir(path)

    async def remove(self, path: str) -> None:
        await (await self._inner()).remove(path)

    async def exists(self, path: str) -> bool:
        return await (await self._inner()).exists(path)

"""Backends of one shape over another backend: `CommandsOnly` (commands, no file API) and `FilesOnly` (files only)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.workspaces import FileEntry, WorkspaceRef

from .forwarding import Forwardee, ForwardsCommands

__all__ = ('CommandsOnly', 'FilesOnly')


class CommandsOnly(ForwardsCommands):
    """Exposes only `ref`, `working_dir` and `run` of a backend, as a provider with nothing but a command API does."""

    def __init__(self, backend: Forwardee) -> None:
        self._backend = backend

    @property
    def ref(self) -> WorkspaceRef | None:
        """The wrapped backend's ref."""
        return getattr(self._backend, 'ref', None)

    async def _inner(self) -> Forwardee:
        return self._backend


class FilesOnly:
    """Exposes only `ref`, `working_dir` and the `SupportsFilesystem` methods of a backend: no `run`, no `realpath`.

    Over host disk this is the shape where a missing `realpath` meets real symlinks.
    """

    def __init__(self, backend: Forwardee) -> None:
        self._backend = backend

    @property
    def ref(self) -> WorkspaceRef | None:
        """The wrapped backend's ref."""
        return getattr(self._backend, 'ref', None)

    async def working_dir(self) -> str:
        return await self._backend.working_dir()

    async def read_bytes(self, path: str) -> bytes:
        return await self._backend.read_bytes(path)

    async def write_bytes(self, path: str, data: bytes) -> None:
        await self._backend.write_bytes(path, data)

    async def stat(self, path: str) -> FileEntry:
        return await self._backend.stat(path)

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return await self._backend.list_dir(path)

    async def make_dir(self, path: str) -> None:
        await self._backend.make_dir(path)

    async def remove(self, path: str) -> None:
        await self._backend.remove(path)

    async def exists(self, path: str) -> bool:
        return await self._backend.exists(path)

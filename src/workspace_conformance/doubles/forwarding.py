"""`run` written once: the protocol's signature, each call handed on as one `RunCall` value.

A backend that wraps, forwards or answers commands subclasses `TakesRunCalls` and implements `_take_run(call)`;
`call.to` makes the same call on another backend's `run`. `ForwardsCommands` and `ForwardsFiles` hand every call to
the backend their `_inner()` returns.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic_ai.workspaces import CommandResult, FileEntry, SupportsCommands, SupportsFilesystem, WorkspaceCommand

__all__ = ('Forwardee', 'ForwardsCommands', 'ForwardsFiles', 'RunCall', 'TakesRunCalls')


@dataclass(frozen=True)
class RunCall:
    """One call of `run` as its caller made it: the command, its form, the added environment and the timeout."""

    command: WorkspaceCommand
    shell: bool = False
    env: Mapping[str, str] | None = None
    timeout: float | None = None

    async def to(self, run: Callable[..., Awaitable[CommandResult]]) -> CommandResult:
        """The result of making this same call on `run` (another backend's `run` method)."""
        return await run(self.command, shell=self.shell, env=self.env, timeout=self.timeout)


class TakesRunCalls:
    """`SupportsCommands.run` with the protocol's signature, handing each call to `_take_run` as a `RunCall`."""

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        """Run `command` (see `SupportsCommands.run`): whatever `_take_run` does with the call."""
        return await self._take_run(RunCall(command, shell, env, timeout))

    async def _take_run(self, call: RunCall) -> CommandResult:
        raise NotImplementedError(f'{type(self).__name__} must implement _take_run(call)')


class Forwardee(SupportsCommands, SupportsFilesystem, Protocol):
    """What a forwarding backend hands its calls to: a backend with commands and files."""

    async def working_dir(self) -> str: ...


class ForwardsCommands(TakesRunCalls):
    """`working_dir` and `run` of the backend `_inner()` returns; a subclass overrides `_inner` to connect lazily."""

    async def _inner(self) -> Forwardee:
        raise NotImplementedError(f'{type(self).__name__} must implement _inner()')

    async def working_dir(self) -> str:
        return await (await self._inner()).working_dir()

    async def _take_run(self, call: RunCall) -> CommandResult:
        return await call.to((await self._inner()).run)


class ForwardsFiles(ForwardsCommands):
    """`ForwardsCommands` plus the `SupportsFilesystem` methods of the same inner backend."""

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

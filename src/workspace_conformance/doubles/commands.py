"""`ScriptedCommands`: commands answered by handlers you register; anything unmatched exits 127."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic_ai.workspaces import CommandResult, WorkspaceCommand, WorkspaceTimeoutError
from pydantic_ai.workspaces.protocol import validate_timeout

from .forwarding import RunCall, TakesRunCalls
from .memory import FilesystemMethods, MemoryCore, RealpathMethod, SymlinkMethod

__all__ = ('CommandCall', 'Handler', 'ScriptedCommands', 'ScriptedMemoryBackend', 'result')


@dataclass(frozen=True)
class CommandCall:
    """One call of `run`, as handlers receive it and as `ScriptedCommands.calls` records it."""

    command: WorkspaceCommand
    shell: bool
    env: Mapping[str, str]
    """The backend's own environment with the call's `env=` layered on top."""
    timeout: float | None
    backend: Any
    """The double the command runs in: handlers may read and write its files (`backend.write_file`, ...)."""

    @property
    def argv(self) -> list[str]:
        """The argv of an argv command; `['sh', '-c', command]` for a shell string."""
        return ['sh', '-c', self.command] if isinstance(self.command, str) else list(self.command)


Handler = Callable[[CommandCall], CommandResult | Awaitable[CommandResult]]
Matcher = Callable[[CommandCall], bool]


def result(stdout: str = '', stderr: str = '', exit_code: int = 0) -> Handler:
    """A handler that always returns this result."""
    fixed = CommandResult(exit_code=exit_code, stdout=stdout, stderr=stderr)
    return lambda call: fixed


@dataclass
class ScriptedCommands:
    """The command table of a double: the first registered handler whose matcher accepts a call answers it."""

    environment: dict[str, str] = field(default_factory=lambda: {'PATH': '/usr/bin:/bin', 'HOME': '/workspace'})
    handlers: list[tuple[str, Matcher, Handler]] = field(default_factory=list)
    calls: list[CommandCall] = field(default_factory=list)

    def on(self, matcher: Matcher, handler: Handler, *, description: str = 'custom matcher') -> ScriptedCommands:
        """Answer calls `matcher` accepts with `handler`."""
        self.handlers.append((description, matcher, handler))
        return self

    def on_argv(self, argv: Sequence[str], handler: Handler) -> ScriptedCommands:
        """Answer exactly this argv (not a shell string)."""
        expected = list(argv)
        return self.on(lambda call: not call.shell and call.argv == expected, handler, description=f'argv {expected}')

    def on_prefix(self, prefix: Sequence[str], handler: Handler) -> ScriptedCommands:
        """Answer any argv starting with `prefix`."""
        head = list(prefix)
        return self.on(
            lambda call: not call.shell and call.argv[: len(head)] == head, handler, description=f'prefix {head}'
        )

    def on_shell(self, pattern: str, handler: Handler) -> ScriptedCommands:
        """Answer shell strings matching the regular expression `pattern` (searched, not anchored)."""
        compiled = re.compile(pattern)
        return self.on(
            lambda call: call.shell and isinstance(call.command, str) and compiled.search(call.command) is not None,
            handler,
            description=f'shell /{pattern}/',
        )

    def on_program(self, program: str, handler: Handler) -> ScriptedCommands:
        """Answer argv commands running `program`, with any arguments."""
        return self.on_prefix([program], handler)

    async def dispatch(self, call: CommandCall) -> CommandResult:
        """Record the call, then answer it with the first matching handler, or exit 127."""
        self.calls.append(call)
        for _, matcher, handler in self.handlers:
            if matcher(call):
                answer = handler(call)
                return await answer if inspect.isawaitable(answer) else answer
        program = call.argv[0] if call.argv else ''
        return CommandResult(exit_code=127, stdout='', stderr=f'{program}: command not found\n')


class CommandsMethod(TakesRunCalls, MemoryCore):
    """`SupportsCommands` for an in-memory double, answered by its `ScriptedCommands`."""

    commands: ScriptedCommands

    async def _take_run(self, request: RunCall) -> CommandResult:
        command, shell, timeout = request.command, request.shell, request.timeout
        validate_timeout(timeout)
        if isinstance(command, str) != shell:
            raise TypeError('a string command requires shell=True, and an argv sequence shell=False')
        await self._enter()
        call = CommandCall(
            command=command if isinstance(command, str) else tuple(command),
            shell=shell,
            env={**self.commands.environment, **(request.env or {})},
            timeout=timeout,
            backend=self,
        )
        if timeout is None:
            answer = await self.commands.dispatch(call)
        else:
            with anyio.move_on_after(timeout) as scope:
                answer = await self.commands.dispatch(call)
            if scope.cancelled_caught:
                raise WorkspaceTimeoutError(f'scripted command timed out after {timeout:g}s')
        self.check_alive()  # destroyed while it ran: unavailable, not a normal exit
        return answer


class ScriptedMemoryBackend(CommandsMethod, FilesystemMethods, RealpathMethod, SymlinkMethod):
    """`InMemoryBackend` plus commands answered by a `ScriptedCommands` table."""

    def __init__(self, commands: ScriptedCommands | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.commands = commands or ScriptedCommands()

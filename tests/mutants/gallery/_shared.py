"""Helpers the mutants of several areas use: worker threads, path guards, command environments, a hand-rolled runner."""

from __future__ import annotations

import dataclasses
import functools
import os
import signal
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from contextlib import suppress
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.abc
import anyio.lowlevel
import anyio.to_thread
from pydantic_ai.workspaces import CommandResult, LocalWorkspaceBackend, WorkspaceCommand, WorkspaceTimeoutError
from pydantic_ai.workspaces.protocol import validate_timeout

from workspace_conformance.doubles.forwarding import RunCall, TakesRunCalls

INHERITED_ENV = ('PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE')
"""What `LocalWorkspaceBackend` passes on to commands; the mutants that spawn processes themselves do the same."""


T = TypeVar('T')


async def _blocking(function: Callable[..., T], *args: object) -> T:
    """`function(*args)` in a worker thread: file system calls block."""
    return await anyio.to_thread.run_sync(functools.partial(function, *args))


def _sacrificial_dir(run_dir: Path) -> Path:
    """Like the `local` target's sacrificial environments: two levels below a directory of its own."""
    (run_dir / 'destructive').mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix='sacrificial-', dir=run_dir / 'destructive')) / 'chain' / 'workspace'
    path.mkdir(parents=True)
    return path


def _command_env(env: Mapping[str, str] | None) -> dict[str, str]:
    return {name: os.environ[name] for name in INHERITED_ENV if name in os.environ} | dict(env or {})


def _check_form(command: WorkspaceCommand, shell: bool) -> None:
    if isinstance(command, str) != shell:
        raise TypeError('a string command requires shell=True, and an argv sequence shell=False')


def _argv(command: WorkspaceCommand) -> list[str]:
    """The argv that runs `command`: a shell string through `/bin/sh -c`, an argv as it is."""
    return ['/bin/sh', '-c', command] if isinstance(command, str) else list(command)


def _below(path: str | Path, root: str | Path) -> bool:
    """Whether `path` (resolved) is strictly below `root` (resolved): the only places a destructive mutant touches."""
    resolved, jail = Path(path).resolve(), Path(root).resolve()
    return resolved != jail and resolved.is_relative_to(jail)


def _refuse_outside(path: str | Path, root: str | Path) -> None:
    if not _below(path, root):
        # Not the modelled bug: the guard that keeps a destructive mutant inside its working directory.
        raise ValueError(f'mutant refuses to touch {path}, which is not below its working directory {root}')


def _decoded(exit_code: int, stdout: bytes | bytearray, stderr: bytes | bytearray) -> CommandResult:
    """The result of a command that exited with `exit_code`, its output decoded as `LocalWorkspaceBackend` does."""
    return CommandResult(
        exit_code=exit_code, stdout=stdout.decode(errors='replace'), stderr=stderr.decode(errors='replace')
    )


async def _drain(stream: anyio.abc.ByteReceiveStream | None, into: bytearray) -> None:
    assert stream is not None
    async for chunk in stream:
        into.extend(chunk)


class InterceptsRun(TakesRunCalls, LocalWorkspaceBackend):
    """`LocalWorkspaceBackend` whose `run` hands each call to `_take_run`: a command mutant overrides only that."""

    async def _take_run(self, call: RunCall) -> CommandResult:
        return await self._forward(call)

    async def _forward(self, call: RunCall) -> CommandResult:
        """`LocalWorkspaceBackend.run` of `call`."""
        return await call.to(functools.partial(LocalWorkspaceBackend.run, self))


class RewritesCommands(InterceptsRun):
    """`LocalWorkspaceBackend.run` of the command that `_rewrite_command` makes of the one given."""

    def _rewrite_command(self, command: WorkspaceCommand, shell: bool) -> WorkspaceCommand:
        return command

    async def _take_run(self, call: RunCall) -> CommandResult:
        return await self._forward(dataclasses.replace(call, command=self._rewrite_command(call.command, call.shell)))


class RewritesResults(InterceptsRun):
    """`LocalWorkspaceBackend.run`, its result passed through `_rewrite_result`."""

    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        return result

    async def _take_run(self, call: RunCall) -> CommandResult:
        return self._rewrite_result(await self._forward(call))


class HandRolled(InterceptsRun):
    """`run` as a plain subprocess: new session, both pipes drained, the group killed on timeout or cancellation."""

    def _environment(self, env: Mapping[str, str] | None) -> dict[str, str]:
        return _command_env(env)

    def _exit_code(self, returncode: int) -> int:
        return 128 - returncode if returncode < 0 else returncode

    async def _stop(self, process: anyio.abc.Process) -> None:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)

    async def _collect(self, process: anyio.abc.Process, stdout: bytearray, stderr: bytearray) -> int:
        async with anyio.create_task_group() as group:
            group.start_soon(_drain, process.stdout, stdout)
            group.start_soon(_drain, process.stderr, stderr)
            returncode = await process.wait()
        return returncode

    async def _take_run(self, call: RunCall) -> CommandResult:
        validate_timeout(call.timeout)
        _check_form(call.command, call.shell)
        process = await anyio.open_process(
            _argv(call.command),
            cwd=await self.working_dir(),
            env=self._environment(call.env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        stdout, stderr = bytearray(), bytearray()
        try:
            with anyio.fail_after(call.timeout):
                returncode = await self._collect(process, stdout, stderr)
        except BaseException as error:
            with anyio.CancelScope(shield=True):
                await self._stop(process)
                await process.aclose()
            if isinstance(error, TimeoutError) and call.timeout is not None:
                raise WorkspaceTimeoutError(
                    f'command timed out after {call.timeout:g}s',
                    stdout=stdout.decode(errors='replace'),
                    stderr=stderr.decode(errors='replace'),
                ) from error
            raise
        await process.aclose()
        return _decoded(self._exit_code(returncode), stdout, stderr)

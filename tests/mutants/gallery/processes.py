"""Mutants of the process rules: commands whose processes outlive, ignore or escape their timeouts and cancellation."""

from __future__ import annotations

import dataclasses
import functools
import os
import signal
import subprocess
import uuid
from collections.abc import Callable, Mapping
from contextlib import suppress
from pathlib import Path

import anyio
import anyio.abc
import anyio.to_thread
from pydantic_ai.workspaces import (
    CommandResult,
    LocalWorkspaceBackend,
    WorkspaceBackend,
    WorkspaceCommand,
    WorkspaceRef,
    WorkspaceTimeoutError,
)
from pydantic_ai.workspaces.protocol import validate_timeout

from workspace_conformance.doubles.forwarding import RunCall

from ..registry import breaks, mutant
from ._shared import HandRolled, InterceptsRun, _argv, _below, _blocking, _check_form, _command_env, _decoded


def _spawn(
    command: WorkspaceCommand, cwd: str, env: Mapping[str, str] | None, *, shell: bool = False
) -> subprocess.Popen[bytes]:
    """The process of `command` as a hand-rolled `run` starts it: a new session, no stdin, both outputs piped."""
    return subprocess.Popen(
        command,
        shell=shell,
        cwd=cwd,
        env=_command_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


@breaks(
    kills=['background_child_does_not_hold_up_completed_command'],
    bug='run() waits for end of file on the output pipes, so a background child holding stdout delays it.',
)
class WaitsForPipeEof(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        _check_form(call.command, call.shell)
        cwd = await self.working_dir()
        try:
            with anyio.fail_after(call.timeout):
                # `run_process` reads both pipes to end of file, so it waits for whoever else holds them.
                done = await anyio.run_process(
                    call.command,
                    cwd=cwd,
                    env=_command_env(call.env),
                    stdin=subprocess.DEVNULL,
                    check=False,
                    start_new_session=True,
                )
        except TimeoutError as error:
            raise WorkspaceTimeoutError(f'command timed out after {call.timeout:g}s') from error
        return _decoded(done.returncode, done.stdout, done.stderr)


@breaks(
    kills=['cancellation_stops_foreground_work'],
    bug='A cancelled run() abandons the worker thread waiting on the process and never kills the process.',
)
class AbandonsTheProcessOnCancel(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        _check_form(call.command, call.shell)
        cwd = await self.working_dir()

        process = await _blocking(functools.partial(_spawn, call.command, cwd, call.env, shell=call.shell))
        try:
            # A cancelled caller abandons the thread, and with it the process, which keeps running.
            stdout, stderr = await anyio.to_thread.run_sync(
                functools.partial(process.communicate, timeout=call.timeout), abandon_on_cancel=True
            )
        except subprocess.TimeoutExpired as error:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await _blocking(process.communicate)
            raise WorkspaceTimeoutError(f'command timed out after {call.timeout:g}s') from error
        return _decoded(process.returncode, stdout, stderr)


def _kill_where(chosen: Callable[[Path], bool]) -> None:
    """SIGKILL every other process whose `/proc/<pid>` directory `chosen` picks (one it cannot read is skipped)."""
    for entry in Path('/proc').iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            picked = chosen(entry)
        except OSError:
            continue
        if picked:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)


def _restarting_attach(run_dir: Path, ref: WorkspaceRef) -> WorkspaceBackend:
    """Attach as a sandbox that restarts on attach: every process working in the environment is killed first."""
    root = Path(ref.id).resolve()
    if _below(root, run_dir):  # never anything outside the run directory

        def works_in_the_environment(process: Path) -> bool:
            cwd = Path(os.readlink(process / 'cwd'))
            return cwd == root or cwd.is_relative_to(root)

        _kill_where(works_in_the_environment)
    return LocalWorkspaceBackend(ref.id)


mutant(
    name='attach_restarts_the_sandbox',
    kills=['a_backend_attached_by_ref_reaches_a_detached_process'],
    bug='Attaching by ref restarts the sandbox, killing every process that was running in the environment.',
    attach_backend=_restarting_attach,
)


@breaks(
    kills=[
        'timeout_stops_the_foreground_process',
        'timeout_stops_the_process_tree',
        'a_timed_out_command_s_grandchild_writes_nothing_more',
    ],
    bug='On timeout the backend closes only its exec session, and the command it started keeps running.',
)
class TimeoutAbandonsTheCommand(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        if call.timeout is None:
            return await self._forward(call)
        _check_form(call.command, call.shell)
        # The command runs in a session of its own; a timeout ends only the exec session that waits for it.
        wrapped = ['sh', '-c', 'setsid "$@" & wait $!', 'sh', *_argv(call.command)]
        return await self._forward(RunCall(wrapped, env=call.env, timeout=call.timeout))


@breaks(
    kills=[
        'timeout_stops_the_process_tree',
        'cancellation_stops_the_process_tree',
        'a_timed_out_command_s_grandchild_writes_nothing_more',
    ],
    bug='A timeout or cancellation kills only the process the backend spawned (Popen.kill), not its process group.',
)
class KillsOnlyTheDirectProcess(HandRolled):
    async def _stop(self, process: anyio.abc.Process) -> None:
        with suppress(ProcessLookupError):
            process.kill()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@breaks(
    kills=['a_redirected_background_job_does_not_delay_run'],
    bug="run() returns only once every process in the command's process group has exited, background jobs too.",
)
class WaitsForTheWholeProcessGroup(HandRolled):
    async def _collect(self, process: anyio.abc.Process, stdout: bytearray, stderr: bytearray) -> int:
        returncode = await super()._collect(process, stdout, stderr)
        # "Done" only when nothing of the command's process group is left, background jobs included.
        while _group_alive(process.pid):
            await anyio.sleep(0.05)
        return returncode


@breaks(
    kills=['run_returns_only_after_the_command_exits'],
    bug='run() returns when the output pipes reach end of file and reads the exit status then, defaulting to 0.',
)
class ReturnsAtEndOfOutput(InterceptsRun):
    """Reads the output to end of file, then reports `returncode` without waiting for the process."""

    def __init__(self, working_dir: str | Path) -> None:
        super().__init__(working_dir)
        self._unreaped: list[subprocess.Popen[bytes]] = []

    async def _take_run(self, call: RunCall) -> CommandResult:
        validate_timeout(call.timeout)
        _check_form(call.command, call.shell)
        self._unreaped = [process for process in self._unreaped if process.poll() is None]
        cwd = await self.working_dir()

        def run_until_eof() -> tuple[subprocess.Popen[bytes], bytes, bytes]:
            process = _spawn(_argv(call.command), cwd, call.env)
            assert process.stdout is not None and process.stderr is not None
            with process.stdout, process.stderr:
                # Small outputs only: the rule this mutant must fail writes a few bytes.
                return process, process.stdout.read(), process.stderr.read()

        process, stdout, stderr = await _blocking(run_until_eof)
        self._unreaped.append(process)  # polled (reaped) by a later call
        return _decoded(process.poll() or 0, stdout, stderr)


TAG = 'WORKSPACE_CONFORMANCE_MUTANT_TAG'


def _kill_tagged(tag: str) -> None:
    """SIGKILL every process whose environment carries `tag`: only processes this mutant's command started."""
    marker = f'{TAG}={tag}'.encode()
    _kill_where(lambda process: marker in (process / 'environ').read_bytes().split(b'\0'))


@breaks(
    kills=['a_detached_process_outlives_the_command'],
    bug='When a command returns, the backend stops its whole cgroup, killing processes it detached with setsid.',
)
class KillsDetachedProcessesOnReturn(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        tag = uuid.uuid4().hex
        try:
            return await self._forward(dataclasses.replace(call, env={**(call.env or {}), TAG: tag}))
        finally:
            # Like stopping the command's cgroup: every process it started dies, detached or not.
            with anyio.CancelScope(shield=True):
                await _blocking(_kill_tagged, tag)

"""Mutants of the process rules: commands whose processes outlive, ignore or escape their timeouts and cancellation."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import uuid
from collections.abc import Mapping
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

from ..registry import mutant, on_shared_dir
from ._shared import HandRolled, _blocking, _check_form, _command_env, _decoded, _within


class WaitsForPipeEof(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        _check_form(command, shell)
        cwd = await self.working_dir()
        try:
            with anyio.fail_after(timeout):
                # `run_process` reads both pipes to end of file, so it waits for whoever else holds them.
                done = await anyio.run_process(
                    command,
                    cwd=cwd,
                    env=_command_env(env),
                    stdin=subprocess.DEVNULL,
                    check=False,
                    start_new_session=True,
                )
        except TimeoutError as error:
            raise WorkspaceTimeoutError(f'command timed out after {timeout:g}s') from error
        return _decoded(done.returncode, done.stdout, done.stderr)


mutant(
    name='waits_for_pipe_eof',
    kills=['background_child_does_not_hold_up_completed_command'],
    bug='run() waits for end of file on the output pipes, so a background child holding stdout delays it.',
    backend=on_shared_dir(WaitsForPipeEof),
)


class AbandonsOnCancel(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        _check_form(command, shell)
        cwd = await self.working_dir()

        def spawn() -> subprocess.Popen[bytes]:
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

        process = await _blocking(spawn)
        try:
            # A cancelled caller abandons the thread, and with it the process, which keeps running.
            stdout, stderr = await anyio.to_thread.run_sync(
                functools.partial(process.communicate, timeout=timeout), abandon_on_cancel=True
            )
        except subprocess.TimeoutExpired as error:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await _blocking(process.communicate)
            raise WorkspaceTimeoutError(f'command timed out after {timeout:g}s') from error
        return _decoded(process.returncode, stdout, stderr)


mutant(
    name='abandons_the_process_on_cancel',
    kills=['cancellation_stops_foreground_work'],
    bug='A cancelled run() abandons the worker thread waiting on the process and never kills the process.',
    backend=on_shared_dir(AbandonsOnCancel),
)


def _restarting_attach(run_dir: Path, ref: WorkspaceRef) -> WorkspaceBackend:
    """Attach as a sandbox that restarts on attach: every process working in the environment is killed first."""
    root = Path(ref.id).resolve()
    if _within(root, run_dir):  # never anything outside the run directory
        for entry in Path('/proc').iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                cwd = Path(os.readlink(entry / 'cwd'))
            except OSError:
                continue
            if cwd == root or cwd.is_relative_to(root):
                with suppress(ProcessLookupError, PermissionError):
                    os.kill(int(entry.name), signal.SIGKILL)
    return LocalWorkspaceBackend(ref.id)


mutant(
    name='attach_restarts_the_sandbox',
    kills=['a_backend_attached_by_ref_reaches_a_detached_process'],
    bug='Attaching by ref restarts the sandbox, killing every process that was running in the environment.',
    backend=on_shared_dir(LocalWorkspaceBackend),
    attach_backend=_restarting_attach,
)


class AbandonsTimedOutCommands(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        if timeout is None:
            return await super().run(command, shell=shell, env=env, timeout=timeout)
        _check_form(command, shell)
        # The command runs in a session of its own; a timeout ends only the exec session that waits for it.
        inner = ['/bin/sh', '-c', command] if isinstance(command, str) else list(command)
        return await super().run(['sh', '-c', 'setsid "$@" & wait $!', 'sh', *inner], env=env, timeout=timeout)


mutant(
    name='timeout_abandons_the_command',
    kills=['timeout_stops_the_foreground_process', 'timeout_stops_the_process_tree'],
    bug='On timeout the backend closes only its exec session, and the command it started keeps running.',
    backend=on_shared_dir(AbandonsTimedOutCommands),
)


class KillsOnlyTheShell(HandRolled):
    async def _stop(self, process: anyio.abc.Process) -> None:
        with suppress(ProcessLookupError):
            process.kill()


mutant(
    name='kills_only_the_direct_process',
    kills=['timeout_stops_the_process_tree', 'cancellation_stops_the_process_tree'],
    bug='A timeout or cancellation kills only the process the backend spawned (Popen.kill), not its process group.',
    backend=on_shared_dir(KillsOnlyTheShell),
)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


class WaitsForTheProcessGroup(HandRolled):
    async def _collect(self, process: anyio.abc.Process, stdout: bytearray, stderr: bytearray) -> int:
        returncode = await super()._collect(process, stdout, stderr)
        # "Done" only when nothing of the command's process group is left, background jobs included.
        while _group_alive(process.pid):
            await anyio.sleep(0.05)
        return returncode


mutant(
    name='waits_for_the_whole_process_group',
    kills=['a_redirected_background_job_does_not_delay_run'],
    bug="run() returns only once every process in the command's process group has exited, background jobs too.",
    backend=on_shared_dir(WaitsForTheProcessGroup),
)


class ReturnsAtEndOfOutput(LocalWorkspaceBackend):
    """Reads the output to end of file, then reports `returncode` without waiting for the process."""

    def __init__(self, working_dir: str | Path) -> None:
        super().__init__(working_dir)
        self._unreaped: list[subprocess.Popen[bytes]] = []

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        validate_timeout(timeout)
        _check_form(command, shell)
        self._unreaped = [process for process in self._unreaped if process.poll() is None]
        argv = ['/bin/sh', '-c', command] if isinstance(command, str) else list(command)
        cwd = await self.working_dir()

        def run_until_eof() -> tuple[subprocess.Popen[bytes], bytes, bytes]:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=_command_env(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            assert process.stdout is not None and process.stderr is not None
            with process.stdout, process.stderr:
                # Small outputs only: the rule this mutant must fail writes a few bytes.
                return process, process.stdout.read(), process.stderr.read()

        process, stdout, stderr = await _blocking(run_until_eof)
        self._unreaped.append(process)  # polled (reaped) by a later call
        return _decoded(process.poll() or 0, stdout, stderr)


mutant(
    name='returns_at_end_of_output',
    kills=['run_returns_only_after_the_command_exits'],
    bug='run() returns when the output pipes reach end of file and reads the exit status then, defaulting to 0.',
    backend=on_shared_dir(ReturnsAtEndOfOutput),
)


TAG = 'WORKSPACE_CONFORMANCE_MUTANT_TAG'


def _kill_tagged(tag: str) -> None:
    """SIGKILL every process whose environment carries `tag`: only processes this mutant's command started."""
    marker = f'{TAG}={tag}'.encode()
    for entry in Path('/proc').iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environment = (entry / 'environ').read_bytes()
        except OSError:
            continue
        if marker in environment.split(b'\0'):
            with suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)


class KillsEverythingOnReturn(LocalWorkspaceBackend):
    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        tag = uuid.uuid4().hex
        try:
            return await super().run(command, shell=shell, env={**(env or {}), TAG: tag}, timeout=timeout)
        finally:
            # Like stopping the command's cgroup: every process it started dies, detached or not.
            with anyio.CancelScope(shield=True):
                await _blocking(_kill_tagged, tag)


mutant(
    name='kills_detached_processes_on_return',
    kills=['a_detached_process_outlives_the_command'],
    bug='When a command returns, the backend stops its whole cgroup, killing processes it detached with setsid.',
    backend=on_shared_dir(KillsEverythingOnReturn),
)

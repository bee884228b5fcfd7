"""Rules on the processes behind commands: background children, cancellation, detached sessions."""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable

import anyio
from pydantic_ai.workspaces import SupportsCommands, Workspace, WorkspaceBackend, WorkspaceRef

from ..authoring import commands_of, current_run, lacking, paths, rule, scratch, supplied, wait_until, workspace_of
from ._timeouts import timed_out_once_started

__all__ = ('WAIT_FOR_RELEASE', 'ProcessRules')

WAIT_FOR_RELEASE = (
    # $1: release file, $2: finished file. Gives up after 10 minutes, or once the scratch directory is gone,
    # so a helper process never outlives its rule for long even when cleanup could not reach it.
    'n=0; while [ ! -f "$1" ] && [ -d "${1%/*}" ] && [ "$n" -lt 6000 ]; do sleep 0.1; n=$((n + 1)); done; '
    '[ -f "$1" ] && printf finished > "$2"'
)
"""Shell that waits until the file `$1` exists, then writes the file `$2`."""


STOPPED = (
    # $1: a pid. A zombie counts as stopped: an init that does not reap orphans keeps them, yet they run nothing.
    'kill -0 "$1" 2>/dev/null || exit 0; '
    'if [ -r "/proc/$1/stat" ]; then s=$(cat "/proc/$1/stat" 2>/dev/null) || exit 0; s=${s##*) }; '
    'else s=$(ps -o stat= -p "$1" 2>/dev/null) || exit 0; fi; '
    'case $s in Z*|X*) exit 0;; esac; exit 1'
)
"""Shell that exits 0 when no live process has the pid `$1`, and 1 while one runs."""
WRITE_PID_THEN_SLEEP = 'echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; exec sleep 60'
"""Shell that writes its pid to the file `$1` (atomically), then becomes a 60 s `sleep` under that pid."""
NO_PROCESSES = 'the backend runs no real processes'


async def _pid_from(workspace: Workspace, pid_file: str, what: str) -> str:
    """The pid a command wrote to `pid_file`; fails saying `what` never wrote it."""
    if not await workspace.exists(pid_file):
        raise AssertionError(f'{what} never wrote its pid')
    pid = (await workspace.read_bytes(pid_file)).decode().strip()
    assert pid.isdigit(), f'{what} wrote {pid!r} as its pid'
    return pid


async def _timed_out_pid(
    workspace: Workspace, pid_file: str, run: Callable[[float], Awaitable[object]], what: str, doing: str
) -> str:
    """The pid `what` wrote to `pid_file` before `run(timeout)` raised `WorkspaceTimeoutError`, as it must."""
    _, never = await timed_out_once_started(run, lambda _: workspace.exists(pid_file), doing)
    if never is not None:
        raise AssertionError(f'{what} never wrote its pid before its timeout, given {never}')
    return await _pid_from(workspace, pid_file, what)


async def _stopped(commands: SupportsCommands, pid: str) -> bool:
    return (await commands.run(['sh', '-c', STOPPED, 'sh', pid])).exit_code == 0


async def _kill(commands: SupportsCommands, pid: str | None) -> None:
    """SIGKILL a process the rule started if it still runs, bounded and shielded, whatever the verdict."""
    if pid is None:
        return
    with anyio.move_on_after(current_run().seconds(10), shield=True):
        try:
            await commands.run(['sh', '-c', f'( {STOPPED} ) || kill -9 "$1" 2>/dev/null; true', 'sh', pid])
        except Exception:  # the rule's own failure is the one to report
            return


async def _expect_stopped(commands: SupportsCommands, started: Callable[[], Awaitable[str]], what: str) -> None:
    """Fails unless the process whose pid `started()` returns stops within 15 s; SIGKILLs it whatever the verdict."""
    pid = None
    try:
        pid = running = await started()
        await wait_until(lambda: _stopped(commands, running), 15, f'{what} (pid {running}) was still running')
    finally:
        await _kill(commands, pid)


DETACH = (
    'command -v setsid >/dev/null 2>&1 || exit 127; '
    f'setsid sh -c \': > "$3"; {WAIT_FOR_RELEASE}\' sh "$@" </dev/null >/dev/null 2>&1 & '
    'n=0; until [ -f "$3" ]; do n=$((n + 1)); [ "$n" -le 300 ] || exit 1; sleep 0.1; done'
)
"""Shell that starts WAIT_FOR_RELEASE in a new session (`setsid`), detached, and returns once it runs ($3)."""


async def _launch_detached(commands: SupportsCommands, release: str, finished: str, started: str) -> None:
    """Start a detached helper process; an environment skip without `setsid`, a failure if it never starts."""
    result = await commands.run(['sh', '-c', DETACH, 'sh', release, finished, started])
    if result.exit_code == 127:
        lacking(('setsid',), '`command -v setsid` found nothing (exit 127)', 'no `setsid` in the environment')
    assert result.exit_code == 0, f'the detached process never started (launcher exited {result.exit_code})'


async def _release(workspace: Workspace, release: str, finished: str | None) -> None:
    """Let a helper process finish (and wait for it), bounded and shielded, so it is never left behind."""
    with anyio.move_on_after(current_run().seconds(30), shield=True):
        try:
            await workspace.write_bytes(release, b'go')
            while finished is not None and not await workspace.exists(finished):
                await anyio.sleep(0.1)
        except Exception:  # the rule's own failure is the one to report
            return


class ProcessRules:
    """Rules on process lifetime, for backends that run real POSIX processes."""

    @rule(
        area='processes',
        level='extended',
        requires=['commands', 'posix_shell', 'inherited_pipes'],
        upstream=True,
        must='B24',
    )
    async def test_background_child_does_not_hold_up_completed_command(self, backend: WorkspaceBackend) -> None:
        """`run` returns when the direct command exits, even while a background child keeps its output open."""
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            release, finished = paths.join(root, 'release'), paths.join(root, 'finished')
            try:
                bound = current_run().seconds(30)
                with anyio.move_on_after(bound) as waited:
                    result = await commands.run(
                        ['sh', '-c', f'( {WAIT_FOR_RELEASE} ) & printf parent-done', 'sh', release, finished]
                    )
                assert not waited.cancelled_caught, (
                    f'run() had not returned {bound:g} s after the command exited: it waits for its background child'
                )
                assert (result.exit_code, result.stdout) == (0, 'parent-done'), (
                    f'got exit {result.exit_code}, stdout {result.stdout!r}'
                )
                assert not await workspace.exists(finished), 'the background child was not running in the background'
            finally:
                await _release(workspace, release, finished)

    @rule(area='processes', requires=['commands', 'posix_shell'], upstream=True, must='B23')
    async def test_cancellation_stops_foreground_work(self, backend: WorkspaceBackend) -> None:
        """Cancelling the caller of `run` stops the foreground process of the command."""
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            pid_file = paths.join(root, 'pid')
            async with anyio.create_task_group() as group:
                group.start_soon(
                    commands.run,
                    ['sh', '-c', 'echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; exec sleep 3600', 'sh', pid_file],
                )
                await wait_until(lambda: workspace.exists(pid_file), 30, 'the command never wrote its pid')
                group.cancel_scope.cancel()
            pid = (await workspace.read_bytes(pid_file)).decode().strip()
            assert pid.isdigit(), f'the command wrote {pid!r} as its pid'

            async def stopped() -> bool:
                return (await commands.run(['sh', '-c', 'kill -0 "$1" 2>/dev/null', 'sh', pid])).exit_code != 0

            try:
                await wait_until(stopped, 30, f'process {pid} was still running after its caller was cancelled')
            finally:
                # Never leave the sleeper behind, whatever the verdict.
                with anyio.move_on_after(current_run().seconds(10), shield=True):
                    await commands.run(['sh', '-c', 'kill -9 "$1" 2>/dev/null; true', 'sh', pid])

    @rule(
        area='processes',
        level='extended',
        requires=['commands', 'posix_shell', 'attach', 'setsid'],
        upstream=True,
        contract='2.68',
        must='B25',
    )
    async def test_a_backend_attached_by_ref_reaches_a_detached_process(
        self,
        backend: WorkspaceBackend,
        attach_backend: Callable[[WorkspaceRef], WorkspaceBackend] | None,
    ) -> None:
        """A process a command detached into its own session keeps running, and a backend attached by ref reaches it."""
        attach_backend = supplied(attach_backend, 'attach')
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            release, finished, started = (paths.join(root, name) for name in ('release', 'finished', 'started'))
            try:
                await _launch_detached(commands, release, finished, started)
                ref = backend.ref
                assert ref is not None, 'the backend had no ref after running a command'
                attached = Workspace(attach_backend(ref))
                await attached.write_bytes(release, b'go')
                await wait_until(
                    lambda: attached.exists(finished),
                    30,
                    'the detached process did not answer through the attached backend: it was stopped',
                )
            finally:
                await _release(workspace, release, None)

    @rule(area='processes', requires=['commands', 'posix_shell'], since='0.2.0', must='B23')
    async def test_timeout_stops_the_foreground_process(self, backend: WorkspaceBackend) -> None:
        """A command that reaches its `timeout` is stopped, not left running after `WorkspaceTimeoutError`."""
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            pid_file = paths.join(root, 'pid')
            await _expect_stopped(
                commands,
                lambda: _timed_out_pid(
                    workspace,
                    pid_file,
                    lambda timeout: commands.run(['sh', '-c', WRITE_PID_THEN_SLEEP, 'sh', pid_file], timeout=timeout),
                    'the timed-out command',
                    'a 60 s sleep',
                ),
                'the timed-out command',
            )

    @rule(area='processes', level='extended', requires=['commands', 'posix_shell'], since='0.2.0', must='B23')
    async def test_timeout_stops_the_process_tree(self, backend: WorkspaceBackend) -> None:
        """A timed-out shell string has its foreground process tree stopped, the shell's child process too."""
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            pid_file = paths.join(root, 'child-pid')
            await _expect_stopped(
                commands,
                lambda: _timed_out_pid(
                    workspace,
                    pid_file,
                    lambda timeout: commands.run(
                        f'sh -c {shlex.quote(WRITE_PID_THEN_SLEEP)} sh {shlex.quote(pid_file)}; printf not-reached',
                        shell=True,
                        timeout=timeout,
                    ),
                    "the shell string's child",
                    'a shell string running a 60 s child',
                ),
                "the timed-out shell's child",
            )

    @rule(area='processes', level='extended', requires=['commands', 'posix_shell'], since='0.2.0', must='B23')
    async def test_cancellation_stops_the_process_tree(self, backend: WorkspaceBackend) -> None:
        """Cancelling the caller of a shell string stops its foreground process tree, the shell's child process too."""
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            pid_file = paths.join(root, 'child-pid')

            async def cancelled() -> str:
                async with anyio.create_task_group() as group:
                    group.start_soon(
                        lambda: commands.run(
                            f'sh -c {shlex.quote(WRITE_PID_THEN_SLEEP)} sh {shlex.quote(pid_file)}; printf not-reached',
                            shell=True,
                        )
                    )
                    await wait_until(lambda: workspace.exists(pid_file), 30, "the shell string's child never started")
                    group.cancel_scope.cancel()
                return await _pid_from(workspace, pid_file, "the shell string's child")

            await _expect_stopped(commands, cancelled, "the cancelled shell's child")

    @rule(area='processes', requires=['commands', 'posix_shell'], since='0.2.0', must='B24')
    async def test_a_redirected_background_job_does_not_delay_run(self, backend: WorkspaceBackend) -> None:
        """`run` returns as soon as the command exits when a background job it started has its output redirected."""
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            release, finished = paths.join(root, 'release'), paths.join(root, 'finished')
            try:
                bound = current_run().seconds(10)
                with anyio.move_on_after(bound) as waited:
                    result = await commands.run(
                        [
                            'sh',
                            '-c',
                            f'( {WAIT_FOR_RELEASE} ) >/dev/null 2>&1 & printf started',
                            'sh',
                            release,
                            finished,
                        ]
                    )
                assert not waited.cancelled_caught, (
                    f'run() had not returned {bound:g} s after the command exited: it waits for a background job '
                    'that holds none of its output'
                )
                assert (result.exit_code, result.stdout) == (0, 'started'), (
                    f'got exit {result.exit_code}, stdout {result.stdout!r}'
                )
                assert not await workspace.exists(finished), 'the background job was not running in the background'
            finally:
                await _release(workspace, release, finished)

    @rule(area='processes', requires=['commands', 'posix_shell'], since='0.2.0', must='B24')
    async def test_run_returns_only_after_the_command_exits(self, backend: WorkspaceBackend) -> None:
        """`run` returns after the command exits, not when its output closes, so a child it waited for is gone."""
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            pid_file = paths.join(root, 'child-pid')
            script = 'sleep 0.5 >/dev/null 2>&1 & echo $! > "$1"; exec >/dev/null 2>&1; wait; exit 5'
            pid = None
            try:
                result = await commands.run(['sh', '-c', script, 'sh', pid_file])
                pid = await _pid_from(workspace, pid_file, 'the child of the command')
                assert result.exit_code == 5, (
                    f'the command exits 5 once its child is done, but run() reported exit {result.exit_code}'
                )
                assert await _stopped(commands, pid), (
                    f'run() returned while the child the command waits for (pid {pid}) was still running'
                )
            finally:
                await _kill(commands, pid)

    @rule(area='processes', level='extended', requires=['commands', 'posix_shell', 'setsid'], since='0.2.0', must='B25')
    async def test_a_detached_process_outlives_the_command(self, backend: WorkspaceBackend) -> None:
        """A process the command detached into its own session keeps running after the command returns."""
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            release, finished, started = (paths.join(root, name) for name in ('release', 'finished', 'started'))
            try:
                await _launch_detached(commands, release, finished, started)
                await workspace.write_bytes(release, b'go')
                await wait_until(
                    lambda: workspace.exists(finished),
                    30,
                    'the detached process never finished its work after the command returned: it was stopped',
                )
            finally:
                await _release(workspace, release, None)

"""Rules on the processes behind commands: background children, cancellation, detached sessions."""

from __future__ import annotations

import posixpath
from collections.abc import Callable

import anyio
from pydantic_ai.workspaces import Workspace, WorkspaceBackend, WorkspaceRef

from ._guard import current_run, wait_until
from ._rules import rule
from ._support import commands_of, pydantic_ai_at_least, require_switch, scratch, skip, workspace_of

__all__ = ('WAIT_FOR_RELEASE', 'ProcessRules')

WAIT_FOR_RELEASE = (
    # $1: release file, $2: finished file. Gives up after 10 minutes, or once the scratch directory is gone,
    # so a helper process never outlives its rule for long even when cleanup could not reach it.
    'n=0; while [ ! -f "$1" ] && [ -d "${1%/*}" ] && [ "$n" -lt 6000 ]; do sleep 0.1; n=$((n + 1)); done; '
    '[ -f "$1" ] && printf finished > "$2"'
)
"""Shell that waits until the file `$1` exists, then writes the file `$2`."""


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

    @rule(area='processes', level='extended', requires=['commands', 'posix_shell'], upstream=True)
    async def test_background_child_does_not_hold_up_completed_command(
        self, backend: WorkspaceBackend, has_real_posix_shell: bool, can_detect_exit_with_inherited_output_pipes: bool
    ) -> None:
        """`run` returns when the direct command exits, even while a background child keeps its output open."""
        require_switch(has_real_posix_shell, 'has_real_posix_shell', 'the backend runs no real processes')
        require_switch(
            can_detect_exit_with_inherited_output_pipes,
            'can_detect_exit_with_inherited_output_pipes',
            'the provider reports an exit only once every holder of the output pipes has exited',
        )
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            release, finished = posixpath.join(root, 'release'), posixpath.join(root, 'finished')
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

    @rule(area='processes', requires=['commands', 'posix_shell'], upstream=True)
    async def test_cancellation_stops_foreground_work(
        self, backend: WorkspaceBackend, has_real_posix_shell: bool
    ) -> None:
        """Cancelling the caller of `run` stops the foreground process of the command."""
        require_switch(has_real_posix_shell, 'has_real_posix_shell', 'the backend runs no real processes')
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            pid_file = posixpath.join(root, 'pid')
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

    @rule(area='processes', level='extended', requires=['commands', 'posix_shell', 'attach', 'setsid'], upstream=True)
    async def test_a_backend_attached_by_ref_reaches_a_detached_process(
        self,
        backend: WorkspaceBackend,
        attach_backend: Callable[[WorkspaceRef], WorkspaceBackend] | None,
        has_real_posix_shell: bool,
    ) -> None:
        """A process a command detached into its own session keeps running, and a backend attached by ref reaches it."""
        if not pydantic_ai_at_least((2, 68)):
            skip('not-applicable', 'the installed pydantic-ai predates this clause of the contract (2.68)')
        if attach_backend is None:
            skip('fixture-missing', 'provide the `attach_backend` fixture to check reattachment')
        require_switch(has_real_posix_shell, 'has_real_posix_shell', 'the backend runs no real processes')
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            release, finished, started = (posixpath.join(root, name) for name in ('release', 'finished', 'started'))
            launcher = (
                'command -v setsid >/dev/null 2>&1 || exit 127; '
                f'setsid sh -c \': > "$3"; {WAIT_FOR_RELEASE}\' sh "$@" </dev/null >/dev/null 2>&1 & '
                'n=0; until [ -f "$3" ]; do n=$((n + 1)); [ "$n" -le 300 ] || exit 1; sleep 0.1; done'
            )
            try:
                result = await commands.run(['sh', '-c', launcher, 'sh', release, finished, started])
                if result.exit_code == 127:
                    skip('environment', 'no `setsid` in the environment')
                assert result.exit_code == 0, f'the detached process never started (launcher exited {result.exit_code})'
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

"""Rules on an environment that stops under its backend: its init dies, or it is stopped and started again."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

import anyio
from pydantic_ai.workspaces import (
    SupportsCommands,
    Workspace,
    WorkspaceBackend,
    WorkspaceRef,
    WorkspaceUnavailableError,
)

from ..authoring import EXIT_0_ARGV, SCRATCH_PREFIX, current_run, platform_argv, rule, safe_str, supplied

__all__ = ('RestartRules',)

Factory = Callable[[], WorkspaceBackend] | None
Attach = Callable[[WorkspaceRef], WorkspaceBackend] | None
Lifecycle = Callable[[WorkspaceBackend], Awaitable[None]] | None
STOPPED_BOUND = 30.0
"""Seconds (at time scale 1) a call on a stopped environment, or the first read after a restart, may take."""


class RestartRules:
    """An environment stopped under its backend: calls say so in time; a restart keeps the files or says it cannot."""

    # Up to four calls of STOPPED_BOUND each, after a create.
    @rule(area='lifecycle', level='extended', requires=['stop', 'filesystem'], since='0.3.0', timeout=150)
    async def test_an_environment_whose_init_died_raises_unavailable_in_time(
        self, destructive_backend: Factory, stop_environment: Lifecycle
    ) -> None:
        """Once the environment's init has died, each call raises `WorkspaceUnavailableError` within a bound.

        A hosted sandbox's SDK once waited without end on a sandbox whose PID 1 had died, and another answered from
        what it still held: an agent must learn that its environment is gone, not wait on it or read a dead one.
        """
        backend = supplied(destructive_backend, 'stop')()
        stop = supplied(stop_environment, 'stop')
        workspace = Workspace(backend)
        mark = f'{SCRATCH_PREFIX}before-stop-{uuid.uuid4().hex[:12]}'
        await workspace.write_bytes(mark, b'written before the init died')
        await stop(backend)
        calls: dict[str, Callable[[], Awaitable[object]]] = {
            'exists': lambda: workspace.exists(mark),
            'read_bytes': lambda: workspace.read_bytes(mark),
            'write_bytes': lambda: workspace.write_bytes(f'{mark}-after', b'x'),
        }
        if isinstance(backend, SupportsCommands):
            calls['run'] = lambda: workspace.run(platform_argv(EXIT_0_ARGV))
        bound = current_run().seconds(STOPPED_BOUND)
        for name, call in calls.items():
            answered: object = None
            with anyio.move_on_after(bound) as waited:
                try:
                    answered = await call()
                except WorkspaceUnavailableError:
                    continue
                except Exception as error:
                    raise AssertionError(
                        f'{name}() on an environment whose init died raised {safe_str(error)}, not '
                        'WorkspaceUnavailableError'
                    ) from error
            assert not waited.cancelled_caught, (
                f'{name}() on an environment whose init died gave no answer in {bound:g} s'
            )
            raise AssertionError(
                f'{name}() on an environment whose init died answered {answered!r:.200} as if it were running'
            )

    @rule(area='lifecycle', level='extended', requires=['restart', 'filesystem'], since='0.3.0', timeout=120)
    async def test_a_backend_attached_after_a_restart_finds_the_files_written_before(
        self,
        destructive_backend: Factory,
        attach_backend: Attach,
        stop_environment: Lifecycle,
        start_environment: Lifecycle,
    ) -> None:
        """A backend attached by ref once its environment was stopped and started again reads what was written before.

        Or it says that it cannot, with `WorkspaceUnavailableError`. A hosted sandbox once came back from a pause
        with an empty filesystem under the same ref, so the work of the run before was lost without a word.
        """
        backend = supplied(destructive_backend, 'restart')()
        attach = supplied(attach_backend, 'restart')
        stop, start = supplied(stop_environment, 'restart'), supplied(start_environment, 'restart')
        # Relative: the attached backend resolves it in the same working directory.
        mark = f'{SCRATCH_PREFIX}restarted-{uuid.uuid4().hex[:12]}'
        payload = f'written before a restart {uuid.uuid4().hex}'.encode()
        await Workspace(backend).write_bytes(mark, payload)
        ref = backend.ref
        assert isinstance(ref, WorkspaceRef), f'after a write the backend had the ref {ref!r}'
        await stop(backend)
        await start(backend)
        attached = attach(ref)
        bound = current_run().seconds(STOPPED_BOUND)
        data = b''
        with anyio.move_on_after(bound) as waited:
            try:
                data = await Workspace(attached).read_bytes(mark)
            except WorkspaceUnavailableError:
                return  # it says it cannot reach the environment again: the contract's clear answer
            except FileNotFoundError as error:
                raise AssertionError(
                    f'after a restart, a backend attached by {ref!r} found no {mark!r}, written before: the '
                    'environment came back empty under the same ref'
                ) from error
            except Exception as error:
                raise AssertionError(
                    f'after a restart, reading {mark!r} through a backend attached by {ref!r} raised '
                    f'{safe_str(error)}, neither the file nor WorkspaceUnavailableError'
                ) from error
        assert not waited.cancelled_caught, (
            f'after a restart, a backend attached by {ref!r} gave no answer in {bound:g} s'
        )
        assert data == payload, f'after a restart, {mark!r} read {data!r}, written as {payload!r}'
        assert attached.ref == ref, f'attaching by {ref!r} after a restart left the ref {attached.ref!r}'

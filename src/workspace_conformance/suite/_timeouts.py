"""A command's timeout, tried at growing bounds until the command showed it started: what process rules share."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic_ai.workspaces import WorkspaceTimeoutError

from ..authoring import current_run, expect_error

__all__ = ('STARTUP_TIMEOUTS', 'timed_out_once_started')

STARTUP_TIMEOUTS = (0.25, 1.0, 3.0, 9.0)
"""Timeouts (seconds at time scale 1) a command that shows it started (its pid, its output), then sleeps, is given
in turn: on a loaded machine or a remote one it may not start within the first, and a command stopped before it
showed it started shows nothing. The first is short because each rule that times a command out waits it out (a
timeout is "a positive finite number of seconds"); a backend slower to start pays one more rung."""


async def timed_out_once_started(
    run: Callable[[float], Awaitable[object]],
    started: Callable[[WorkspaceTimeoutError], Awaitable[bool]],
    doing: str,
) -> tuple[WorkspaceTimeoutError, str | None]:
    """The `WorkspaceTimeoutError` `run(timeout)` must raise, tried at each of `STARTUP_TIMEOUTS` until it started.

    `started(error)` says whether the command showed it started before its timeout; the second value is None when it
    did, else the timeouts it was given.
    """
    given = []
    for seconds in STARTUP_TIMEOUTS:
        timeout = current_run().seconds(seconds)
        given.append(f'{timeout:g} s')
        with expect_error(WorkspaceTimeoutError, f'{doing} with a {timeout:g} s timeout'):
            try:
                await run(timeout)
            except WorkspaceTimeoutError as error:
                caught = error
                raise
        if await started(caught):
            return caught, None
    return caught, ', then '.join(given)

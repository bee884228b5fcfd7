"""Ctrl-C during `certify`: the first stops the run, which still writes its report (incomplete); the next exits now."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

from . import emergency

__all__ = ('INTERRUPTED_AGAIN', 'HandledInterruptFilter', 'SecondInterruptExits', 'second_interrupt_exits')

INTERRUPTED_AGAIN = 130
"""The exit status after a second Ctrl-C: 128 + SIGINT, as a shell reports a process ended by Ctrl-C."""


def _exit_now(signum: int, frame: FrameType | None) -> None:
    emergency.exit_now('interrupted again: exiting now, without waiting for the cleanup', status=INTERRUPTED_AGAIN)


class SecondInterruptExits:
    """A pytest plugin: once the session has taken a Ctrl-C, the next one exits the process at once.

    The first Ctrl-C is pytest's own: the rule running is cancelled, the session stops, and the report is written,
    marked incomplete. That cleanup may wait on a slow backend; a second Ctrl-C then writes what it can, ends the
    run's processes, removes its directory and exits with status 130 (see `emergency.exit_now`).
    """

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, _exit_now)


class HandledInterruptFilter(logging.Filter):
    """Drops asyncio's "Task exception was never retrieved" for a Ctrl-C: the session took it and reports it."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, KeyboardInterrupt)


_ASYNCIO_LOG = logging.getLogger('asyncio')


@contextlib.contextmanager
def second_interrupt_exits() -> Iterator[SecondInterruptExits]:
    """The plugin to hand to `pytest.main`; on leaving, Ctrl-C goes back to what it was."""
    previous = signal.getsignal(signal.SIGINT)
    # Kept to the end of the process: the event loop's task may be collected, and reported, after this returns.
    if not any(isinstance(known, HandledInterruptFilter) for known in _ASYNCIO_LOG.filters):
        _ASYNCIO_LOG.addFilter(HandledInterruptFilter())
    try:
        yield SecondInterruptExits()
    finally:
        if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is _exit_now:
            signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)

"""The last-resort exit: run the registered cleanups (report, run directory, processes), then end the process at once.

Used when the run can no longer end by itself: a rule whose backend ignores cancellation and keeps the main
thread stuck even after an interrupt, or a second Ctrl-C while the first one's cleanup is still going.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import NoReturn

__all__ = ('exit_now', 'isolated', 'on_exit', 'set_status')

_cleanups: list[Callable[[], None]] = []
_status = 2
"""pytest's `INTERRUPTED`; `certify` sets 1 (not certified)."""
_lock = threading.Lock()


def on_exit(cleanup: Callable[[], None]) -> Callable[[], None]:
    """Run `cleanup` if the process has to end at once; returns a function that unregisters it."""
    _cleanups.append(cleanup)

    def unregister() -> None:
        if cleanup in _cleanups:
            _cleanups.remove(cleanup)

    return unregister


@contextlib.contextmanager
def isolated() -> Iterator[None]:
    """Run sessions inside (pytester's in-process runs) without leaking their cleanups or status to the process."""
    global _status
    cleanups, status = list(_cleanups), _status
    try:
        yield
    finally:
        _cleanups[:] = cleanups
        _status = status


def set_status(status: int) -> None:
    """The exit status `exit_now` ends the process with."""
    global _status
    _status = status


def exit_now(reason: str, *, status: int | None = None) -> NoReturn:
    """Run the cleanups newest first (each one's errors ignored), say why on stderr, and `os._exit(status)`."""
    if not _lock.acquire(blocking=False):  # another thread is already exiting: let it finish
        threading.Event().wait()
    for cleanup in reversed(list(_cleanups)):
        with contextlib.suppress(BaseException):  # one failed cleanup must not keep the others from running
            cleanup()
    with contextlib.suppress(BaseException):  # a closed or broken stderr must not stop the exit
        sys.stderr.write(f'\nworkspace-conformance: {reason}\n')
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    os._exit(_status if status is None else status)

"""Ctrl-C, SIGTERM and SIGHUP during a run: the first stops the run, which still writes its report; the next exits now.

SIGTERM and SIGHUP take Ctrl-C's path: their handler raises `KeyboardInterrupt` (between two callbacks of a running
asyncio loop, so no task step is cut in half) or hands the signal to Trio's SIGINT handler, which defers it out of
protected code; the rule running is cancelled with its bounded cleanup, the session stops, and the report is written
incomplete. Once a
run is stopping, any further signal ends the process at once through `emergency.exit_now`, whose cleanups still
write the report, end the run's processes and remove its directory. A run stopped by SIGTERM or SIGHUP exits with
128 + that signal, as a shell reports a process the signal ended. Every handler is installed by one owner (`certify`,
or the plugin of a pytest session that runs rules) and restored when it is done, so nothing outlives the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import pytest

from . import emergency

__all__ = (
    'TERMINATING',
    'HandledInterruptFilter',
    'SignalsStopTheRun',
    'cleaning_up',
    'signals_stop_the_run',
    'stopped_by',
    'terminated_status',
)

TERMINATING = (signal.SIGTERM, signal.SIGHUP)
"""The signals that end a run as Ctrl-C does; the run exits with 128 + the signal."""
DUPLICATE_WINDOW = 0.5
"""Seconds within which a repeat of the first SIGTERM or SIGHUP is the same request (`timeout` sends two)."""
DELIVERY_WAIT = 2.0
"""Seconds a running asyncio loop has to take SIGTERM or SIGHUP between callbacks before it is raised at once."""

_RULE_PROPERTY = 'workspace_conformance'
"""The user property the reporting plugin tags every rule's report with."""
_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


class _Stop:
    """Which signal stopped the run in progress (the first one), shared by `certify` and the plugin."""

    def __init__(self) -> None:
        self.owners = 0
        self.signals: list[int] = []
        self.first_at = 0.0
        self.deliver_now = False
        """The signal the handler gets next is the first one again, which the asyncio loop did not take in time."""

    @property
    def stopping(self) -> bool:
        return bool(self.signals)

    def record(self, signum: int) -> None:
        if not self.signals:
            self.first_at = time.monotonic()
        self.signals.append(signum)
        first = self.signals[0]
        if first in TERMINATING:
            emergency.set_status(128 + first)  # a run the watchdog ends after SIGTERM still says SIGTERM

    def duplicate(self, signum: int) -> bool:
        """Whether `signum` repeats the first SIGTERM or SIGHUP within `DUPLICATE_WINDOW` s: the same request."""
        first = self.signals[0]
        return signum == first and first in TERMINATING and time.monotonic() - self.first_at < DUPLICATE_WINDOW

    @contextlib.contextmanager
    def owned(self) -> Iterator[None]:
        """Between the outermost owner's start and end; a new run starts with no signal recorded."""
        if self.owners == 0:
            self.signals.clear()
        self.owners += 1
        try:
            yield
        finally:
            self.owners -= 1


_STOP = _Stop()


def stopped_by() -> int | None:
    """The signal that stopped the current (or last) run, if one did: SIGINT, SIGTERM or SIGHUP."""
    return _STOP.signals[0] if _STOP.signals else None


def terminated_status() -> int | None:
    """128 + the signal, when SIGTERM or SIGHUP stopped the run; `None` otherwise (Ctrl-C keeps its own status)."""
    first = stopped_by()
    return 128 + first if first in TERMINATING else None


def _name(signum: int) -> str:
    return signal.Signals(signum).name


def _exit_now(signum: int, frame: FrameType | None) -> None:
    """A signal once the run is stopping: end the process now (status 128 + the first signal), cleaning up first."""
    again = _STOP.stopping
    _STOP.record(signum)
    when = 'again' if again else 'during the cleanup'
    emergency.exit_now(
        f'{_name(signum)} {when}: exiting now, without waiting for the cleanup', status=128 + _STOP.signals[0]
    )


def _running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _as_interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM or SIGHUP: the first stops the run as Ctrl-C does, the next (or one during cleanup) exits now."""
    if _STOP.deliver_now:
        _STOP.deliver_now = False
        raise KeyboardInterrupt
    if _STOP.stopping:
        if _STOP.duplicate(signum):
            return  # `timeout` signals the process, then its process group: one request, not two
        _exit_now(signum, frame)
    _STOP.record(signum)
    loop = _running_asyncio_loop()
    if loop is not None:
        _interrupt_between_callbacks(loop, signum)
        return
    interrupt = signal.getsignal(signal.SIGINT)
    if callable(interrupt) and interrupt not in (_as_interrupt, _exit_now):
        interrupt(signal.SIGINT, frame)  # Python's raises KeyboardInterrupt; Trio's may defer it to a safe point
        return
    raise KeyboardInterrupt


def _interrupt_between_callbacks(loop: asyncio.AbstractEventLoop, signum: int) -> None:
    """Raise `KeyboardInterrupt` out of the asyncio loop between two callbacks, never inside one.

    Raised at whatever bytecode the signal landed on, it can cut a task step or a worker thread's result delivery in
    half, and the cancelled rule then waits on a future nobody will complete (up to its 30 s cleanup bound): between
    callbacks it leaves the loop consistent, and the rule's cancellation and cleanup run at once. A loop blocked by
    a backend runs no callback: `DELIVERY_WAIT` s later the signal is raised where it lands, as Ctrl-C is.
    """
    delivered = threading.Event()
    claim = threading.Lock()  # whichever of the two takes it delivers the interrupt, exactly once

    def interrupt() -> None:
        if claim.acquire(blocking=False):
            delivered.set()
            raise KeyboardInterrupt

    def fallback() -> None:
        if not delivered.wait(DELIVERY_WAIT) and claim.acquire(blocking=False):
            _STOP.deliver_now = True
            with contextlib.suppress(Exception):
                signal.pthread_kill(threading.main_thread().ident or 0, signum)

    loop.call_soon_threadsafe(interrupt)
    threading.Thread(target=fallback, name='workspace-conformance-interrupt', daemon=True).start()


class _Installed:
    """Signal handlers one owner installed, with what they replaced, restored by `restore`."""

    def __init__(self) -> None:
        self._previous: dict[int, _Handler] = {}

    def install(self, signums: tuple[int, ...], handler: Callable[[int, FrameType | None], None]) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in signums:
            self._previous.setdefault(signum, signal.getsignal(signum))
            signal.signal(signum, handler)

    def restore(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for signum, previous in self._previous.items():
            signal.signal(signum, signal.SIG_DFL if previous is None else previous)
        self._previous.clear()


class SignalsStopTheRun:
    """A pytest plugin: SIGTERM and SIGHUP stop a session that runs rules as Ctrl-C does; a later signal exits now.

    The first Ctrl-C is pytest's own: the rule running is cancelled, the session stops, and the report is written,
    marked incomplete. That cleanup may wait on a slow backend; a second signal then writes what it can, ends the
    run's processes, removes its directory and exits (see `emergency.exit_now`). A session stopped by SIGTERM or
    SIGHUP exits with 128 + the signal. Sessions without rules are left alone.
    """

    def __init__(self, is_rule: Callable[[object], bool]) -> None:
        """`is_rule(function)` says whether a collected test function is a rule, so the session runs rules."""
        self._is_rule = is_rule
        self._installed = _Installed()
        self._owned = contextlib.ExitStack()
        self._taken = False

    def pytest_configure(self, config: pytest.Config) -> None:
        self._owned.enter_context(_STOP.owned())

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if any(self._is_rule(getattr(item, 'function', None)) for item in session.items):
            self.take_terminating_signals()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # An xdist controller collects nothing: the first report of a rule says the session runs rules.
        if not self._taken and any(key == _RULE_PROPERTY for key, _ in report.user_properties):
            self.take_terminating_signals()

    def take_terminating_signals(self) -> None:
        """From now on SIGTERM and SIGHUP stop the session as Ctrl-C does."""
        self._taken = True
        self._installed.install(TERMINATING, _as_interrupt)

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        if not self._taken:
            return
        if not _STOP.stopping:
            _STOP.record(signal.SIGINT)
        self._installed.install((signal.SIGINT, *TERMINATING), _as_interrupt)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        status = terminated_status()
        if status is not None:
            session.exitstatus = status

    def pytest_unconfigure(self) -> None:
        self._installed.restore()
        self._owned.close()


class HandledInterruptFilter(logging.Filter):
    """Drops asyncio's "Task exception was never retrieved" for a Ctrl-C: the session took it and reports it."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, KeyboardInterrupt)


_ASYNCIO_LOG = logging.getLogger('asyncio')


@contextlib.contextmanager
def signals_stop_the_run() -> Iterator[None]:
    """Around a whole `certify` run: SIGTERM and SIGHUP stop it as Ctrl-C does; on leaving, handlers are restored."""
    # Kept to the end of the process: the event loop's task may be collected, and reported, after this returns.
    if not any(isinstance(known, HandledInterruptFilter) for known in _ASYNCIO_LOG.filters):
        _ASYNCIO_LOG.addFilter(HandledInterruptFilter())
    installed = _Installed()
    with _STOP.owned():
        installed.install(TERMINATING, _as_interrupt)
        try:
            yield
        finally:
            installed.restore()


@contextlib.contextmanager
def cleaning_up() -> Iterator[None]:
    """While a run removes what it left: any signal (Ctrl-C too) ends the process at once, running the same cleanup.

    A signal must not cut a cleanup short and leave its directory or processes; `emergency.exit_now` runs the
    registered cleanups to the end before it exits.
    """
    installed = _Installed()
    installed.install((signal.SIGINT, *TERMINATING), _exit_now)
    try:
        yield
    finally:
        installed.restore()

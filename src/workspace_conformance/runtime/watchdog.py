"""The last resort behind the hang guards: a thread that interrupts a rule, then ends the run, when cancellation fails.

A hang guard cancels its rule, but cancellation lands only at an `await`: a backend that blocks its thread
(`time.sleep` in an async method) or waits in a shielded cancel scope keeps the rule, and the session, stuck.
Each rule gets a deadline (its guard, its cleanup, and `GRACE`); past it the watchdog interrupts the main thread
(SIGINT), the rule fails as "did not respond to cancellation", and the session stops with an incomplete report.
If the session has not finished `ABANDON_AFTER` seconds later, or the process has not exited `EXIT_AFTER` seconds
after the session finished, it ends the process through `emergency.exit_now`, whose cleanups write the report.
Each session has its own `Watchdog` (the engine keeps it in the session's config), so a session run inside another
(pytester's in-process runs) neither sees nor clears the hang of the one around it.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from . import emergency

__all__ = ('ABANDON_AFTER', 'EXIT_AFTER', 'GRACE', 'Hang', 'Watchdog')

GRACE = 10.0
"""Seconds a rule may run past its guard and cleanup bounds before the watchdog interrupts it."""
ABANDON_AFTER = 20.0
"""Seconds the session has, once interrupted, to finish and write its report before the process is ended."""
EXIT_AFTER = 60.0
"""Seconds the process has, after a session that needed an interrupt has finished, to exit by itself."""


@dataclass(frozen=True)
class Hang:
    """A rule that outlived its deadline: which, its guard, how long it had run, and the backend call it was in."""

    rule: str
    guard: float
    seconds: float
    pending: str


@dataclass
class _Watched:
    what: str
    guard: float
    started: float
    deadline: float
    pending: Callable[[], str]
    interrupt: bool


class Watchdog:
    """One session's deadlines of the rules running now, watched by a daemon thread started on first use."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._watched: dict[int, _Watched] = {}
        self._tokens = 0
        self._thread: threading.Thread | None = None
        self._hang: Hang | None = None
        self._claimed = False
        self._end_at: float | None = None
        self._end_reason = ''
        self._closed = False

    @property
    def hang(self) -> Hang | None:
        """The rule the watchdog had to interrupt in this session, if any (it interrupts one at most)."""
        return self._hang

    @property
    def thread_alive(self) -> bool:
        """Whether its thread runs (started by the first `watch`, it ends once `close`d with nothing left to do)."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def watch(
        self, what: str, guard: float, deadline: float, pending: Callable[[], str], *, interrupt: bool = True
    ) -> int:
        """Watch `what` (a rule, or a phase around rules), which has just started; returns a token for `release`.

        Past `deadline` seconds, a rule (`interrupt`) is interrupted; any other phase ends the process at once,
        since no rule is there to fail and the report only has to be written.
        """
        with self._condition:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name='workspace-conformance-watchdog', daemon=True)
                self._thread.start()
            self._tokens += 1
            now = time.monotonic()
            self._watched[self._tokens] = _Watched(what, guard, now, now + deadline, pending, interrupt)
            self._condition.notify()
            return self._tokens

    def release(self, token: int) -> None:
        """The rule of `token` has finished."""
        with self._condition:
            self._watched.pop(token, None)

    def claim(self) -> Hang | None:
        """The hang behind the interrupt now unwinding, once; `None` when the interrupt came from elsewhere."""
        with self._condition:
            if self._hang is None or self._claimed:
                return None
            self._claimed = True
            return self._hang

    def settle(self) -> None:
        """The session has finished and written its report; after an interrupt, the process must still exit soon."""
        with self._condition:
            if self._hang is None:
                self._end_at = None
                return
            self._end_at = time.monotonic() + EXIT_AFTER
            self._end_reason = (
                f'the process did not exit within {EXIT_AFTER:g} s of its report (a backend left work that ignores '
                'cancellation); ending it now'
            )
            self._condition.notify()

    def close(self, *, process_exits: bool) -> None:
        """The session is over: the thread ends once idle, or, if the process exits next, after ending a stuck one.

        `process_exits` is false for a session run inside another (pytester's in-process runs): after a hang, the
        process goes on with the session around it, so the exit `settle` scheduled is dropped.
        """
        with self._condition:
            self._closed = True
            if not process_exits:
                self._end_at = None
            self._condition.notify()

    def _run(self) -> None:
        while True:
            with self._condition:
                action = self._due(time.monotonic())
                if action is None:
                    if self._closed and not self._watched and self._end_at is None:
                        self._thread = None
                        return
                    self._condition.wait(self._next_wait(time.monotonic()))
                    continue
            action()

    def _due(self, now: float) -> Callable[[], None] | None:
        for token, watched in self._watched.items():
            if now < watched.deadline or (watched.interrupt and self._hang is not None):
                continue
            del self._watched[token]
            if watched.interrupt:
                return functools.partial(self._interrupt, watched, now)
            reason = (
                f'{watched.what} did not finish within {watched.deadline - watched.started:g} s (something ignores '
                'cancellation); writing the report (incomplete) and ending the process'
            )
            return functools.partial(emergency.exit_now, reason)
        if self._end_at is not None and now >= self._end_at:
            self._end_at = None
            return functools.partial(emergency.exit_now, self._end_reason)
        return None

    def _next_wait(self, now: float) -> float | None:
        deadlines = [
            watched.deadline for watched in self._watched.values() if not watched.interrupt or self._hang is None
        ]
        if self._end_at is not None:
            deadlines.append(self._end_at)
        return max(0.0, min(deadlines) - now) if deadlines else None

    def _interrupt(self, watched: _Watched, now: float) -> None:
        try:
            pending = watched.pending()
        except Exception:  # the log is being changed by the stuck thread, or a hostile repr raised
            pending = 'the backend call it was in could not be described'
        with self._condition:
            self._hang = Hang(rule=watched.what, guard=watched.guard, seconds=now - watched.started, pending=pending)
            self._end_at = time.monotonic() + ABANDON_AFTER
            self._end_reason = (
                f'the rule {watched.what} ignored cancellation, and the run did not stop within {ABANDON_AFTER:g} s '
                'of being interrupted; writing the report (incomplete) and ending the process'
            )
        with contextlib.suppress(Exception):  # a closed stderr must not keep the interrupt from being sent
            sys.stderr.write(
                f'\nworkspace-conformance: the rule {watched.what} ran {now - watched.started:.1f} s, ignoring the '
                f'cancellation of its hang guard ({watched.guard:g} s); interrupting it, and the run stops after it\n'
            )
            sys.stderr.flush()
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

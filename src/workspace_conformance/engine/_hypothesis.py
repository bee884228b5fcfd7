"""Hypothesis inside async rules: named profiles, and a runner that drives the sync engine from a worker thread."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from hypothesis import HealthCheck, Phase, settings

from .._frames import machinery_hidden
from ..vocabulary import PROFILES, Profile

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = ('SETTINGS', 'EngineAbandoned', 'call_in_loop', 'profile_settings', 'run_in_worker')

T = TypeVar('T')

_QUIET = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
_NO_EXPLAIN = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)
"""Every phase but `explain`: its extra runs cost backend calls, and the lines it points at are the suite's own."""


_REPEATABLE = settings(derandomize=True, deadline=None, database=None, suppress_health_check=_QUIET, phases=_NO_EXPLAIN)
"""What the repeatable profiles share: the same examples on every run, no example database."""


# A stateful step runs up to three operations at once (`stateful.py`), so a program of N steps holds about twice as
# many operations as N single-operation steps did, in N round trips.
SETTINGS: dict[Profile, settings] = {
    # Fast and repeatable: the same examples on every run, so CI is stable. 6 examples and 8 steps (it was 12 and 10)
    # still fail every mutant of the gallery; a third of a certification's backend calls were generated ones.
    'ci': settings(_REPEATABLE, max_examples=6, stateful_step_count=8),
    # Thorough and repeatable: what a certificate is built on.
    'certify': settings(_REPEATABLE, max_examples=60, stateful_step_count=20),
    # Exploratory: new random examples each run, failures remembered in Hypothesis's example database.
    'dev': settings(
        max_examples=40, derandomize=False, deadline=None, suppress_health_check=_QUIET, stateful_step_count=16
    ),
}
"""The Hypothesis settings of each profile rules run under; `--conformance-profile NAME` picks one."""


def profile_settings(name: str) -> settings:
    """The settings of a named profile, or a clear error listing the names."""
    if name not in PROFILES:
        raise ValueError(f'unknown conformance profile {name!r}: use one of {", ".join(PROFILES)}')
    return SETTINGS[name]


class EngineAbandoned(BaseException):
    """The rule that ran this Hypothesis engine was cancelled; a `BaseException`, so Hypothesis does not catch it."""


@dataclass
class _Worker:
    """The engine thread of one rule: whether the rule gave up on it, and the backend calls it has in flight."""

    abandoned: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)
    calls: set[anyio.CancelScope] = field(default_factory=set)

    def abandon(self) -> None:
        """From the event loop: refuse new calls and cancel those in flight, so the engine thread ends soon."""
        self.abandoned.set()
        for scope in list(self.calls):
            scope.cancel()


class _Cancelled:
    """What a call in flight returns to the engine thread when the rule abandoned it."""


_CANCELLED = _Cancelled()
_WORKER: ContextVar[_Worker | None] = ContextVar('workspace_conformance_hypothesis_worker', default=None)
ABANDON_WAIT = 2.0
"""Seconds a cancelled rule waits for its engine thread to notice and end, so no thread outlives its rule."""


def call_in_loop(function: Callable[..., Coroutine[Any, Any, T]], *args: Any, **kwargs: Any) -> T:
    """From a Hypothesis worker thread, await `function(*args, **kwargs)` in the rule's event loop.

    Once the rule is cancelled, calls in flight are cancelled and new ones raise `EngineAbandoned`.
    """
    worker = _WORKER.get()
    if worker is None:
        return anyio.from_thread.run(functools.partial(function, *args, **kwargs))
    if worker.abandoned.is_set():
        raise EngineAbandoned

    async def call() -> T | _Cancelled:
        with anyio.CancelScope() as scope:
            worker.calls.add(scope)
            try:
                if worker.abandoned.is_set():
                    scope.cancel()
                return await function(*args, **kwargs)
            finally:
                worker.calls.discard(scope)
        return _CANCELLED

    result = anyio.from_thread.run(call)
    if isinstance(result, _Cancelled):
        raise EngineAbandoned
    return result


async def run_in_worker(engine: Callable[[], None]) -> None:
    """Run a sync Hypothesis engine (`@given` test or state machine) in a thread; its examples call back here.

    If the rule is cancelled, the engine is abandoned: its backend calls are cancelled, and the rule waits
    (up to `ABANDON_WAIT` s) for the thread to end, so it never runs on behind later rules.
    """
    worker = _Worker()

    def run() -> None:
        try:
            engine()
        except EngineAbandoned:
            pass
        finally:
            worker.finished.set()

    token = _WORKER.set(worker)
    try:
        await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
    finally:
        _WORKER.reset(token)
        if not worker.finished.is_set():
            worker.abandon()
            with anyio.CancelScope(shield=True), anyio.move_on_after(ABANDON_WAIT):
                while not worker.finished.is_set():
                    await anyio.sleep(0.02)

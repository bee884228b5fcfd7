"""A transparent proxy that records every backend operation a rule makes, so a hang can name the call."""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic_ai.workspaces import Workspace

from .._mirror import Mirror, mirrored_class, protocol_members
from ._returns import wrong_return

__all__ = (
    'CALL_BOUND',
    'GRACE_FLOOR',
    'HUNG',
    'REMEMBERED_GRACE',
    'HangRemembered',
    'Hung',
    'OperationLog',
    'describe_call',
    'traced',
    'unwrap',
)


def _short(value: object) -> str:
    if isinstance(value, bytes | bytearray):
        return f'<{len(value)} bytes>'
    try:
        text = repr(value)
    except Exception:  # a hostile object's repr must not break the report
        text = f'<{type(value).__name__}>'
    return text if len(text) <= 80 else f'{text[:77]}...'


def describe_call(name: str, args: tuple[object, ...], kwargs: dict[str, object]) -> str:
    """`name(arg, key=value)` with long values shortened, for failure messages."""
    parts = [_short(arg) for arg in args] + [f'{key}={_short(value)}' for key, value in kwargs.items()]
    return f'{name}({", ".join(parts)})'


@dataclass(frozen=True)
class Hung:
    """A backend operation that hung: the rule it hung in and the call, as the failure of a later rule names it."""

    rule: str
    call: str


HUNG: dict[str, Hung] = {}
"""Operation name -> where it first hung, for the session (cleared when a session starts)."""
CALL_BOUND = 60.0
"""Seconds (at time scale 1) one backend call may take, even in a rule whose guard is longer (it makes many calls)."""
REMEMBERED_GRACE = 1.0
"""Seconds (at time scale 1) a rule gives an operation that hung earlier in the session, instead of its full guard."""
GRACE_FLOOR = 0.5
"""Seconds the grace never goes below, however small the time scale: a slow-but-correct call is not a hang."""


_IN_FLIGHT: dict[int, tuple[str, OperationLog, anyio.CancelScope, float]] = {}
"""Every traced call in flight in this process: its operation, its rule's log, the scope that may cut it, its start."""


class HangRemembered(BaseException):
    """An operation that hung in an earlier rule hung again within its short grace; the rule fails on it at once.

    A `BaseException`, so neither a rule's own `except Exception` nor Hypothesis takes it for an ordinary error.
    """


@dataclass
class OperationLog:
    """What a rule asked of its backends: a count, the calls pending, the last one started, and wrong returns.

    Times are `time.monotonic()`, so the watchdog thread can read them as well as the rule's event loop.
    """

    rule: str = ''
    """The rule making the calls (`area/id`), for the hangs it leaves in the session's memory."""
    grace: float = REMEMBERED_GRACE
    """Seconds an operation that hung in an earlier rule gets here."""
    call_bound: float = math.inf
    """Seconds one call may take (the default rule guard, scaled): a longer one hung, and is remembered."""
    calls: int = 0
    busy: float = 0.0
    """Seconds the rule's calls took, added up (overlapping ones each count)."""
    round_trips: int = 0
    """Calls that started while no other call of the rule was in flight: the rule's serial round trips."""
    pending: dict[int, tuple[str, float]] = field(default_factory=dict)
    cancelled: list[tuple[str, float, float]] = field(default_factory=list)
    """Operations a cancellation interrupted: description, start, and when it was cancelled."""
    last: str | None = None
    wrong_returns: list[str] = field(default_factory=list)
    """`backend.call(...) returned None, not bytes`: each value of a type the protocol does not allow."""

    async def call(self, name: str, description: str, operation: Callable[[], Awaitable[Any]]) -> Any:
        """Await one backend operation, keeping it listed as pending until it returns or raises.

        An operation that hung in an earlier rule of the session gets `grace` seconds, then fails the rule.
        """
        self.calls += 1
        self.round_trips += not self.pending
        self.last = description
        token = self.calls
        self.pending[token] = (description, time.monotonic())
        remembered = HUNG.get(name)
        started = time.monotonic()
        given = self.call_bound
        if remembered is not None and remembered.rule != self.rule:
            given = min(given, self.grace)
        limit = anyio.CancelScope(deadline=anyio.current_time() + given)
        key = id(limit)
        _IN_FLIGHT[key] = (name, self, limit, started)
        try:
            with limit:
                result = await operation()
        except anyio.get_cancelled_exc_class():
            self.cancelled.append((*self.pending[token], time.monotonic()))
            raise
        finally:
            del self.pending[token]
            _IN_FLIGHT.pop(key, None)
            self.busy += time.monotonic() - started
        if limit.cancelled_caught:
            remembered = HUNG.get(name)
            if remembered is None or remembered.rule == self.rule:  # it hung here first: remember it for later rules
                elapsed = time.monotonic() - started
                self._learn({name: description})
                raise HangRemembered(
                    f'hung after {elapsed:.1f} s: backend.{description} never returned (it had run {elapsed:.1f} s, '
                    'the most one call may take)'
                )
            raise HangRemembered(
                f'backend.{description} did not return within {self.grace:g} s: backend.{remembered.call} hung in '
                f'rule {remembered.rule} earlier, so it was given {self.grace:g} s here'
            )
        if remembered is not None and remembered.rule != self.rule:
            HUNG.pop(name, None)  # it answered within its grace: the backend recovered, later calls get full time
        problem = wrong_return(name, result)
        if problem is not None:
            self.wrong_returns.append(f'backend.{description} {problem}: {_short(result)}')
        return result

    def remember_hangs(self, since: float, waited: float) -> None:
        """Remember, for the rest of the session, each operation cut at or after `since` that had run `waited` s.

        A call that started just before its rule's guard expired did not show that it hangs, so it is not remembered.
        """
        now = time.monotonic()
        hung = [text for text, started, at in self.cancelled if at >= since and at - started >= waited]
        hung += [text for text, started in self.pending.values() if now - started >= waited]
        self._learn({text.split('(', 1)[0]: text for text in hung})  # a description is `name(arguments)`

    def _learn(self, hung: dict[str, str]) -> None:
        """Remember each operation not known to hang yet (name -> its call); cut the calls of it in flight elsewhere."""
        learned = set()
        for name, text in hung.items():
            if name not in HUNG:
                HUNG[name] = Hung(self.rule, text)
                learned.add(name)
        # Calls of the same operation other rules have in flight get the same short grace, counted from their start.
        now, clock = time.monotonic(), anyio.current_time()
        for name, log, limit, started in list(_IN_FLIGHT.values()):
            if name in learned and log is not self:
                limit.deadline = min(limit.deadline, clock + max(0.0, started + log.grace - now))

    def describe_pending(self) -> str:
        """The oldest operation still pending (or cut short by the latest cancellation), or what the rule did."""
        candidates = list(self.pending.values())
        if not candidates and self.cancelled:
            latest = max(cancelled_at for _, _, cancelled_at in self.cancelled)
            candidates = [(text, started) for text, started, at in self.cancelled if at >= latest - 0.25]
        if not candidates:
            last = f'; the last backend call was {self.last}' if self.last else ''
            return f'no backend call was pending: the rule was waiting on the environment{last}'
        description, started = min(candidates, key=lambda item: item[1])
        return f'backend.{description} never returned (it had run {time.monotonic() - started:.1f} s)'


class _Traced(Mirror):
    """A backend behind the suite's tracing proxy; attributes that are not protocol members pass straight through."""

    def __init__(self, wrapped: object, log: OperationLog) -> None:
        self._wrapped = wrapped
        self._log = log

    async def _intercept(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], call: Callable[[], Awaitable[Any]]
    ) -> Any:
        return await self._log.call(name, describe_call(name, args, kwargs), call)

    def __repr__(self) -> str:
        return f'traced({self._wrapped!r})'


def traced(backend: Any, log: OperationLog) -> Any:
    """`backend` behind a proxy recording its operations in `log`; a `Workspace` facade is left as it is."""
    if isinstance(backend, _Traced | Workspace) or backend is None:
        return backend
    return mirrored_class(_Traced, protocol_members(backend))(backend, log)


def unwrap(backend: Any) -> Any:
    """The user's own backend behind a proxy, for the fixtures that receive it (destroy, make_symlink)."""
    return backend._wrapped if isinstance(backend, _Traced) else backend

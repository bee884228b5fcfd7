"""A transparent proxy that records every backend operation a rule makes, so a hang can name the call.

A session's hang state is one `Hangs` object in its config's stash (`hangs_of`), built when the plugin configures
the session and dropped when it unconfigures it, the way pytest keeps its junitxml writer: a session run inside
another (pytester's in-process runs) has its own, and leaves the other's alone. The watchdog's thread and the rules'
calls reach it through what they were handed (a bound method, their `OperationLog`), never through a global.
"""

from __future__ import annotations

import contextlib
import math
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from pydantic_ai.workspaces import Workspace

from .._frames import machinery_hidden
from .._mirror import Mirror, mirrored_class, protocol_members
from .._platforms import posix_program
from ..runtime.watchdog import Watchdog
from ._platform import PLATFORM
from ._returns import wrong_return

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = (
    'CALL_BOUND',
    'GRACE_FLOOR',
    'HANGS',
    'REMEMBERED_GRACE',
    'HangRemembered',
    'Hangs',
    'Hung',
    'OperationLog',
    'PosixCommandRefused',
    'close_hangs',
    'describe_call',
    'hangs_of',
    'open_hangs',
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


CALL_BOUND = 60.0
"""Seconds (at time scale 1) one backend call may take, even in a rule whose guard is longer (it makes many calls)."""
REMEMBERED_GRACE = 1.0
"""Seconds (at time scale 1) a rule gives an operation that hung earlier in the session, instead of its full guard."""
GRACE_FLOOR = 0.5
"""Seconds the grace never goes below, however small the time scale: a slow-but-correct call is not a hang."""
TIMEOUT_SLACK = 10.0
"""Seconds (at time scale 1) a `run(timeout=T)` may go on past T, to stop the command and answer, before it hung.

Only on a backend that answered a call before: a backend's first call may also create its environment."""
TOOK_KEPT = 32
"""Solitary calls whose durations a rule keeps, for `auto` to measure the backend by."""
RAISED_KEPT = 256
"""Errors of backend calls a rule keeps, newest last, to tell which one ended it."""


@dataclass(eq=False)
class Hangs:
    """One session's hang state: its watchdog, the operations that hung, the calls in flight, the rules running."""

    enclosing: Hangs | None = None
    """The state of the session this one runs inside, if any (pytester's in-process runs): the process goes on."""
    watchdog: Watchdog = field(default_factory=Watchdog)
    hung: dict[str, Hung] = field(default_factory=dict)
    """Operation name -> where it first hung in the session."""
    in_flight: dict[int, tuple[str, OperationLog, anyio.CancelScope, float]] = field(default_factory=dict)
    """Every traced call in flight: its operation, its rule's log, the scope that may cut it, its start."""
    answered: weakref.WeakSet[object] = field(default_factory=weakref.WeakSet)
    """The backends (the user's objects) that have answered a traced call: their environment exists."""
    running: dict[int, OperationLog] = field(default_factory=dict)
    """The logs of the rules running now (several in a batch), for the watchdog."""
    last: OperationLog | None = None
    """The log of the rule started last, described when none runs (a hang in its event loop's closing)."""

    def started(self, log: OperationLog) -> None:
        """A rule keeping `log` has started."""
        self.running[id(log)] = log
        self.last = log

    def finished(self, log: OperationLog) -> None:
        """The rule keeping `log` has finished."""
        self.running.pop(id(log), None)

    def has_answered(self, backend: object) -> bool:
        """Whether `backend` answered a traced call (one not weakly referenceable never did, so no timeout bound)."""
        try:
            return backend in self.answered
        except TypeError:
            return False

    def note_answer(self, backend: object) -> None:
        """`backend` answered a traced call (with a value or an error): its environment exists."""
        with contextlib.suppress(TypeError):
            self.answered.add(backend)

    def describe_latest(self) -> str:
        """What the running rules are stuck in (`backend.stat(...) never returned`), for the watchdog's thread.

        The loop is stuck, so the call to name is the one started last: a call holding the thread started after any
        call it overlaps.
        """
        logs = list(self.running.values()) or ([] if self.last is None else [self.last])
        if not logs:
            return 'no rule has started'
        stuck = [log for log in logs if log.pending or log.cancelled]
        if stuck:
            log = max(stuck, key=_latest_call)
            where = f' (in {log.rule}, one of {len(logs)} rules running at once)' if len(logs) > 1 else ''
            return log.describe_pending(newest=True) + where
        last = logs[-1].last
        tail = f'; the last backend call was {last}' if last else ''
        return f'no backend call was pending: its own work, or a task it left, kept the event loop busy{tail}'


def _latest_call(log: OperationLog) -> float:
    starts = [started for _, started in log.pending.values()] or [at for _, _, at in log.cancelled]
    return max(starts)


HANGS = pytest.StashKey[Hangs]()
"""On the config: its session's `Hangs`."""
_OPEN: ContextVar[Hangs | None] = ContextVar('workspace_conformance_hangs', default=None)
"""The hang state of the innermost session open in this context, the one a session opened now runs inside."""


def open_hangs(config: pytest.Config) -> None:
    """Give `config`'s session its hang state (the plugin's `pytest_configure`)."""
    hangs = Hangs(enclosing=_OPEN.get())
    config.stash[HANGS] = hangs
    _OPEN.set(hangs)


def close_hangs(config: pytest.Config) -> None:
    """Drop `config`'s hang state (the plugin's `pytest_unconfigure`); its watchdog stops unless the process exits next.

    The watchdog of the process's outermost session keeps the exit it scheduled after a hang; an inner one's is
    dropped, since the process goes on with the session around it.
    """
    hangs = config.stash.get(HANGS, None)
    if hangs is None:
        return
    del config.stash[HANGS]
    if _OPEN.get() is hangs:
        _OPEN.set(hangs.enclosing)
    hangs.watchdog.close(process_exits=hangs.enclosing is None)


def hangs_of(config: pytest.Config) -> Hangs:
    """The hang state of `config`'s session; built here when the plugin did not configure it (`-p no:...`)."""
    return config.stash.setdefault(HANGS, Hangs())


class HangRemembered(BaseException):
    """An operation that hung in an earlier rule hung again within its short grace; the rule fails on it at once.

    A `BaseException`, so neither a rule's own `except Exception` nor Hypothesis takes it for an ordinary error.
    """


class PosixCommandRefused(BaseException):
    """A rule sent a POSIX program to a 'windows' workspace: stopped before the backend saw it, the rule not applicable.

    A `BaseException` for the reason `HangRemembered` is one: no `except Exception` of a rule may take it.
    """

    def __init__(self, command: object) -> None:
        super().__init__(f'a POSIX command {_short(command)} for a windows workspace')
        self.command = command


def _posix_command(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object | None:
    """The command of a `run` or `run_in_directory` call whose program is a POSIX one, on a 'windows' workspace."""
    if name not in ('run', 'run_in_directory') or PLATFORM.get() != 'windows':
        return None
    command = args[0] if args else kwargs.get('command')
    if isinstance(command, str) or not isinstance(command, Sequence) or not command:
        return None
    return command if posix_program(str(command[0])) else None


@dataclass
class OperationLog:
    """What a rule asked of its backends: a count, the calls pending, the last one started, and wrong returns.

    Times are `time.monotonic()`, so the watchdog thread can read them as well as the rule's event loop.
    """

    hangs: Hangs
    """The session's hang state: operations that hung earlier, calls in flight."""
    rule: str = ''
    """The rule making the calls (`area/id`), for the hangs it leaves in the session's memory."""
    grace: float = REMEMBERED_GRACE
    """Seconds an operation that hung in an earlier rule gets here."""
    call_bound: float = math.inf
    """Seconds one call may take (the default rule guard, scaled): a longer one hung, and is remembered."""
    timeout_slack: float = math.inf
    """Seconds a call given a timeout may take past it (`TIMEOUT_SLACK`, scaled): a longer one hung."""
    calls: int = 0
    took: list[float] = field(default_factory=list)
    """Seconds each of the rule's first `TOOK_KEPT` solitary calls took (no other call of the rule overlapped it: its
    time is the backend's answer, not a wait for the rule's other calls)."""
    keys: dict[str, str] = field(default_factory=dict)
    """Description -> what a hang of that call is remembered under."""
    round_trips: int = 0
    """Calls that started while no other call of the rule was in flight: the rule's serial round trips."""
    pending: dict[int, tuple[str, float]] = field(default_factory=dict)
    cancelled: list[tuple[str, float, float]] = field(default_factory=list)
    """Operations a cancellation interrupted: description, start, and when it was cancelled."""
    last: str | None = None
    wrong_returns: list[str] = field(default_factory=list)
    """`backend.call(...) returned None, not bytes`: each value of a type the protocol does not allow."""
    observer: Callable[[list[float]], None] | None = None
    """Told `took` after each call (under `auto`, a batch's leader measures its backend so)."""
    raised: deque[tuple[BaseException, str]] = field(default_factory=lambda: deque(maxlen=RAISED_KEPT))
    """The latest errors backend calls raised, and the operation each came from: which one ended the rule."""

    def raised_by(self, error: BaseException, depth: int = 4) -> str | None:
        """The operation whose error `error` is or holds: itself, its cause or context, or all of a group's members."""
        for known, name in reversed(self.raised):
            if known is error:
                return name
        if depth == 0:
            return None
        if isinstance(error, BaseExceptionGroup):
            members = {self.raised_by(member, depth - 1) for member in error.exceptions}
            return members.pop() if len(members) == 1 else None
        for linked in (error.__cause__, error.__context__):
            if linked is not None:
                found = self.raised_by(linked, depth - 1)
                if found is not None:
                    return found
        return None

    async def call(
        self,
        name: str,
        description: str,
        operation: Callable[[], Awaitable[Any]],
        *,
        key: str | None = None,
        timeout: float | None = None,
    ) -> Any:
        """Await one backend operation, keeping it listed as pending until it returns or raises.

        An operation that hung in an earlier rule of the session gets `grace` seconds, then fails the rule. `key` is
        what a hang is remembered under (the operation's name, or `FIRST_CALL` for a newly built backend's first).
        A call given `timeout` seconds hung once it runs `timeout_slack` seconds past them.
        """
        key = key or name
        self.keys[description] = key
        self.calls += 1
        alone = not self.pending
        self.round_trips += alone
        self.last = description
        token = self.calls
        self.pending[token] = (description, time.monotonic())
        remembered = self.hangs.hung.get(key)
        started = time.monotonic()
        given, most = self.call_bound, 'the most one call may take'
        past_timeout = math.inf if timeout is None else timeout + self.timeout_slack
        by_timeout = past_timeout < given
        if by_timeout:
            given, most = past_timeout, f'{self.timeout_slack:g} s past its own timeout'
        if remembered is not None and remembered.rule != self.rule:
            given = min(given, self.grace)
        limit = anyio.CancelScope(deadline=anyio.current_time() + given)
        flight = id(limit)
        self.hangs.in_flight[flight] = (key, self, limit, started)
        try:
            with limit:
                result = await operation()
        except anyio.get_cancelled_exc_class():
            self.cancelled.append((*self.pending[token], time.monotonic()))
            raise
        finally:
            del self.pending[token]
            self.hangs.in_flight.pop(flight, None)
            took = time.monotonic() - started
            if alone and self.calls == token and len(self.took) < TOOK_KEPT:  # no other call overlapped it
                self.took.append(took)
            if self.observer is not None:
                self.observer(self.took)
        if limit.cancelled_caught:
            remembered = self.hangs.hung.get(key)
            if remembered is None or remembered.rule == self.rule:  # it hung here first: remember it for later rules
                elapsed = time.monotonic() - started
                if not by_timeout:
                    # Past its own timeout says nothing of other calls of it (a remote SDK may queue them), so only a
                    # call cut at the general bound makes the operation known to hang.
                    self._learn({key: description})
                raise HangRemembered(
                    f'hung after {elapsed:.1f} s: backend.{description} never returned (it had run {elapsed:.1f} s, '
                    f'{most})'
                )
            raise HangRemembered(
                f'backend.{description} did not return within {self.grace:g} s: backend.{remembered.call} hung in '
                f'rule {remembered.rule} earlier, so it was given {self.grace:g} s here'
            )
        if remembered is not None and remembered.rule != self.rule:
            # It answered within its grace: the backend recovered, later calls get full time.
            self.hangs.hung.pop(key, None)
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
        self._learn({self.keys.get(text, text.split('(', 1)[0]): text for text in hung})  # `name(arguments)`

    def _learn(self, hung: dict[str, str]) -> None:
        """Remember each operation not known to hang yet (name -> its call); cut the calls of it in flight elsewhere."""
        learned = set()
        for name, text in hung.items():
            if name not in self.hangs.hung:
                self.hangs.hung[name] = Hung(self.rule, text)
                learned.add(name)
        # Calls of the same operation other rules have in flight get the same short grace, counted from their start.
        now, clock = time.monotonic(), anyio.current_time()
        for name, log, limit, started in list(self.hangs.in_flight.values()):
            if name in learned and log is not self:
                limit.deadline = min(limit.deadline, clock + max(0.0, started + log.grace - now))

    def describe_pending(self, *, newest: bool = False) -> str:
        """The oldest operation still pending (or cut short by the latest cancellation), or what the rule did.

        `newest`: the one started last instead, which is the one blocking the event loop when the loop is stuck
        (the watchdog's case: a call holding its thread runs after every call it overlaps had started).
        """
        candidates = list(self.pending.values())
        if not candidates and self.cancelled:
            latest = max(cancelled_at for _, _, cancelled_at in self.cancelled)
            candidates = [(text, started) for text, started, at in self.cancelled if at >= latest - 0.25]
        if not candidates:
            last = f'; the last backend call was {self.last}' if self.last else ''
            return f'no backend call was pending: the rule was waiting on the environment{last}'
        description, started = (max if newest else min)(candidates, key=lambda item: item[1])
        return f'backend.{description} never returned (it had run {time.monotonic() - started:.1f} s)'


FIRST_CALL = 'the first operation of a newly built backend'
"""What a hang of a factory-built backend's first operation (its environment's creation) is remembered under."""


class _Traced(Mirror):
    """A backend behind the suite's tracing proxy; attributes that are not protocol members pass straight through."""

    def __init__(self, wrapped: object, log: OperationLog, built: bool = False) -> None:
        self._wrapped = wrapped
        self._log = log
        self._first = built

    async def _intercept(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], call: Callable[[], Awaitable[Any]]
    ) -> Any:
        refused = _posix_command(name, args, kwargs)
        if refused is not None:
            raise PosixCommandRefused(refused)
        key, self._first = (FIRST_CALL if self._first else None), False
        # A first operation also creates or connects to the environment, which its own timeout does not cover.
        answered = self._log.hangs.has_answered(self._wrapped)
        timeout: object = kwargs.get('timeout') if name in ('run', 'run_in_directory') and answered else None
        bounded = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else None  # True is 1 s too
        try:
            result = await self._log.call(name, describe_call(name, args, kwargs), call, key=key, timeout=bounded)
        except Exception as error:
            self._log.hangs.note_answer(self._wrapped)  # an error is an answer too
            self._log.raised.append((error, name))
            raise
        self._log.hangs.note_answer(self._wrapped)
        return result

    def __repr__(self) -> str:
        return f'traced({self._wrapped!r})'


def traced(backend: Any, log: OperationLog, *, built: bool = False) -> Any:
    """`backend` behind a proxy recording its operations in `log`; a `Workspace` facade is left as it is.

    `built`: a factory (`fresh_backend`, ...) just built it, so its first operation creates its environment.
    """
    if isinstance(backend, _Traced | Workspace) or backend is None:
        return backend
    return mirrored_class(_Traced, protocol_members(backend))(backend, log, built)


def traced_beside(backend: Any, other: Any) -> Any:
    """`other`, a backend a rule built itself, behind the proxy `backend` is behind: its calls recorded and checked."""
    return traced(other, backend._log, built=True) if isinstance(backend, _Traced) else other


def unwrap(backend: Any) -> Any:
    """The user's own backend behind a proxy, for the fixtures that receive it (destroy, make_symlink)."""
    return backend._wrapped if isinstance(backend, _Traced) else backend

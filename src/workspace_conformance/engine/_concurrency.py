"""Rules checked together: the independent rules of one suite class run at once against its one shared environment.

When a class's backend is shared by its rules (a fixture of class scope or wider), the first of its rules to run
also checks the independent rules selected after it, at most `--conformance-concurrency` at a time, on its event
loop, each under its own hang guard; each of those items then reports what its rule did there, unchanged. A rule is
checked at its own item instead, by itself, when it is declared `alone` (or builds, attaches or destroys
environments), uses a fixture its class does not share, carries a skip mark, or is given other fixture values at
its item than it ran ahead with. Under pytest-xdist every worker checks its rules one at a time.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from .._frames import machinery_hidden
from ._requires import OPTIONAL_FIXTURES, SWITCHES, subject_fixture
from ._rule import LIFECYCLE_REQUIREMENTS, rule_of
from ._tracing import hangs_of

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = (
    'ACCOUNTING',
    'CONCURRENCY_OPTION',
    'DEFAULT_CONCURRENCY',
    'Ahead',
    'NotChecked',
    'Slot',
    'halt_reason',
    'in_batch',
    'plan',
    'run_ahead',
    'slot',
    'take',
)

CONCURRENCY_OPTION = 'conformance_concurrency'
DEFAULT_CONCURRENCY = 16
"""Rules at once under `auto` on a remote backend: measured with `bench/remote_latency.py` (see docs/speed.md)."""
REMOTE_ROUND_TRIP = 0.025
"""Seconds a backend call takes, at least, for `auto` to check rules at once: a network round trip. A local backend
answers faster; on it, concurrency only adds CPU contention (and pydantic-ai's local spawn and reap graces)."""
SHAREABLE = frozenset(
    {
        'anyio_backend',
        'make_symlink',
        'inject_fault',
        'storage_holds_symlinks',
        *(fixture for fixture, _ in SWITCHES.values()),
        'declared_limits',
        'expected_failures',
        'conformance_time_scale',
        'conformance_profile',
        '_conformance_waivers',
    }
)
"""The suite's configuration fixtures: function-scoped by default, yet one value for the whole class (checked)."""
ENVIRONMENT_FACTORIES = frozenset(
    fixture for requirement in LIFECYCLE_REQUIREMENTS for fixture in OPTIONAL_FIXTURES[requirement][0]
)
"""Fixtures that build, attach to or destroy environments (those of the lifecycle requirements): a rule that uses
one runs alone."""

PLAN = pytest.StashKey[tuple[pytest.Function, ...]]()
"""On the item that leads a batch: the items it checks, itself first."""
AHEAD = pytest.StashKey['Ahead']()
"""On each item whose rule ran ahead: what the rule did."""
ACCOUNTING = pytest.StashKey[dict[str, float]]()
"""On each item whose rule ran: its backend calls, serial round trips and seconds."""
HALTED = pytest.StashKey[str]()
"""On the session: why no more rules are checked (a rule ignored cancellation; the session deadline passed)."""
DEADLINE = pytest.StashKey[float]()
"""On the session: the `time.monotonic()` after which no rule starts (`--conformance-max-duration`)."""


class NotChecked(Exception):
    """A rule the session stopped before it had a result: it is reported `missing`, never passed or failed."""


@dataclass
class Slot:
    """Where a rule running in a batch leaves its accounting, since its item is not the one running."""

    accounting: dict[str, float] = field(default_factory=dict)
    measuring: pytest.Item | None = None
    """Under `auto`, on the slot of a batch's leader whose backend is not measured yet: the item it measures for."""
    measured: Callable[[], None] | None = None
    """Called once the leader's calls decided `auto`: it starts the batch's other rules if the backend is remote."""

    def observe(self, took: Sequence[float]) -> None:
        """After each backend call of the leader: decide `auto` once its calls are enough to measure."""
        if self.measuring is not None and len(took) >= MEASURED_CALLS:
            measure(self.measuring, took)
            self.measuring = None
            if self.measured is not None:
                self.measured()


@dataclass(frozen=True)
class Ahead:
    """What a rule did ahead: what it raised (None: it passed), the fixture values it had, its accounting."""

    raised: BaseException | None
    used: Mapping[str, Any]
    accounting: Mapping[str, float]


_SLOT: ContextVar[Slot | None] = ContextVar('workspace_conformance_batch_slot', default=None)


def in_batch() -> bool:
    """Whether the rule now starting runs inside a batch (so it must not lead one)."""
    return _SLOT.get() is not None


def slot() -> Slot | None:
    """The slot of the rule running in a batch now, or None at its own item."""
    return _SLOT.get()


MEASURED_CALLS = 5
"""Solitary backend calls (no other call of the rule overlapped them) a rule must make to decide `auto`."""
MEASURED = pytest.StashKey[bool]()
"""On a suite class's node, under `auto`: whether its backend answered slowly enough for rules to run at once."""


def concurrency(config: pytest.Config) -> int:
    """How many rules may run at once in this process: 1 on an xdist worker (xdist runs the rules apart)."""
    if hasattr(config, 'workerinput'):
        return 1
    value = config.getoption(CONCURRENCY_OPTION, default=None)
    if value == 'auto':
        return DEFAULT_CONCURRENCY
    return int(value) if isinstance(value, int) else 1


def adaptive(config: pytest.Config) -> bool:
    """Whether concurrency is `auto`: rules run at once only on a backend whose calls are network round trips."""
    return bool(config.getoption(CONCURRENCY_OPTION, default=None) == 'auto')


def measure(item: pytest.Item, took: Sequence[float]) -> None:
    """Under `auto`, decide from a rule's first calls whether its class's backend answers like a remote one.

    The rule's own calls are the measure (no extra call is made): a median of `REMOTE_ROUND_TRIP` or more means a
    network, and the rules of its batch go on at once. The median, since a local backend's first call may create its
    environment and take long; a rule that made fewer than `MEASURED_CALLS` calls leaves it to the next one.
    """
    if item.parent is not None and len(took) >= MEASURED_CALLS and MEASURED not in item.parent.stash:
        item.parent.stash[MEASURED] = statistics.median(took) >= REMOTE_ROUND_TRIP


def undecided(item: pytest.Item) -> bool:
    """Whether `auto` has yet to measure the backend of `item`'s class (its rule's first calls then measure it)."""
    return adaptive(item.config) and item.parent is not None and MEASURED not in item.parent.stash


def halt_reason(session: pytest.Session) -> str | None:
    """Why rules must no longer start: the session deadline has passed, or the session was halted."""
    reason = session.stash.get(HALTED, None)
    if reason is not None:
        return reason
    deadline = session.stash.get(DEADLINE, None)
    if deadline is not None and time.monotonic() >= deadline:
        option = session.config.getoption('conformance_max_duration', default=None)
        reason = f'the session passed its deadline (--conformance-max-duration {option:g} s)'
        session.stash[HALTED] = reason
        return reason
    return None


def remaining(session: pytest.Session) -> float | None:
    """Seconds until the session deadline, or None without one."""
    deadline = session.stash.get(DEADLINE, None)
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def _rule(item: pytest.Item) -> Any:
    return rule_of(getattr(item, 'function', None))


def _params(item: pytest.Item) -> Mapping[str, object]:
    callspec = getattr(item, 'callspec', None)
    return dict(callspec.params) if callspec is not None else {}


def _fixture_defs(item: pytest.Item) -> Mapping[str, Any] | None:
    info = getattr(item, '_fixtureinfo', None)
    return getattr(info, 'name2fixturedefs', None)


def _shared_with(candidate: pytest.Function, leader: pytest.Function) -> bool:
    """Whether every fixture `candidate`'s rule uses is shared with `leader`: class scope or wider, or configuration."""
    mine, theirs = _fixture_defs(candidate), _fixture_defs(leader)
    if mine is None or theirs is None:
        return False
    params = _params(candidate)
    for name in candidate.fixturenames:
        if name == 'request' or name in params:
            continue
        if name in ENVIRONMENT_FACTORIES:
            return False
        defs = mine.get(name)
        if not defs:
            return False
        definition = defs[-1]
        if definition.scope != 'function':
            leader_defs = theirs.get(name)
            if not leader_defs or leader_defs[-1] is not definition:
                return False
            continue
        function = definition.func
        asynchronous = inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function)
        if name not in SHAREABLE or asynchronous:
            return False
    return True


def _marked_to_skip(item: pytest.Item) -> bool:
    if any(True for _ in item.iter_markers('skip')) or any(True for _ in item.iter_markers('skipif')):
        return True
    return any(mark.kwargs.get('run', True) is False for mark in item.iter_markers('xfail'))


def _can_run_ahead(item: pytest.Item) -> bool:
    meta = _rule(item)
    return (
        isinstance(item, pytest.Function)
        and meta is not None
        and not meta.runs_alone
        and AHEAD not in item.stash
        and not _marked_to_skip(item)
    )


def plan(item: pytest.Function) -> tuple[pytest.Function, ...]:
    """The items `item` checks at once, itself first: empty when it leads no batch (it runs by itself)."""
    if concurrency(item.config) < 2 or not _can_run_ahead(item) or not _shared_with(item, item):
        return ()
    if adaptive(item.config) and item.parent is not None:
        measured = item.parent.stash.get(MEASURED, None)
        if measured is False or (measured is None and subject_fixture(_rule(item)) != 'backend'):
            return ()  # `auto`: a backend that answers like a local one keeps the serial run
        # Not measured yet: the batch is planned, and its other rules wait until the leader's first calls decide.
    items = item.session.items
    try:
        start = items.index(item)
    except ValueError:
        return ()
    params = _params(item)
    batch = [item]
    for candidate in items[start + 1 :]:
        if (
            isinstance(candidate, pytest.Function)
            and candidate.parent is item.parent
            and _params(candidate) == params
            and _can_run_ahead(candidate)
            and _shared_with(candidate, item)
        ):
            batch.append(candidate)
    return tuple(batch) if len(batch) > 1 else ()


def _same(actual: object, used: object) -> bool:
    if actual is used:
        return True
    try:
        return bool(actual == used)
    except Exception:  # a value whose __eq__ raises is not known to be the same
        return False


def take(item: pytest.Item, given: Mapping[str, Any]) -> Ahead | None:
    """What `item`'s rule did ahead, if it ran with the fixture values `given` now; otherwise it runs here."""
    ahead = item.stash.get(AHEAD, None)
    if ahead is None:
        return None
    del item.stash[AHEAD]
    for name, used in ahead.used.items():
        if name != 'request' and not _same(given.get(name), used):
            return None
    return ahead


@contextlib.contextmanager
def _in_slot(place: Slot) -> Iterator[None]:
    token = _SLOT.set(place)
    try:
        yield
    finally:
        _SLOT.reset(token)


async def run_ahead(
    request: pytest.FixtureRequest, given: Mapping[str, Any], batch: tuple[pytest.Function, ...]
) -> None:
    """Check every rule of `batch` at once (bounded), leaving each item what its rule did; stop on a halt.

    Under `auto` with the backend not measured yet, the leader starts alone and its first calls decide: the other
    rules then go on at once, or, on a backend that answers like a local one, leave their items to check them serially.
    """
    leader = request.node
    tentative = undecided(leader)
    limiter = anyio.CapacityLimiter(concurrency(leader.config))
    session = leader.session
    watchdog = hangs_of(leader.config).watchdog
    values: dict[str, Any] = dict(given)

    def value(name: str) -> Any:
        if name not in values:
            values[name] = request.getfixturevalue(name)
        return values[name]

    calls = []
    for item in batch:
        kwargs = {name: value(name) for name in item._fixtureinfo.argnames}
        calls.append((item, kwargs, getattr(request.instance, item.originalname)))
    (_, leader_kwargs, leader_method), others = calls[0], calls[1:]
    # Longest guard first (a stable sort keeps the collection order among equals): the rules declared to take long
    # start at once instead of last, so the batch does not end waiting for one that queued behind short ones.
    others.sort(key=lambda call: -_rule(call[0]).timeout)
    outside = contextvars.copy_context()  # the others start in it, not in the leader's, wherever the leader decides

    def go_on() -> None:
        """Start the other rules, unless `auto` measured a local backend (their items then check them serially)."""
        if not tentative or (leader.parent is not None and leader.parent.stash.get(MEASURED, None) is True):
            for item, kwargs, method in others:
                outside.run(group.start_soon, checked, item, kwargs, method)

    async def checked(item: pytest.Function, kwargs: dict[str, Any], method: Any) -> None:
        async with limiter:
            if halt_reason(session) is not None:
                return
            place = Slot(measuring=leader if tentative and item is leader else None, measured=go_on)
            raised: BaseException | None = None
            with _in_slot(place):
                try:
                    await method(**kwargs)
                except (anyio.get_cancelled_exc_class(), *_STOPS):
                    raise
                except BaseException as error:  # every outcome, pytest's included, is replayed at its item
                    raised = error
            item.stash[AHEAD] = Ahead(raised, kwargs, place.accounting)
            hang = watchdog.hang
            if hang is not None:  # a rule ignored cancellation: the loop is not to be trusted with more rules
                session.stash[HALTED] = f'the rule {hang.rule} ignored cancellation, so the run stops'
                group.cancel_scope.cancel()

    try:
        async with anyio.create_task_group() as group:
            if not tentative:
                go_on()
            # The leader runs in this task, as it would by itself: a Ctrl-C reaches it even inside a shielded cleanup.
            await checked(leader, leader_kwargs, leader_method)
    except BaseExceptionGroup as raised:
        # Ctrl-C, an exit or pytest.exit inside one rule ends the session just as it would serially, not as a group.
        stopping = raised.subgroup(lambda error: isinstance(error, _STOPS))
        if stopping is not None:
            raise _first_leaf(stopping) from None
        raise


_STOPS = (KeyboardInterrupt, SystemExit, pytest.exit.Exception)


def _first_leaf(group: BaseException) -> BaseException:
    while isinstance(group, BaseExceptionGroup):
        group = group.exceptions[0]
    return group

"""The pytest hooks around rules: lean failure tracebacks, and the watchdog on every phase that could hang.

The plugin (`workspace_conformance.plugin`) registers this module, so it is active wherever the rules run; it gives
each session its hang state (`Hangs`, the watchdog's included) when configured, and drops it when unconfigured.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Generator, Iterator
from typing import Any

import pytest

from .._frames import machinery_hidden
from ..runtime.watchdog import GRACE
from ._concurrency import AHEAD, DEADLINE, PLAN, halt_reason, plan
from ._failures import RuleFailure
from ._guard import CLEANUP_BOUND, SCALE_FIXTURE, unresponsive
from ._rule import DEFAULT_TIMEOUT, rule_of
from ._tracing import close_hangs, hangs_of, open_hangs

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = (
    'pytest_configure',
    'pytest_pyfunc_call',
    'pytest_runtest_protocol',
    'pytest_runtest_setup',
    'pytest_runtest_teardown',
    'pytest_sessionfinish',
    'pytest_sessionstart',
    'pytest_unconfigure',
)


def pytest_configure(config: pytest.Config) -> None:
    """Give the session its hang state: its watchdog, the operations that hung, the calls and rules running."""
    open_hangs(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Drop the session's hang state; its watchdog's thread ends (unless it must still end a process left stuck)."""
    close_hangs(config)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Start the session's deadline (`--conformance-max-duration`)."""
    seconds = session.config.getoption('conformance_max_duration', default=None)
    if isinstance(seconds, int | float):
        session.stash[DEADLINE] = time.monotonic() + float(seconds)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """Once the session is halted (its deadline passed, or a rule ignored cancellation), rules without a result stop.

    The item is not run at all, so its rule is `missing` from the report, which is marked incomplete.
    """
    if rule_of(getattr(item, 'function', None)) is None or AHEAD in item.stash:
        return None
    reason = halt_reason(item.session)
    if reason is None:
        return None
    item.session.shouldstop = f'{reason}: the rules after it have no result'
    return True


def _results_pending(session: pytest.Session) -> bool:
    """Whether some items still hold what their rule did in a batch, to be reported before the session stops."""
    return any(AHEAD in item.stash for item in session.items)


_RAN_RULES = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, Any, Any]:
    """Run a rule: its failure keeps only the traceback of what it saw fail; a watchdog interrupt stops the session.

    The event loop's frames around a rule say nothing about the backend, and formatting them costs pytest up to a
    second per failure: the failure's one traceback runs from the rule's body to where the backend failed. A rule the
    watchdog had to interrupt ran on a backend that ignores cancellation, so the event loop can no longer be trusted:
    the session stops after it, and its report is marked incomplete.
    """
    meta = rule_of(getattr(pyfuncitem, 'function', None))
    if meta is None:
        return (yield)
    # The watch spans the rule and its event loop's closing, which waits for every task the rule left behind.
    value = pyfuncitem.funcargs.get(SCALE_FIXTURE)
    scale = float(value) if isinstance(value, int | float) else 1.0
    batch = plan(pyfuncitem)
    if batch:
        pyfuncitem.stash[PLAN] = batch
    # A batch's rules are watched one by one while they run; the leader's watch spans the whole batch.
    metas = [found for found in (rule_of(getattr(item, 'function', None)) for item in batch or [pyfuncitem]) if found]
    deadline = sum((found.timeout + CLEANUP_BOUND) * scale for found in metas) + GRACE
    hangs = hangs_of(pyfuncitem.config)
    watchdog = hangs.watchdog
    token = watchdog.watch(meta.qualified, meta.timeout * scale, deadline, hangs.describe_latest)
    try:
        result = yield
    except RuleFailure as failure:
        hang = watchdog.claim()
        if hang is not None:
            raise unresponsive(meta, hang) from failure.with_traceback(None)
        raise failure.with_traceback(failure.seen) from failure.__cause__
    except BaseException as error:
        hang = watchdog.claim()
        if hang is None:  # Ctrl-C, or a pytest outcome
            raise
        raise unresponsive(meta, hang) from error
    finally:
        watchdog.release(token)
        hang = watchdog.hang
        if hang is not None and not pyfuncitem.session.shouldstop and not _results_pending(pyfuncitem.session):
            pyfuncitem.session.shouldstop = (
                f'the rule {hang.rule} ignored cancellation, so the run stops: the rules after it have no result'
            )
    hang = watchdog.claim()  # interrupted, yet it returned: the interrupt landed where it could not stop it
    if hang is not None:
        raise unresponsive(meta, hang)
    return result


def _phase_bound(config: pytest.Config) -> float:
    """Seconds a setup or teardown around rules may take: a rule's default guard and cleanup, scaled, plus GRACE."""
    scale = config.getoption(SCALE_FIXTURE, default=None)
    return (DEFAULT_TIMEOUT + CLEANUP_BOUND) * (1.0 if scale is None else float(scale)) + GRACE


@contextlib.contextmanager
def _watched(config: pytest.Config, what: str) -> Iterator[None]:
    """Watch a phase no hang guard bounds; past its bound the process ends, writing the report first."""
    watchdog = hangs_of(config).watchdog
    token = watchdog.watch(what, _phase_bound(config), _phase_bound(config), lambda: '', interrupt=False)
    try:
        yield
    finally:
        watchdog.release(token)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, Any]:
    """Set up a rule's fixtures (the backend, its factories) under the watchdog."""
    meta = rule_of(getattr(item, 'function', None))
    if meta is None:
        return (yield)
    item.session.stash[_RAN_RULES] = True
    with _watched(item.config, f'setting up {meta.qualified}'):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
    """Tear down a rule's fixtures (and, after a class's last rule, its event loop) under the watchdog."""
    meta = rule_of(getattr(item, 'function', None))
    if meta is None:
        return (yield)
    with _watched(item.config, f'tearing down {meta.qualified}'):
        return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, Any, Any]:
    """Finish a session that ran rules (the last fixtures torn down, the report written) under the watchdog."""
    if not session.stash.get(_RAN_RULES, False):
        return (yield)
    with _watched(session.config, 'finishing the session'):
        return (yield)

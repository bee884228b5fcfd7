"""One run of a rule: its hang guard, its traced fixtures, and failures that quote the clause."""

from __future__ import annotations

import contextlib
import functools
import inspect
import time
from collections.abc import Awaitable, Callable, Collection, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import pytest

from .._frames import backend_frames, leaf, machinery_hidden, traceback_of
from ..loop_ties import loop_tie, tie_hint
from ..runtime.watchdog import GRACE, Hang
from ..vocabulary import ISOLATION_AREAS, TOOL_CLAIMS, Platform
from ._baseline import BASELINE_ARGV, BASELINE_POWERSHELL, Baseline, cached_baseline, keep_baseline, needs_baseline
from ._concurrency import (
    ACCOUNTING,
    AHEAD,
    PLAN,
    Ahead,
    NotChecked,
    halt_reason,
    in_batch,
    measure,
    remaining,
    run_ahead,
    slot,
    take,
    undecided,
)
from ._failures import OBSERVED_LIMIT, ConformanceConfigError, RuleFailure, clip, framed, safe_str
from ._platform import PLATFORM, platform_of
from ._requires import (
    PROBE,
    RuleSkipped,
    Unmet,
    fixtures_needed,
    probe_verdict,
    resolve,
    subject_fixture,
    tools_to_probe,
)
from ._rule import Rule
from ._tracing import (
    CALL_BOUND,
    GRACE_FLOOR,
    REMEMBERED_GRACE,
    TIMEOUT_SLACK,
    HangRemembered,
    OperationLog,
    PosixCommandRefused,
    describe_call,
    hangs_of,
    traced,
    unwrap,
)

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = (
    'CLEANUP_BOUND',
    'RuleRun',
    'current_run',
    'guarded',
    'unresponsive',
)

SCALE_FIXTURE = 'conformance_time_scale'
_PASS_THROUGH = (pytest.skip.Exception, pytest.xfail.Exception, pytest.exit.Exception)
"""pytest outcomes a rule may raise on purpose; they are not the backend's failures."""
_OUTCOMES = (*_PASS_THROUGH, pytest.fail.Exception)
_CURRENT: ContextVar[RuleRun] = ContextVar('workspace_conformance_rule_run')
CLEANUP_BOUND = 30.0
"""Seconds (at time scale 1) a rule's cleanup may take after its body, e.g. removing its scratch directory."""


def _located(failure: RuleFailure, seen: BaseException) -> RuleFailure:
    """`failure`, carrying where `seen` (what the rule saw fail) happened: its traceback and the backend's frames."""
    failure.frames = tuple(backend_frames(seen))
    failure.seen = traceback_of(seen)
    return failure


def _ended(run: RuleRun, failure: RuleFailure, seen: BaseException) -> RuleFailure:
    """`failure`, located where `seen` happened, naming the backend operation whose error `seen` is, if any."""
    failure.raised_by = run.log.raised_by(seen)
    return _located(failure, seen)


def _cause(seen: BaseException) -> BaseException | None:
    """The cause a failure raised over `seen` keeps: `seen`'s own, not `seen` (the guard catching it says nothing).

    A rule's `raise AssertionError(...) from error` keeps the backend's error in view; pytest shows one traceback else.
    """
    cause = leaf(seen).__cause__
    return None if cause is None else _clipped(cause)


def _tied_failure(rule: Rule, observed: str, error: BaseException, request: pytest.FixtureRequest) -> RuleFailure:
    """The framed failure of an error; one the backend's code raised because it is tied to another loop says so."""
    running = _loop_of(request)
    tied = loop_tie(error, running)
    failure = framed(rule, observed)
    if tied is None:
        return failure
    hinted = RuleFailure(f'{failure}\n{tie_hint(tied, running)}')
    hinted.observed, hinted.loop_tie = failure.observed, tied
    return hinted


def _loop_of(request: pytest.FixtureRequest) -> str:
    """The event loop the rule runs on: its `anyio_backend` (a name, or a name and options)."""
    try:
        value = request.getfixturevalue('anyio_backend')
    except Exception:
        return 'asyncio'
    return str(value[0] if isinstance(value, tuple) else value)


@dataclass
class RuleRun:
    """The rule being checked now, its time scale, and the backend operations it made."""

    rule: Rule
    scale: float
    log: OperationLog
    started: float = field(default_factory=time.monotonic)
    baseline: Baseline | None = None
    """What the environment held before the rules acted (`engine/_baseline.py`); None when no probe was made."""
    platform: Platform = 'posix'
    """The platform the workspace declared when the rule started: `paths` and the scripts' forms follow it."""

    def __post_init__(self) -> None:
        self.log.rule = self.rule.qualified
        self.log.grace = max(GRACE_FLOOR, self.seconds(REMEMBERED_GRACE))
        self.log.call_bound = self.seconds(min(self.rule.timeout, CALL_BOUND))
        self.log.timeout_slack = max(GRACE_FLOOR, self.seconds(TIMEOUT_SLACK))

    def seconds(self, base: float) -> float:
        """A wait of `base` seconds at time scale 1, scaled for slow providers."""
        return base * self.scale

    def accounting(self) -> dict[str, float]:
        """Where the rule's time went: backend calls, serial round trips, and its own seconds of wall time."""
        return {
            'calls': self.log.calls,
            'round_trips': self.log.round_trips,
            'seconds': round(time.monotonic() - self.started, 4),
        }


def current_run() -> RuleRun:
    """The `RuleRun` of the rule whose body is executing; only valid inside a rule."""
    try:
        return _CURRENT.get()
    except LookupError:
        raise RuntimeError('this helper only works inside a conformance rule (a method decorated with @rule)') from None


def _observed(run: RuleRun, observed: str) -> str:
    """What the rule saw, after the first value of a wrong type its backend returned, which usually explains it."""
    wrong = run.log.wrong_returns
    if not wrong:
        return observed
    more = f' (and {len(wrong) - 1} more values of the wrong type)' if len(wrong) > 1 else ''
    return f'{clip(wrong[0], OBSERVED_LIMIT // 4)}{more}; then {observed}'


def _clipped(error: BaseException) -> BaseException:
    """`error`, its message shortened in place when huge, so the traceback pytest prints stays readable."""
    with contextlib.suppress(Exception):  # an exception whose str() or args raise keeps its own message
        text = str(error)
        if len(text) > OBSERVED_LIMIT and error.args:
            error.args = (clip(text),)
    for inner in getattr(error, 'exceptions', ()):
        if isinstance(inner, BaseException):
            _clipped(inner)
    return error


def unresponsive(rule: Rule, hang: Hang) -> RuleFailure:
    """The failure of a rule the watchdog had to interrupt: it ignored its hang guard's cancellation."""
    return framed(
        rule,
        f'hung for {hang.seconds:.1f} s and did not respond to cancellation at its hang guard '
        f'({hang.guard:g} s): {hang.pending}; the run stops here',
    )


def _trace_factories(kwargs: dict[str, Any], log: OperationLog) -> None:
    """Put the rule's backends, and those its factories build, behind the tracing proxy."""
    if 'backend' in kwargs:
        kwargs['backend'] = traced(kwargs['backend'], log)
    for name in ('fresh_backend', 'destructive_backend', 'attach_backend'):
        factory = kwargs.get(name)
        if callable(factory):
            kwargs[name] = functools.wraps(factory)(lambda *a, _f=factory: traced(_f(*a), log, built=True))
    for name in ('destroy_environment', 'stop_environment', 'start_environment', 'make_symlink'):
        receiver = kwargs.get(name)
        if callable(receiver):
            kwargs[name] = functools.wraps(receiver)(lambda backend, *a, _f=receiver: _f(unwrap(backend), *a))


def guarded(function: Callable[..., Coroutine[Any, Any, None]], rule: Rule) -> Callable[..., Coroutine[Any, Any, None]]:
    """`function` bounded by the rule's hang guard, with every failure framed by the rule and its clause."""
    signature = inspect.signature(function)
    parameters = list(signature.parameters.values())
    # What the guard reads (the time scale, and the fixtures that resolve `requires`), asked for when the body is not.
    subject = subject_fixture(rule)
    claims = (claims_fixture(rule),) if rule.claim is not None else ()
    read = (SCALE_FIXTURE, subject, 'declared_limits', 'request', *claims, *fixtures_needed(rule))
    hidden = tuple(name for name in read if name not in signature.parameters)
    parameters.extend(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY) for name in hidden)

    @functools.wraps(function)
    async def run_rule(*args: Any, **kwargs: Any) -> None:
        given = dict(kwargs)
        fixtures: dict[str, Any] = {name: kwargs.pop(name) if name in hidden else kwargs.get(name) for name in read}
        request: pytest.FixtureRequest = fixtures['request']
        if not in_batch():
            if subject == 'backend' and needs_baseline(request.node, fixtures[subject]):
                await _take_baseline(rule, fixtures)
            ahead = await _ran_ahead(request, given)
            if ahead is not None:
                request.node.stash[ACCOUNTING] = dict(ahead.accounting)
                if ahead.raised is not None:
                    raise ahead.raised
                return
        advisory = advises(rule, fixtures)  # before the body: a bad `claims` fixture is a configuration error
        try:
            await _check(rule, function, args, kwargs, fixtures, subject)
        except RuleFailure as failure:
            failure.advisory = advisory
            raise

    run_rule.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return run_rule


def claims_fixture(rule: Rule) -> str:
    """The fixture of what a claim rule's subject claims: `isolation_claims`, else the tool suite's `claims`."""
    return 'isolation_claims' if rule.claim == rule.area else 'claims'


def advises(rule: Rule, fixtures: dict[str, Any]) -> str | None:
    """Why a failure of `rule` only advises here, or None when it binds (a `must` rule, or a claim the subject made)."""
    if rule.strength == 'should':
        return 'should: good practice the contract does not require'
    if rule.claim is not None and rule.claim not in claimed(rule, fixtures.get(claims_fixture(rule))):
        return f'not claimed: the subject does not claim `{rule.claim}`'
    return None


def claimed(rule: Rule, claims: object) -> frozenset[str]:
    """The claims a subject made, checked: a string or an unknown name is a configuration error saying what to fix."""
    if claims is None:
        return frozenset()
    fixture = claims_fixture(rule)
    if isinstance(claims, str) or not isinstance(claims, Collection):
        raise ConformanceConfigError(f'`{fixture}` must be a set of claim names, not {claims!r}')
    names = frozenset(str(claim) for claim in claims)
    known = frozenset(ISOLATION_AREAS) if fixture == 'isolation_claims' else frozenset(TOOL_CLAIMS)
    unknown = sorted(names - known)
    if unknown:
        raise ConformanceConfigError(f'`{fixture}` names unknown claims {unknown}: the claims are {sorted(known)}')
    return names


async def _ran_ahead(request: pytest.FixtureRequest, given: dict[str, Any]) -> Ahead | None:
    """What the item's rule did in a batch (run now if this item leads one), or None when it runs here."""
    item = request.node
    batch = item.stash.get(PLAN, ())
    if batch and AHEAD not in item.stash:
        await run_ahead(request, given, batch)
        if AHEAD not in item.stash:  # the batch was halted before this rule had a result
            raise NotChecked(halt_reason(item.session) or 'the session stopped before this rule had a result')
    return take(item, given)


async def _check(
    rule: Rule,
    function: Callable[..., Coroutine[Any, Any, None]],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    fixtures: dict[str, Any],
    subject: str,
) -> None:
    """One rule's check: its requires, then its tool probe and body under the hang guard, every failure framed."""
    platform = platform_of(fixtures[subject]) if subject == 'backend' else 'posix'  # read once per rule
    unmet = resolve(rule, fixtures[subject], fixtures, platform)
    if unmet is not None:
        raise RuleSkipped(rule, unmet.kind, unmet.why)
    request: pytest.FixtureRequest = fixtures['request']
    hangs = hangs_of(request.config)
    run = RuleRun(rule=rule, scale=float(fixtures[SCALE_FIXTURE]), log=OperationLog(hangs), platform=platform)
    if subject == 'backend':
        run.baseline = cached_baseline(request.node)
    tools = tools_to_probe(rule, fixtures[subject], fixtures)
    if tools and run.baseline is not None:
        unmet = _tools_before_rules(tools, run.baseline)
        if unmet is not None:
            raise RuleSkipped(rule, unmet.kind, unmet.why)
        tools = ()  # found before the rules ran: a rule that finds one missing now fails (`engine/_baseline.py`)
    place = slot()
    if place is not None and place.measuring is not None and subject == 'backend':
        run.log.observer = place.observe
    _trace_factories(kwargs, run.log)
    bound = run.seconds(rule.timeout)
    left = remaining(request.session)
    cut = left is not None and left < bound
    if cut:
        bound = left or 0.0
    token = _CURRENT.set(run)
    platform_token = PLATFORM.set(platform)
    scope = anyio.move_on_after(bound)
    hangs.started(run.log)
    watch = None
    if in_batch():  # in a batch each rule has its own watch; the leader's item is watched for the whole batch
        deadline = (rule.timeout + CLEANUP_BOUND) * run.scale + GRACE
        watch = hangs.watchdog.watch(rule.qualified, bound, deadline, lambda: run.log.describe_pending(newest=True))

    def expired(seen: BaseException | None = None) -> Exception:
        if cut:
            return NotChecked(f'the session deadline stopped it after {bound:g} s')
        run.log.remember_hangs(since=scope.deadline - 0.25, waited=max(bound / 2, run.log.grace))
        hung = framed(rule, _observed(run, f'hung after {bound:g} s: {run.log.describe_pending()}'))
        return hung if seen is None else _located(hung, seen)

    try:
        with scope:
            if tools:
                await _look_for(rule, tools, traced(fixtures[subject], run.log))
            await function(*args, **kwargs)
    except pytest.fail.Exception as failed:
        if scope.cancel_called:
            raise expired(failed) from _cause(failed)
        raise _ended(run, framed(rule, _observed(run, failed.msg or 'failed')), failed) from _cause(failed)
    except _PASS_THROUGH:
        raise
    except RuleFailure:
        raise
    except AssertionError as failure:
        if scope.cancel_called:
            raise expired(failure) from _cause(failure)
        observed = safe_str(failure, named=type(failure) is not AssertionError)
        tied = _tied_failure(rule, _observed(run, observed), failure, request)
        raise _ended(run, tied, failure) from _cause(failure)
    except Exception as error:
        if scope.cancel_called:
            raise expired(error) from _cause(error)
        observed = _observed(run, f'raised {safe_str(error)}{_after(run)}')
        raise _ended(run, _tied_failure(rule, observed, error, request), error) from _cause(error)
    except KeyboardInterrupt as interrupt:
        hang = hangs.watchdog.claim()
        if hang is None:  # Ctrl-C: the session stops
            raise
        raise _located(unresponsive(rule, hang), interrupt) from None
    except BaseException as error:
        refused = _found(error, PosixCommandRefused)
        if refused is not None:
            raise RuleSkipped(rule, 'platform', _refused(refused.command, platform)) from None
        remembered = _remembered(error)
        if remembered is not None:
            raise framed(rule, str(remembered)) from None
        if _controls_the_run(error):
            raise
        # A provider SDK's own BaseException subclass: the backend's failure, not a reason to stop the session.
        observed = f'raised {safe_str(error)} (a BaseException, not an Exception){_after(run)}'
        raise _located(framed(rule, _observed(run, observed)), error) from _cause(error)
    finally:
        PLATFORM.reset(platform_token)
        _CURRENT.reset(token)
        hangs.finished(run.log)
        if watch is not None:
            hangs.watchdog.release(watch)
        if place is not None:
            place.accounting.update(run.accounting())
        else:
            request.node.stash[ACCOUNTING] = run.accounting()
            if undecided(request.node) and subject == 'backend':
                measure(request.node, run.log.took)
    if scope.cancel_called:
        raise expired()


def _remembered(error: BaseException) -> HangRemembered | None:
    """The `HangRemembered` behind `error` (itself, or the first inside a task group's exception group)."""
    return _found(error, HangRemembered)


Found = TypeVar('Found', bound=BaseException)


def _found(error: BaseException, kind: type[Found]) -> Found | None:
    """The `kind` behind `error`: itself, or the first inside a task group's exception group."""
    if isinstance(error, kind):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = _found(inner, kind)
            if found is not None:
                return found
    return None


def _refused(command: object, platform: str) -> str:
    """Why a rule that sent a POSIX program to a 'windows' workspace is not applicable there."""
    shown = describe_call('run', (command,), {}).removeprefix('run(').removesuffix(')')
    return (
        f'it sent the POSIX command {shown} to a {platform!r} workspace, which does not run it: the engine stopped '
        "it before the backend saw it (this rule has no 'windows' form yet: a gap of the suite, not of the backend)"
    )


PROBE_BOUND = 30.0
"""Seconds (at time scale 1) the baseline's one command may take."""


async def _take_baseline(rule: Rule, fixtures: dict[str, Any]) -> None:
    """Take the baseline of the rule's backend now, at its own item, before it or the batch it leads acts.

    Traced and bounded like a rule's own calls (a hang is remembered); whatever it raises or returns, the baseline
    records it, and the rule goes on: a broken backend fails its rules, it never makes them skip.
    """
    request: pytest.FixtureRequest = fixtures['request']
    hangs = hangs_of(request.config)
    run = RuleRun(rule=rule, scale=float(fixtures[SCALE_FIXTURE]), log=OperationLog(hangs))
    token = _CURRENT.set(run)
    hangs.started(run.log)
    bound = run.seconds(min(rule.timeout, PROBE_BOUND))
    started = time.monotonic()
    baseline = Baseline(answered=False, said=f'it hung for {bound:g} s')
    try:
        with anyio.move_on_after(bound) as scope:
            backend = traced(fixtures['backend'], run.log)
            if platform_of(fixtures['backend']) == 'windows':
                found = await backend.run(BASELINE_POWERSHELL, shell=True)
            else:
                found = await backend.run(list(BASELINE_ARGV))
            took = time.monotonic() - started
            baseline = Baseline.of(getattr(found, 'exit_code', None), getattr(found, 'stdout', None), took)
        if scope.cancelled_caught:
            run.log.remember_hangs(since=scope.deadline - 0.25, waited=max(bound / 2, run.log.grace))
    except Exception as error:
        baseline = Baseline(answered=False, said=f'it raised {safe_str(error)}')
    finally:
        _CURRENT.reset(token)
        hangs.finished(run.log)
    keep_baseline(request.node, baseline)


def _tools_before_rules(tools: tuple[str, ...], baseline: Baseline) -> Unmet | None:
    """The tools requirement's verdict from the baseline: an environment skip when it found a tool missing."""
    if baseline.no_shell:
        return probe_verdict(tools, 127, '')
    if not baseline.answered:
        return None  # no evidence: the body runs, and a broken backend fails it
    for tool in tools:
        if tool not in baseline.found:
            return probe_verdict(tools, 3, tool)
    return None


async def _look_for(rule: Rule, tools: tuple[str, ...], backend: Any) -> None:
    """Look for the environment tools the rule needs with one command; an environment skip names a missing one."""
    found = await backend.run(['sh', '-c', PROBE, 'sh', *tools])
    unmet = probe_verdict(tools, getattr(found, 'exit_code', None), getattr(found, 'stdout', None))
    if unmet is not None:
        raise RuleSkipped(rule, unmet.kind, unmet.why)


def _controls_the_run(error: BaseException) -> bool:
    """Whether `error` is cancellation, an interrupt, an exit or a pytest outcome, which must go on unwinding."""
    if isinstance(error, BaseExceptionGroup):
        return any(_controls_the_run(inner) for inner in error.exceptions)
    control = (anyio.get_cancelled_exc_class(), KeyboardInterrupt, SystemExit, GeneratorExit, *_OUTCOMES)
    return isinstance(error, control)


def _after(run: RuleRun) -> str:
    return f' (last backend call: {run.log.last})' if run.log.last else ''


async def wait_until(condition: Callable[[], Awaitable[bool]], base_seconds: float, what: str) -> None:
    """Poll `condition` until true; fail the rule saying `what` never happened within the scaled bound."""
    bound = current_run().seconds(base_seconds)
    with anyio.move_on_after(bound):
        while not await condition():
            await anyio.sleep(0.05)
        return
    raise AssertionError(f'{what} within {bound:g} s')

"""One run of a rule: its hang guard, its traced fixtures, and failures that quote the clause."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from ._tracing import OperationLog, traced, unwrap

if TYPE_CHECKING:
    from ._rules import Rule

__all__ = ('RuleFailure', 'RuleRun', 'current_run', 'guarded', 'safe_str')

SCALE_FIXTURE = 'conformance_time_scale'
_PASS_THROUGH = (pytest.skip.Exception, pytest.xfail.Exception, pytest.exit.Exception)
"""pytest outcomes a rule may raise on purpose; they are not the backend's failures."""
_CURRENT: ContextVar[RuleRun] = ContextVar('workspace_conformance_rule_run')


class RuleFailure(AssertionError):
    """A rule's verdict on a backend: the rule, the clause it checks, and what was observed."""


@dataclass
class RuleRun:
    """The rule being checked now, its time scale, and the backend operations it made."""

    rule: Rule
    scale: float
    log: OperationLog = field(default_factory=OperationLog)

    def seconds(self, base: float) -> float:
        """A wait of `base` seconds at time scale 1, scaled for slow providers."""
        return base * self.scale


def current_run() -> RuleRun:
    """The `RuleRun` of the rule whose body is executing; only valid inside a rule."""
    try:
        return _CURRENT.get()
    except LookupError:
        raise RuntimeError('this helper only works inside a conformance rule (a method decorated with @rule)') from None


def safe_str(error: BaseException) -> str:
    """`Type: message` for an exception, even one whose `__str__` raises, with its notes (Hypothesis's examples)."""
    try:
        text = str(error)
    except Exception:
        text = '<str() of this exception raised>'
    notes = getattr(error, '__notes__', None)
    if isinstance(notes, list) and notes:
        text = '\n'.join([text, *(str(note) for note in notes)])
    return f'{type(error).__name__}: {text}' if text else type(error).__name__


def _framed(rule: Rule, observed: str) -> str:
    return f'[{rule.qualified}] contract: "{rule.clause}"\nobserved: {observed}'


def _trace_factories(kwargs: dict[str, Any], log: OperationLog) -> None:
    """Put the rule's backends, and those its factories build, behind the tracing proxy."""
    if 'backend' in kwargs:
        kwargs['backend'] = traced(kwargs['backend'], log)
    for name in ('fresh_backend', 'destructive_backend', 'attach_backend'):
        factory = kwargs.get(name)
        if callable(factory):
            kwargs[name] = functools.wraps(factory)(lambda *a, _f=factory: traced(_f(*a), log))
    for name in ('destroy_environment', 'make_symlink'):
        receiver = kwargs.get(name)
        if callable(receiver):
            kwargs[name] = functools.wraps(receiver)(lambda backend, *a, _f=receiver: _f(unwrap(backend), *a))


def guarded(function: Callable[..., Coroutine[Any, Any, None]], rule: Rule) -> Callable[..., Coroutine[Any, Any, None]]:
    """`function` bounded by the rule's hang guard, with every failure framed by the rule and its clause."""
    signature = inspect.signature(function)
    asks_scale = SCALE_FIXTURE in signature.parameters
    parameters = list(signature.parameters.values())
    if not asks_scale:
        parameters.append(inspect.Parameter(SCALE_FIXTURE, inspect.Parameter.KEYWORD_ONLY))

    @functools.wraps(function)
    async def run_rule(*args: Any, **kwargs: Any) -> None:
        __tracebackhide__ = True
        scale = kwargs[SCALE_FIXTURE] if asks_scale else kwargs.pop(SCALE_FIXTURE)
        run = RuleRun(rule=rule, scale=float(scale))
        _trace_factories(kwargs, run.log)
        bound = run.seconds(rule.timeout)
        token = _CURRENT.set(run)
        scope = anyio.move_on_after(bound)
        try:
            with scope:
                await function(*args, **kwargs)
        except pytest.fail.Exception as failed:
            if scope.cancel_called:
                raise RuleFailure(_framed(rule, f'hung after {bound:g} s: {run.log.describe_pending()}')) from failed
            raise RuleFailure(_framed(rule, failed.msg or 'failed')) from None
        except _PASS_THROUGH:
            raise
        except RuleFailure:
            raise
        except AssertionError as failure:
            if scope.cancel_called:
                raise RuleFailure(_framed(rule, f'hung after {bound:g} s: {run.log.describe_pending()}')) from failure
            raise RuleFailure(_framed(rule, safe_str(failure).removeprefix('AssertionError: '))) from failure
        except Exception as error:
            if scope.cancel_called:
                raise RuleFailure(_framed(rule, f'hung after {bound:g} s: {run.log.describe_pending()}')) from error
            raise RuleFailure(_framed(rule, f'raised {safe_str(error)}{_after(run)}')) from error
        finally:
            _CURRENT.reset(token)
        if scope.cancel_called:
            raise RuleFailure(_framed(rule, f'hung after {bound:g} s: {run.log.describe_pending()}'))

    run_rule.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return run_rule


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

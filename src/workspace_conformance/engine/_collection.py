"""The pytest hooks that keep every rule in view: overridden rules as items, skips at their rule, skips as data.

- A rule whose method a subclass replaced, skipped or deleted gets an item of its own that skips as `overridden`,
  at the override's file and line, so `pytest -rs` and `--collect-only` show it.
- A rule's skip is reported at the rule's own file and line, not where the helper that raised it lives.
- A classified skip travels to the report as data (`user_properties`), never parsed back from its message.
- A rule's failure shows one traceback, without the suite's machinery frames (`--tb=long` or `-v` shows them).
"""

from __future__ import annotations

import contextlib
import types
import weakref
from collections.abc import Generator
from typing import Any

import pytest

from .._frames import hiding_machinery
from ..vocabulary import ACCOUNTING_PROPERTY, NOT_APPLICABLE_KINDS, OUTCOME_PROPERTY
from ._concurrency import ACCOUNTING, NotChecked
from ._failures import RuleFailure, clip
from ._requires import RuleSkipped
from ._rule import rule_of
from ._rules import Override, overridden_rules

__all__ = ('OverriddenRule', 'pytest_pycollect_makeitem', 'pytest_runtest_makereport')

OVERRIDDEN_SUFFIX = '[overridden]'


class OverriddenRule(pytest.Function):
    """The item of a rule a subclass overrode: it skips as `overridden`, located at the override."""

    override: Override

    def reportinfo(self) -> tuple[Any, int, str]:
        return self.override.path, self.override.line - 1, self.name


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> Generator[None, Any, Any]:
    """After what a suite class collects for a name its subclass overrode (nothing, if deleted): the overridden item."""
    result = yield
    klass = getattr(collector, 'cls', None)
    if not (isinstance(collector, pytest.Class) and isinstance(klass, type) and name.startswith('test_')):
        return result
    if not getattr(klass, '__conformance_suite__', False):
        return result
    override = _overrides_of(klass).get(name)
    if override is None:
        return result
    found = [] if result is None else list(result) if isinstance(result, list | tuple) else [result]
    return [*found, _item_for(collector, klass, override)]


_OVERRIDES: weakref.WeakKeyDictionary[type, dict[str, Override]] = weakref.WeakKeyDictionary()


def _overrides_of(klass: type) -> dict[str, Override]:
    """`test_<id>` -> the override, read once per class (collection asks for every name of the class)."""
    found = _OVERRIDES.get(klass)
    if found is None:
        found = _OVERRIDES[klass] = {f'test_{o.rule.id}': o for o in overridden_rules(klass)}
    return found


def _item_for(parent: pytest.Class, klass: type, override: Override) -> OverriddenRule:
    name = f'test_{override.rule.id}{OVERRIDDEN_SUFFIX}'

    def skip_overridden(self: object) -> None:
        raise RuleSkipped(override.rule, 'overridden', override.how)

    skip_overridden.__name__ = skip_overridden.__qualname__ = name
    bound = types.MethodType(skip_overridden, klass())
    item = OverriddenRule.from_parent(parent, name=name, callobj=bound, originalname=name)
    item.override = override
    return item


def escaped(value: Any) -> Any:
    """`value` with its lone surrogates (from undecodable file names) written as Python escapes, so it encodes."""
    if isinstance(value, str):
        try:
            value.encode('utf-8')
        except UnicodeEncodeError:
            return value.encode('utf-8', 'backslashreplace').decode('utf-8')
        return value
    if isinstance(value, tuple | list):
        return type(value)(escaped(part) for part in value)
    if isinstance(value, dict):
        return {escaped(key): escaped(part) for key, part in value.items()}
    return value


def _transportable(report: pytest.TestReport) -> None:
    """Escape what a report carries that UTF-8 cannot encode: xdist sends reports as UTF-8, and crashes on it."""
    if isinstance(report.longrepr, tuple):  # a skip's (path, line, reason)
        report.longrepr = escaped(report.longrepr)
    elif report.longrepr is not None:  # a failure's representation: replaced by its text only where that needs escaping
        text = str(report.longrepr)
        safe = escaped(text)
        if safe is not text:
            report.longrepr = safe
    report.sections = escaped(report.sections)
    report.user_properties = escaped(report.user_properties)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Attach a rule's failure, classified skip or missing result, and its cost, as data; report a skip at its rule.

    A rule's failure is shown without the suite's machinery frames, unless the user asked for them.
    """
    is_rule = rule_of(getattr(item, 'function', None)) is not None
    with hiding_machinery(item.config) if is_rule and call.when == 'call' else contextlib.nullcontext():
        report: pytest.TestReport = yield
    try:
        return _classified(item, call, report)
    finally:
        _transportable(report)


def _waived(item: pytest.Item) -> bool:
    """Whether the rule runs as an expected failure here (a waiver, a mutant of the gate): its failure stays one."""
    return item.get_closest_marker('xfail') is not None


def _as_advisory(item: pytest.Item, report: pytest.TestReport, failure: RuleFailure) -> None:
    """Report the failure of a rule that only advises here as a skip at its rule: `[area/rule] advisory: ...`.

    pytest counts it as skipped and `-rs` lists it; the report counts it apart as an advisory, never a pass.
    """
    meta = rule_of(getattr(item, 'function', None))
    name = meta.qualified if meta is not None else item.name
    path, line, _ = item.reportinfo()
    observed = failure.observed if failure.observed is not None else str(failure)
    report.outcome = 'skipped'
    report.longrepr = (str(path), (line or 0) + 1, f'Skipped: [{name}] advisory ({failure.advisory}): {observed}')


def _stale_waiver(item: pytest.Item, report: pytest.TestReport, skipped: RuleSkipped) -> pytest.TestReport:
    """A rule declared an expected failure that does not apply here: a stale waiver, failed like one that passes.

    A strict expected failure whose rule passes fails (XPASS); one whose rule is not applicable would otherwise skip,
    and the waiver would stay in the vendor's file for ever, hiding nothing but saying something false.
    """
    meta = rule_of(getattr(item, 'function', None))
    name = meta.qualified if meta is not None else item.name
    observed = (
        f'it is declared an expected failure, but it does not apply to this backend ({skipped.kind}: {skipped.why}): '
        'remove the stale waiver (expected_failures, or the --expected-failures file)'
    )
    report.outcome = 'failed'
    report.longrepr = f'[{name}] stale waiver: {observed}'
    report.user_properties.append(
        (OUTCOME_PROPERTY, {'failure': report.longrepr, 'observed': observed, 'stale_waiver': skipped.kind})
    )
    return report


def _classified(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> pytest.TestReport:
    """The report of `makereport`, with the rule's outcome, cost and skip attached as data."""
    raised = call.excinfo.value if call.excinfo is not None else None
    cost = item.stash.get(ACCOUNTING, None)
    if call.when == 'call' and cost is not None:
        report.user_properties.append((ACCOUNTING_PROPERTY, dict(cost)))
    if isinstance(raised, NotChecked):
        report.user_properties.append((OUTCOME_PROPERTY, {'missing': str(raised)}))
    if isinstance(raised, RuleFailure):
        failure: dict[str, object] = {'failure': clip(str(raised)), 'frames': list(raised.frames)}
        if raised.observed is not None:  # what was observed, apart from the rule and clause the message frames it with
            failure['observed'] = raised.observed
        if raised.loop_tie is not None:
            failure['loop_tie'] = raised.loop_tie
        if raised.raised_by is not None:
            failure['raised_by'] = raised.raised_by
        if raised.advisory is not None and report.failed and not _waived(item):
            failure['advisory'] = raised.advisory
            _as_advisory(item, report, raised)
        report.user_properties.append((OUTCOME_PROPERTY, failure))
    is_rule = rule_of(getattr(item, 'function', None)) is not None or isinstance(item, OverriddenRule)
    if is_rule and report.skipped and not isinstance(raised, RuleSkipped) and isinstance(raised, pytest.skip.Exception):
        # A skip no rule classified (a fixture's, a mark's): its reason still travels as data.
        report.user_properties.append((OUTCOME_PROPERTY, {'skip_kind': None, 'reason': str(raised.msg)}))
    if not isinstance(raised, RuleSkipped):
        return report
    if is_rule and report.skipped and raised.kind in NOT_APPLICABLE_KINDS and _waived(item):
        return _stale_waiver(item, report, raised)
    report.user_properties.append(
        (OUTCOME_PROPERTY, {'rule_id': raised.rule_id, 'skip_kind': raised.kind, 'reason': raised.why})
    )
    if is_rule and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        path, line, _ = item.reportinfo()
        report.longrepr = (str(path), (line or 0) + 1, f'Skipped: {raised.msg}')
    return report

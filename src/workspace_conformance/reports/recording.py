"""What a session recorded for one suite class, and how pytest's phase reports merge into one outcome."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast, get_args

import pytest

from ..vocabulary import ACCOUNTING_PROPERTY, OUTCOME_PROPERTY, Strength, user_property
from .model import RuleOutcome, RuleSummary, SkipKind, summarize

__all__ = ('CRASH_PROPERTY', 'SubjectResults', 'merge')

CRASH_PROPERTY = 'workspace_conformance_excerpt'
"""The crash line of a report whose traceback was cut or redacted (the traceback's own line is gone then)."""

_EXCERPT_CHARS = 800
_KINDS = frozenset(get_args(SkipKind))


@dataclass
class SubjectResults:
    """Everything recorded for one suite class: its rule catalog and each rule's outcome per anyio backend."""

    subject: str
    backend_class: str | None = None
    ref_provider: str | None = None
    declared_limits: dict[str, str] = field(default_factory=dict)
    expected_failures: dict[str, str] = field(default_factory=dict)
    summary: bool = True
    """Whether the terminal summary shows it; a suite class opts out with `conformance_summary = False`."""
    expected: dict[str, tuple[str, str, Strength]] = field(default_factory=dict)
    """Rule id -> area, level and strength of every rule of the suite class's catalog."""
    outcomes: dict[tuple[str, str], RuleOutcome] = field(default_factory=dict)
    started: set[str] = field(default_factory=set)
    """The anyio backends a rule started on, even if none finished (a run interrupted in its first rule)."""
    overridden: dict[str, dict[str, str]] = field(default_factory=dict)
    """Rule id -> area, level, clause and how the subclass overrode it; it is `overridden` on every anyio backend."""
    loops_left_out: dict[str, str] = field(default_factory=dict)
    """Event loop -> why certify left it out of the run (the suite class's `conformance_loops_left_out`)."""
    isolation_claims: list[str] | None = None
    """An isolation suite's `isolation_claims`, sorted; None for the other suites."""

    @property
    def anyio_backends(self) -> list[str]:
        return sorted(self.started | {backend for _, backend in self.outcomes})

    def complete_outcomes(self) -> list[RuleOutcome]:
        """Every recorded outcome, plus `missing` for each catalog rule with no result on a backend that ran."""
        filled = dict(self.outcomes)
        for rule_id, about in self.overridden.items():
            for backend in self.anyio_backends:
                filled[(rule_id, backend)] = RuleOutcome(
                    rule_id=rule_id,
                    area=about['area'],
                    level=about['level'],
                    strength=cast(Strength, about.get('strength', 'must')),
                    clause=about['clause'],
                    anyio_backend=backend,
                    outcome='skipped',
                    skip_kind='overridden',
                    reason=about['how'],
                )
        for rule_id, (area, level, strength) in self.expected.items():
            for backend in self.anyio_backends:
                filled.setdefault(
                    (rule_id, backend),
                    RuleOutcome(
                        rule_id=rule_id,
                        area=area,
                        level=level,
                        strength=strength,
                        clause='',
                        anyio_backend=backend,
                        outcome='missing',
                        reason='no result was recorded (not collected, or its run crashed)',
                    ),
                )
        return list(filled.values())

    def summaries(self) -> list[RuleSummary]:
        return summarize(self.complete_outcomes())


def merge(previous: RuleOutcome | None, report: pytest.TestReport, tag: dict[str, Any]) -> RuleOutcome | None:
    """Fold one phase's report (setup, call, teardown) into the rule's outcome so far."""
    rule = tag['rule']
    cost = user_property(report, ACCOUNTING_PROPERTY)
    cost = cost if isinstance(cost, dict) else {}
    # A rule checked in a batch ran within another item's call: its own seconds are what it cost.
    seconds = float(cost.get('seconds', report.duration))
    duration = (previous.duration if previous else 0.0) + seconds
    base: dict[str, Any] = {
        'rule_id': rule['id'],
        'area': rule['area'],
        'level': rule['level'],
        'strength': rule.get('strength', 'must'),
        'clause': rule['clause'],
        'anyio_backend': tag['anyio_backend'],
        'duration': duration,
        'calls': cost.get('calls', previous.calls if previous else None),
        'round_trips': cost.get('round_trips', previous.round_trips if previous else None),
        'grounds': [str(operation) for operation in rule.get('grounds', ())],
    }
    wasxfail = getattr(report, 'wasxfail', None)
    if report.when == 'teardown':
        if previous is None or not report.failed:
            return previous.model_copy(update={'duration': duration}) if previous else None
        if previous.outcome in ('failed', 'error'):
            return previous
        return RuleOutcome(
            **base, outcome='error', reason='teardown failed', excerpt=_excerpt(report), observed=_observed(report)
        )
    if report.passed:
        if report.when == 'setup':
            return None
        if wasxfail is not None:
            return RuleOutcome(**base, outcome='xpassed', reason=_waiver(tag, wasxfail))
        return RuleOutcome(**base, outcome='passed')
    classified = user_property(report, OUTCOME_PROPERTY)
    if report.failed and isinstance(classified, dict) and 'missing' in classified:
        return RuleOutcome(**base, outcome='missing', reason=str(classified['missing']))
    if report.failed:
        if report.when == 'setup':
            return RuleOutcome(**base, outcome='error', excerpt=_excerpt(report), observed=_observed(report))
        return RuleOutcome(
            **base,
            outcome='failed',
            excerpt=_excerpt(report),
            observed=_observed(report),
            frames=_frames(report),
            loop_tie=_text(classified, 'loop_tie'),
            raised_by=_text(classified, 'raised_by'),
        )
    if isinstance(classified, dict) and 'advisory' in classified:
        return RuleOutcome(
            **base,
            outcome='advisory',
            reason=str(classified['advisory']),
            excerpt=_excerpt(report),
            observed=_observed(report),
            frames=_frames(report),
            raised_by=_text(classified, 'raised_by'),
        )
    if wasxfail is not None:
        return RuleOutcome(
            **base,
            outcome='xfailed',
            reason=_waiver(tag, wasxfail),
            excerpt=_excerpt(report),
            observed=_observed(report),
        )
    if isinstance(classified, dict) and 'reason' in classified:
        kind = classified.get('skip_kind')
        skip_kind = cast(SkipKind, kind) if kind in _KINDS else 'unclassified'
        return RuleOutcome(**base, outcome='skipped', skip_kind=skip_kind, reason=str(classified['reason']))
    return RuleOutcome(**base, outcome='skipped', skip_kind='unclassified', reason=str(report.longrepr))


def _text(classified: object, key: str) -> str | None:
    """The string the rule's classified outcome holds under `key` (`loop_tie`, `raised_by`), else None."""
    value = classified.get(key) if isinstance(classified, dict) else None
    return value if isinstance(value, str) else None


def _waiver(tag: dict[str, Any], wasxfail: object) -> str:
    """The reason of a rule's expected failure: the waiver the suite declared, else what pytest recorded."""
    waiver = tag.get('expected_failures', {}).get(tag['rule']['id'])
    return str(waiver) if waiver is not None else str(wasxfail)


def _observed(report: pytest.TestReport) -> str | None:
    """What a failed rule observed, as the suite recorded it apart from the rule and clause (None when it did not)."""
    structured = user_property(report, OUTCOME_PROPERTY)
    observed = structured.get('observed') if isinstance(structured, dict) else None
    return observed if isinstance(observed, str) else None


def _frames(report: pytest.TestReport) -> list[str]:
    """The backend's own frames the suite recorded where the rule failed (as data, never read from a traceback)."""
    structured = user_property(report, OUTCOME_PROPERTY)
    frames = structured.get('frames') if isinstance(structured, dict) else None
    return [str(frame) for frame in frames] if isinstance(frames, list) else []


def _excerpt(report: pytest.TestReport) -> str | None:
    """The rule's own failure message (recorded as data by the suite), else what pytest's crash line says."""
    structured = user_property(report, OUTCOME_PROPERTY)
    if isinstance(structured, dict) and isinstance(structured.get('failure'), str):
        return str(structured['failure'])
    crash_line = user_property(report, CRASH_PROPERTY)
    if isinstance(crash_line, str):
        return crash_line
    crash = getattr(report.longrepr, 'reprcrash', None)
    text = (getattr(crash, 'message', None) or report.longreprtext or '').strip()
    return text[:_EXCERPT_CHARS] + ('...' if len(text) > _EXCERPT_CHARS else '') if text else None

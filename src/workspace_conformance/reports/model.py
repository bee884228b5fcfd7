"""The data of a conformance run as pydantic models, and the verdict computed from it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = (
    'GAP_KINDS',
    'Outcome',
    'RuleOutcome',
    'RuleStatus',
    'RuleSummary',
    'SkipKind',
    'Verdict',
    'summarize',
    'verdict_of',
)

Outcome = Literal['passed', 'failed', 'error', 'skipped', 'xfailed', 'xpassed', 'missing']
SkipKind = Literal['not-applicable', 'declared-limit', 'fixture-missing', 'environment', 'runner', 'unclassified']
RuleStatus = Literal['passed', 'failed', 'gap', 'not-applicable', 'missing']
Verdict = Literal['certified', 'partial', 'not certified']

GAP_KINDS = frozenset({'declared-limit', 'fixture-missing', 'environment', 'runner', 'unclassified'})
"""Skip kinds that leave a rule unchecked for this backend; `not-applicable` is outside its scope instead."""


class RuleOutcome(BaseModel):
    """What one rule did on one anyio backend."""

    model_config = ConfigDict(frozen=True)

    rule_id: str
    area: str
    level: str
    clause: str
    anyio_backend: str
    outcome: Outcome
    skip_kind: SkipKind | None = None
    reason: str | None = None
    duration: float = 0.0
    excerpt: str | None = None


class RuleSummary(BaseModel):
    """One rule's status over every anyio backend it ran on, the unit the verdict counts."""

    model_config = ConfigDict(frozen=True)

    rule_id: str
    area: str
    level: str
    status: RuleStatus
    detail: str | None = None
    """Why it is not a pass: the skip kind and reason, the failure excerpt, or what is missing."""


_SEVERITY: dict[RuleStatus, int] = {'passed': 0, 'not-applicable': 1, 'gap': 2, 'missing': 3, 'failed': 4}


def _status(outcome: RuleOutcome) -> tuple[RuleStatus, str | None]:
    where = f'on {outcome.anyio_backend}'
    if outcome.outcome == 'passed':
        return 'passed', None
    if outcome.outcome == 'missing':
        return 'missing', f'no result {where}'
    if outcome.outcome in ('failed', 'error', 'xpassed'):
        return 'failed', f'{outcome.outcome} {where}: {outcome.excerpt or outcome.reason or ""}'.rstrip(': ')
    if outcome.outcome == 'xfailed':
        return 'gap', f'expected failure {where}: {outcome.reason or ""}'
    if outcome.skip_kind == 'not-applicable':
        return 'not-applicable', outcome.reason
    return 'gap', f'{outcome.skip_kind or "unclassified"}: {outcome.reason or ""}'


def summarize(outcomes: Iterable[RuleOutcome]) -> list[RuleSummary]:
    """One summary per rule: the worst of its outcomes over the anyio backends (a failure anywhere fails it)."""
    worst: dict[str, tuple[RuleOutcome, RuleStatus, str | None]] = {}
    for outcome in outcomes:
        status, detail = _status(outcome)
        seen = worst.get(outcome.rule_id)
        if seen is None or _SEVERITY[status] > _SEVERITY[seen[1]]:
            worst[outcome.rule_id] = (outcome, status, detail)
    return [
        RuleSummary(rule_id=rule_id, area=outcome.area, level=outcome.level, status=status, detail=detail)
        for rule_id, (outcome, status, detail) in worst.items()
    ]


def verdict_of(summaries: Iterable[RuleSummary]) -> Verdict:
    """Certified when every applicable rule passed; partial when only extended rules are gaps; else not."""
    statuses = [(summary.level, summary.status) for summary in summaries]
    if not statuses:
        return 'not certified'
    if any(status in ('failed', 'missing') or (status == 'gap' and level == 'core') for level, status in statuses):
        return 'not certified'
    if any(status == 'gap' for _, status in statuses):
        return 'partial'
    return 'certified'

"""Counts of rule statuses, shared by every renderer so they all say the same numbers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ...vocabulary import RULE_STATUSES
from ..model import Report, RuleSummary

__all__ = ('STATUSES', 'counts', 'counts_of', 'gaps')

STATUSES = RULE_STATUSES


def counts_of(rules: Iterable[RuleSummary]) -> Counter[str]:
    """How many of `rules` have each status (every status present, zero when none has it)."""
    total: Counter[str] = Counter(dict.fromkeys(STATUSES, 0))
    total.update(rule.status for rule in rules)
    return total


def counts(report: Report) -> Counter[str]:
    """How many rules (over every suite) have each status."""
    return counts_of(rule for suite in report.suites for rule in suite.rules)


def gaps(report: Report) -> list[tuple[str, RuleSummary]]:
    """Every gap, with its suite, in catalog order."""
    return [(suite.subject, rule) for suite in report.suites for rule in suite.rules if rule.status == 'gap']

"""Counts of rule statuses, shared by every renderer so they all say the same numbers."""

from __future__ import annotations

from collections import Counter

from ...vocabulary import RULE_STATUSES
from ..model import Report, RuleSummary

__all__ = ('STATUSES', 'counts', 'gaps')

STATUSES = RULE_STATUSES


def counts(report: Report) -> Counter[str]:
    """How many rules (over every suite) have each status."""
    return Counter(rule.status for suite in report.suites for rule in suite.rules)


def gaps(report: Report) -> list[tuple[str, RuleSummary]]:
    """Every gap, with its suite, in catalog order."""
    return [(suite.subject, rule) for suite in report.suites for rule in suite.rules if rule.status == 'gap']

"""Compare two reports rule by rule: regressions, fixes, new rules, changed gaps."""

from __future__ import annotations

from dataclasses import dataclass, field

from .model import Report, RuleSummary

__all__ = ('ReportDiff', 'diff_reports')

_RANK = {'passed': 0, 'not-applicable': 0, 'gap': 1, 'missing': 2, 'failed': 2}


@dataclass
class ReportDiff:
    """What changed between two runs; a regression is any rule whose status got worse."""

    regressions: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    new_rules: list[str] = field(default_factory=list)
    removed_rules: list[str] = field(default_factory=list)
    changed_gaps: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        sections = (
            ('regression', self.regressions),
            ('fixed', self.fixes),
            ('new rule', self.new_rules),
            ('removed rule', self.removed_rules),
            ('gap changed', self.changed_gaps),
        )
        return [f'{label}: {entry}' for label, entries in sections for entry in entries]


def _rules(report: Report) -> dict[str, RuleSummary]:
    # One suite per certification run; with several, rules are told apart by suite.
    prefix = len(report.suites) > 1
    return {
        (f'{suite.subject}::' if prefix else '') + f'{rule.area}/{rule.rule_id}': rule
        for suite in report.suites
        for rule in suite.rules
    }


def diff_reports(old: Report, new: Report) -> ReportDiff:
    """The rule-by-rule difference from `old` to `new`."""
    before, after = _rules(old), _rules(new)
    result = ReportDiff()
    for key in sorted(after.keys() - before.keys()):
        result.new_rules.append(f'{key} ({after[key].status})')
    for key in sorted(before.keys() - after.keys()):
        result.removed_rules.append(f'{key} (was {before[key].status})')
    for key in sorted(before.keys() & after.keys()):
        was, now = before[key], after[key]
        if _RANK[now.status] > _RANK[was.status]:
            result.regressions.append(f'{key}: {was.status} -> {now.status}: {now.detail or ""}'.rstrip(': '))
        elif _RANK[now.status] < _RANK[was.status]:
            result.fixes.append(f'{key}: {was.status} -> {now.status}')
        elif now.status == 'gap' and now.detail != was.detail:
            result.changed_gaps.append(f'{key}: {was.detail} -> {now.detail}')
    return result

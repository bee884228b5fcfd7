"""A rule's evidence as the Markdown and HTML reports show it: its clause once, then what was observed, per loop.

The observed part comes from the structured outcome (`RuleOutcome.observed`, recorded apart from the rule and clause
that frame it), never from parsing the rendered message. Text is cut only at a word boundary, and the first line,
the observed sentence ("... expected exit 143"), is kept whole up to the cap; past the cap its start and its end are
kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model import Report, RuleOutcome, RuleSummary, SuiteReport

__all__ = (
    'ELLIPSIS',
    'STATUS_ORDER',
    'Finding',
    'clause_of',
    'evidence',
    'findings',
    'reason_of',
    'shorten',
)

ELLIPSIS = '…'
_SPACE = re.compile(r'\s')
_SLACK = 0.2
"""How far back (a fraction of the cap) a cut may move to reach a word boundary; past it, a long token is cut."""
_FAILED_OUTCOMES = ('failed', 'error', 'xpassed')
STATUS_ORDER = {'failed': 0, 'broken': 1, 'missing': 2, 'advisory': 3, 'gap': 4, 'not-applicable': 5, 'passed': 6}
"""The order reports list rules in: failures first, then the rules they broke, then advisories (never hidden among
the passes), passes last."""


@dataclass(frozen=True)
class Finding:
    """A failed, missing or advisory rule of a suite: the rule, its clause, a line per distinct observation."""

    subject: str
    rule: RuleSummary
    clause: str
    evidence: list[str]
    why: str = ''
    """Of an advisory: why the rule only advises the subject (`should: ...`, `not claimed: ...`)."""


def _head(text: str, limit: int) -> str:
    """The start of `text` up to `limit` characters, ending at a word boundary unless one word fills the window."""
    if len(text) <= limit:
        return text
    cut = max((match.start() for match in _SPACE.finditer(text, 0, limit + 1)), default=-1)
    if cut < limit * (1 - _SLACK):
        cut = limit
    return text[:cut].rstrip()


def _tail(text: str, limit: int) -> str:
    """The end of `text` up to `limit` characters, starting at a word boundary unless one word fills the window."""
    if len(text) <= limit:
        return text
    start = len(text) - limit
    found = _SPACE.search(text, start)
    cut = found.end() if found is not None and found.end() - start <= limit * _SLACK else start
    return text[cut:].lstrip()


def shorten(text: str, limit: int) -> str:
    """`text` when it fits in `limit` characters; else cut at a word boundary with an ellipsis, its first line whole.

    A first line longer than `limit` keeps its start and its end (where a rule states what it expected).
    """
    text = text.strip()
    if len(text) <= limit:
        return text
    first = text.split('\n', 1)[0]
    if len(first) <= limit:
        kept = _head(text, limit)
        if len(kept) < len(first):  # the cut fell inside the first line: keep the line, drop what follows
            kept = first
        return f'{kept.rstrip()} {ELLIPSIS}'
    end = limit // 3
    return f'{_head(first, limit - end)} {ELLIPSIS} {_tail(first, end)}'


def clause_of(suite: SuiteReport, rule_id: str) -> str:
    """The clause `rule_id` checks, as its outcomes recorded it ('' when no outcome did, e.g. a rule never run)."""
    return next((result.clause for result in suite.results if result.rule_id == rule_id and result.clause), '')


def _text(outcome: RuleOutcome) -> str:
    if outcome.outcome == 'xpassed':  # it passed: the evidence is the waiver it was expected to fail under
        return f'passed, though expected to fail: {outcome.reason or ""}'.rstrip(': ')
    return outcome.observed or outcome.excerpt or outcome.reason or ''


def evidence(suite: SuiteReport, rule: RuleSummary, limit: int) -> list[str]:
    """What `rule` did where it failed (or has no result), without its rule id or clause: one line per observation.

    An observation identical on several event loops is one line naming them all.
    """
    wanted = {'failed': _FAILED_OUTCOMES, 'missing': ('missing',), 'advisory': ('advisory',)}.get(rule.status, ())
    if not wanted:
        return [shorten(rule.detail, limit)] if rule.detail else []
    grouped: dict[tuple[str, str], list[str]] = {}
    for outcome in suite.results:
        if outcome.rule_id == rule.rule_id and outcome.outcome in wanted:
            grouped.setdefault((outcome.outcome, _text(outcome)), []).append(outcome.anyio_backend)
    if not grouped:  # a summary with no outcome behind it (a report edited by hand): its own detail
        return [shorten(rule.detail, limit)] if rule.detail else []
    lines = []
    for (outcome_name, text), loops in grouped.items():
        label = 'no result' if outcome_name == 'missing' else outcome_name
        lines.append(f'{label} on {", ".join(sorted(loops))}: {shorten(text, limit)}'.rstrip(': '))
    return lines


def reason_of(suite: SuiteReport, rule: RuleSummary) -> str:
    """Why an advisory only advises (its outcomes' reason, else its strength); '' for a rule of any other status."""
    if rule.status != 'advisory':
        return ''
    reasons = [r.reason for r in suite.results if r.rule_id == rule.rule_id and r.outcome == 'advisory' and r.reason]
    return reasons[0] if reasons else rule.strength


def findings(report: Report, limit: int, statuses: tuple[str, ...] = ('failed', 'missing')) -> list[Finding]:
    """Every failed rule, then every missing one (or those of `statuses`), each with its clause and evidence."""
    found = [
        Finding(
            suite.subject, rule, clause_of(suite, rule.rule_id), evidence(suite, rule, limit), reason_of(suite, rule)
        )
        for suite in report.suites
        for rule in suite.rules
        if rule.status in statuses
    ]
    return sorted(found, key=lambda finding: STATUS_ORDER[finding.rule.status])

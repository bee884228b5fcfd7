"""The report as Markdown, fit for a GitHub step summary or a pull-request comment."""

from __future__ import annotations

from ..model import Report
from ._counts import STATUSES, counts, gaps
from ._evidence import findings, shorten

__all__ = ('EVIDENCE_CHARS', 'render_markdown')

_ICON = {'certified': '✅', 'partial': '🟡', 'not certified': '❌'}
EVIDENCE_CHARS = 1000
"""Characters of one observation a cell shows at most, cut at a word boundary with its first sentence whole."""


def _cell(text: str) -> str:
    """`text` safe in one table cell: pipes and angle brackets escaped, its lines joined with `<br>`."""
    escaped = text.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;').replace('|', '\\|')
    return '<br>'.join(line.strip() for line in escaped.splitlines() if line.strip())


def render_markdown(report: Report) -> str:
    """Verdict, counts, failures with their clause and what was observed, advisories, gaps, then each suite."""
    total = counts(report)
    lines = [
        f'# Workspace conformance: {_ICON[report.verdict]} {report.verdict}',
        '',
        ' · '.join(f'**{total[status]}** {status}' for status in STATUSES),
    ]
    if not report.complete:
        lines += ['', '> **Incomplete run**: interrupted, or some rules have no result. It cannot certify.']
    limit = EVIDENCE_CHARS
    named = len(report.suites) > 1  # with several suites, a rule is told apart by its suite

    def rule_cell(subject: str, area: str, rule_id: str) -> str:
        return f'`{subject}::{area}/{rule_id}`' if named else f'`{area}/{rule_id}`'

    listed_failures = findings(report, limit)
    if listed_failures:
        lines += [
            '',
            '## Failures',
            '',
            '| rule | level | strength | clause | observed |',
            '| --- | --- | --- | --- | --- |',
        ]
        lines += [
            f'| {rule_cell(f.subject, f.rule.area, f.rule.rule_id)} | {f.rule.level} | {f.rule.strength} | '
            f'{_cell(f.clause)} | {"<br>".join(_cell(line) for line in f.evidence)} |'
            for f in listed_failures
        ]
    broken = findings(report, limit, ('broken',))
    if broken:
        lines += [
            '',
            '## Broken',
            '',
            'Rules that ended on an error of a backend operation a failure above already shows: each names that '
            'failure. Fix it and run again; a broken rule is never a pass.',
            '',
            '| rule | broken by | observed |',
            '| --- | --- | --- |',
        ]
        lines += [
            f'| {rule_cell(f.subject, f.rule.area, f.rule.rule_id)} | `{f.rule.broken_by}` | '
            f'{"<br>".join(_cell(line) for line in f.evidence)} |'
            for f in broken
        ]
    advised = findings(report, limit, ('advisory',))
    if advised:
        lines += [
            '',
            '## Advisories',
            '',
            'Rules that do not bind here (`should`, or a claim not made): counted apart, never a failure nor a pass.',
            '',
            '| rule | level | strength | why | clause | observed |',
            '| --- | --- | --- | --- | --- | --- |',
        ]
        lines += [
            f'| {rule_cell(f.subject, f.rule.area, f.rule.rule_id)} | {f.rule.level} | {f.rule.strength} | '
            f'{_cell(f.why)} | {_cell(f.clause)} | {"<br>".join(_cell(line) for line in f.evidence)} |'
            for f in advised
        ]
    listed_gaps = gaps(report)
    if listed_gaps:
        lines += [
            '',
            '## Gaps',
            '',
            '| rule | level | strength | kind and reason |',
            '| --- | --- | --- | --- |',
        ]
        lines += [
            f'| {rule_cell(subject, r.area, r.rule_id)} | {r.level} | {r.strength} | '
            f'{_cell(shorten(r.detail or "", limit))} |'
            for subject, r in listed_gaps
        ]
    for suite in report.suites:
        lines += [
            '',
            f'## {suite.subject}: {suite.verdict}',
            '',
            f'Backend `{suite.backend_class or "unknown"}` (ref provider `{suite.ref_provider or "none"}`), '
            f'on {", ".join(suite.anyio_backends)}.',
            *(['', f'Isolation: {suite.isolation.summary}.'] if suite.isolation is not None else []),
            '',
            '| area | level | ' + ' | '.join(STATUSES) + ' |',
            '| --- | --- |' + ' --- |' * len(STATUSES),
        ]
        rows: dict[tuple[str, str], dict[str, int]] = {}
        for rule in suite.rules:
            rows.setdefault((rule.area, rule.level), dict.fromkeys(STATUSES, 0))[rule.status] += 1
        lines += [
            f'| {area} | {level} | ' + ' | '.join(str(row[status]) for status in STATUSES) + ' |'
            for (area, level), row in sorted(rows.items())
        ]
    lines += [
        '',
        f'<sub>workspace-conformance {report.toolkit_version} · pydantic-ai {report.pydantic_ai_version} · '
        f'Python {report.python} · profile {report.hypothesis_profile} · {report.started} to {report.finished}</sub>',
    ]
    return '\n'.join(lines) + '\n'

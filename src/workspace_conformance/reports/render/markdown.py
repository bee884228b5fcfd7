"""The report as Markdown, fit for a GitHub step summary or a pull-request comment."""

from __future__ import annotations

from ..model import Report
from ._counts import STATUSES, counts, failures, gaps

__all__ = ('render_markdown',)

_ICON = {'certified': '✅', 'partial': '🟡', 'not certified': '❌'}


def _cell(text: str | None) -> str:
    return (text or '').replace('|', '\\|').replace('\n', ' ')[:300]


def render_markdown(report: Report) -> str:
    """Verdict, counts, gaps with their reasons, failures with their evidence, and the environment."""
    total = counts(report)
    lines = [
        f'# Workspace conformance: {_ICON[report.verdict]} {report.verdict}',
        '',
        ' · '.join(f'**{total[status]}** {status}' for status in STATUSES),
    ]
    if not report.complete:
        lines += ['', '> **Incomplete run**: interrupted, or some rules have no result. It cannot certify.']
    for suite in report.suites:
        lines += [
            '',
            f'## {suite.subject}: {suite.verdict}',
            '',
            f'Backend `{suite.backend_class or "unknown"}` (ref provider `{suite.ref_provider or "none"}`), '
            f'on {", ".join(suite.anyio_backends)}.',
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
    listed_gaps = gaps(report)
    if listed_gaps:
        lines += ['', '## Gaps', '', '| rule | level | kind and reason |', '| --- | --- | --- |']
        lines += [f'| `{r.area}/{r.rule_id}` | {r.level} | {_cell(r.detail)} |' for _, r in listed_gaps]
    listed_failures = failures(report)
    if listed_failures:
        lines += ['', '## Failures', '', '| rule | level | evidence |', '| --- | --- | --- |']
        lines += [f'| `{r.area}/{r.rule_id}` | {r.level} | {_cell(r.detail)} |' for _, r in listed_failures]
    lines += [
        '',
        f'<sub>workspace-conformance {report.toolkit_version} · pydantic-ai {report.pydantic_ai_version} · '
        f'Python {report.python} · profile {report.hypothesis_profile} · {report.started} to {report.finished}</sub>',
    ]
    return '\n'.join(lines) + '\n'

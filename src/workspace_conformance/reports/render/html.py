"""The report as one self-contained HTML page (Jinja2; no external assets), filterable by status, area, strength.

An advisory is its own status (`#status=advisory`), listed after the failures; a broken rule (`#status=broken`) comes
right after them, its row naming the failure it echoes.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import jinja2

from ...vocabulary import STRENGTHS
from ..model import Report, RuleSummary
from ._counts import STATUSES, counts
from ._evidence import STATUS_ORDER, clause_of, evidence, reason_of

__all__ = ('render_html',)

_ENVIRONMENT = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
_EVIDENCE_CHARS = 4000
"""Characters of one observation a row shows at most (the suite keeps 4,000 of a failure's observation)."""


@dataclass(frozen=True)
class _Row:
    rule: RuleSummary
    clause: str
    evidence: str
    why: str
    """Of an advisory: why its rule only advises the subject ('' for any other status)."""


def render_html(report: Report) -> str:
    """The verdict, the counts, and every rule (failures, then advisories, first): strength, clause, observation."""
    source = resources.files(__package__).joinpath('report.html.j2').read_text()
    template = _ENVIRONMENT.from_string(source)
    areas = sorted({rule.area for suite in report.suites for rule in suite.rules})
    rows = [
        _Row(
            rule,
            clause_of(suite, rule.rule_id),
            '\n'.join(evidence(suite, rule, _EVIDENCE_CHARS)),
            reason_of(suite, rule),
        )
        for suite in report.suites
        for rule in suite.rules
    ]
    rows.sort(key=lambda row: STATUS_ORDER[row.rule.status])  # stable: catalog order within a status
    return template.render(
        report=report, counts=counts(report), statuses=STATUSES, strengths=STRENGTHS, areas=areas, rows=rows
    )

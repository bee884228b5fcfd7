"""The report as one self-contained HTML page (Jinja2; no external assets), filterable by outcome, area, level."""

from __future__ import annotations

from importlib import resources

import jinja2

from ..model import Report
from ._counts import STATUSES, counts

__all__ = ('render_html',)

_ENVIRONMENT = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


def render_html(report: Report) -> str:
    """The verdict, the counts, and a table of every rule with its clause and evidence."""
    source = resources.files(__package__).joinpath('report.html.j2').read_text()
    template = _ENVIRONMENT.from_string(source)
    areas = sorted({rule.area for suite in report.suites for rule in suite.rules})
    clauses = {r.rule_id: r.clause for suite in report.suites for r in suite.results if r.clause}
    return template.render(report=report, counts=counts(report), statuses=STATUSES, areas=areas, clauses=clauses)

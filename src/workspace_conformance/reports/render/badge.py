"""A badge of the verdict: an SVG file, and the JSON a shields.io endpoint badge reads."""

from __future__ import annotations

import json
from html import escape

from ..model import Report
from ._counts import counts

__all__ = ('badge_json', 'badge_svg')

_COLOR = {'certified': '#2ea44f', 'partial': '#dbab09', 'not certified': '#cb2431'}
_LABEL = 'workspace conformance'


def _message(report: Report) -> str:
    """`verdict (passed/applicable)`; advisories are out of the fraction (never a failure) and counted after it.

    Broken rules stay in the fraction (never a pass) and are counted after it too: `(40/140, 90 broken)`.
    """
    total = counts(report)
    applicable = sum(total.values()) - total['not-applicable'] - total['advisory']
    advised, broken = total['advisory'], total['broken']
    apart = f', {broken} broken' if broken else ''
    apart += f', {advised} {"advisory" if advised == 1 else "advisories"}' if advised else ''
    return f'{report.verdict} ({total["passed"]}/{applicable}{apart})'


def badge_json(report: Report) -> str:
    """The shields.io endpoint format (`schemaVersion` 1)."""
    color = {'certified': 'success', 'partial': 'yellow', 'not certified': 'critical'}[report.verdict]
    return json.dumps({'schemaVersion': 1, 'label': _LABEL, 'message': _message(report), 'color': color}) + '\n'


def badge_svg(report: Report) -> str:
    """A flat badge: the label on grey; the verdict, passed/applicable rules and advisories on the verdict's colour."""
    message = _message(report)
    left, right = 7 * len(_LABEL) + 10, 7 * len(message) + 10
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + right}" height="20" role="img" '
        f'aria-label="{escape(_LABEL)}: {escape(message)}"><title>{escape(_LABEL)}: {escape(message)}</title>'
        f'<rect width="{left}" height="20" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{_COLOR[report.verdict]}"/>'
        '<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="5" y="14">{escape(_LABEL)}</text><text x="{left + 5}" y="14">{escape(message)}</text></g></svg>\n'
    )

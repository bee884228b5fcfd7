"""Write a report in every format into a directory: json, md, html, junit, badge (svg and json)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .model import Report
from .render import badge_json, badge_svg, render_html, render_junit, render_markdown

__all__ = ('FILES', 'render', 'write_all')


def _json(report: Report) -> str:
    return report.model_dump_json(indent=2) + '\n'


FILES: dict[str, Callable[[Report], str]] = {
    'report.json': _json,
    'report.md': render_markdown,
    'report.html': render_html,
    'junit.xml': render_junit,
    'badge.svg': badge_svg,
    'badge.json': badge_json,
}
FORMATS = {
    'json': 'report.json',
    'md': 'report.md',
    'html': 'report.html',
    'junit': 'junit.xml',
    'badge': 'badge.svg',
    'badge-json': 'badge.json',
}


def render(report: Report, fmt: str) -> str:
    """The report in one format (`json`, `md`, `html`, `junit`, `badge`, `badge-json`)."""
    return FILES[FORMATS[fmt]](report)


def write_all(report: Report, directory: Path) -> list[Path]:
    """Write every format; returns the files written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, renderer in FILES.items():
        path = directory / name
        path.write_text(renderer(report))
        written.append(path)
    return written

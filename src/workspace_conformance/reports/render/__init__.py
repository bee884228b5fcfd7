"""Renderers of a `Report`: Markdown, self-contained HTML, JUnit XML, and a badge (SVG and shields JSON)."""

from .badge import badge_json, badge_svg
from .html import render_html
from .junit import render_junit
from .markdown import render_markdown

__all__ = ('badge_json', 'badge_svg', 'render_html', 'render_junit', 'render_markdown')

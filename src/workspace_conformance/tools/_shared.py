"""Helpers more than one tool area uses: findings listed for a failure message."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ('listed',)


def listed(findings: Sequence[str], limit: int = 8) -> str:
    """Findings one per line, the first `limit` of them."""
    more = f'\n  ... and {len(findings) - limit} more' if len(findings) > limit else ''
    return ''.join(f'\n  {finding}' for finding in findings[:limit]) + more

"""Helpers more than one tool area uses: sweeping every workspace, and findings listed for a failure message."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic_ai.capabilities import AbstractCapability

from ..authoring import skip
from ._support import Recorded, ToolCalls, ToolRuns, ToolWorkspace

__all__ = ('listed', 'sweep_all')


async def sweep_all(
    tool_runs: ToolRuns,
    capability: AbstractCapability[Any],
    deps: object,
    workspaces: Iterable[ToolWorkspace],
    tool_calls: ToolCalls,
    *,
    require_calls: bool = True,
    **options: Any,
) -> list[Recorded]:
    """One recorded sweep per workspace; a not-applicable skip when no workspace offered a tool (`require_calls`)."""
    swept = [await tool_runs.sweep(capability, deps, where, tool_calls, **options) for where in workspaces]
    if require_calls and not any(recorded.calls for recorded in swept):
        names = ', '.join(recorded.workspace.name for recorded in swept) or 'none'
        skip('not-applicable', f'the capability offers no tools to call in these workspaces ({names})')
    return swept


def listed(findings: Sequence[str], limit: int = 8) -> str:
    """Findings one per line, the first `limit` of them."""
    more = f'\n  ... and {len(findings) - limit} more' if len(findings) > limit else ''
    return ''.join(f'\n  {finding}' for finding in findings[:limit]) + more

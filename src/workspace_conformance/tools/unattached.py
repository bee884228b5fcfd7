"""Rules on runs with no workspace attached: the tools say what to attach and never fall back to the host's cwd."""

from __future__ import annotations

from ..authoring import rule, skip
from ._shared import listed
from ._sweeps import ToolSweeps, call_unattached

__all__ = ('UnattachedRules',)


class UnattachedRules:
    """Rules on tools in runs without a workspace."""

    @rule(area='unattached', alone=True, must='T03')
    async def test_fails_at_start_or_reports(self, sweeps: ToolSweeps) -> None:
        """Without a workspace a run fails at start naming what to attach, or tools report it; never the host cwd."""
        swept = await sweeps.sweep_all()
        calls = {call.tool: call.arguments for recorded in swept for call in recorded.calls}
        tools = {tool.name: tool for recorded in swept for tool in recorded.tools}
        if not calls:
            skip('not-applicable', 'the capability offers no tools to call')
        found: list[str] = []
        for name, arguments in calls.items():
            call, changed = await call_unattached(
                sweeps.capability, sweeps.deps, tools[name], arguments, sweeps.runs.base
            )
            if call.attached:
                skip('not-applicable', 'the capability supplies a workspace of its own: its runs always have one')
            found += [f'{call}: {event}' for event in call.host]
            found += [f'{call}: {path} changed' for path in changed]
            if call.outcome == 'success':
                found.append(f'{call}: the tool worked with no workspace attached ({call.content[:120]})')
            elif not call.executed and 'workspace' not in call.content.lower():
                found.append(f'{call}: the run failed without naming a workspace to attach: {call.content[:200]}')
        assert not found, f'tools with no workspace attached did not fail cleanly:{listed(found)}'

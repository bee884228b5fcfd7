"""Rules on runs continued from a ref in their history: the tools act in that ref's environment."""

from __future__ import annotations

from ..authoring import rule, skip
from ._discovery import is_read_tool, path_parameter
from ._sweeps import ToolSweeps, continued_in_history_ref

__all__ = ('RefRules',)


class RefRules:
    """Rules on tools in runs continued from history."""

    @rule(area='refs', alone=True, must='T04')
    async def test_tools_act_in_the_history_ref(self, sweeps: ToolSweeps) -> None:
        """In a run continued from a ref in its message history, the tools act in the environment that ref names."""
        swept = await sweeps.sweep_all()
        readers = [
            (tool, parameter)
            for tool in {tool.name: tool for recorded in swept for tool in recorded.tools}.values()
            if is_read_tool(tool) and (parameter := path_parameter(tool)) is not None
        ]
        if not readers:
            skip('not-applicable', 'the capability offers no read tool taking a file path')
        tool, parameter = readers[0]
        token, call = await continued_in_history_ref(sweeps.capability, sweeps.deps, tool, parameter, sweeps.runs.base)
        assert call.outcome == 'success' and token in call.content, (
            f'a run continued from the ref of the run that wrote {call.arguments[parameter]!r} called {call}, which '
            f'did not read it there: {call.content[:300]!r}'
        )

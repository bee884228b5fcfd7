"""Rules on huge results: a tool returns a bounded result that says it is partial, never a silent cut."""

from __future__ import annotations

import re

from ..authoring import rule, skip
from ._discovery import is_read_tool, path_parameter
from ._fit import needs_commands
from ._shared import listed
from ._sweeps import ToolSweeps
from ._workspaces import HUGE_LINES

__all__ = ('BoundRules',)

_PARTIAL = re.compile(
    r'truncat|omitted|more lines|offset=|showing|partial|remaining|elided|\d+ (?:more|lines|chars)', re.I
)
_LINE = re.compile(r'L(\d{6});')
_BOUND = 1_000_000
"""A result this long (characters) or longer is not bounded: the huge file is about 1 MB."""


class BoundRules:
    """Rules on reads of huge files and commands with huge output."""

    @rule(area='bounds', alone=True, claim='bounded')
    async def test_huge_output_is_bounded_and_marked(self, sweeps: ToolSweeps) -> None:
        """A read of a huge file, or a command with huge output, returns a bounded result that says it is partial."""
        where = sweeps.workspaces[0]
        probe = await sweeps.sweep(where)
        chosen = [
            tool.name
            for tool in probe.tools
            if (is_read_tool(tool) and path_parameter(tool) is not None) or needs_commands(tool)
        ]
        if not chosen:
            skip('not-applicable', 'the capability offers no tool that reads a file or runs a command')
        huge = 'huge.txt'
        recorded = await sweeps.sweep(where, {}, tools=chosen, seed=huge)
        found: list[str] = []
        returned = [call for call in recorded.calls if call.outcome == 'success' and _LINE.search(call.content)]
        if not returned:
            skip('not-applicable', f'no tool returned any of {huge} (read tools taking a path, command tools)')
        for call in returned:
            lines = {int(number) for number in _LINE.findall(call.content)}
            complete = len(lines) == HUGE_LINES
            if len(call.content) >= _BOUND:
                found.append(f'{call}: returned {len(call.content)} characters, unbounded')
            elif not complete and not _PARTIAL.search(call.content.replace(huge, '')):
                found.append(
                    f'{call}: returned {len(lines)} of {HUGE_LINES} lines and does not say it is partial '
                    f'(ends {call.content[-120:]!r})'
                )
        assert not found, f'huge results were cut silently or not bounded:{listed(found)}'

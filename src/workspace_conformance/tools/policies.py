"""Rules on the policies a workspace carries, as tools meet them: read-only refusals, reads that never write."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from pydantic_ai.workspaces import ReadOnlyWorkspace

from ..authoring import rule, safe_str, skip
from ._discovery import discover_tools, is_read_tool
from ._fit import commanding, described, unfit
from ._shared import listed
from ._sweeps import Recorded, ToolSweeps
from ._workspaces import ToolWorkspace

__all__ = ('PolicyRules',)

_SUCCESS = 'success'


def _read_only_targets(workspaces: Sequence[ToolWorkspace]) -> list[ToolWorkspace]:
    """The first workspace and every one not backed by host disk: read-only is checked there (cost bounded)."""
    return [*workspaces[:1], *(where for where in workspaces[1:] if not where.host_backed)]


def _reads(recorded: Recorded) -> set[str]:
    return {tool.name for tool in recorded.tools if is_read_tool(tool)}


@contextmanager
def _said() -> Iterator[list[str]]:
    """What the block warned or logged at WARNING or above."""
    heard: list[str] = []

    class Heard(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            heard.append(record.getMessage())

    handler = Heard(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            yield heard
        heard.extend(str(warning.message) for warning in caught)
    finally:
        root.removeHandler(handler)


class PolicyRules:
    """Rules on read-only workspaces and read tools."""

    @rule(area='policies', alone=True, must='T02')
    async def test_read_only_changes_nothing(self, sweeps: ToolSweeps) -> None:
        """In a read-only workspace, write tools are left out or refused, and no byte of the tree changes."""
        targets = _read_only_targets(sweeps.workspaces)
        await sweeps.sweep_all(targets)  # not applicable without any tool
        found: list[str] = []
        swept = await sweeps.sweep_all(targets, read_only=True, require_calls=False)
        for recorded in swept:
            found += [f'{call} changed {", ".join(call.changed)}' for call in recorded.calls if call.changed]
            found += [f'{call}: {event}' for call in recorded.calls for event in call.host if event.kind == 'write']
        assert not found, f'tool calls changed a read-only workspace:{listed(found)}'

    @rule(area='policies', alone=True)
    async def test_reads_work_read_only(self, sweeps: ToolSweeps) -> None:
        """Every read tool gives the same outcome in a read-only workspace as in the writable one."""
        targets = _read_only_targets(sweeps.workspaces)
        writable = await sweeps.sweep_all(targets)
        if not any(_reads(recorded) for recorded in writable):
            skip('not-applicable', 'the capability offers no read tool (by kind or name: read, list, search, ...)')
        read_only = await sweeps.sweep_all(targets, read_only=True, require_calls=False)
        commanders = commanding(writable)
        found: list[str] = []
        unfitting: list[str] = []
        for open_one, closed in zip(writable, read_only, strict=True):
            outcomes = {call.tool: call for call in closed.calls}
            for call in open_one.calls:
                if call.tool not in _reads(open_one):
                    continue
                other = outcomes.get(call.tool)
                why = 'read-only' if other is None and call.tool in commanders else None
                why = why if other is None else unfit(other, closed, commanders)
                if why is not None:  # commands are refused read-only: a command tool may refuse, or leave itself out
                    unfitting.append(f'{other or call.tool}: {described(why)}')
                elif other is None:
                    found.append(f'{call}, but read-only left the tool out')
                elif other.outcome != call.outcome:
                    found.append(f'{call}, but read-only: {other.outcome} ({other.content[:160]})')
        not_compared = f'\n  (not compared where a tool did not fit:{listed(unfitting, 4)})' if unfitting else ''
        assert not found, f'read tools behave differently in a read-only workspace:{listed(found)}{not_compared}'

    @rule(area='policies', alone=True)
    async def test_reads_never_write(self, sweeps: ToolSweeps) -> None:
        """A read tool leaves the workspace's tree unchanged, on a writable workspace too."""
        swept = await sweeps.sweep_all()
        if not any(_reads(recorded) for recorded in swept):
            skip('not-applicable', 'the capability offers no read tool (by kind or name: read, list, search, ...)')
        found = [
            f'{call} changed {", ".join(call.changed)}'
            for recorded in swept
            for call in recorded.calls
            if call.tool in _reads(recorded) and call.changed
        ]
        assert not found, f'read tools changed the workspace:{listed(found)}'

    @rule(area='policies', level='extended', alone=True)
    async def test_no_silent_empty_toolset(self, sweeps: ToolSweeps) -> None:
        """A capability offering no tools in some workspace says so at run start (warning, log record or error)."""
        swept = await sweeps.sweep_all()
        empty = [recorded for recorded in swept if not recorded.tools]
        read_only = await sweeps.sweep(sweeps.workspaces[0], read_only=True)
        silent: list[str] = []
        for recorded in [*empty, *([read_only] if not read_only.tools else [])]:
            workspace = recorded.workspace.build(recorded.root)
            shown = ReadOnlyWorkspace(workspace) if recorded.read_only else workspace
            try:
                with _said() as heard:
                    await discover_tools(sweeps.capability, shown, sweeps.deps)
            except Exception as error:
                if not safe_str(error):
                    silent.append(f'{_named(recorded)}: the run failed with an empty error')
                continue
            if not heard:
                silent.append(f'{_named(recorded)}: no tools, and no warning, log record or error says so')
        if not silent and not empty and read_only.tools:
            skip('not-applicable', 'the capability offers tools in every workspace')
        assert not silent, f'the capability offered no tools without saying so:{listed(silent)}'


def _named(recorded: Recorded) -> str:
    return f'{recorded.workspace.name}{" (read-only)" if recorded.read_only else ""}'

"""Rules comparing workspaces: the same scripted calls give the same observable results in each of them."""

from __future__ import annotations

import re

from ..authoring import rule, skip
from ._calls import CallRecord
from ._fit import commanding, described, lacks, unfit
from ._shared import listed
from ._sweeps import Recorded, ToolSweeps

__all__ = ('DifferentialRules',)

_COMPARED_EXACTLY = 'success'
_IDS = re.compile(r'\b[0-9a-f]{16,}\b')
"""Random ids (a background command's, say): each run draws its own."""
_PIDS = re.compile(r'(?i)(\bpid"?:? ?|kill -- -)\d+')
"""Process ids, which differ from run to run."""


def _normal(text: str, recorded: Recorded) -> str:
    """`text` with the working dir (and its host path) as `<wd>` and the workspace's token as `<token>`."""
    for root in sorted({recorded.working_dir, str(recorded.root), str(recorded.root.resolve())}, key=len, reverse=True):
        text = text.replace(root, '<wd>')
    text = _IDS.sub('<id>', text.replace(recorded.seeds.token, '<token>'))
    return _PIDS.sub(r'\1<pid>', text)


def _changed(call: CallRecord, recorded: Recorded) -> tuple[str, ...]:
    """The files the call was about that it changed: those named with the workspace's token.

    A tool's own state (a background job finishing its status file during a later call, say) is left out.
    """
    named = (_normal(path, recorded).removeprefix('<wd>/') for path in call.changed)
    return tuple(sorted(path for path in named if '<token>' in path))


def _seen(call: CallRecord, recorded: Recorded) -> tuple[str, str, tuple[str, ...]]:
    """What is compared: the outcome, a success's normalized return, and the files the call changed."""
    content = _normal(call.content, recorded) if call.outcome == _COMPARED_EXACTLY else ''
    return call.outcome, content, _changed(call, recorded)


class DifferentialRules:
    """Rules on tools giving the same results in every workspace that has what they need."""

    @rule(area='differential', alone=True)
    async def test_same_results_everywhere(self, sweeps: ToolSweeps) -> None:
        """The same scripted calls give the same outcomes, returns and changed files in every workspace they fit."""
        if len(sweeps.workspaces) < 2:
            skip('not-applicable', 'the `workspaces` fixture holds one workspace: nothing to compare')
        swept = await sweeps.sweep_all()
        swept = [recorded for recorded in swept if recorded.error is None]  # a run refused at start said why
        commanders = commanding(swept)
        first_seen: dict[tuple[str, int], tuple[Recorded, CallRecord]] = {}
        found: list[str] = []
        unfitting: list[str] = []
        offered = {recorded.workspace.name: {tool.name for tool in recorded.tools} for recorded in swept}
        for recorded in swept:
            nth: dict[str, int] = {}
            for call in recorded.calls:
                key = (call.tool, nth.setdefault(call.tool, 0))
                nth[call.tool] += 1
                why = unfit(call, recorded, commanders)
                if why is not None:
                    unfitting.append(f'{call}: {described(why)}')
                    continue
                if key not in first_seen:
                    first_seen[key] = (recorded, call)
                    continue
                other, earlier = first_seen[key]
                if _seen(call, recorded) != _seen(earlier, other):
                    before = f'{_normal(earlier.content, other)[:200]!r} changed {_changed(earlier, other)}'
                    now = f'{_normal(call.content, recorded)[:200]!r} changed {_changed(call, recorded)}'
                    found.append(f'{earlier}: {before}\n    but {call}: {now}')
        for recorded in swept:
            for tool in {tool.name: tool for other in swept for tool in other.tools}.values():
                if tool.name in offered[recorded.workspace.name]:
                    continue
                if tool.name in commanders and lacks(recorded) is not None:
                    unfitting.append(f'{tool.name} left out on {recorded.workspace.name}: it runs commands')
                    continue
                found.append(f'{tool.name} is offered elsewhere but not on {recorded.workspace.name}')
        compared = {name for (name, _), (recorded, _) in first_seen.items()}
        comparable = [name for name in compared if sum(name in names for names in offered.values()) > 1]
        if not comparable and not found:
            where = f'; where tools did not fit:{listed(unfitting)}' if unfitting else ''
            skip('not-applicable', f'no tool is offered and fits in two workspaces{where}')
        not_compared = f'\n  (not compared where a tool did not fit:{listed(unfitting, 4)})' if unfitting else ''
        assert not found, f'tools gave different results in different workspaces:{listed(found)}{not_compared}'

"""Sweeps, what tool rules stand on: each tool called in each workspace (once per class), and runs without one."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.workspaces import ReadOnlyWorkspace

from ..authoring import HostEvent, machinery_hidden, safe_str, skip, watching_host
from ._calls import CallRecord, call_tool, scripted_model
from ._discovery import derive_arguments, discover_tools
from ._host_audit import decoy_host, host_tree, memory_tree, tree_diff
from ._workspaces import Seeds, ToolWorkspace, huge_text, seed_host, seed_workspace

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = ('Recorded', 'ToolCalls', 'ToolRuns', 'ToolSweeps', 'call_unattached', 'continued_in_history_ref')

ToolCalls = Mapping[str, Mapping[str, Any] | Sequence[Mapping[str, Any]]]
"""Example arguments per tool name: one mapping or several; a string value may hold `{scratch}`."""


@dataclass
class Recorded:
    """Every call of a sweep over one workspace: the tools it offered, the calls, the decoys a call changed."""

    workspace: ToolWorkspace
    read_only: bool
    tools: list[ToolDefinition]
    calls: list[CallRecord]
    decoys_changed: list[str]
    root: Path
    working_dir: str
    decoys: tuple[str, ...]
    seeds: Seeds
    error: str | None = None
    """The error that kept the sweep from running (a run that failed at start)."""

    def host_events(self) -> list[HostEvent]:
        return [event for call in self.calls for event in call.host]


@dataclass
class ToolRuns:
    """A class-scoped cache of recorded sweeps: rules of one class assert over the same recorded runs."""

    base: Path
    cache: dict[tuple[object, ...], Recorded] = field(default_factory=dict)
    token: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    """One token for every sweep of the class: the same calls on the same files, so workspaces compare."""

    async def sweep(
        self,
        capability: AbstractCapability[Any],
        deps: object,
        where: ToolWorkspace,
        tool_calls: ToolCalls,
        *,
        read_only: bool = False,
        symlinked: bool = False,
        tools: Sequence[str] | None = None,
        seed: str | None = None,
    ) -> Recorded:
        """Every tool (or those named) called once in `where` (read-only, or through its symlinks, if asked)."""
        key = (type(capability).__qualname__, where.name, read_only, symlinked, tuple(tools or ()), seed)
        if key not in self.cache:
            self.cache[key] = await self._record(
                capability, deps, where, tool_calls, read_only=read_only, symlinked=symlinked, tools=tools, seed=seed
            )
        return self.cache[key]

    async def _record(
        self,
        capability: AbstractCapability[Any],
        deps: object,
        where: ToolWorkspace,
        tool_calls: ToolCalls,
        *,
        read_only: bool,
        symlinked: bool,
        tools: Sequence[str] | None,
        seed: str | None,
    ) -> Recorded:
        seeds = Seeds(self.token)
        base = self.base / f'{where.name}-{len(self.cache)}-{uuid.uuid4().hex[:6]}'
        root, outside = base / 'root', base / 'outside'
        root.mkdir(parents=True)
        outside.mkdir()
        (outside / 'secret.txt').write_text(f'outside secret {seeds.token}\n')
        if where.host_backed:
            seed_host(root, seeds, outside, where.symlinks)
        workspace = where.build(root)
        if not where.host_backed:
            await seed_workspace(workspace, seeds)
        if seed is not None:
            await workspace.write_text(seed, huge_text())
        working_dir = await workspace.working_dir()
        if read_only:
            workspace = ReadOnlyWorkspace(workspace)
        recorded = Recorded(where, read_only, [], [], [], root, working_dir, (), seeds)

        async def snapshot() -> dict[str, str]:
            if where.host_backed:
                return host_tree(root)
            return await memory_tree(workspace)

        with decoy_host(base, seeds) as decoys:  # the discovery run too: its start may look at the cwd or home
            recorded.decoys = (*decoys, str(outside.resolve()))
            before = {decoy: host_tree(Path(decoy)) for decoy in recorded.decoys}
            try:
                recorded.tools = await discover_tools(capability, workspace, deps)
            except Exception as error:  # the run fails at start in this workspace: no tools, and it says why
                recorded.error = safe_str(error)
            for tool in recorded.tools:
                if tools is not None and tool.name not in tools:
                    continue
                for arguments in _arguments_for(tool, tool_calls, seeds, root, symlinked, seed):
                    recorded.calls.append(
                        await call_tool(capability, deps, workspace, where, tool, arguments, snapshot)
                    )
            recorded.decoys_changed = [
                f'{decoy}/{name}'
                for decoy in recorded.decoys
                for name in tree_diff(before[decoy], host_tree(Path(decoy)))
            ]
        return recorded


def _arguments_for(
    tool: ToolDefinition, tool_calls: ToolCalls, seeds: Seeds, root: Path, symlinked: bool, huge: str | None = None
) -> list[Mapping[str, Any]]:
    given = tool_calls.get(tool.name)
    if given is None:
        derived = derive_arguments(tool, seeds, huge=huge)
        if symlinked:
            links = {seeds.file: f'link-{seeds.token}.txt', seeds.new_file: f'dirlink-{seeds.token}/new.txt'}
            links[seeds.directory] = f'dirlink-{seeds.token}'
            derived = {
                key: links.get(value, value) if isinstance(value, str) else value for key, value in derived.items()
            }
        return [derived]
    examples = [given] if isinstance(given, Mapping) else list(given)
    return [
        {
            key: value.replace('{scratch}', str(root)) if isinstance(value, str) else value
            for key, value in example.items()
        }
        for example in examples
    ]


async def call_unattached(
    capability: AbstractCapability[Any], deps: object, tool: ToolDefinition, arguments: Mapping[str, Any], base: Path
) -> tuple[CallRecord, list[str]]:
    """`tool` called in a run with no workspace, under decoys: the call and the decoy paths it changed."""
    seeds = Seeds(uuid.uuid4().hex[:8])
    where = base / f'unattached-{seeds.token}'
    where.mkdir(parents=True)

    async def snapshot() -> dict[str, str]:
        return {}

    with decoy_host(where, seeds) as decoys:
        before = {decoy: host_tree(Path(decoy)) for decoy in decoys}
        record = await call_tool(capability, deps, None, None, tool, arguments, snapshot)
        changed = [f'{decoy}/{name}' for decoy in decoys for name in tree_diff(before[decoy], host_tree(Path(decoy)))]
    return record, changed


async def continued_in_history_ref(
    capability: AbstractCapability[Any], deps: object, tool: ToolDefinition, path_parameter: str, base: Path
) -> tuple[str, CallRecord]:
    """A run calling `tool` in a fresh environment, then `tool` on a file of another environment, from its history.

    Three runs over a provider's environments: a fresh one calling `tool`, a fresh one leaving a token file, and one
    continued from the second's stored history calling `tool` on that file. Returns the token and the last call.
    """
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from ..doubles import InMemoryProvider, ProviderCapability

    supplier = ProviderCapability(InMemoryProvider())
    seeds = Seeds(uuid.uuid4().hex[:8])
    name = f'ref-{seeds.token}.txt'
    arguments = {**derive_arguments(tool, seeds), path_parameter: name}
    where = base / f'refs-{seeds.token}'
    where.mkdir(parents=True)

    async def nothing() -> dict[str, str]:
        return {}

    leaving: Agent[Any, str] = Agent(scripted_model('leave_token', {}), capabilities=[capability, supplier])

    @leaving.tool
    async def leave_token(ctx: RunContext[Any]) -> str:
        await ctx.workspace.write_text(name, seeds.marker)
        return 'left'

    with decoy_host(where, seeds):
        await call_tool(capability, deps, None, None, tool, arguments, nothing, also=[supplier])
        with watching_host():
            stored = ModelMessagesTypeAdapter.validate_json((await leaving.run('leave', deps=deps)).all_messages_json())
        record = await call_tool(
            capability, deps, None, None, tool, arguments, nothing, also=[supplier], history=stored
        )
    return seeds.marker, dataclasses.replace(record, workspace="the history ref's environment")


@dataclass(frozen=True)
class ToolSweeps:
    """The capability under test with its deps, workspaces and example calls, over the class's recorded runs."""

    capability: AbstractCapability[Any]
    deps: object
    workspaces: Sequence[ToolWorkspace]
    tool_calls: ToolCalls
    runs: ToolRuns

    async def sweep(self, where: ToolWorkspace, tool_calls: ToolCalls | None = None, **options: Any) -> Recorded:
        """Every tool called once in `where` (with `tool_calls`, the fixture's unless given): `ToolRuns.sweep`."""
        calls = self.tool_calls if tool_calls is None else tool_calls
        return await self.runs.sweep(self.capability, self.deps, where, calls, **options)

    async def sweep_all(
        self, workspaces: Sequence[ToolWorkspace] | None = None, *, require_calls: bool = True, **options: Any
    ) -> list[Recorded]:
        """One sweep per workspace (the fixture's unless given); not applicable when none offered a tool."""
        chosen = self.workspaces if workspaces is None else workspaces
        swept = [await self.sweep(where, **options) for where in chosen]
        if require_calls and not any(recorded.calls for recorded in swept):
            names = ', '.join(recorded.workspace.name for recorded in swept) or 'none'
            skip('not-applicable', f'the capability offers no tools to call in these workspaces ({names})')
        return swept

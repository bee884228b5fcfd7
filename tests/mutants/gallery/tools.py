"""Tool capabilities that break one clause of `WorkspaceToolSuite` each, the way a real tool author might.

Each is a small capability with one `FunctionToolset` tool. The suite's host watch blocks their stray writes and
processes (and the decoy cwd and home take what a read finds), so none of them can change anything outside its run.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from pathlib import Path
from typing import Any

from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.workspaces import LocalWorkspaceBackend, SupportsCommands, Workspace

from ..registry import tool_mutant


class _OneTool(AbstractCapability[Any]):
    """A capability giving the model its `tool` method as its one tool."""

    def get_toolset(self) -> FunctionToolset[Any]:
        toolset: FunctionToolset[Any] = FunctionToolset()
        toolset.add_function(self.tool, name=self.tool_name)
        return toolset

    tool_name = 'tool'

    async def tool(self, ctx: RunContext[Any], path: str) -> str:
        raise NotImplementedError


@tool_mutant(
    kills=['no_host_writes'],
    bug="The tool saves with open(path, 'w'), so the file lands in the process's cwd instead of the workspace.",
    workspaces=['memory'],
)
class WritesWithOpen(_OneTool):
    tool_name = 'write_note'

    async def tool(self, ctx: RunContext[Any], path: str) -> str:
        with open(path, 'w') as file:  # noqa: ASYNC230
            file.write('note')
        return f'wrote {path}'


@tool_mutant(
    kills=['no_host_processes_or_sockets'],
    bug='The tool runs subprocess.run(argv) on the host instead of ctx.workspace.run.',
    workspaces=['memory'],
)
class RunsAHostSubprocess(_OneTool):
    tool_name = 'run_command'

    async def tool(self, ctx: RunContext[Any], path: str) -> str:
        done = subprocess.run(['ls', path], capture_output=True, text=True, check=False)  # noqa: ASYNC221
        return done.stdout


@tool_mutant(
    kills=['no_host_reads'],
    bug="The tool checks Path.home()/'.config/notes' for defaults before it reads from the workspace.",
    workspaces=['memory'],
)
class ReadsHomeConfig(_OneTool):
    tool_name = 'read_note'

    async def tool(self, ctx: RunContext[Any], path: str) -> str:
        if (Path.home() / '.config' / 'notes').exists():
            return 'configured'
        return await ctx.workspace.read_text(path)


@tool_mutant(
    kills=['nothing_on_the_host_for_remote_workspaces'],
    bug='The tool opens os.path.join(await ctx.workspace.working_dir(), path) with open(), as if it were local.',
    workspaces=['memory', 'files-only'],
)
class JoinsWorkingDirOnHost(_OneTool):
    tool_name = 'read_note'

    async def tool(self, ctx: RunContext[Any], path: str) -> str:
        try:
            with open(os.path.join(await ctx.workspace.working_dir(), path)) as file:  # noqa: ASYNC230
                return file.read()
        except OSError as error:
            raise ModelRetry(str(error)) from error


@tool_mutant(
    kills=['symlinks_do_not_lead_out'],
    bug='The tool bounds paths with normpath only, as text, and reads through ctx.workspace, which follows symlinks.',
    workspaces=['local'],
    claims=['contained'],
)
class ChecksPathsAsText(_OneTool):
    tool_name = 'read_note'

    async def tool(self, ctx: RunContext[Any], path: str) -> str:
        if posixpath.normpath(path).startswith('..'):
            raise ModelRetry(f'{path} is outside the workspace')
        return await ctx.workspace.read_text(path)


@tool_mutant(
    kills=['read_only_changes_nothing'],
    bug='The tool writes through ctx.workspace.backend, past the read-only layer.',
    workspaces=['local'],
)
class WritesThroughTheBackend(_OneTool):
    tool_name = 'write_note'

    async def tool(self, ctx: RunContext[Any], path: str) -> str:
        where = posixpath.join(await ctx.workspace.working_dir(), path)
        await ctx.workspace.backend.write_bytes(where, b'note')  # type: ignore[attr-defined]
        return f'wrote {path}'


@tool_mutant(
    kills=['reads_work_read_only'],
    bug='The read tool writes a cache file before it reads, so it fails in a read-only workspace.',
    workspaces=['memory'],
)
class ReadCachesFirst(_OneTool):
    tool_name = 'read_note'

    async def tool(self, ctx: RunContext[Any], path: str) -> str:
        await ctx.workspace.write_text('.notes-cache', path)
        return await ctx.workspace.read_text(path)


@tool_mutant(
    kills=['reads_never_write'],
    bug='The read tool records when it last read a file in a marker file beside it.',
    workspaces=['memory'],
)
class ReadTouchesAMarker(_OneTool):
    tool_name = 'read_note'

    async def tool(self, ctx: RunContext[Any], path: str) -> str:
        text = await ctx.workspace.read_text(path)
        if not ctx.workspace.read_only:
            await ctx.workspace.write_text(f'{path}.last-read', 'now')
        return text


async def _only_with_commands(ctx: RunContext[Any], tool: Any) -> Any:
    return None if ctx.workspace.read_only else tool


@tool_mutant(
    kills=['no_silent_empty_toolset'],
    bug='The capability offers no tools in a read-only workspace and says nothing, like Shell (finding F4).',
    workspaces=['memory'],
)
class SilentlyToolless(_OneTool):
    tool_name = 'run_command'

    def get_toolset(self) -> FunctionToolset[Any]:
        toolset: FunctionToolset[Any] = FunctionToolset()
        toolset.add_function(self.tool, name=self.tool_name, prepare=_only_with_commands)
        return toolset

    async def tool(self, ctx: RunContext[Any], path: str) -> str:
        return await ctx.workspace.read_text(path)


@tool_mutant(
    kills=['fails_at_start_or_reports'],
    bug='Without a workspace the tool falls back to LocalWorkspaceBackend(os.getcwd()), the host cwd.',
    workspaces=['memory'],
)
class FallsBackToCwd(_OneTool):
    tool_name = 'write_note'

    async def tool(self, ctx: RunContext[Any], path: str) -> str:
        workspace = ctx.workspace if ctx.workspace.attached else Workspace(LocalWorkspaceBackend(os.getcwd()))
        await workspace.write_text(path, 'note')
        return f'wrote {path}'


@tool_mutant(
    kills=['same_results_everywhere'],
    bug='With commands the tool lists a directory with `ls -a`, so it shows `.` and `..` there and nowhere else.',
    workspaces=['local', 'memory'],
)
class ListsDifferentlyWithCommands(_OneTool):
    tool_name = 'list_files'

    async def tool(self, ctx: RunContext[Any], path: str) -> str:
        if isinstance(ctx.workspace.backend, SupportsCommands):
            done = await ctx.workspace.run(['ls', '-a', path])
            return done.stdout
        return '\n'.join(sorted(entry.name for entry in await ctx.workspace.list_dir(path))) + '\n'


@tool_mutant(
    kills=['tools_act_in_the_history_ref'],
    bug="The capability keeps the first run's ctx.workspace and reads from it in every later run.",
    workspaces=['memory'],
)
class RemembersFirstWorkspace(_OneTool):
    tool_name = 'read_note'
    first: Workspace | None = None

    async def tool(self, ctx: RunContext[Any], path: str) -> str:
        if self.first is None:
            self.first = ctx.workspace
        try:
            return await self.first.read_text(path)
        except OSError as error:
            raise ModelRetry(f'no note at {path}') from error


@tool_mutant(
    kills=['huge_output_is_bounded_and_marked'],
    bug='The read tool cuts its result at 10 000 characters and does not say so.',
    workspaces=['memory'],
    claims=['bounded'],
)
class TruncatesSilently(_OneTool):
    tool_name = 'read_note'

    async def tool(self, ctx: RunContext[Any], path: str) -> str:
        return (await ctx.workspace.read_text(path))[:10_000]


@tool_mutant(
    kills=['fails_at_the_start_without_a_workspace'],
    bug='The capability never checks ctx.workspace.attached, so a run without one goes ahead and fails on a tool call.',
    workspaces=['memory'],
)
class NeverChecksAttached(_OneTool):
    tool_name = 'read_note'

    async def tool(self, ctx: RunContext[Any], path: str) -> str:
        return await ctx.workspace.read_text(path)

"""A careful notes toolset someone else would write: every error becomes `ModelRetry`, and the search tool, which
needs commands, says so clearly where the workspace runs none (files-only, in memory) or refuses them (read-only).

It claims nothing beyond the contract: it reads through symlinks as `ctx.workspace` does, and cuts long results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import UserError
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.workspaces import WorkspaceError

LIMIT = 20_000


async def read_note(ctx: RunContext[Any], path: str) -> str:
    """Read the note at `path`."""
    try:
        text = await ctx.workspace.read_text(path)
    except (OSError, WorkspaceError) as error:
        raise ModelRetry(f'cannot read {path}: {error}') from error
    if len(text) > LIMIT:
        return text[:LIMIT] + f'\n[truncated: {len(text) - LIMIT} more characters]'
    return text


async def write_note(ctx: RunContext[Any], path: str, content: str) -> str:
    """Write `content` to the note at `path`."""
    try:
        await ctx.workspace.write_text(path, content)
    except (OSError, WorkspaceError) as error:
        raise ModelRetry(f'cannot write {path}: {error}') from error
    return f'wrote {len(content)} characters to {path}'


async def list_notes(ctx: RunContext[Any], directory: str) -> list[str]:
    """The names in `directory`."""
    try:
        return sorted(entry.name for entry in await ctx.workspace.list_dir(directory))
    except (OSError, WorkspaceError) as error:
        raise ModelRetry(f'cannot list {directory}: {error}') from error


async def search_notes(ctx: RunContext[Any], pattern: str) -> str:
    """Search the notes for `pattern` with grep."""
    try:
        result = await ctx.workspace.run(['grep', '-rn', '--', pattern, '.'], timeout=30)
    except UserError:
        needs = 'search_notes needs a workspace that runs commands; use read_note and list_notes here'
        raise ModelRetry(needs) from None
    except WorkspaceError as error:
        raise ModelRetry(f'search_notes cannot run here: {error}') from error
    if result.exit_code > 1:
        raise ModelRetry(f'search failed: {result.stderr[:500]}')
    return result.stdout[:LIMIT] or 'no match'


@dataclass
class CarefulNotes(AbstractCapability[Any]):
    """Read, write, list and search notes in `ctx.workspace`; a run without one stops at its start."""

    async def before_run(self, ctx: RunContext[Any]) -> None:
        if not ctx.workspace.attached:
            raise UserError('CarefulNotes needs a workspace: attach one, such as LocalWorkspace(".")')

    def get_toolset(self) -> FunctionToolset[Any]:
        return FunctionToolset([read_note, write_note, list_notes, search_notes])

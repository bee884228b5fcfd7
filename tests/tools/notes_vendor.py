"""A vendor's tool capability nobody wrote for the suite: notes tools that act in `ctx.workspace`.

It stands on pydantic-ai alone, as a third party's package would; `test_outsider.py` certifies it by subclassing
`WorkspaceToolSuite` with only a `capability` fixture.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.toolsets import FunctionToolset

MAX_CHARS = 20_000
"""The most a read returns; a longer note is cut there, and the result says so."""


async def _inside(ctx: RunContext[Any], path: str) -> str:
    """`path`, once its real path is known to be inside the working dir (symlinks resolved)."""
    if not ctx.workspace.attached:
        raise ModelRetry('notes tools need a workspace: attach one with LocalWorkspace(...) or workspace=...')
    root = await ctx.workspace.realpath(await ctx.workspace.working_dir())
    real = await ctx.workspace.realpath(path)
    if real != root and not real.startswith(root.rstrip('/') + '/'):
        raise ModelRetry(f'{path} leads outside the workspace')
    return path


async def read_note(ctx: RunContext[Any], path: str) -> str:
    """Read the note at `path` in the workspace."""
    path = await _inside(ctx, path)
    if not await ctx.workspace.exists(path):
        raise ModelRetry(f'no note at {path}')
    text = await ctx.workspace.read_text(path)
    if len(text) > MAX_CHARS:
        return f'{text[:MAX_CHARS]}\n[truncated: {len(text) - MAX_CHARS} more characters]'
    return text


async def write_note(ctx: RunContext[Any], path: str, content: str) -> str:
    """Write `content` to the note at `path` in the workspace."""
    path = await _inside(ctx, path)
    await ctx.workspace.write_text(path, content)
    return f'wrote {len(content)} chars to {path}'


async def list_notes(ctx: RunContext[Any], directory: str) -> list[str]:
    """The names in `directory` of the workspace."""
    directory = await _inside(ctx, directory)
    return sorted(entry.name for entry in await ctx.workspace.list_dir(directory))


@dataclass
class Notes(AbstractCapability[Any]):
    """Gives the model three notes tools; the write tool is left out in a read-only workspace."""

    def get_toolset(self) -> FunctionToolset[Any]:
        toolset: FunctionToolset[Any] = FunctionToolset()
        toolset.add_function(read_note)
        toolset.add_function(list_notes)
        toolset.add_function(write_note, prepare=_writable)
        return toolset


async def _writable(ctx: RunContext[Any], tool: Any) -> Any:
    return None if ctx.workspace.read_only else tool

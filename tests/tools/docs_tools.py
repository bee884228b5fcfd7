"""The Workspaces page's three example tools (`execute`, `read_source`, `save_notes`), as the page writes them.

The page registers them with `@agent.tool` on its own agent; here they are the functions of one capability, the way a
reader who wants them on any agent would put them, with nothing else changed. `test_docs_tools.py` certifies them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.workspaces import WorkspaceError


async def execute(ctx: RunContext[Any], command: list[str]) -> str:
    """Run a command in the project directory."""
    try:
        result = await ctx.workspace.run(command, timeout=60)
    except WorkspaceError as error:  # e.g. a timeout, or a read-only workspace
        raise ModelRetry(str(error))  # noqa: B904  (as the page writes it)
    return result.stdout if result.exit_code == 0 else f'[exit {result.exit_code}] {result.stderr}'


async def read_source(ctx: RunContext[Any], path: str) -> str:
    """Read a text file from the project."""
    try:
        return await ctx.workspace.read_text(path)
    except FileNotFoundError:
        raise ModelRetry(f'{path} does not exist.')  # noqa: B904  (as the page writes it)


async def save_notes(ctx: RunContext[Any], notes: str) -> str:
    """Save notes for later steps."""
    await ctx.workspace.write_text('NOTES.md', notes)
    return 'Saved to NOTES.md.'


@dataclass
class DocsTools(AbstractCapability[Any]):
    """The page's `execute`, `read_source` and `save_notes` as one capability."""

    def get_toolset(self) -> FunctionToolset[Any]:
        return FunctionToolset([execute, read_source, save_notes])

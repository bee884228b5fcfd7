"""Whether a tool call fits its workspace: refusing what the workspace lacks is correct, never a difference.

The Workspaces page refuses commands on a read-only workspace ("because a command could change files") and on a
backend that cannot run them (`Workspace.run` raises `UserError`), and lets a capability leave out the tools that do
not fit. A tool that meets such a workspace with a clear `ModelRetry`, an error of its own, a startup error or by
leaving itself out did what the contract asks; the differential and read-only rules compare only where it fits.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from pydantic_ai.exceptions import UserError
from pydantic_ai.workspaces import WorkspaceReadOnlyError

from ..authoring import error_chain

if TYPE_CHECKING:
    from pydantic_ai.tools import ToolDefinition

    from ._calls import CallRecord
    from ._sweeps import Recorded

__all__ = (
    'COMMAND_NAMES',
    'COMMAND_WORDS',
    'REFUSED_OUTCOMES',
    'commanding',
    'described',
    'lacks',
    'needs_commands',
    'note_use',
    'noted_uses',
    'refusal',
    'unfit',
)

REFUSED_OUTCOMES = frozenset({'retried', 'raised', 'failed', 'denied'})
"""The outcomes of a call that did not do its work: the model was told to retry, or the run ended."""
COMMAND_NAMES = frozenset({'command', 'cmd', 'script', 'shell_command'})
COMMAND_WORDS = re.compile(r'command|shell|run|exec|bash')
_USES: ContextVar[list[str] | None] = ContextVar('workspace_conformance_tool_uses', default=None)


def note_use(method: str) -> None:
    """Record that the tool call in progress made a backend call (`run`, `read_bytes`, ...)."""
    uses = _USES.get()
    if uses is not None:
        uses.append(method)


@contextmanager
def noted_uses() -> Iterator[list[str]]:
    """The backend methods a tool call makes inside the block, in order (on the default local backends)."""
    uses: list[str] = []
    token = _USES.set(uses)
    try:
        yield uses
    finally:
        _USES.reset(token)


def refusal(errors: Sequence[BaseException], *, commands: bool, read_only: bool) -> str | None:
    """What the workspace refused that a call's errors show it met: `read-only`, `commands`, or None.

    A `WorkspaceReadOnlyError` anywhere in an error's chain on a read-only workspace, or pydantic-ai's `UserError` for
    a backend that runs no commands on a workspace without them, is the workspace saying no, whatever the tool made of
    it (a `ModelRetry` raised while handling it, or the run ending).
    """
    for error in errors:
        for link in error_chain(error):
            if read_only and isinstance(link, WorkspaceReadOnlyError):
                return 'read-only'
            if not commands and isinstance(link, UserError):
                return 'commands'
    return None


def needs_commands(tool: ToolDefinition) -> bool:
    """Whether a tool runs commands, by its kind, name or a command parameter."""
    properties = (tool.parameters_json_schema or {}).get('properties', {})
    text = f'{tool.tool_kind or ""} {tool.name}'.lower()
    return bool(COMMAND_WORDS.search(text)) or any(name.lower() in COMMAND_NAMES for name in properties)


def commanding(swept: Sequence[Recorded]) -> frozenset[str]:
    """The tools that run commands: seen calling `run` where files are native (local), or named for commands."""
    seen = {
        call.tool for recorded in swept if recorded.workspace.local for call in recorded.calls if 'run' in call.used
    }
    named = {tool.name for recorded in swept for tool in recorded.tools if needs_commands(tool)}
    return frozenset(seen | named)


def lacks(recorded: Recorded) -> str | None:
    """What a command tool cannot have in the sweep's workspace: `read-only`, `commands`, or None."""
    if recorded.read_only:
        return 'read-only'
    return None if recorded.workspace.commands else 'commands'


def unfit(call: CallRecord, recorded: Recorded, commanders: frozenset[str]) -> str | None:
    """Why `call` did not fit its workspace (it stopped at what the workspace refuses), or None when it fit.

    Only commands make a tool not fit: either the workspace refused them in the call's errors (a backend without
    commands), or a tool that runs commands elsewhere stopped where commands are not to be had or are refused
    (read-only). A read tool refused read-only because it writes (a cache, a marker) fits, and its failure counts.
    """
    if call.tool not in commanders:  # a read-only refusal of a tool's own write is its bug, not a misfit
        return call.refused if call.refused == 'commands' else None
    if call.refused is not None:
        return call.refused
    return lacks(recorded) if call.outcome in REFUSED_OUTCOMES else None


def described(why: str) -> str:
    """`commands` -> the sentence a finding or skip says of a call that did not fit."""
    return 'commands are refused on a read-only workspace' if why == 'read-only' else 'the workspace runs no commands'

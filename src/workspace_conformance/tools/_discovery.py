"""What a capability offers and how to call it: its tools as the model sees them, their kinds, derived arguments."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.workspaces import Workspace

from ..authoring import machinery_hidden
from ._fit import COMMAND_NAMES, COMMAND_WORDS
from ._workspaces import Seeds

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = ('derive_arguments', 'discover_tools', 'is_read_tool', 'is_write_tool', 'path_parameter')

_PATH_NAMES = frozenset({'path', 'file', 'filename', 'file_path', 'directory', 'dir', 'cwd', 'root', 'filepath'})
_WRITE_VERBS = re.compile(r'write|create|make|save|edit|delete|remove|move|rename|append|mkdir|put|patch')
_READ_VERBS = re.compile(r'read|list|search|find|grep|info|stat|view|cat|glob|ls\b|show|get')


async def discover_tools(
    capability: AbstractCapability[Any], workspace: Workspace | None, deps: object = None
) -> list[ToolDefinition]:
    """The tools an agent run with `capability` offers the model in `workspace`: `AgentInfo.function_tools`."""
    seen: list[ToolDefinition] = []

    def look(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(info.function_tools)
        return ModelResponse(parts=[TextPart('done')])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        seen.extend(info.function_tools)
        yield 'done'

    agent: Agent[Any, str] = Agent(FunctionModel(look, stream_function=stream), capabilities=[capability])
    kwargs: dict[str, Any] = {'deps': deps}
    if workspace is not None:
        kwargs['workspace'] = workspace
    await agent.run('list your tools', **kwargs)
    unique = {tool.name: tool for tool in seen}
    return list(unique.values())


def _is_path(name: str, schema: Mapping[str, Any]) -> bool:
    lowered = name.lower()
    described = str(schema.get('description', '')).lower()
    return (
        lowered in _PATH_NAMES
        or lowered.endswith(('_path', '_dir', '_file', '_directory'))
        or bool(re.search(r'\bpath\b', described) and schema.get('type') == 'string')
    )


def derive_arguments(tool: ToolDefinition, seeds: Seeds, *, huge: str | None = None) -> dict[str, Any]:
    """Arguments for `tool` from its JSON schema: a seeded path for path-like parameters, the marker for strings.

    A command parameter gets `ls`, or `cat <huge>` when a huge file was planted (then file paths name it too).
    """
    schema = tool.parameters_json_schema or {}
    properties: Mapping[str, Any] = schema.get('properties', {})
    required = set(schema.get('required', ()))
    writes = bool(re.search(r'write|create|make|save|new', tool.name.lower()))
    arguments: dict[str, Any] = {}
    for name, spec in properties.items():
        spec = spec if isinstance(spec, Mapping) else {}
        kind = spec.get('type')
        if 'anyOf' in spec and kind is None:
            kinds = [option.get('type') for option in spec['anyOf'] if isinstance(option, Mapping)]
            kind = next((k for k in kinds if k and k != 'null'), None)
        if name.lower() in COMMAND_NAMES and kind in ('string', None):
            arguments[name] = f'cat {huge}' if huge else 'ls'
        elif _is_path(name, spec) and kind in ('string', None):
            wants_dir = 'dir' in name.lower() or 'dir' in tool.name.lower() or 'list' in tool.name.lower()
            if wants_dir:
                arguments[name] = f'{seeds.directory}-new' if writes else seeds.directory
            else:
                arguments[name] = seeds.new_file if writes else (huge or seeds.file)
        elif name not in required:
            continue
        elif spec.get('enum'):
            arguments[name] = spec['enum'][0]
        elif kind == 'string':
            arguments[name] = seeds.marker
        elif kind in ('integer', 'number'):
            arguments[name] = 1
        elif kind == 'boolean':
            arguments[name] = False
        elif kind == 'array':
            arguments[name] = []
        elif kind == 'object':
            arguments[name] = {}
        else:
            arguments[name] = seeds.marker
    return arguments


def is_write_tool(tool: ToolDefinition) -> bool:
    """Whether a tool changes files, by its kind, else its name (a command tool counts as one)."""
    text = f'{tool.tool_kind or ""} {tool.name}'.lower()
    return bool(_WRITE_VERBS.search(text) or COMMAND_WORDS.search(text))


def path_parameter(tool: ToolDefinition) -> str | None:
    """The first parameter of `tool` that names a file path, if any."""
    properties: Mapping[str, Any] = (tool.parameters_json_schema or {}).get('properties', {})
    for name, spec in properties.items():
        if _is_path(name, spec if isinstance(spec, Mapping) else {}) and 'dir' not in name.lower():
            return name
    return None


def is_read_tool(tool: ToolDefinition) -> bool:
    """Whether a tool only reads, by its kind, else its name."""
    return not is_write_tool(tool) and bool(_READ_VERBS.search(f'{tool.tool_kind or ""} {tool.name}'.lower()))

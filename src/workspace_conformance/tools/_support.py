"""What tool rules stand on: fixtures, default workspaces, tool discovery, derived arguments, recorded tool calls.

Each tool call is one real agent run (a `FunctionModel` scripts it) under the host watch.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import json
import os
import re
import uuid
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.workspaces import LocalWorkspaceBackend, ReadOnlyWorkspace, Workspace

from ..authoring import HostEvent, SuiteFixtures, calling, machinery_hidden, owning, safe_str, skip, watching_host
from ..doubles import CommandsOnly, FilesOnly, memory_backend
from ._fit import COMMAND_NAMES, COMMAND_WORDS, REFUSED_OUTCOMES, needs_commands, note_use, noted_uses, refusal

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = (
    'CallRecord',
    'Recorded',
    'ToolFixtures',
    'ToolRuns',
    'ToolSweeps',
    'ToolWorkspace',
    'call_unattached',
    'continued_in_history_ref',
    'default_workspaces',
    'derive_arguments',
    'discover_tools',
    'files_only_with_symlinks',
    'needs_commands',
)

ToolCalls = Mapping[str, Mapping[str, Any] | Sequence[Mapping[str, Any]]]
"""Example arguments per tool name: one mapping or several; a string value may hold `{scratch}`."""


@dataclass(frozen=True)
class ToolWorkspace:
    """A workspace the tools are run in: its name, how to build it on a host directory, and what it is.

    `local`: its storage is the host directory itself, so a tool may touch it directly; `symlinks`: a symlink made
    there with `os.symlink` is one the workspace holds; `commands`: it runs commands. `build` gets a new empty
    directory (the workspace's root, for the host-backed ones) and returns the `Workspace`.
    """

    name: str
    build: Callable[[Path], Workspace]
    local: bool = False
    symlinks: bool = False
    commands: bool = False
    host_backed: bool = True


def _owned(kind: type[LocalWorkspaceBackend]) -> type[LocalWorkspaceBackend]:
    """`kind` with every protocol method's host I/O marked as the workspace's own (never a finding)."""

    def wrap(name: str) -> Any:
        original = getattr(kind, name)

        async def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            note_use(name)
            with owning():
                return await original(self, *args, **kwargs)

        method.__name__ = name
        return method

    names = [
        name
        for name in dir(kind)
        if not name.startswith('_') and inspect.iscoroutinefunction(inspect.getattr_static(kind, name, None))
    ]
    return type(f'Owned{kind.__name__}', (kind,), {name: wrap(name) for name in names})


_OwnedLocal = _owned(LocalWorkspaceBackend)


def default_workspaces() -> tuple[ToolWorkspace, ...]:
    """The four default workspaces: local, commands-only (shell-derived files), files-only (no realpath), memory.

    The files-only one is not checked with symlinks: pydantic-ai asks a files-only backend whose storage holds
    symlinks to implement `SupportsRealpath`, so no tool can tell where such a link leads (docs/findings.md, F1,
    checks it with `files_only_with_symlinks()`).
    """
    return (
        ToolWorkspace('local', lambda root: Workspace(_OwnedLocal(root)), local=True, symlinks=True, commands=True),
        ToolWorkspace(
            'commands-only', lambda root: Workspace(CommandsOnly(_OwnedLocal(root))), symlinks=True, commands=True
        ),
        ToolWorkspace('files-only', lambda root: Workspace(FilesOnly(_OwnedLocal(root)))),
        ToolWorkspace('memory', lambda root: Workspace(memory_backend()), host_backed=False),
    )


def files_only_with_symlinks() -> ToolWorkspace:
    """A files-only workspace over host disk whose symlinks are checked: where a missing `realpath` meets them."""
    return ToolWorkspace('files-only+symlinks', lambda root: Workspace(FilesOnly(_OwnedLocal(root))), symlinks=True)


# -- discovery and arguments ----------------------------------------------------------------------------------------

_PATH_NAMES = frozenset({'path', 'file', 'filename', 'file_path', 'directory', 'dir', 'cwd', 'root', 'filepath'})
_WRITE_VERBS = re.compile(r'write|create|make|save|edit|delete|remove|move|rename|append|mkdir|put|patch')
_READ_VERBS = re.compile(r'read|list|search|find|grep|info|stat|view|cat|glob|ls\b|show|get')


def _respond(text: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(text)])


async def discover_tools(
    capability: AbstractCapability[Any], workspace: Workspace | None, deps: object = None
) -> list[ToolDefinition]:
    """The tools an agent run with `capability` offers the model in `workspace`: `AgentInfo.function_tools`."""
    seen: list[ToolDefinition] = []

    def look(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(info.function_tools)
        return _respond('done')

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


@dataclass(frozen=True)
class Seeds:
    """What every workspace holds before its calls: a file with the marker once, a directory, in a token's names."""

    token: str

    @property
    def marker(self) -> str:
        return f'marker-{self.token}'

    @property
    def file(self) -> str:
        return f'notes-{self.token}.txt'

    @property
    def directory(self) -> str:
        return f'dir-{self.token}'

    @property
    def new_file(self) -> str:
        return f'new-{self.token}.txt'

    @property
    def content(self) -> str:
        return f'first line\n{self.marker}\nlast line\n'


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


# -- recorded calls --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallRecord:
    """One tool call in one workspace: its arguments, its outcome, what the model saw, what it changed on the host."""

    workspace: str
    tool: str
    arguments: Mapping[str, Any]
    outcome: str
    """`success`, `retried`, `failed`, `denied`, `interrupted`, `raised` (an exception ended the run) or `unknown`."""
    content: str
    changed: tuple[str, ...]
    """Paths of the workspace's tree that the call changed (added, removed or altered)."""
    host: tuple[HostEvent, ...]
    executed: bool = True
    """Whether the tool's code ran (the run did not fail before it)."""
    attached: bool | None = None
    """Whether the tool's `ctx.workspace` reached an environment (None: the tool did not run)."""
    refused: str | None = None
    """What the workspace refused that the call met (`commands`, `read-only`: `_fit.refusal`), when it did not work."""
    used: tuple[str, ...] = ()
    """The backend methods the call made, where the workspace's backend is a default local one (`run`, ...)."""

    @property
    def fits(self) -> bool:
        """Whether the call met a workspace it fits: it did not stop at something the workspace refuses."""
        return self.refused is None

    def __str__(self) -> str:
        return f'{self.tool}({_short_args(self.arguments)}) on {self.workspace}: {self.outcome}'


def _short_args(arguments: Mapping[str, Any]) -> str:
    return ', '.join(f'{key}={repr(value)[:60]}' for key, value in arguments.items())


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


def _tree(root: Path) -> dict[str, str]:
    """Each entry under `root` (not following symlinks): its kind, size and a digest of its bytes.

    An entry that goes between the listing and the look is left out: a command the tool started may still be writing
    in the workspace (the harness's Shell renames a background job's `status.tmp` as it ends), and the snapshot must
    not raise in the tool's place.
    """
    found: dict[str, str] = {}
    with owning():
        for directory, names, files in os.walk(root):
            for name in [*names, *files]:
                path = Path(directory) / name
                try:
                    found[str(path.relative_to(root))] = _entry(path)
                except FileNotFoundError:
                    continue
    return found


def _entry(path: Path) -> str:
    if path.is_symlink():
        return f'link:{os.readlink(path)}'
    if path.is_dir():
        return 'dir'
    data = path.read_bytes()
    return f'file:{len(data)}:{hash(data)}'


async def _memory_tree(workspace: Workspace) -> dict[str, str]:
    found: dict[str, str] = {}
    pending = [await workspace.working_dir()]
    while pending:
        directory = pending.pop()
        for entry in await workspace.list_dir(directory):
            if entry.is_dir:
                found[entry.path] = 'dir'
                pending.append(entry.path)
            else:
                try:
                    data = await workspace.read_bytes(entry.path)
                except OSError:  # a dangling symlink
                    found[entry.path] = 'unreadable'
                else:
                    found[entry.path] = f'file:{len(data)}:{hash(data)}'
    return found


def _diff(before: Mapping[str, str], after: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(sorted(name for name in {*before, *after} if before.get(name) != after.get(name)))


class _Observer(AbstractCapability[Any]):
    """Brackets each tool call: attributes its host I/O to the tool, and hashes the workspace's tree around it."""

    def __init__(
        self, snapshot: Callable[[], Any], log: list[tuple[str, tuple[str, ...], BaseException | None, list[str]]]
    ):
        self.snapshot = snapshot
        self.log = log
        self.attached: bool | None = None
        """Whether the last call's `ctx.workspace` reached an environment (None: no call ran)."""

    async def wrap_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any, handler: Any
    ) -> Any:
        self.attached = ctx.workspace.attached
        before = await self.snapshot()
        error: BaseException | None = None
        with noted_uses() as uses:
            try:
                with calling(call.tool_name):
                    return await handler(args)
            except BaseException as raised:
                error = raised
                raise
            finally:
                self.log.append((call.tool_name, _diff(before, await self.snapshot()), error, uses))


def scripted_model(name: str, arguments: Mapping[str, Any]) -> FunctionModel:
    """A `FunctionModel` that calls `name(**arguments)` once, then answers text (streamed too, for Coder)."""
    pending = [(name, dict(arguments))]

    def step(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not pending:
            return _respond('done')
        tool, args = pending.pop()
        return ModelResponse(parts=[ToolCallPart(tool, args)])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if pending:
            tool, args = pending.pop()
            yield {0: DeltaToolCall(name=tool, json_args=json.dumps(args))}
        else:
            yield 'done'

    return FunctionModel(step, stream_function=stream)


def _returned(messages: Sequence[ModelMessage], name: str) -> tuple[str | None, str]:
    """The outcome and content of the first return to a call of `name` in the run's messages."""
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolReturnPart) and part.tool_name == name:
                return getattr(part, 'outcome', 'success'), part.model_response_str()
            if isinstance(part, RetryPromptPart) and part.tool_name == name:
                return 'retried', part.model_response()
    return None, ''


@contextlib.contextmanager
def decoy_host(base: Path, seeds: Seeds) -> Iterator[tuple[str, ...]]:
    """A sacrificial cwd, HOME, XDG homes and temp dir, each holding files of the workspace's names with decoy text."""
    import tempfile

    cwd, home, tmp = base / 'host-cwd', base / 'host-home', base / 'host-tmp'
    for directory in (cwd, home, tmp):
        (directory / seeds.directory).mkdir(parents=True, exist_ok=True)
        (directory / seeds.file).write_text(f'decoy {seeds.token}\n')
        for hidden in ('.agents', '.claude', '.config'):
            (directory / hidden).mkdir(exist_ok=True)
    saved_env = {name: os.environ.get(name) for name in ('HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME')}
    saved_cwd, saved_tmp = os.getcwd(), tempfile.tempdir
    os.environ['HOME'] = str(home)
    for name in ('XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME'):
        os.environ[name] = str(home / '.config')
    tempfile.tempdir = str(tmp)
    os.chdir(cwd)
    try:
        yield tuple(str(path.resolve()) for path in (cwd, home, tmp))
    finally:
        os.chdir(saved_cwd)
        tempfile.tempdir = saved_tmp
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _seed_host(root: Path, seeds: Seeds, outside: Path, symlinks: bool) -> None:
    (root / seeds.directory).mkdir(parents=True, exist_ok=True)
    (root / seeds.file).write_text(seeds.content)
    (root / seeds.directory / 'inner.txt').write_text(seeds.content)
    if symlinks:
        os.symlink(outside / 'secret.txt', root / f'link-{seeds.token}.txt')
        os.symlink(outside, root / f'dirlink-{seeds.token}')


async def _seed_workspace(workspace: Workspace, seeds: Seeds) -> None:
    await workspace.make_dir(seeds.directory)
    await workspace.write_text(seeds.file, seeds.content)
    await workspace.write_text(f'{seeds.directory}/inner.txt', seeds.content)


Calls = Sequence[tuple[str, Mapping[str, Any]]]


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
            _seed_host(root, seeds, outside, where.symlinks)
        workspace = where.build(root)
        if not where.host_backed:
            await _seed_workspace(workspace, seeds)
        if seed is not None:
            await workspace.write_text(seed, huge_text())
        working_dir = await workspace.working_dir()
        if read_only:
            workspace = ReadOnlyWorkspace(workspace)
        recorded = Recorded(where, read_only, [], [], [], root, working_dir, (), seeds)

        async def snapshot() -> dict[str, str]:
            if where.host_backed:
                return _tree(root)
            return await _memory_tree(workspace)

        with decoy_host(base, seeds) as decoys:  # the discovery run too: its start may look at the cwd or home
            recorded.decoys = (*decoys, str(outside.resolve()))
            before = {decoy: _tree(Path(decoy)) for decoy in recorded.decoys}
            try:
                recorded.tools = await discover_tools(capability, workspace, deps)
            except Exception as error:  # the run fails at start in this workspace: no tools, and it says why
                recorded.error = safe_str(error)
            for tool in recorded.tools:
                if tools is not None and tool.name not in tools:
                    continue
                for arguments in _arguments_for(tool, tool_calls, seeds, root, symlinked, seed):
                    recorded.calls.append(await _call(capability, deps, workspace, where, tool, arguments, snapshot))
            recorded.decoys_changed = [
                f'{decoy}/{name}' for decoy in recorded.decoys for name in _diff(before[decoy], _tree(Path(decoy)))
            ]
        return recorded


HUGE_LINES = 20_000


def huge_text() -> str:
    """About 1 MB: 20 000 numbered lines, each with its own token `L<number>;`."""
    return ''.join(f'L{n:06d}; {"x" * 40}\n' for n in range(HUGE_LINES))


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


async def _call(
    capability: AbstractCapability[Any],
    deps: object,
    workspace: Workspace | None,
    where: ToolWorkspace | None,
    tool: ToolDefinition,
    arguments: Mapping[str, Any],
    snapshot: Callable[[], Any],
    *,
    also: Sequence[AbstractCapability[Any]] = (),
    history: Sequence[ModelMessage] | None = None,
) -> CallRecord:
    """One agent run calling `tool(**arguments)`, watched; `workspace=None` runs with no workspace attached.

    `also` are more capabilities of the agent (one supplying workspaces, say), `history` the run's message history.
    """
    log: list[tuple[str, tuple[str, ...], BaseException | None, list[str]]] = []
    observer = _Observer(snapshot, log)
    agent: Agent[Any, str] = Agent(
        scripted_model(tool.name, arguments), capabilities=[capability, *also, observer], retries=3
    )
    allowed = [str(await workspace.working_dir())] if where is not None and where.local and workspace else []
    kwargs: dict[str, Any] = {'deps': deps, 'message_history': history}
    if workspace is not None:
        kwargs['workspace'] = workspace
    outcome: str | None
    errors: list[BaseException] = []
    with watching_host(allowed) as watch:
        try:
            result = await agent.run('call the tool', **kwargs)
        except Exception as error:
            outcome, content = 'raised', safe_str(error)
            errors.append(error)
        else:
            outcome, content = _returned(result.new_messages(), tool.name)
    changed = tuple(change for _, diff, _, _ in log for change in diff)
    errors += [error for _, _, error, _ in log if error is not None]
    refused = None
    if workspace is not None and where is not None and outcome in REFUSED_OUTCOMES:
        refused = refusal(errors, commands=where.commands, read_only=workspace.read_only)
    return CallRecord(
        where.name if where is not None else 'no workspace',
        tool.name,
        dict(arguments),
        outcome or 'unknown',
        content,
        changed,
        tuple(watch.events),
        executed=bool(log),
        attached=observer.attached,
        refused=refused,
        used=tuple(use for _, _, _, uses in log for use in uses),
    )


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
        before = {decoy: _tree(Path(decoy)) for decoy in decoys}
        record = await _call(capability, deps, None, None, tool, arguments, snapshot)
        changed = [f'{decoy}/{name}' for decoy in decoys for name in _diff(before[decoy], _tree(Path(decoy)))]
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
        await _call(capability, deps, None, None, tool, arguments, nothing, also=[supplier])
        with watching_host():
            stored = ModelMessagesTypeAdapter.validate_json((await leaving.run('leave', deps=deps)).all_messages_json())
        record = await _call(capability, deps, None, None, tool, arguments, nothing, also=[supplier], history=stored)
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


class ToolFixtures(SuiteFixtures):
    """The fixtures of every `WorkspaceToolSuite`; override them in a subclass."""

    @pytest.fixture
    def anyio_backend(self) -> str:
        """`asyncio`: pydantic-ai's agent runs need it, so the tool suite runs on it only."""
        return 'asyncio'

    @pytest.fixture
    def capability(self) -> AbstractCapability[Any]:
        """The capability under test: one that gives the model tools acting in `ctx.workspace`."""
        raise NotImplementedError(
            'WorkspaceToolSuite needs a `capability` fixture: define `@pytest.fixture def capability(self): '
            'return MyTools()` in your subclass.'
        )

    @pytest.fixture
    def deps(self) -> object:
        """The deps of the agent runs the rules make."""
        return None

    @pytest.fixture
    def tool_calls(self) -> ToolCalls:
        """Example arguments per tool name (one mapping or several); tools not named get arguments from their schema."""
        return {}

    @pytest.fixture
    def workspaces(self) -> Sequence[ToolWorkspace]:
        """The workspaces every tool is run in: by default local, commands-only, files-only and in-memory."""
        return default_workspaces()

    @pytest.fixture
    def claims(self) -> Collection[str]:
        """What the capability claims beyond the contract (`bounded`, `contained`): the rules of a claim made bind.

        By default nothing: the contract asks no bound of a tool's result, and makes the working directory a
        starting point, not a boundary, so those rules report what they saw as advisories.
        """
        return frozenset()

    @pytest.fixture(scope='class')
    @classmethod
    def tool_runs(cls, tmp_path_factory: pytest.TempPathFactory) -> ToolRuns:
        """The class's cache of recorded tool runs."""
        return ToolRuns(tmp_path_factory.mktemp('tool-runs'))

    @pytest.fixture
    def sweeps(
        self,
        capability: AbstractCapability[Any],
        deps: object,
        workspaces: Sequence[ToolWorkspace],
        tool_calls: ToolCalls,
        tool_runs: ToolRuns,
    ) -> ToolSweeps:
        """What a tool rule stands on: the capability and its fixtures, sweeping through the class's cache."""
        return ToolSweeps(capability, deps, workspaces, tool_calls, tool_runs)

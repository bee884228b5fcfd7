"""A rule's `requires`, resolved by its guard before the body runs, in one fixed order, into one classified skip.

The order is the order of the skip kinds: a rule whose backend lacks the protocol is `not-applicable` whatever its
switches say, a missing optional fixture comes before a declared limit, and an environment tool is looked for
(one command) only when everything else holds. Rule bodies never re-check any of these.

The subject's own shape (`SUBJECT`: a LocalWorkspaceBackend, the workspace a capability supplies being read-only or
running commands, ...) is `not-applicable` too, but resolved last, where rule bodies used to check it: a rule that
also lacks a fixture, a switch or an engine keeps the skip it had then.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic_ai.capabilities import LocalWorkspace
from pydantic_ai.workspaces import (
    LocalWorkspaceBackend,
    SupportsCommands,
    SupportsFilesystem,
    SupportsRealpath,
    Workspace,
    WrapperWorkspace,
)

from .._frames import machinery_hidden
from ..vocabulary import CAPABILITY_AREAS, TOOL_AREAS, Platform
from ._rule import Rule
from ._supplied import layer_names, select
from ._versions import pydantic_ai_at_least, pydantic_ai_version

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = (
    'ENGINES',
    'POSIX_ONLY',
    'POSIX_TOOLS',
    'PROBE',
    'PROTOCOLS',
    'SUBJECT',
    'SWITCHES',
    'TOOLS',
    'RuleSkipped',
    'Unmet',
    'fixtures_needed',
    'probe_verdict',
    'resolve',
    'skip_reason',
    'subject_fixture',
    'tools_to_probe',
)

PROTOCOLS: dict[str, tuple[tuple[type, ...], str]] = {
    'commands': ((SupportsCommands,), 'the backend does not implement SupportsCommands'),
    'filesystem': (
        (SupportsFilesystem, SupportsCommands),
        'the backend implements neither SupportsFilesystem nor SupportsCommands',
    ),
    'realpath': ((SupportsRealpath,), 'the backend does not implement SupportsRealpath'),
}
"""Protocol requirements: the backend must implement one of these (files are reachable through commands too)."""
NO_RUN_IN_DIRECTORY = "the backend does not implement SupportsRunInDirectory (`run_in_directory`), optional on 'posix'"
SHELL_FILES = (
    "pydantic-ai's facade runs no file method or realpath through this backend's shell: it has no commands, or "
    'native file methods and SupportsRealpath'
)
NATIVE_FILES = (
    "the backend has no file methods of its own: pydantic-ai's shell-derived filesystem moves files in commands of at "
    'most 64 KiB, so no file size crosses a boundary of this backend (large_file_round_trip drives 8 MiB through them)'
)
OPTIONAL_FIXTURES: dict[str, tuple[tuple[str, ...], str]] = {
    'fresh': (('fresh_backend',), 'provide the `fresh_backend` fixture'),
    'attach': (('attach_backend',), 'provide the `attach_backend` fixture'),
    'destroy': (
        ('destructive_backend', 'destroy_environment'),
        'provide `destructive_backend` and `destroy_environment`',
    ),
    'sacrificial': (
        ('destructive_backend',),
        'provide `destructive_backend` (or `fresh_backend`): a shared environment is never asked to destroy itself',
    ),
    'destroy_ref': (('destroy_environment',), 'provide `destroy_environment`, `async (ref) -> None`,'),
    'policy': (('policy',), 'provide `policy`, a function wrapping a `Workspace` in your policy wrapper,'),
    'faults': (('inject_fault',), 'provide `inject_fault`, `(backend, kind) -> error type` arming an SDK fault,'),
    'stop': (
        ('destructive_backend', 'stop_environment'),
        'provide `stop_environment`, `async (backend) -> None` killing its init, and `destructive_backend` (or '
        '`fresh_backend`)',
    ),
    'restart': (
        ('destructive_backend', 'attach_backend', 'stop_environment', 'start_environment'),
        'provide `stop_environment` and `start_environment`, `async (backend) -> None`, with `attach_backend` and '
        '`destructive_backend` (or `fresh_backend`)',
    ),
}
SWITCHES: dict[str, tuple[str, str]] = {
    'posix_shell': ('has_real_posix_shell', 'the backend has no real POSIX shell, processes or byte streams'),
    'inherited_pipes': (
        'can_detect_exit_with_inherited_output_pipes',
        'the provider reports an exit only once every holder of the output pipes has exited',
    ),
    'shell_permissions': (
        'filesystem_honors_shell_permissions',
        "the provider's file API bypasses the command user's permissions",
    ),
    'parent_file_errors': ('enforces_parent_file_errors', 'the backend has no real path traversal'),
}
"""Switch requirements: upstream's switch fixture, and what its `False` declares."""
ENGINES: dict[str, tuple[tuple[str, ...], str]] = {
    'dbos': (('dbos',), 'DBOS is not installed (`pip install workspace-conformance[durable]`)'),
    'prefect': (('prefect',), 'Prefect is not installed (`pip install workspace-conformance[durable]`)'),
    'temporal': (('temporalio',), 'temporalio is not installed (`pip install workspace-conformance[durable]`)'),
}
"""Durable-engine requirements: the modules the engine's local harness needs, and the skip when one is missing."""
SUBJECT: dict[str, str] = {
    'local_workspace': 'the capability is not a LocalWorkspace',
    'read_only': "the capability's workspace does not report read_only",
    'writable': "the capability's workspace is read-only: it refuses every change (the read-only rules check that)",
    'workspace_commands': "the capability's workspace runs no commands",
    'files_only': "the capability's workspace runs commands",
    'local_backend': 'the backend is {backend}, not a LocalWorkspaceBackend',
    'wrapper_layer': "the capability's workspace ({workspace}) has no WrapperWorkspace layer and no policy wraps it",
}
"""Requirements on the subject's own shape, in the order they are resolved, and the skip (`not-applicable`) of each.

`local_backend` reads a backend rule's backend, or the backend beneath the workspace a capability supplies; the others
are for capability rules: `local_workspace` reads the capability, the rest the workspace `get_workspace(ref=None)`
supplies (`wrapper_layer` that workspace and the `policy` fixture's wrapping of it).
"""
CAPABILITY_ONLY = frozenset(SUBJECT) - {'local_backend', 'files_only'}
"""Requirements only a capability rule may declare: they read the workspace a capability supplies."""
POSIX_TOOLS = frozenset({'posix_shell', 'ln', 'mkfifo', 'setsid', 'shell_files', 'shell_permissions'})
"""Requirements only a POSIX workspace meets: a rule that needs one has no 'windows' form."""
POSIX_ONLY = POSIX_TOOLS | {'commands', 'inherited_pipes'}
"""Requirements that make a rule 'posix' only unless it declares a 'windows' form: its commands are POSIX shell."""
TOOLS = ('ln', 'mkfifo', 'setsid')
"""Environment tools, looked for with `command -v` in the backend's environment."""
SYMLINK_FIXTURES = ('make_symlink', 'storage_holds_symlinks')
NO_SYMLINKS = (
    'the backend has no commands, no SupportsRealpath and no `make_symlink`, so its storage is taken to hold no '
    "symlinks (pydantic-ai's docs: a filesystem-only backend whose storage can hold symlinks should implement "
    'SupportsRealpath; without it `realpath` only normalizes text, which is exact only for storage that cannot hold '
    'symlinks); if yours can, return True from `storage_holds_symlinks`'
)
NO_PROVIDER = 'a LocalWorkspaceBackend runs on this host and calls no provider SDK, so it has no SDK error to pass on'
NO_INIT = (
    'a LocalWorkspaceBackend is a directory on this host, with no init of its own to die or environment to stop and '
    'start again'
)
NOT_ON_LOCAL = {
    'faults': ('inject_fault', NO_PROVIDER),
    'stop': ('stop_environment', NO_INIT),
    'restart': ('stop_environment', NO_INIT),
}
"""Requirements a `LocalWorkspaceBackend` cannot meet unless the fixture named gives it: the reason it does not."""
RUNS_COMMANDS = "the backend runs commands, so pydantic-ai's Workspace.realpath resolves links through its shell"
PROBE = 'for tool do command -v "$tool" >/dev/null 2>&1 || { printf %s "$tool"; exit 3; }; done'
"""Shell that exits 3 naming the first of its arguments that is not a command in the environment."""


_NO_FORM = (
    'the workspace is {platform!r} and this rule has a {forms} form only: its commands are POSIX shell or POSIX tools '
    '(`sh`, `printf`, `ln`, `mkfifo`), which a {platform!r} workspace does not run'
)


_ONLY_FOR = 'the workspace is {platform!r} and this rule is on what only a {forms} workspace must do'


def subject_fixture(rule: Rule) -> str:
    """The fixture a rule checks: `capability` for the capability and tool suites' areas, else `backend`."""
    return 'capability' if rule.area in CAPABILITY_AREAS or rule.area in TOOL_AREAS else 'backend'


def skip_reason(rule: Rule, kind: str, why: str) -> str:
    """The one format of every skip reason a person reads: `[area/rule_id] kind: why`."""
    return f'[{rule.qualified}] {kind}: {why}'


class RuleSkipped(pytest.skip.Exception):  # type: ignore[misc,name-defined]
    """A rule's classified skip: pytest reports it as a skip, and the kind and reason travel as data."""

    def __init__(self, rule: Rule, kind: str, why: str) -> None:
        super().__init__(skip_reason(rule, kind, why))
        self.rule_id = rule.id
        self.kind = kind
        self.why = why


@dataclass(frozen=True)
class Unmet:
    """The first requirement a rule's run does not meet: the skip kind it gives and why."""

    kind: str
    why: str


def fixtures_needed(rule: Rule) -> tuple[str, ...]:
    """The fixtures the guard reads to resolve `rule.requires`, besides `backend` and `declared_limits`."""
    names: list[str] = []
    for requirement in rule.requires:
        if requirement in OPTIONAL_FIXTURES:
            names.extend(OPTIONAL_FIXTURES[requirement][0])
        elif requirement in SWITCHES:
            names.append(SWITCHES[requirement][0])
        elif requirement in ('ln', 'holds_symlinks'):
            names.extend(SYMLINK_FIXTURES)
        elif requirement in SUBJECT and subject_fixture(rule) == 'capability':
            names.extend(('deps', 'policy') if requirement == 'wrapper_layer' else ('deps',))
    return tuple(dict.fromkeys(names))


def resolve(rule: Rule, backend: object, fixtures: Mapping[str, Any], platform: Platform = 'posix') -> Unmet | None:
    """The first unmet requirement that needs no backend call, in the fixed order of the skip kinds, or None."""
    if platform not in rule.platforms:
        unmet = _contract(rule, backend, fixtures) or _protocols(rule, backend, fixtures)
        if unmet is not None:
            return unmet
        if platform == 'posix':  # a rule on what only a 'windows' workspace must do
            return Unmet('platform', _ONLY_FOR.format(platform=platform, forms=' and '.join(rule.platforms)))
        return Unmet('platform', _NO_FORM.format(platform=platform, forms=' and '.join(rule.platforms)))
    for check in (_contract, _protocols, _optional_fixtures, _switches, _declared, _engines, _subject):
        unmet = check(rule, backend, fixtures)
        if unmet is not None:
            return unmet
    return None


def tools_to_probe(rule: Rule, backend: object, fixtures: Mapping[str, Any]) -> tuple[str, ...]:
    """The environment tools to look for before the body runs (`ln` only when no `make_symlink` makes links)."""
    if not isinstance(backend, SupportsCommands):
        return ()
    wanted = [tool for tool in TOOLS if tool in rule.requires]
    if 'ln' in wanted and fixtures.get('make_symlink') is not None:
        wanted.remove('ln')
    return tuple(wanted)


def probe_verdict(tools: tuple[str, ...], exit_code: object, stdout: object) -> Unmet | None:
    """What the probe's result says: an environment skip when a tool, or the shell itself, is missing."""
    if exit_code == 127:
        return Unmet('environment', f'no POSIX shell `sh` to look for {", ".join(tools)} with (exit 127)')
    if exit_code == 3 and isinstance(stdout, str) and stdout in tools:
        return Unmet('environment', f'no `{stdout}` in the environment (`command -v {stdout}` found nothing)')
    return None  # found, or an answer the body will judge: a broken backend must fail, not skip


def _contract(rule: Rule, backend: object, fixtures: Mapping[str, Any]) -> Unmet | None:
    if rule.contract is None:
        return None
    major, minor = (int(part) for part in rule.contract.split('.'))
    if pydantic_ai_at_least((major, minor)):
        return None
    why = f'the installed pydantic-ai {pydantic_ai_version()} predates this clause of the contract ({rule.contract})'
    return Unmet('not-applicable', why)


def _protocols(rule: Rule, backend: object, fixtures: Mapping[str, Any]) -> Unmet | None:
    for requirement, (protocols, why) in PROTOCOLS.items():
        if requirement in rule.requires and not isinstance(backend, protocols):
            return Unmet('not-applicable', why)
    if 'run_in_directory' in rule.requires and not callable(getattr(backend, 'run_in_directory', None)):
        return Unmet('not-applicable', NO_RUN_IN_DIRECTORY)
    if ('ln' in rule.requires or 'holds_symlinks' in rule.requires) and not _can_hold_symlinks(backend, fixtures):
        return Unmet('not-applicable', NO_SYMLINKS)
    for requirement, (fixture, why) in NOT_ON_LOCAL.items():
        if requirement in rule.requires and fixtures.get(fixture) is None and _talks_to_no_provider(backend):
            return Unmet('not-applicable', why)
    if 'shell_files' in rule.requires and not uses_the_shell_for_files(backend):
        return Unmet('not-applicable', SHELL_FILES)
    if 'native_files' in rule.requires and not isinstance(_beneath(backend), SupportsFilesystem):
        return Unmet('not-applicable', NATIVE_FILES)
    return None


def _talks_to_no_provider(backend: object) -> bool:
    """Whether the backend is a `LocalWorkspaceBackend`, which runs on this host and calls no provider SDK."""
    return isinstance(_beneath(backend), LocalWorkspaceBackend)


def _beneath(backend: object) -> object:
    """The backend beneath a `Workspace` facade, or `backend` itself."""
    return backend.backend if isinstance(backend, Workspace) else backend


def uses_the_shell_for_files(backend: object) -> bool:
    """Whether the facade derives file methods or realpath from the commands of the backend beneath every layer."""
    beneath = _beneath(backend)
    native = isinstance(beneath, SupportsFilesystem) and isinstance(beneath, SupportsRealpath)
    return isinstance(beneath, SupportsCommands) and not native


def _can_hold_symlinks(backend: object, fixtures: Mapping[str, Any]) -> bool:
    """Whether the backend's storage may hold symlinks: it says so, or it has commands, realpath or `make_symlink`."""
    declared = fixtures.get('storage_holds_symlinks')
    if isinstance(declared, bool):
        return declared
    if fixtures.get('make_symlink') is not None:
        return True
    return isinstance(backend, SupportsCommands | SupportsRealpath)


def _optional_fixtures(rule: Rule, backend: object, fixtures: Mapping[str, Any]) -> Unmet | None:
    for requirement, (names, ask) in OPTIONAL_FIXTURES.items():
        if requirement in rule.requires and any(fixtures.get(name) is None for name in names):
            return Unmet('fixture-missing', f'{ask} to check this')
    if 'ln' in rule.requires and not isinstance(backend, SupportsCommands) and fixtures.get('make_symlink') is None:
        why = 'the storage holds symlinks but the backend has no commands: provide `make_symlink` to create them'
        return Unmet('fixture-missing', why)
    return None


def _switches(rule: Rule, backend: object, fixtures: Mapping[str, Any]) -> Unmet | None:
    for requirement, (switch, meaning) in SWITCHES.items():
        if requirement in rule.requires and fixtures.get(switch) is False:
            return Unmet('declared-limit', f'`{switch}` is False: {meaning}')
    return None


def _declared(rule: Rule, backend: object, fixtures: Mapping[str, Any]) -> Unmet | None:
    limits = fixtures.get('declared_limits')
    if isinstance(limits, Mapping) and rule.id in limits:
        return Unmet('declared-limit', str(limits[rule.id]))
    return None


def _engines(rule: Rule, backend: object, fixtures: Mapping[str, Any]) -> Unmet | None:
    for requirement, (modules, why) in ENGINES.items():
        if requirement in rule.requires and any(importlib.util.find_spec(module) is None for module in modules):
            return Unmet('environment', why)
    return None


def _subject(rule: Rule, subject: object, fixtures: Mapping[str, Any]) -> Unmet | None:
    """The first of the subject's shape requirements (`SUBJECT`) it does not meet.

    A capability whose `get_workspace` raises or supplies nothing meets them all here: its rule's body fails on that.
    """
    needs = [requirement for requirement in SUBJECT if requirement in rule.requires]
    if not needs:
        return None
    if subject_fixture(rule) == 'backend':
        if 'local_backend' in needs and not isinstance(subject, LocalWorkspaceBackend):
            return Unmet('not-applicable', SUBJECT['local_backend'].format(backend=type(subject).__name__))
        if 'files_only' in needs and isinstance(_beneath(subject), SupportsCommands):
            return Unmet('not-applicable', RUNS_COMMANDS)
        return None
    if 'local_workspace' in needs and not isinstance(subject, LocalWorkspace):
        return Unmet('not-applicable', SUBJECT['local_workspace'])
    capability: Any = subject  # whatever the fixture gave: one without `get_workspace` fails in the body
    try:
        workspace = select(capability, fixtures.get('deps'), None)
    except Exception:
        return None
    if workspace is None:
        return None
    runs_commands = not workspace.read_only and isinstance(workspace.backend, SupportsCommands)
    unmet = {
        'read_only': not workspace.read_only,
        'writable': workspace.read_only,
        'workspace_commands': not runs_commands,
        'files_only': isinstance(workspace.backend, SupportsCommands),
        'local_backend': not isinstance(workspace.backend, LocalWorkspaceBackend),
    }
    for requirement in needs:
        if unmet.get(requirement, False):
            return Unmet('not-applicable', SUBJECT[requirement].format(backend=type(workspace.backend).__name__))
    if 'wrapper_layer' in needs and not _wrapped(workspace, fixtures.get('policy')):
        return Unmet('not-applicable', SUBJECT['wrapper_layer'].format(workspace=layer_names(workspace)))
    return None


def _wrapped(workspace: Workspace, policy: object) -> bool:
    """Whether `workspace` has a `WrapperWorkspace` layer, or `policy` wraps it in one (true when the policy raises)."""
    layer: object = workspace
    while isinstance(layer, Workspace):
        if isinstance(layer, WrapperWorkspace):
            return True
        layer = layer._backend  # the layers themselves are what the requirement reads
    if not callable(policy):
        return False
    try:
        return isinstance(policy(workspace), WrapperWorkspace)
    except Exception:
        return True  # the rule's body calls the policy too, and fails on what it raises

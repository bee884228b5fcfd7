"""Mutants of the capability rules: `get_workspace` hooks, policy wrappers and runs gone wrong.

Each works only in the scratch directory it is given: the directories it creates or attaches to are there, or are
directories the suite itself made (a neighbour, a symlink) and removes.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.workspaces import (
    CommandResult,
    LocalWorkspaceBackend,
    ReadOnlyWorkspace,
    Workspace,
    WorkspaceBackend,
    WorkspaceCommand,
    WorkspaceReadOnlyError,
    WorkspaceRef,
    WrapperWorkspace,
)

from workspace_conformance.doubles import InMemoryBackend, InMemoryProvider
from workspace_conformance.targets.capability import CapabilitySetup

from ..registry import capability_mutant


def _project(run_dir: Path) -> Path:
    path = run_dir / 'project'
    path.mkdir(parents=True, exist_ok=True)
    (path / 'README').write_text('read me')
    return path


async def _remove_directory(ref: WorkspaceRef) -> None:
    shutil.rmtree(ref.id)


def _local(kind: type[LocalWorkspace[Any]], **options: Any) -> Any:
    """A mutant's build: `kind` over the rule's project directory, destroyed by removing the directory."""

    def build(run_dir: Path) -> CapabilitySetup:
        return CapabilitySetup(capability=kind(_project(run_dir), **options), destroy_environment=_remove_directory)

    return build


def on_provider(
    capability: Callable[[InMemoryProvider], AbstractCapability[Any]], *, local: bool = True
) -> Callable[[Path], CapabilitySetup]:
    """A mutant's build: `capability(provider)` over an `InMemoryProvider`, of local directories in the rule's
    scratch directory unless `local` is False (then files only, in memory)."""

    def build(run_dir: Path) -> CapabilitySetup:
        root = run_dir / 'environments' if local else None
        provider = InMemoryProvider(local_root=root, files={'README': b'hello'})
        return CapabilitySetup(capability=capability(provider), destroy_environment=provider.destroy)

    return build


def _provider(**switches: bool) -> Callable[[Path], CapabilitySetup]:
    """A mutant's build: an `InMemoryProvider` capability with one of its bug switches on."""
    return on_provider(lambda provider: provider.capability(**switches))


# --- selection ---


@dataclass
class EagerDirectory(LocalWorkspace[Any]):
    """Makes a per-run directory inside `get_workspace`, before any operation."""

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        if ref is None:
            tempfile.mkdtemp(prefix='run-', dir=self.working_dir)
        return super().get_workspace(ctx, ref=ref)


capability_mutant(
    name='creates_a_directory_in_get_workspace',
    kills=['get_workspace_builds_without_io'],
    bug='get_workspace makes a scratch directory for the run as it selects the workspace, not on first use.',
    build=_local(EagerDirectory),
)
capability_mutant(
    name='remembers_the_last_environment',
    kills=[
        'get_workspace_is_repeatable_and_keeps_no_state',
        'workspace_new_starts_fresh',
        'sanitized_history_offers_no_ref',
    ],
    bug='get_workspace(ref=None) reattaches to the environment it created last, so a fresh run inherits the old one.',
    build=_provider(remember_last=True),
)
capability_mutant(
    name='fresh_backend_for_a_known_ref',
    kills=[
        'a_recognized_ref_is_supplied_with_exactly_that_ref',
        'a_run_continues_in_the_ref_it_recorded',
        'a_run_without_workspace_capabilities_carries_the_ref_on',
        'a_dbos_run_reattaches_after_recovery',
        'a_prefect_run_reattaches_after_a_flow_retry',
        'a_temporal_run_reattaches_after_an_activity_retry',
    ],
    bug='get_workspace ignores the ref it is given and hands out a fresh backend.',
    build=_provider(fresh_for_refs=True),
)


class RecreatingBackend(LocalWorkspaceBackend):
    """Recreates its directory when it is gone, instead of reporting the environment unavailable."""

    async def working_dir(self) -> str:
        assert self.ref is not None
        os.makedirs(self.ref.id, exist_ok=True)
        return await super().working_dir()


@dataclass
class Recreating(LocalWorkspace[Any]):
    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        backend = RecreatingBackend(self.working_dir)
        return None if ref is not None and ref != backend.ref else backend


capability_mutant(
    name='recreates_a_destroyed_environment',
    kills=['a_gone_environment_raises_unavailable_and_never_starts_over'],
    bug='A backend recreates an empty directory for a ref whose environment was destroyed, starting over silently.',
    build=_local(Recreating),
)

# --- untrusted refs ---


@dataclass
class AnyDirectory(LocalWorkspace[Any]):
    """Attaches to whatever directory a ref names."""

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        if ref is None or ref.provider != 'local':
            return super().get_workspace(ctx, ref=ref)
        return _Claimed(LocalWorkspaceBackend(self.working_dir), ref)


class _Claimed(LocalWorkspaceBackend):
    """A local backend on one directory that reports the ref it was asked for."""

    def __init__(self, backend: LocalWorkspaceBackend, ref: WorkspaceRef) -> None:
        super().__init__(backend.ref.id)
        self._claimed = ref

    @property
    def ref(self) -> WorkspaceRef:
        return self._claimed


capability_mutant(
    name='attaches_to_any_directory',
    kills=[
        'hostile_ref_ids_are_declined',
        'a_neighbouring_environment_is_declined',
        'other_spellings_of_its_path_are_declined',
        'an_unrecognized_history_ref_ends_the_run',
        'an_unrecognized_workspace_ref_ends_the_run',
    ],
    bug='get_workspace attaches to whatever directory a ref from history names.',
    build=_local(AnyDirectory),
)
capability_mutant(
    name='accepts_any_id_of_its_provider',
    kills=['hostile_ref_ids_are_declined', 'a_neighbouring_environment_is_declined', 'capabilities_are_asked_in_order'],
    bug='get_workspace attaches to any id of its own provider without checking that it created that environment.',
    build=_provider(accept_any_ref=True),
)
capability_mutant(
    name='ignores_the_provider',
    kills=['another_providers_ref_is_declined'],
    bug="get_workspace compares only the ref's id, so another provider's ref with a matching id is attached to.",
    build=_provider(ignore_provider=True),
)


@dataclass
class NormalizingPaths(LocalWorkspace[Any]):
    """Resolves the ref's path before comparing it with its own, and attaches to what it resolves to."""

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        if ref is not None and ref.provider == 'local' and os.path.realpath(ref.id) == self.working_dir:
            return LocalWorkspaceBackend(self.working_dir)
        return super().get_workspace(ctx, ref=ref)


capability_mutant(
    name='resolves_ref_paths_before_comparing',
    kills=['other_spellings_of_its_path_are_declined'],
    bug='get_workspace resolves symlinks and trailing slashes in a ref path, accepting spellings it never recorded.',
    build=_local(NormalizingPaths),
)

# --- runs ---


class RotatingRef(LocalWorkspaceBackend):
    """Reports a new session id as its ref after every operation."""

    def __init__(self, root: str) -> None:
        super().__init__(root)
        self._calls = 0

    @property
    def ref(self) -> WorkspaceRef:
        return WorkspaceRef(provider='local', id=f'{super().ref.id}#session-{self._calls}')

    async def working_dir(self) -> str:
        self._calls += 1
        return await super().working_dir()


@dataclass
class Rotating(LocalWorkspace[Any]):
    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        return RotatingRef(str(self.working_dir)) if ref is None else None


capability_mutant(
    name='ref_changes_after_each_operation',
    kills=['the_recorded_ref_is_the_result_workspace_ref'],
    bug="The workspace's ref carries a session counter, so the ref a run records is not the one its tools used.",
    build=_local(Rotating),
)


# --- policies ---


class ReadOnlyButRuns(ReadOnlyWorkspace):
    """Refuses file changes but lets commands run, which can change anything."""

    async def run(  # type: ignore[override]  # the bug: it returns where the read-only policy never does
        self, command: WorkspaceCommand, **kwargs: Any
    ) -> CommandResult:
        return await self.wrapped.run(command, **kwargs)


@dataclass
class ReadOnlyPolicy(LocalWorkspace[Any]):
    """A read-only capability whose policy wrapper is `layer`."""

    layer: type[Workspace] = ReadOnlyWorkspace

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        backend = LocalWorkspaceBackend(self.working_dir)
        return None if ref is not None and ref != backend.ref else self.layer(Workspace(backend))


capability_mutant(
    name='read_only_lets_commands_run',
    kills=['a_read_only_workspace_refuses_every_change'],
    bug='A read-only wrapper refuses file changes but forwards run(), so `rm -rf` still works.',
    build=_local(ReadOnlyPolicy, layer=ReadOnlyButRuns),
)


class RefusesTextOnly(ReadOnlyWorkspace):
    """Refuses `write_text` itself but forwards `write_bytes`, which an outer layer's `write_text` calls."""

    async def write_bytes(self, path: str, data: bytes) -> None:  # type: ignore[override]  # the bug
        await self.wrapped.write_bytes(path, data)

    async def write_text(self, path: str, content: str, *, encoding: str = 'utf-8') -> None:
        raise WorkspaceReadOnlyError('read-only')


capability_mutant(
    name='read_only_guards_text_not_bytes',
    kills=['a_read_only_workspace_refuses_every_change', 'read_only_holds_through_stacked_wrappers'],
    bug="A read-only wrapper overrides write_text, not write_bytes, so another layer's write_text gets through.",
    build=_local(ReadOnlyPolicy, layer=RefusesTextOnly),
)


class RefusesSilently(WrapperWorkspace):
    """Refuses every file change with `WorkspaceReadOnlyError` but does not report `read_only`."""

    async def write_bytes(self, path: str, data: bytes) -> None:
        raise WorkspaceReadOnlyError('no writes')


capability_mutant(
    name='refuses_writes_without_reporting_read_only',
    kills=['a_workspace_that_refuses_changes_reports_read_only'],
    bug='A policy wrapper refuses writes but reports read_only False, so capabilities keep offering write tools.',
    build=_local(ReadOnlyPolicy, layer=RefusesSilently),
)


class NoWrites(WrapperWorkspace):
    """A user's policy that refuses file writes and forgets that commands write files too."""

    async def write_bytes(self, path: str, data: bytes) -> None:
        raise PermissionError(f'writes are not allowed: {path}')


def _with_leaky_policy(run_dir: Path) -> CapabilitySetup:
    return CapabilitySetup(capability=LocalWorkspace(_project(run_dir)), policy=NoWrites)


capability_mutant(
    name='policy_bypassed_by_commands',
    kills=['a_policy_wrapper_keeps_its_policy_when_commands_exist'],
    bug="A user's policy wrapper refuses write_bytes but not run(), so `sh -c 'echo > f'` writes anyway.",
    build=_with_leaky_policy,
)


class RootedByText(WrapperWorkspace):
    """The docs' RootedWrites with its check on the path as written: `..` is collapsed, links are not followed."""

    async def write_bytes(self, path: str, data: bytes) -> None:
        root = await self.working_dir()
        target = await self.resolve(path)
        if posixpath.commonpath((root, target)) != root:
            raise WorkspaceReadOnlyError('outside the allowed root')
        await self.wrapped.write_bytes(path, data)

    async def run(self, command: Any, **kwargs: Any) -> Any:
        raise WorkspaceReadOnlyError('commands bypass file policy')


def _with_textual_root(run_dir: Path) -> CapabilitySetup:
    return CapabilitySetup(capability=LocalWorkspace(_project(run_dir)), policy=RootedByText)


capability_mutant(
    name='rooted_policy_checks_the_text',
    kills=['a_rooted_policy_checks_where_a_write_really_leads'],
    bug="A user's policy keeps writes under the working dir by the path's text, so a link inside leads its writes out.",
    build=_with_textual_root,
)


class UnderPrefix(WrapperWorkspace):
    """Refuses writes outside a prefix, but its `durable_policy()` is the default `()`."""

    def __init__(self, wrapped: Workspace, *, prefix: str = '/') -> None:
        super().__init__(wrapped)
        self.prefix = prefix


capability_mutant(
    name='durable_policy_forgets_its_arguments',
    kills=['durable_policy_names_the_arguments_that_change_behaviour'],
    bug='A wrapper built with a prefix argument returns durable_policy() == (), so a durable rebuild may drop it.',
    build=_local(ReadOnlyPolicy, layer=UnderPrefix),
)

# --- rebuild ---


@dataclass
class PerObject(AbstractCapability[Any]):
    """Keeps each workspace's files in the Python object: a rebuild from the ref starts empty."""

    id: str | None = 'per_object'

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        if ref is None:
            return InMemoryBackend()
        return InMemoryBackend(ref=ref, lazy=False) if ref.provider == 'memory' else None


capability_mutant(
    name='files_live_in_the_python_object',
    kills=[
        'rebuilt_workspaces_reach_the_same_files',
        'a_run_continues_in_the_ref_it_recorded',
        'a_run_without_workspace_capabilities_carries_the_ref_on',
        'a_dbos_run_reattaches_after_recovery',
        'a_prefect_run_reattaches_after_a_flow_retry',
    ],
    bug='The backend keeps files in the Python object, so a workspace rebuilt from the ref sees none of them.',
    build=lambda run_dir: CapabilitySetup(capability=PerObject()),
)


@dataclass
class ReadOnlyWhenFresh(LocalWorkspace[Any]):
    """Read-only for a fresh run, writable when rebuilt from a ref."""

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        backend = LocalWorkspaceBackend(self.working_dir)
        if ref is not None:
            return backend if ref == backend.ref else None
        return ReadOnlyWorkspace(Workspace(backend))


capability_mutant(
    name='policy_lost_on_rebuild',
    kills=['rebuilt_workspaces_keep_the_ref_and_the_policy', 'the_policy_reaches_tools_in_a_continued_run'],
    bug='get_workspace applies its read-only policy only without a ref, so a durable rebuild drops it.',
    build=_local(ReadOnlyWhenFresh),
)

# --- hygiene ---


@dataclass
class ForwardsEnviron(LocalWorkspace[Any]):
    """Forwards this process's whole environment to commands."""

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        backend = LocalWorkspaceBackend(self.working_dir, env=dict(os.environ))
        return None if ref is not None and ref != backend.ref else backend


capability_mutant(
    name='forwards_the_runners_environment',
    kills=['commands_do_not_see_the_runners_secrets', 'local_commands_inherit_only_the_documented_variables'],
    bug="The capability passes os.environ to its backend's env, so the runner's API keys reach commands.",
    build=_local(ForwardsEnviron),
)


@dataclass
class ForwardsUser(LocalWorkspace[Any]):
    """Forwards a few harmless-looking variables that its `env` does not declare."""

    extra: Mapping[str, str] | None = None

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        backend = LocalWorkspaceBackend(self.working_dir, env={'USER': 'runner', 'TERM': 'xterm'})
        return None if ref is not None and ref != backend.ref else backend


capability_mutant(
    name='forwards_undeclared_variables',
    kills=['local_commands_inherit_only_the_documented_variables'],
    bug='The capability adds USER and TERM to every command without declaring them in its env.',
    build=_local(ForwardsUser),
)

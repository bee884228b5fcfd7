"""Mutants of the environment rules: the runner's variables forwarded, an unstorable ref, a missed destruction."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import anyio.to_thread
from pydantic_ai.exceptions import UserError
from pydantic_ai.workspaces import (
    CommandResult,
    LocalWorkspaceBackend,
    Workspace,
    WorkspaceCommand,
    WorkspaceRef,
    WorkspaceUnavailableError,
)

from workspace_conformance.doubles.forwarding import RunCall
from workspace_conformance.targets.local_shell import CommandsOnly

from ..registry import breaks, mutant, shared_dir
from ._shared import InterceptsRun, RewritesCommands, _below, _sacrificial_dir


@breaks(
    kills=['commands_do_not_see_the_runners_environment'],
    bug="run() starts commands with {**os.environ, **env}, so the runner's API keys reach every command.",
)
class ForwardsTheRunnersEnvironment(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        return await self._forward(dataclasses.replace(call, env={**os.environ, **(call.env or {})}))


@breaks(
    kills=['the_ref_survives_message_storage'],
    bug='ref is WorkspaceRef(id=self.root) with a pathlib.Path, which a stored history gives back as a str.',
    name='puts_a_path_object_in_the_ref',
)
class PathInTheRef(LocalWorkspaceBackend):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._root = root.resolve()

    @property
    def ref(self) -> WorkspaceRef:
        return WorkspaceRef(provider='local', id=self._root)  # type: ignore[arg-type]  # the bug: a Path, not a str


class ExistsWithoutTheEnvironment(LocalWorkspaceBackend):
    async def exists(self, path: str) -> bool:
        return await anyio.to_thread.run_sync(os.path.lexists, path)


mutant(
    name='exists_ignores_a_destroyed_environment',
    kills=['every_operation_on_a_destroyed_environment_raises_unavailable'],
    bug='exists() is os.path.lexists(path) with no check of the environment, so a destroyed one answers False.',
    destructive_backend=lambda run_dir: ExistsWithoutTheEnvironment(_sacrificial_dir(run_dir)),
)


class WithoutFind(InterceptsRun):
    """Runs commands with a PATH of the shell filesystem's utilities, `find` left out, like a minimal image."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._bin = root.parent / 'minimal-bin'
        self._bin.mkdir(exist_ok=True)
        for tool in ('sh', 'env', 'base64', 'cp', 'dd', 'mkdir', 'mv', 'readlink', 'rm', 'wc'):
            found = shutil.which(tool)
            link = self._bin / tool
            if found is not None and not link.exists():
                link.symlink_to(found)

    async def _take_run(self, call: RunCall) -> CommandResult:
        return await self._forward(dataclasses.replace(call, env={**(call.env or {}), 'PATH': str(self._bin)}))


mutant(
    name='shell_filesystem_without_find',
    kills=['the_shell_filesystem_finds_its_utilities'],
    bug='A commands-only backend whose image has no `find`, so listing and reading through the shell fail.',
    backend=lambda run_dir: Workspace(CommandsOnly(WithoutFind(shared_dir(run_dir)))),
)


@breaks(
    kills=['missing_paths_raise_file_not_found'],
    bug="read_bytes() of a missing path raises pydantic-ai's UserError, which belongs to the facade, not backends.",
    name='raises_user_error_for_a_missing_path',
)
class UserErrorForMissingPaths(LocalWorkspaceBackend):
    async def read_bytes(self, path: str) -> bytes:
        try:
            return await super().read_bytes(path)
        except FileNotFoundError as error:
            raise UserError(f'no such file: {path}') from error


class ReadsNatively(CommandsOnly):
    """A commands backend that also reads files natively, the rest of `SupportsFilesystem` never written."""

    async def read_bytes(self, path: str) -> bytes:
        return await self._backend.read_bytes(path)


mutant(
    name='implements_part_of_the_file_methods',
    kills=['native_file_methods_are_all_or_none'],
    bug='The backend adds a native read_bytes to its commands but no other file method, so Workspace never calls it.',
    backend=lambda run_dir: ReadsNatively(LocalWorkspaceBackend(shared_dir(run_dir))),
)


class WriteRecreatesTheWorkingDir(LocalWorkspaceBackend):
    async def write_bytes(self, path: str, data: bytes) -> None:
        root = self._working_dir

        def make_parents() -> None:
            alive = root.is_dir()
            parent = Path(path).parent
            if _below(parent, root.parents[1]):  # the bug stays inside the sacrificial directory
                parent.mkdir(parents=True, exist_ok=True)  # the bug: `mkdir -p` before the environment is checked
            if not alive:
                raise WorkspaceUnavailableError(f'local workspace directory {root} does not exist')

        await anyio.to_thread.run_sync(make_parents)
        await super().write_bytes(path, data)


mutant(
    name='write_recreates_the_working_dir',
    kills=['every_operation_on_a_destroyed_environment_raises_unavailable'],
    bug='write_bytes runs `mkdir -p` of the parent before refusing a destroyed environment, recreating it empty.',
    destructive_backend=lambda run_dir: WriteRecreatesTheWorkingDir(_sacrificial_dir(run_dir)),
)


class RunsUnderAStrictUmask(RewritesCommands):
    """Every shell string runs after `umask 077`, as in an image whose login profile sets it."""

    def _rewrite_command(self, command: WorkspaceCommand, shell: bool) -> WorkspaceCommand:
        return f'umask 077; {command}' if shell and isinstance(command, str) else command


mutant(
    name='shell_writes_under_a_strict_umask',
    kills=['a_shell_derived_overwrite_keeps_the_file_mode'],
    bug="A commands-only backend's shell has umask 077, so the staged copy of a rewritten file drops its group and "
    'other bits.',
    backend=lambda run_dir: Workspace(CommandsOnly(RunsUnderAStrictUmask(shared_dir(run_dir)))),
)

"""Mutants of the platform rules: a declared platform, its paths, and `run_in_directory` (pydantic-ai >= 2.78).

`RunsInDirectory` is the correct shape they break: `LocalWorkspaceBackend` with `run_in_directory`, which starts the
command in `cwd` through the same runner as `run` (2.78's `HostWorkspaceBackend._run(..., cwd=)`).
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic_ai.workspaces import CommandResult, LocalWorkspaceBackend, WorkspaceCommand

from workspace_conformance.doubles.windows import WindowsMemoryBackend, WindowsMemoryCore

from ..registry import breaks, breaks_in_memory


@dataclass(frozen=True)
class InDirectory:
    """One `run_in_directory` call, as a value a mutant changes with `dataclasses.replace`."""

    command: WorkspaceCommand
    cwd: str
    shell: bool
    env: Mapping[str, str] | None
    timeout: float | None


class RunsInDirectory(LocalWorkspaceBackend):
    """`LocalWorkspaceBackend` with a correct `run_in_directory`: `run`, started in `cwd`; mutants change `_call`."""

    async def run_in_directory(
        self,
        command: WorkspaceCommand,
        *,
        cwd: str,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        return await self._call(InDirectory(command, cwd, shell, env, timeout))

    async def _call(self, call: InDirectory) -> CommandResult:
        run = LocalWorkspaceBackend._run  # slim >= 2.78: the runner `run` and `cwd=` share
        return await run(self, call.command, shell=call.shell, env=call.env, timeout=call.timeout, cwd=call.cwd)


@breaks(
    kills=['run_in_directory_adds_env_and_reports_like_run'],
    bug='run_in_directory() drops the env= of the call: only run() was taught to layer it over the backend env.',
)
class RunInDirectoryDropsEnv(RunsInDirectory):
    async def _call(self, call: InDirectory) -> CommandResult:
        return await super()._call(dataclasses.replace(call, env=None))


@breaks(
    kills=['run_in_directory_honours_timeout'],
    bug='run_in_directory() never passes timeout= to the provider, so a hung command in a directory runs forever.',
)
class RunInDirectoryIgnoresTimeout(RunsInDirectory):
    async def _call(self, call: InDirectory) -> CommandResult:
        return await super()._call(dataclasses.replace(call, timeout=None))


@breaks(
    kills=['run_in_directory_starts_in_cwd', 'run_in_directory_adds_env_and_reports_like_run'],
    bug='run_in_directory() accepts cwd= but starts every command in the working directory.',
)
class RunInDirectoryIgnoresCwd(RunsInDirectory):
    async def _call(self, call: InDirectory) -> CommandResult:
        return await self.run(call.command, shell=call.shell, env=call.env, timeout=call.timeout)


@breaks(
    kills=['run_in_directory_keeps_the_command_form'],
    bug='run_in_directory() joins an argv given with shell=True into one shell string instead of refusing it.',
)
class RunInDirectoryJoinsArgv(RunsInDirectory):
    async def _call(self, call: InDirectory) -> CommandResult:
        if call.shell and not isinstance(call.command, str):
            call = dataclasses.replace(call, command=shlex.join(call.command))
        if not call.shell and isinstance(call.command, str):
            call = dataclasses.replace(call, shell=True)
        return await super()._call(call)


@breaks(
    kills=['a_declared_platform_is_posix_or_windows'],
    bug="workspace_platform names the provider's OS ('linux') instead of the shell and path syntax pydantic-ai knows.",
)
class DeclaresItsOperatingSystem(LocalWorkspaceBackend):
    @property
    def workspace_platform(self) -> str:
        return 'linux'


@breaks_in_memory(
    kills=['a_windows_backend_runs_in_a_directory', 'run_starts_in_cwd'],
    bug="a 'windows' backend without run_in_directory: Workspace.run(cwd=...) has no sh to change directory with.",
)
class WindowsWithoutRunInDirectory(WindowsMemoryCore):
    pass


@breaks_in_memory(
    kills=['paths_are_absolute_paths_of_the_platform'],
    bug="a 'windows' backend that spells its working directory with forward slashes, as a POSIX-minded SDK does.",
)
class WindowsWithForwardSlashes(WindowsMemoryBackend):
    async def working_dir(self) -> str:
        return (await super().working_dir()).replace('\\', '/')


@breaks_in_memory(
    kills=['run_in_directory_adds_env_and_reports_like_run'],
    bug="a 'windows' backend whose run_in_directory() leaves env= out of the PowerShell it starts.",
)
class WindowsRunInDirectoryDropsEnv(WindowsMemoryBackend):
    async def run_in_directory(
        self,
        command: WorkspaceCommand,
        *,
        cwd: str,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        return await super().run_in_directory(command, cwd=cwd, shell=shell, timeout=timeout)


@breaks_in_memory(
    kills=['run_in_directory_honours_timeout', 'run_in_directory_keeps_the_command_form'],
    bug="a 'windows' backend whose run_in_directory() runs every string in cmd.exe: no timeout, no PowerShell.",
)
class WindowsRunInDirectoryInCmd(WindowsMemoryBackend):
    async def run_in_directory(
        self,
        command: WorkspaceCommand,
        *,
        cwd: str,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        if isinstance(command, str) and shell:
            return CommandResult(exit_code=1, stdout='', stderr=f"'{command.split()[0]}' is not recognized\r\n")
        return await super().run_in_directory(command, cwd=cwd, shell=shell, env=env, timeout=timeout)

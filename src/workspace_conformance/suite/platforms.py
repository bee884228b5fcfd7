"""Rules on pydantic-ai 2.78's platforms: what a backend says it is, its paths, and `run_in_directory`.

A backend may say it is a 'windows' workspace (`SupportsPlatform`): PowerShell for `shell=True`, Windows paths
everywhere the contract says POSIX, and `run_in_directory` (`SupportsRunInDirectory`) to start a command in a
directory, since there is no `sh` to change directory with. Any backend may implement `run_in_directory`; it is
then `run` started in `cwd`, every other argument honoured as `run` honours it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceTimeoutError

from ..authoring import (
    EXIT_0_ARGV,
    PWD_ARGV,
    PWD_SCRIPT,
    REPORT_COMMAND,
    SLEEP_COMMAND,
    Platform,
    commands_of,
    current_platform,
    expect_error,
    lines,
    paths,
    platform_argv,
    platform_form,
    rule,
    scratch,
    workspace_of,
)

__all__ = ('PlatformRules',)

BOTH: tuple[Platform, ...] = ('posix', 'windows')
Check = TypeVar('Check', bound=Callable[..., Any])


def _runs_in_directory(backend: WorkspaceBackend) -> Any:
    """The backend's `run_in_directory`: the guard skips the rule when it has none (`requires=['run_in_directory']`)."""
    return backend.run_in_directory  # type: ignore[attr-defined]


def _in_directory() -> Callable[[Check], Check]:
    """`@rule` of a `run_in_directory` rule (clause P04, slim 2.78): a form for each platform, the method required."""
    return rule(
        area='platform',
        requires=['commands', 'run_in_directory'],
        contract='2.78',
        since='0.3.0',
        must='P04',
        platforms=BOTH,
    )


class PlatformRules:
    """Rules on what a backend's platform makes of its paths and commands, and on `run_in_directory`."""

    @rule(area='platform', requires=['filesystem'], contract='2.78', since='0.3.0', must='P01')
    async def test_a_declared_platform_is_posix_or_windows(self, backend: WorkspaceBackend) -> None:
        """A backend that says its platform (`workspace_platform`) says 'posix' or 'windows', and always the same.

        One that does not say it (no SupportsPlatform) is 'posix', and `Workspace(backend).platform` says so.
        """
        declared: Any = backend  # SupportsPlatform is pydantic-ai 2.78's; older slims have no such protocol
        said = hasattr(declared, 'workspace_platform')
        first = declared.workspace_platform if said else 'posix'
        second = declared.workspace_platform if said else 'posix'
        assert first in BOTH, f"workspace_platform is {first!r}, not 'posix' or 'windows'"
        assert second == first, f'workspace_platform said {first!r}, then {second!r}'
        seen = workspace_of(backend).platform  # type: ignore[attr-defined,unused-ignore]  # slim >= 2.78
        assert seen == first, f'Workspace(backend).platform is {seen!r}, but the backend says {first!r}'

    @rule(area='platform', requires=['filesystem'], contract='2.78', since='0.3.0', must='P02')
    async def test_paths_are_absolute_paths_of_the_platform(self, backend: WorkspaceBackend) -> None:
        r"""`working_dir()` and each entry's `path` are absolute, normalized paths of the platform (a drive on Windows).

        A 'windows' backend's paths are Windows paths wherever the contract says POSIX paths: `C:\work\a.txt`.
        """
        workspace = workspace_of(backend)
        platform = current_platform()
        working_dir = await workspace.working_dir()
        assert paths.isabs(working_dir) and paths.normpath(working_dir) == working_dir, (
            f'on a {platform!r} workspace working_dir() is {working_dir!r}: not an absolute, normalized path there'
        )
        async with scratch(workspace) as root:
            directory = paths.join(root, 'Nested')
            expected = paths.join(directory, 'Entry.txt')
            await workspace.write_bytes(expected, b'x')
            stat = await workspace.stat(expected)
            listed = [entry.path for entry in await workspace.list_dir(directory)]
            for given, doing in ((stat.path, 'stat'), *((path, 'list_dir') for path in listed)):
                assert paths.normcase(given) == paths.normcase(expected), (
                    f'{doing} gave the path {given!r} for {expected!r} on a {platform!r} workspace'
                )

    @rule(area='platform', requires=['commands'], contract='2.78', since='0.3.0', must='P03', platforms=['windows'])
    async def test_a_windows_backend_runs_in_a_directory(self, backend: WorkspaceBackend) -> None:
        """A 'windows' backend implements `run_in_directory`, so `Workspace.run(cwd=...)` can start a command there."""
        assert callable(getattr(backend, 'run_in_directory', None)), (
            "a 'windows' backend has no `run_in_directory`: `Workspace.run(cwd=...)` raises UserError on it"
        )
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            result = await workspace.run(platform_argv(PWD_ARGV), cwd=root)
            expected = f'{await workspace.realpath(root)}\n'
            assert lines(result.stdout) == expected, f'with cwd={root!r} the command started in {result.stdout!r}'

    @_in_directory()
    async def test_run_in_directory_starts_in_cwd(self, backend: WorkspaceBackend) -> None:
        """`run_in_directory` starts the command in `cwd`, and the next `run` still starts in the working directory."""
        runs = _runs_in_directory(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            where = paths.join(root, 'Start Here')
            await workspace.make_dir(where)
            expected = await workspace.realpath(where)
            result = await runs(platform_argv(PWD_ARGV), cwd=where)
            assert (result.exit_code, lines(result.stdout)) == (0, f'{expected}\n'), (
                f'with cwd={where!r} the command exited {result.exit_code} in {result.stdout!r}'
            )
            after = await commands_of(backend).run(platform_argv(PWD_ARGV))
            home = await workspace.realpath(await workspace.working_dir())
            assert lines(after.stdout) == f'{home}\n', (
                f'after run_in_directory(cwd={where!r}), run() started in {after.stdout!r}, not {home!r}'
            )

    @_in_directory()
    async def test_run_in_directory_adds_env_and_reports_like_run(self, backend: WorkspaceBackend) -> None:
        """`run_in_directory` adds `env` over the backend's own, and returns the exit code and both streams as `run`."""
        runs = _runs_in_directory(backend)
        workspace = workspace_of(backend)
        command, shell = platform_form(REPORT_COMMAND)
        async with scratch(workspace) as root:
            result = await runs(command, cwd=root, shell=shell, env={'WC_ADDED': 'added value'})
            expected = (3, f'added value|{await workspace.realpath(root)}', 'to-err')
            observed = (result.exit_code, result.stdout, result.stderr)
            assert observed == expected, f'with env and cwd the command gave (exit, stdout, stderr) = {observed!r}'

    @_in_directory()
    async def test_run_in_directory_honours_timeout(self, backend: WorkspaceBackend) -> None:
        """A command `run_in_directory` starts that is still running at its `timeout` raises `WorkspaceTimeoutError`."""
        runs = _runs_in_directory(backend)
        workspace = workspace_of(backend)
        command, shell = platform_form(SLEEP_COMMAND)
        async with scratch(workspace) as root:
            with expect_error(WorkspaceTimeoutError, f'a 3600 s sleep with timeout=1 and cwd={root!r}'):
                await runs(command, cwd=root, shell=shell, timeout=1)

    @_in_directory()
    async def test_run_in_directory_keeps_the_command_form(self, backend: WorkspaceBackend) -> None:
        """`run_in_directory` refuses a form not matching `shell` (`TypeError`), and runs a shell string in `cwd`."""
        runs = _runs_in_directory(backend)
        workspace = workspace_of(backend)
        argv, script = platform_argv(EXIT_0_ARGV), platform_form(PWD_SCRIPT)
        async with scratch(workspace) as root:
            with expect_error(TypeError, f"run_in_directory('exit 0', cwd={root!r}) without shell=True"):
                await runs('exit 0', cwd=root)
            with expect_error(TypeError, f'run_in_directory({argv!r}, cwd={root!r}, shell=True)'):
                await runs(argv, cwd=root, shell=True)
            result = await runs(script, cwd=root, shell=True)
            expected = f'{await workspace.realpath(root)}\n'
            assert lines(result.stdout) == expected, (
                f'the shell string {script!r} with cwd={root!r} gave {result.stdout!r}'
            )

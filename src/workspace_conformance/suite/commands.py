"""Rules on `SupportsCommands.run`: command forms, results, output, environment and timeouts."""

from __future__ import annotations

import inspect
import posixpath
import uuid

from pydantic_ai.workspaces import Workspace, WorkspaceBackend, WorkspaceTimeoutError

from ._rules import rule
from ._support import commands_of, expect_error, require_switch, scratch, skip, workspace_of

__all__ = ('CommandRules',)

DOUBLING_ROUNDS = 14
"""`printf` of a string doubled this many times: 16 Ki copies, past every pipe buffer."""


class CommandRules:
    """Rules that hold for every backend implementing `SupportsCommands`."""

    @rule(area='commands', requires=['commands'], upstream=True)
    async def test_command_form_must_match_shell(self, backend: WorkspaceBackend) -> None:
        """A shell string without `shell=True`, or an argv sequence with it, raises `TypeError`."""
        commands = commands_of(backend)
        with expect_error(TypeError, "run('exit 0') without shell=True"):
            await commands.run('exit 0')
        with expect_error(TypeError, "run(['sh', '-c', 'exit 0'], shell=True)"):
            await commands.run(['sh', '-c', 'exit 0'], shell=True)

    @rule(area='commands', requires=['commands'], upstream=True)
    async def test_stdin_is_at_eof(self, backend: WorkspaceBackend) -> None:
        """A command's standard input is at end of file, so a read returns at once instead of waiting."""
        result = await commands_of(backend).run(
            ['sh', '-c', 'if IFS= read -r line; then printf "read:%s" "$line"; else printf at-eof; fi'], timeout=30
        )
        assert (result.exit_code, result.stdout) == (0, 'at-eof'), (
            f'reading stdin gave exit {result.exit_code} and stdout {result.stdout!r}'
        )

    @rule(area='commands', requires=['commands', 'posix_shell'], upstream=True)
    async def test_undecodable_command_bytes_are_replaced(
        self, backend: WorkspaceBackend, has_real_posix_shell: bool
    ) -> None:
        """Bytes of stdout and stderr that are not UTF-8 come back as U+FFFD, never dropped."""
        require_switch(has_real_posix_shell, 'has_real_posix_shell', 'the backend has no byte stream to check')
        result = await commands_of(backend).run(['sh', '-c', "printf 'a\\377b'; printf 'c\\376\\375' >&2"])
        assert result.stdout == 'a\ufffdb', f'stdout of bytes a,0xFF,b came back as {result.stdout!r}'
        assert result.stderr.startswith('c\ufffd') and set(result.stderr[1:]) == {'\ufffd'}, (
            f'stderr of bytes c,0xFE,0xFD came back as {result.stderr!r}'
        )

    @rule(area='commands', requires=['commands'], upstream=True)
    async def test_command_output_is_complete(self, backend: WorkspaceBackend) -> None:
        """Output is returned complete on both streams, or an error is raised: never a truncated success."""
        script = (
            's=0123456789abcdef; i=0; '
            f'while [ "$i" -lt {DOUBLING_ROUNDS} ]; do s="$s$s"; i=$((i + 1)); done; '
            # stderr first: a backend that drains stdout before stderr deadlocks here instead of passing.
            'printf "%s" "$s" >&2; printf "%s" "$s"'
        )
        expected = '0123456789abcdef' * 2**DOUBLING_ROUNDS
        result = await commands_of(backend).run(['sh', '-c', script])
        assert result.exit_code == 0, f'the writer exited {result.exit_code}: {result.stderr[:200]!r}'
        for stream, text in (('stdout', result.stdout), ('stderr', result.stderr)):
            assert text == expected, (
                f'{stream} held {len(text)} characters, expected {len(expected)} '
                f'(a success must carry the whole output)'
            )

    @rule(area='commands', requires=['commands'], upstream=True)
    async def test_result_reports_exit_code_stdout_and_stderr(self, backend: WorkspaceBackend) -> None:
        """A non-zero exit is a normal result carrying the exit code and both streams, not an exception."""
        result = await commands_of(backend).run('printf to-out; printf to-err >&2; exit 42', shell=True)
        observed = (result.exit_code, result.stdout, result.stderr)
        assert observed == (42, 'to-out', 'to-err'), f'got (exit_code, stdout, stderr) = {observed!r}'

    @rule(area='commands', requires=['commands'], upstream=True)
    async def test_a_missing_program_exits_127(self, backend: WorkspaceBackend) -> None:
        """An argv program that does not exist is a result with exit code 127, as in `sh`."""
        program = f'workspace-conformance-no-such-program-{uuid.uuid4().hex[:8]}'
        result = await commands_of(backend).run([program, '--flag'])
        assert result.exit_code == 127, f'running a missing program returned exit code {result.exit_code}'

    @rule(area='commands', requires=['commands'], upstream=True)
    async def test_argv_items_are_literal(self, backend: WorkspaceBackend) -> None:
        """Each argv item reaches the program as one literal argument: nothing is split, quoted or expanded."""
        items = ['$HOME `id` $(id)', 'it\'s "quoted"; && || *', '  spaced  ', '-n', 'a\\b\tc', '']
        result = await commands_of(backend).run(['sh', '-c', 'for a do printf "<%s>" "$a"; done', 'sh', *items])
        expected = ''.join(f'<{item}>' for item in items)
        assert (result.exit_code, result.stdout) == (0, expected), (
            f'arguments {items!r} arrived as {result.stdout!r} (exit {result.exit_code})'
        )

    @rule(area='commands', requires=['commands'], upstream=True)
    async def test_run_starts_in_cwd(self, backend: WorkspaceBackend) -> None:
        """`Workspace.run(cwd=...)` starts the command in that directory, a relative one taken from the working dir."""
        commands_of(backend)
        if 'cwd' not in inspect.signature(Workspace.run).parameters:
            skip('not-applicable', 'the installed pydantic-ai has no `Workspace.run(cwd=...)`; it needs >= 2.68')
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            where = posixpath.join(root, 'start here')
            await workspace.make_dir(where)
            expected = f'{await workspace.realpath(where)}\n'
            relative = posixpath.relpath(where, await workspace.working_dir())
            for cwd, command, shell in (
                (relative, ['sh', '-c', 'pwd -P'], False),
                (where, 'pwd -P', True),
            ):
                result = await workspace.run(command, shell=shell, cwd=cwd)
                assert result.stdout == expected, f'with cwd={cwd!r} the command ran in {result.stdout!r}'

    @rule(area='commands', requires=['commands'], upstream=True, timeout=60)
    async def test_timeout_raises_workspace_timeout_error(self, backend: WorkspaceBackend) -> None:
        """A command still running at its `timeout` raises `WorkspaceTimeoutError`."""
        with expect_error(WorkspaceTimeoutError, 'a 3600 s sleep with timeout=1'):
            await commands_of(backend).run(['sh', '-c', 'sleep 3600'], timeout=1)

    @rule(area='commands', requires=['commands'], upstream=True)
    async def test_env_is_added(self, backend: WorkspaceBackend) -> None:
        """Variables passed in `env=` are set for the command."""
        value = f'set by the suite {uuid.uuid4().hex[:6]}'
        result = await commands_of(backend).run(
            ['sh', '-c', 'printf "%s" "$WORKSPACE_CONFORMANCE_PROBE"'], env={'WORKSPACE_CONFORMANCE_PROBE': value}
        )
        assert result.stdout == value, f'the variable read back as {result.stdout!r}, expected {value!r}'

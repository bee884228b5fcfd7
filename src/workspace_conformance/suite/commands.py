"""Rules on `SupportsCommands.run`: command forms, results, output, environment and timeouts."""

from __future__ import annotations

import math
import shlex
import uuid
from collections.abc import Mapping
from typing import Any

import anyio
from pydantic_ai.workspaces import (
    CommandResult,
    SupportsCommands,
    WorkspaceBackend,
    WorkspaceCommand,
    WorkspaceOutputLimitError,
    WorkspaceTimeoutError,
)

from ..authoring import (
    ALWAYS_CHANGING,
    EXIT_0_ARGV,
    PWD_ARGV,
    Platform,
    before_rules,
    commands_of,
    current_platform,
    current_run,
    env_variables,
    expect_error,
    lines,
    paths,
    platform_argv,
    rule,
    scratch,
    skip,
    workspace_of,
)
from ._output_caps import CAPPED_STDERR, CAPPED_STDOUT, OUTPUT_PAST_CAPS, check_output_limit_error, past_the_caps
from ._timeouts import timed_out_once_started

__all__ = ('CommandRules',)

DOUBLING_ROUNDS = 14
"""`printf` of a string doubled this many times: 16 Ki copies, past every pipe buffer."""
LOCAL_OUTPUT_CAP = 10 * 1024 * 1024
"""`LocalWorkspaceBackend`'s ceiling on a command's combined stdout and stderr, in bytes."""
LOCAL_PREVIEW = 64 * 1024
"""Characters of each stream `LocalWorkspaceBackend`'s output limit error keeps (ASCII output: bytes)."""
EXIT_CODES = (0, 1, 2, 42, 126, 127, 128, 200, 255)
CONCURRENT_COMMANDS = 6
NO_SHELL = 'the backend runs no real shell to check this with'


def _octal(text: str) -> str:
    """`text` as the octal escapes of its UTF-8 bytes, for a `printf` format that is plain ASCII."""
    return ''.join(f'\\{byte:03o}' for byte in text.encode())


async def _backend_variable(backend: WorkspaceBackend) -> tuple[str, str]:
    """A variable the backend sets for every command (PATH when it has one) and its value, read with `env`.

    None is an environment skip only when `env` listed none before the rules ran either (the baseline); when it
    listed one then, the backend lost its environment since: a failure quoting both listings.
    """
    listing = await commands_of(backend).run(['env'])
    assert listing.exit_code == 0, f'`env` without env= exited {listing.exit_code}: {listing.stderr[:200]!r}'
    variables = env_variables(listing.stdout)
    chosen = _chosen(variables)
    if chosen is not None:
        return chosen
    baseline = before_rules()
    before = None if baseline is None else _chosen(baseline.variables)
    if baseline is not None and before is None and not baseline.answered:
        raise AssertionError(
            f'`env` listed no variable of the backend in this rule, and before the rules ran {baseline.saw(())}'
        )
    if before is None:
        skip(
            'environment',
            'commands run with an empty environment, so there is no variable of the backend to observe'
            + ('' if baseline is None else ' (`env` listed none before the rules ran either)'),
        )
    seen = ', '.join(sorted(variables)) or 'nothing'
    raise AssertionError(
        f'before the rules ran, `env` listed {before[0]}={before[1]!r}; in this rule it listed {seen}: '
        "the backend's own environment was lost between commands"
    )


def _chosen(variables: Mapping[str, str]) -> tuple[str, str] | None:
    """The variable of the backend to observe: PATH, else HOME, else the first other by name; None when none."""
    for name in ('PATH', 'HOME', *sorted(set(variables) - ALWAYS_CHANGING)):
        if name in variables:
            return name, variables[name]
    return None


def _describe(result: CommandResult) -> str:
    return f'exit {result.exit_code}, stdout {result.stdout[:200]!r}, stderr {result.stderr[:200]!r}'


async def _write_script(commands: SupportsCommands, path: str, body: str, *, mode: str) -> None:
    """Create a `#!/bin/sh` script at `path` running `body`, with permission bits `mode`."""
    script = 'printf "#!/bin/sh\\n%s\\n" "$2" > "$1" && chmod "$3" "$1"'
    made = await commands.run(['sh', '-c', script, 'sh', path, body, mode])
    assert made.exit_code == 0, f'could not create the program file: {_describe(made)}'


async def _printed_on_both_streams(error: WorkspaceTimeoutError) -> bool:
    return bool(error.stdout and error.stderr)


BOTH: tuple[Platform, ...] = ('posix', 'windows')
"""The platforms of a rule with a 'windows' form (its commands need no POSIX program there)."""


class CommandRules:
    """Rules that hold for every backend implementing `SupportsCommands`."""

    @rule(area='commands', requires=['commands'], upstream=True, must='B16', platforms=BOTH)
    async def test_command_form_must_match_shell(self, backend: WorkspaceBackend) -> None:
        """A shell string without `shell=True`, or an argv sequence with it, raises `TypeError`."""
        commands = commands_of(backend)
        with expect_error(TypeError, "run('exit 0') without shell=True"):
            await commands.run('exit 0')
        argv = platform_argv(EXIT_0_ARGV)
        with expect_error(TypeError, f'run({argv!r}, shell=True)'):
            await commands.run(argv, shell=True)

    @rule(area='commands', requires=['commands'], upstream=True, must='B19')
    async def test_stdin_is_at_eof(self, backend: WorkspaceBackend) -> None:
        """A command's standard input is at end of file, so a read returns at once instead of waiting."""
        result = await commands_of(backend).run(
            ['sh', '-c', 'if IFS= read -r line; then printf "read:%s" "$line"; else printf at-eof; fi'], timeout=30
        )
        assert (result.exit_code, result.stdout) == (0, 'at-eof'), (
            f'reading stdin gave exit {result.exit_code} and stdout {result.stdout!r}'
        )

    @rule(area='commands', requires=['commands', 'posix_shell'], upstream=True, must='B20')
    async def test_undecodable_command_bytes_are_replaced(self, backend: WorkspaceBackend) -> None:
        """Bytes of stdout and stderr that are not UTF-8 come back as U+FFFD, never dropped."""
        result = await commands_of(backend).run(['sh', '-c', "printf 'a\\377b'; printf 'c\\376\\375' >&2"])
        assert result.stdout == 'a\ufffdb', f'stdout of bytes a,0xFF,b came back as {result.stdout!r}'
        assert result.stderr.startswith('c\ufffd') and set(result.stderr[1:]) == {'\ufffd'}, (
            f'stderr of bytes c,0xFE,0xFD came back as {result.stderr!r}'
        )

    @rule(area='commands', requires=['commands'], upstream=True, must='B28')
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

    @rule(area='commands', requires=['commands'], upstream=True, must='B03', grounds=('run',))
    async def test_result_reports_exit_code_stdout_and_stderr(self, backend: WorkspaceBackend) -> None:
        """A non-zero exit is a normal result carrying the exit code and both streams, not an exception."""
        result = await commands_of(backend).run('printf to-out; printf to-err >&2; exit 42', shell=True)
        observed = (result.exit_code, result.stdout, result.stderr)
        assert observed == (42, 'to-out', 'to-err'), f'got (exit_code, stdout, stderr) = {observed!r}'

    @rule(area='commands', requires=['commands'], upstream=True, must='B22', platforms=BOTH)
    async def test_a_missing_program_exits_127(self, backend: WorkspaceBackend) -> None:
        """An argv program that does not exist is a result with exit code 127, as in `sh`."""
        program = f'workspace-conformance-no-such-program-{uuid.uuid4().hex[:8]}'
        result = await commands_of(backend).run([program, '--flag'])
        assert result.exit_code == 127, f'running a missing program returned exit code {result.exit_code}'

    @rule(area='commands', requires=['commands'], upstream=True, must='B47')
    async def test_argv_items_are_literal(self, backend: WorkspaceBackend) -> None:
        """Each argv item reaches the program as one literal argument: nothing is split, quoted or expanded."""
        items = ['$HOME `id` $(id)', 'it\'s "quoted"; && || *', '  spaced  ', '-n', 'a\\b\tc', '']
        result = await commands_of(backend).run(['sh', '-c', 'for a do printf "<%s>" "$a"; done', 'sh', *items])
        expected = ''.join(f'<{item}>' for item in items)
        assert (result.exit_code, result.stdout) == (0, expected), (
            f'arguments {items!r} arrived as {result.stdout!r} (exit {result.exit_code})'
        )

    @rule(area='commands', requires=['commands'], upstream=True, contract='2.68', must='F04', platforms=BOTH)
    async def test_run_starts_in_cwd(self, backend: WorkspaceBackend) -> None:
        """`Workspace.run(cwd=...)` starts the command in that directory, a relative one taken from the working dir.

        On a 'windows' workspace in its argv form only (`cmd /d /c cd`): the PowerShell form is not run here.
        """
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            where = paths.join(root, 'start here')
            await workspace.make_dir(where)
            expected = f'{await workspace.realpath(where)}\n'
            relative = paths.relpath(where, await workspace.working_dir())
            forms: list[tuple[str, WorkspaceCommand, bool]] = [(relative, platform_argv(PWD_ARGV), False)]
            if current_platform() == 'posix':
                forms.append((where, 'pwd -P', True))
            for cwd, command, shell in forms:
                result = await workspace.run(command, shell=shell, cwd=cwd)
                assert lines(result.stdout) == expected, f'with cwd={cwd!r} the command ran in {result.stdout!r}'

    @rule(area='commands', requires=['commands'], upstream=True, timeout=60, must='B14')
    async def test_timeout_raises_workspace_timeout_error(self, backend: WorkspaceBackend) -> None:
        """A command still running at its `timeout` raises `WorkspaceTimeoutError`."""
        with expect_error(WorkspaceTimeoutError, 'a 3600 s sleep with timeout=1'):
            await commands_of(backend).run(['sh', '-c', 'sleep 3600'], timeout=1)

    @rule(area='commands', requires=['commands'], upstream=True, must='B26')
    async def test_env_is_added(self, backend: WorkspaceBackend) -> None:
        """Variables passed in `env=` are set for the command."""
        value = f'set by the suite {uuid.uuid4().hex[:6]}'
        result = await commands_of(backend).run(
            ['sh', '-c', 'printf "%s" "$WORKSPACE_CONFORMANCE_PROBE"'], env={'WORKSPACE_CONFORMANCE_PROBE': value}
        )
        assert result.stdout == value, f'the variable read back as {result.stdout!r}, expected {value!r}'

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B26')
    async def test_env_layers_over_the_backend_environment(self, backend: WorkspaceBackend) -> None:
        """Variables passed in `env=` are layered over the backend's own environment, which stays set."""
        name, value = await _backend_variable(backend)
        result = await commands_of(backend).run(['env'], env={'WORKSPACE_CONFORMANCE_LAYER': 'layered'})
        variables = env_variables(result.stdout)
        assert variables.get('WORKSPACE_CONFORMANCE_LAYER') == 'layered', (
            f'the variable passed in env= read back as {variables.get("WORKSPACE_CONFORMANCE_LAYER")!r}'
        )
        assert variables.get(name) == value, (
            f'the backend sets {name}={value!r} for every command, but with env= holding another variable '
            f'{name} was {variables.get(name)!r}: env= replaced the environment instead of layering over it'
        )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B26')
    async def test_env_overrides_the_backend_variable_of_the_same_name(self, backend: WorkspaceBackend) -> None:
        """A variable passed in `env=` wins over the backend's own variable of the same name."""
        name, value = await _backend_variable(backend)
        # PATH keeps its own directories first, so the command still finds its tools.
        wanted = f'{value}:/workspace-conformance-nowhere' if name == 'PATH' else f'{value}-overridden'
        result = await commands_of(backend).run(['env'], env={name: wanted})
        seen = env_variables(result.stdout).get(name)
        assert seen == wanted, f'env={{{name!r}: {wanted!r}}} left {name} as {seen!r} (the backend had {value!r})'

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B26')
    async def test_env_does_not_leak_into_later_commands(self, backend: WorkspaceBackend) -> None:
        """Variables passed in `env=` are set for that command only, not for the commands run after it."""
        commands = commands_of(backend)
        probe = ['sh', '-c', 'printf "%s" "${WORKSPACE_CONFORMANCE_ONCE-unset}"']
        first = await commands.run(probe, env={'WORKSPACE_CONFORMANCE_ONCE': 'first call only'})
        assert first.stdout == 'first call only', f'the variable read back as {first.stdout!r} in its own command'
        later = await commands.run(probe)
        assert later.stdout == 'unset', f'a later command without env= still saw the variable as {later.stdout!r}'

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B26')
    async def test_env_values_arrive_byte_exact(self, backend: WorkspaceBackend) -> None:
        """Each `env=` value reaches the command exactly: spaces, quotes, newlines, `$`, `=`, non-ASCII and empty."""
        values = {
            'WORKSPACE_CONFORMANCE_SPACES': '  two  spaces  ',
            'WORKSPACE_CONFORMANCE_QUOTES': 'it\'s "quoted" \\ back',
            'WORKSPACE_CONFORMANCE_LINES': 'line one\nline two\n',
            'WORKSPACE_CONFORMANCE_DOLLAR': '$HOME `id` $(id) ${PATH}',
            'WORKSPACE_CONFORMANCE_EQUALS': 'key=value=more',
            'WORKSPACE_CONFORMANCE_UNICODE': 'héllo ✓ 🎉',
            'WORKSPACE_CONFORMANCE_EMPTY': '',
        }
        script = 'printf "<%s>"' + ''.join(f' "${{{name}-UNSET}}"' for name in values)
        result = await commands_of(backend).run(['sh', '-c', script], env=values)
        expected = ''.join(f'<{value}>' for value in values.values())
        assert (result.exit_code, result.stdout) == (0, expected), (
            f'the values {list(values.values())!r} arrived as {result.stdout!r} (exit {result.exit_code})'
        )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B03')
    async def test_exit_codes_0_to_255_round_trip(self, backend: WorkspaceBackend) -> None:
        """The exit code in the result is the command's own, across the whole range 0 to 255."""
        commands = commands_of(backend)
        wrong = {}
        for code in EXIT_CODES:
            result = await commands.run(['sh', '-c', 'exit "$1"', 'sh', str(code)])
            if result.exit_code != code:
                wrong[code] = result.exit_code
        assert not wrong, f'exit codes came back changed (sent: received): {wrong}'

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B13')
    async def test_death_by_signal_is_exit_code_128_plus_n(self, backend: WorkspaceBackend) -> None:
        """A command killed by a signal in a live environment returns exit code 128 plus the signal number."""
        commands = commands_of(backend)
        for name, number in (('TERM', 15), ('KILL', 9)):
            result = await commands.run(['sh', '-c', f'printf before-{name}; kill -{name} $$; printf survived'])
            assert (result.exit_code, result.stdout) == (128 + number, f'before-{name}'), (
                f'a shell killing itself with SIG{name} gave {_describe(result)}, expected exit {128 + number}'
            )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B22')
    async def test_a_non_executable_program_exits_126(self, backend: WorkspaceBackend) -> None:
        """An argv program that exists but is not executable is a result with exit code 126, as in `sh`."""
        commands = commands_of(backend)
        async with scratch(workspace_of(backend)) as root:
            program = paths.join(root, 'not-executable')
            await _write_script(commands, program, 'exit 0', mode='644')
            result = await commands.run([program])
            assert result.exit_code == 126, f'running a file without execute permission gave {_describe(result)}'

    @rule(area='commands', level='extended', requires=['commands', 'posix_shell'], since='0.2.0', must='B30')
    async def test_timeout_error_carries_partial_output(self, backend: WorkspaceBackend) -> None:
        """The `WorkspaceTimeoutError` of a timed-out command holds the stdout and stderr written before the timeout."""
        script = 'printf out-before-timeout; printf err-before-timeout >&2; exec sleep 60'
        caught, _ = await timed_out_once_started(
            lambda timeout: commands_of(backend).run(['sh', '-c', script], timeout=timeout),
            _printed_on_both_streams,
            'a 60 s sleep',
        )
        assert 'out-before-timeout' in caught.stdout and 'err-before-timeout' in caught.stderr, (
            f'the timeout error held stdout {caught.stdout!r} and stderr {caught.stderr!r}'
        )

    @rule(area='commands', requires=['commands'], since='0.2.0', must='B16', platforms=BOTH)
    async def test_invalid_timeouts_raise_value_error(self, backend: WorkspaceBackend) -> None:
        """A timeout that is 0, negative, NaN or infinite raises `ValueError`; a non-number raises it or `TypeError`."""
        commands = commands_of(backend)
        argv = platform_argv(EXIT_0_ARGV)
        for value in (0, 0.0, -1, -0.5, math.nan, math.inf, -math.inf):
            with expect_error(ValueError, f'run({argv!r}, timeout={value!r})'):
                await commands.run(argv, timeout=value)
        text: Any = '1'
        with expect_error((ValueError, TypeError), f"run({argv!r}, timeout='1')"):
            await commands.run(argv, timeout=text)

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0')
    async def test_an_unreached_timeout_returns_the_result(self, backend: WorkspaceBackend) -> None:
        """A command that finishes before its `timeout` returns its normal result."""
        result = await commands_of(backend).run(
            ['sh', '-c', 'sleep 0.3; printf finished; exit 3'], timeout=current_run().seconds(30)
        )
        assert (result.exit_code, result.stdout) == (3, 'finished'), (
            f'a 1 s command with a 30 s timeout gave {_describe(result)}'
        )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B28')
    async def test_output_past_a_cap_is_complete_or_an_output_limit_error(self, backend: WorkspaceBackend) -> None:
        """Output past any cap is returned whole, or raises `WorkspaceOutputLimitError` with `limit` and both previews.

        The error's `limit` is a positive int and its `stdout` and `stderr` are the captured beginnings of the
        streams: each a prefix of what the stream wrote, no longer than the limit, and not empty where the stream
        wrote within it. Never a success cut short.
        """
        outcome = await past_the_caps(backend)
        if isinstance(outcome, WorkspaceOutputLimitError):
            check_output_limit_error(outcome)
            return
        assert outcome.exit_code == 0, f'the writer exited {outcome.exit_code}: {outcome.stderr[:200]!r}'
        for stream, text in ((CAPPED_STDOUT, outcome.stdout), (CAPPED_STDERR, outcome.stderr)):
            expected = stream.whole()
            assert text == expected, (
                f'{OUTPUT_PAST_CAPS} MiB of output came back as a success whose {stream.name} held {len(text)} '
                f'characters, expected {len(expected)}'
            )

    @rule(area='commands', requires=['commands', 'posix_shell', 'local_backend'], since='0.3.0', must='S04')
    async def test_local_output_past_10_mib_raises_with_64_kib_previews(self, backend: WorkspaceBackend) -> None:
        """`LocalWorkspaceBackend` output over 10 MiB combined raises `WorkspaceOutputLimitError` with `limit` 10 MiB.

        Its previews hold at most the first 64 KiB of each stream. Not applicable to other backends.
        """
        outcome = await past_the_caps(backend)
        assert isinstance(outcome, WorkspaceOutputLimitError), (
            f'{OUTPUT_PAST_CAPS} MiB of output returned a result (exit {outcome.exit_code}, '
            f'{len(outcome.stdout) + len(outcome.stderr)} characters) instead of raising WorkspaceOutputLimitError'
        )
        assert outcome.limit == LOCAL_OUTPUT_CAP, (
            f'the output limit error gave limit={outcome.limit!r}, expected {LOCAL_OUTPUT_CAP} (10 MiB)'
        )
        for stream, preview in ((CAPPED_STDOUT, outcome.stdout), (CAPPED_STDERR, outcome.stderr)):
            assert preview == stream.prefix(LOCAL_PREVIEW), (
                f'the {stream.name} preview held {len(preview)} characters beginning {preview[:40]!r}, '
                f'expected the first {LOCAL_PREVIEW} (64 KiB) of what the command wrote there'
            )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B28')
    async def test_line_endings_and_tabs_are_preserved(self, backend: WorkspaceBackend) -> None:
        """CR LF pairs, lone CRs and tabs in stdout and stderr come back exactly as written."""
        result = await commands_of(backend).run(
            ['sh', '-c', "printf 'one\\r\\ntwo\\rthree\\tfour\\r\\n'; printf 'err\\rline\\r\\n\\t' >&2"]
        )
        observed = (result.stdout, result.stderr)
        assert observed == ('one\r\ntwo\rthree\tfour\r\n', 'err\rline\r\n\t'), (
            f'(stdout, stderr) came back as {observed!r}'
        )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B28')
    async def test_non_ascii_output_round_trips(self, backend: WorkspaceBackend) -> None:
        """UTF-8 output, 4-byte characters included, comes back as the same text on stdout and stderr."""
        out, err = 'é ✓ 🎉 日本', 'ü 🦀 ∑'
        result = await commands_of(backend).run(['sh', '-c', f"printf '{_octal(out)}'; printf '{_octal(err)}' >&2"])
        observed = (result.stdout, result.stderr)
        assert observed == (out, err), f'the UTF-8 bytes of {(out, err)!r} came back as {observed!r}'

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B28')
    async def test_output_whitespace_is_not_trimmed(self, backend: WorkspaceBackend) -> None:
        """Leading and trailing whitespace of the output is kept, and output without a final newline gets none."""
        result = await commands_of(backend).run(
            ['sh', '-c', "printf '\\n  indented  \\n\\n'; printf '  no final newline' >&2"]
        )
        observed = (result.stdout, result.stderr)
        assert observed == ('\n  indented  \n\n', '  no final newline'), f'(stdout, stderr) came back as {observed!r}'

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B28')
    async def test_nul_bytes_in_output_are_kept(self, backend: WorkspaceBackend) -> None:
        """A NUL byte in the output is valid UTF-8 and comes back as U+0000, with everything after it."""
        result = await commands_of(backend).run(['sh', '-c', "printf 'a\\000b\\000'; printf 'c\\000d' >&2"])
        observed = (result.stdout, result.stderr)
        assert observed == ('a\x00b\x00', 'c\x00d'), f'(stdout, stderr) came back as {observed!r}'

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B47')
    async def test_non_ascii_argv_items_are_literal(self, backend: WorkspaceBackend) -> None:
        """Non-ASCII argv items, 4-byte characters included, reach the program unchanged."""
        items = ['héllo wörld', '✓ done', '🎉', '日本語', 'e\u0301 combining']
        result = await commands_of(backend).run(['sh', '-c', 'for a do printf "<%s>" "$a"; done', 'sh', *items])
        expected = ''.join(f'<{item}>' for item in items)
        assert (result.exit_code, result.stdout) == (0, expected), (
            f'arguments {items!r} arrived as {result.stdout!r} (exit {result.exit_code})'
        )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B28')
    async def test_stdout_and_stderr_stay_apart(self, backend: WorkspaceBackend) -> None:
        """Interleaved writes to stdout and stderr come back on their own streams, neither swapped nor merged."""
        script = 'i=1; while [ "$i" -le 50 ]; do printf "out%s\\n" "$i"; printf "err%s\\n" "$i" >&2; i=$((i + 1)); done'
        result = await commands_of(backend).run(['sh', '-c', script])
        expected = tuple(''.join(f'{stream}{i}\n' for i in range(1, 51)) for stream in ('out', 'err'))
        assert (result.stdout, result.stderr) == expected, (
            f'stdout began {result.stdout[:40]!r} and stderr began {result.stderr[:40]!r} '
            f'({len(result.stdout)} and {len(result.stderr)} characters, expected {len(expected[0])} each)'
        )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B28')
    async def test_stderr_alone_is_returned(self, backend: WorkspaceBackend) -> None:
        """A successful command that writes only to stderr returns that stderr and an empty stdout."""
        result = await commands_of(backend).run(['sh', '-c', 'printf only-on-stderr >&2'])
        observed = (result.exit_code, result.stdout, result.stderr)
        assert observed == (0, '', 'only-on-stderr'), f'got (exit_code, stdout, stderr) = {observed!r}'

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B28')
    async def test_output_after_stdout_closes_is_kept(self, backend: WorkspaceBackend) -> None:
        """Output written to stderr after the command closed its stdout is returned, with the real exit code."""
        script = 'printf before-close; exec >&-; sleep 0.3; printf after-close >&2; exit 3'
        result = await commands_of(backend).run(['sh', '-c', script])
        observed = (result.exit_code, result.stdout, result.stderr)
        assert observed == (3, 'before-close', 'after-close'), f'got (exit_code, stdout, stderr) = {observed!r}'

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B28')
    async def test_concurrent_commands_keep_their_own_output(self, backend: WorkspaceBackend) -> None:
        """Commands running at the same time on one backend each get only their own output."""
        commands = commands_of(backend)
        lines = 'i=0; while [ "$i" -lt 200 ]; do printf "%s\\n" "$1"; i=$((i + 1)); done'
        script = f'{lines}; sleep 0.3; {lines}'
        results: dict[str, CommandResult] = {}

        async def run_one(marker: str) -> None:
            results[marker] = await commands.run(['sh', '-c', script, 'sh', marker])

        async with anyio.create_task_group() as group:
            for index in range(CONCURRENT_COMMANDS):
                group.start_soon(run_one, f'marker-{index}-{uuid.uuid4().hex[:6]}')
        for marker, result in results.items():
            strangers = sorted({line for line in result.stdout.splitlines() if line != marker})
            assert not strangers and result.stdout == f'{marker}\n' * 400, (
                f'the command printing {marker!r} 400 times got {len(result.stdout.splitlines())} lines, '
                f'including {strangers[:3]!r}'
            )

    @rule(area='commands', requires=['commands'], since='0.2.0', must='B31', platforms=BOTH)
    async def test_result_fields_have_the_declared_types(self, backend: WorkspaceBackend) -> None:
        """A `CommandResult` carries `exit_code` as an `int` (not a `bool`) and `stdout` and `stderr` as `str`."""
        commands = commands_of(backend)
        failing = (
            ['cmd', '/c', 'exit 1']
            if current_platform() == 'windows'
            else ['sh', '-c', 'printf x; printf y >&2; exit 1']
        )
        for command in (platform_argv(EXIT_0_ARGV), failing):
            result = await commands.run(command)
            types = tuple(type(value).__name__ for value in (result.exit_code, result.stdout, result.stderr))
            assert types == ('int', 'str', 'str'), f'{command!r} gave (exit_code, stdout, stderr) of types {types}'

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B46')
    async def test_shell_strings_are_interpreted_by_a_posix_shell(self, backend: WorkspaceBackend) -> None:
        """A shell string is interpreted by a POSIX shell: pipes, `&&`, `||`, variables, `$(...)` and globs."""
        async with scratch(workspace_of(backend)) as root:
            script = (
                f'cd {shlex.quote(root)} && : > b.txt && : > a.txt && : > c.log || exit 9\n'
                'n=0; for f in *.txt; do n=$((n + 1)); printf "%s;" "$f"; done\n'
                'upper=$(printf "%s" abc | tr a-z A-Z)\n'
                'printf "%s|%s" "$n" "$upper"; false || printf "|or"; true && printf "|and"'
            )
            result = await commands_of(backend).run(script, shell=True)
        assert (result.exit_code, result.stdout) == (0, 'a.txt;b.txt;2|ABC|or|and'), (
            f'the shell string gave {_describe(result)}'
        )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B21')
    async def test_shell_strings_start_in_the_working_dir(self, backend: WorkspaceBackend) -> None:
        """A shell string starts in `working_dir()`, like an argv command."""
        result = await commands_of(backend).run('pwd -P', shell=True)
        expected = f'{await backend.working_dir()}\n'
        assert result.stdout == expected, f'`pwd -P` as a shell string printed {result.stdout!r}, not {expected!r}'

    @rule(area='commands', level='extended', requires=['commands', 'posix_shell'], since='0.2.0', must='B46')
    async def test_shell_strings_run_with_default_shell_options(self, backend: WorkspaceBackend) -> None:
        """A shell string runs with the shell's default options: no `errexit`, `nounset` or `pipefail` is imposed."""
        script = (
            'false | true; status=$?; false\n'
            'printf "%s:[%s]" "$status" "$WORKSPACE_CONFORMANCE_NEVER_SET"\n'
            'true | (exit 3)'
        )
        result = await commands_of(backend).run(script, shell=True)
        assert (result.exit_code, result.stdout) == (3, '0:[]'), (
            f'a script relying on default options gave {_describe(result)}, expected exit 3 and stdout "0:[]"'
        )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.2.0', must='B21')
    async def test_a_relative_argv_program_resolves_in_the_working_dir(self, backend: WorkspaceBackend) -> None:
        """An argv program given as a relative path (`./dir/tool`) is found from `working_dir()`."""
        commands = commands_of(backend)
        async with scratch(workspace_of(backend)) as root:
            program = paths.join(root, 'run-me')
            await _write_script(commands, program, 'printf ran-relative', mode='755')
            relative = './' + paths.relpath(program, await backend.working_dir())
            result = await commands.run([relative])
        assert (result.exit_code, result.stdout) == (0, 'ran-relative'), (
            f'running {relative!r} gave {_describe(result)}'
        )

"""Mutants of the command rules: `run` with one clause of its argv, shell, env, exit code or output handling broken."""

from __future__ import annotations

import dataclasses
import errno
import math
import os
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
from pydantic_ai.workspaces import (
    CommandResult,
    LocalWorkspaceBackend,
    WorkspaceCommand,
    WorkspaceError,
    WorkspaceOutputLimitError,
    WorkspaceTimeoutError,
)

from workspace_conformance.doubles.forwarding import RunCall

from ..registry import breaks
from ._shared import HandRolled, InterceptsRun, RewritesCommands, RewritesResults, _blocking, _command_env, _drain


@breaks(
    kills=['command_form_must_match_shell'],
    bug='run() guesses the form: a string without shell=True goes through the shell, an argv with it is joined.',
)
class GuessesTheCommandForm(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        if isinstance(call.command, str):
            call = dataclasses.replace(call, shell=True)
        elif call.shell:
            call = dataclasses.replace(call, command=' '.join(call.command))
        return await self._forward(call)


@breaks(
    kills=['command_form_must_match_shell'],
    bug='run() accepts an argv sequence with shell=True by quoting it into one shell string instead of refusing it.',
)
class JoinsArgvGivenWithShell(RewritesCommands):
    def _rewrite_command(self, command: WorkspaceCommand, shell: bool) -> WorkspaceCommand:
        if shell and not isinstance(command, str):
            command = shlex.join(command)
        return command


@breaks(
    kills=['stdin_is_at_eof'],
    bug="run() leaves the command's stdin connected to a channel that still holds a stray line (a login banner).",
)
class FeedsAStrayLineToStdin(RewritesCommands):
    def _rewrite_command(self, command: WorkspaceCommand, shell: bool) -> WorkspaceCommand:
        if isinstance(command, str):
            command = f'printf "unexpected\\n" | sh -c {shlex.quote(command)}'
        else:
            command = ['sh', '-c', 'printf "unexpected\\n" | "$@"', 'sh', *command]
        return command


@breaks(
    kills=['undecodable_command_bytes_are_replaced'],
    bug="Command output is decoded with errors='ignore', silently dropping bytes that are not UTF-8.",
)
class DropsUndecodableBytes(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        # What decoding with errors='ignore' gives: the undecodable bytes vanish instead of becoming U+FFFD.
        return dataclasses.replace(
            result, stdout=result.stdout.replace('\ufffd', ''), stderr=result.stderr.replace('\ufffd', '')
        )


@breaks(
    name='truncates_stdout_at_64k',
    kills=['command_output_is_complete'],
    bug="stdout is cut at the provider's 64 KiB message size and returned as a successful result.",
)
class TruncatesStdout(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        return dataclasses.replace(result, stdout=result.stdout[: 64 * 1024])


@breaks(
    name='truncates_stderr_at_64k',
    kills=['command_output_is_complete'],
    bug='stderr is kept in a 64 KiB ring buffer for diagnostics only, so a long stderr comes back cut.',
)
class TruncatesStderr(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        return dataclasses.replace(result, stderr=result.stderr[: 64 * 1024])


@breaks(
    kills=['result_reports_exit_code_stdout_and_stderr'],
    bug='Commands run on a pty-like channel that merges stderr into stdout, so stderr always comes back empty.',
)
class MergesStderrIntoStdout(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        return dataclasses.replace(result, stdout=result.stdout + result.stderr, stderr='')


@breaks(
    kills=['result_reports_exit_code_stdout_and_stderr'],
    bug='run() treats a non-zero exit as a failure (check=True) and raises instead of returning the result.',
)
class RaisesOnNonZeroExit(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        if result.exit_code != 0:
            raise WorkspaceError(f'command failed with exit code {result.exit_code}: {result.stderr}')
        return result


@breaks(
    kills=['a_missing_program_exits_127'],
    bug="The spawn's FileNotFoundError for a missing argv program escapes run() instead of becoming exit 127.",
)
class RaisesForAMissingProgram(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        command = call.command
        if not isinstance(command, str) and command and '/' not in command[0]:
            path = _command_env(call.env).get('PATH')
            if await _blocking(shutil.which, command[0], os.X_OK, path) is None:
                # What `subprocess.Popen` raises when nothing catches it.
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command[0])
        return await self._forward(call)


@breaks(
    kills=['argv_items_are_literal'],
    bug="An argv is sent to the provider's exec API as ' '.join(argv), so the remote shell splits and expands it.",
)
class JoinsArgvUnquoted(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        if not isinstance(call.command, str):
            call = dataclasses.replace(call, command=' '.join(call.command), shell=True)
        return await self._forward(call)


@breaks(
    kills=['run_starts_in_cwd'],
    bug="A line-oriented exec channel runs only a shell string's last line, dropping Workspace.run's `cd` prefix.",
)
class RunsOnlyTheLastLine(RewritesCommands):
    def _rewrite_command(self, command: WorkspaceCommand, shell: bool) -> WorkspaceCommand:
        if isinstance(command, str) and '\n' in command:
            command = command.splitlines()[-1]
        return command


@breaks(
    kills=['timeout_raises_workspace_timeout_error'],
    bug='A timed-out command is reported like `timeout(1)` does, as exit code 124, instead of raising.',
)
class TimeoutIsAnExitCode(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        try:
            return await self._forward(call)
        except WorkspaceTimeoutError as error:
            return CommandResult(exit_code=124, stdout=error.stdout, stderr=error.stderr)


@breaks(
    kills=['a_backend_env_reaches_every_command_under_the_call_env'],
    bug='A LocalWorkspaceBackend subclass takes env= in its constructor but never passes it on, so no command sees it.',
)
class DropsTheConstructorEnv(LocalWorkspaceBackend):
    def __init__(self, working_dir: str | Path, *, env: Mapping[str, str] | None = None) -> None:
        super().__init__(working_dir)


@breaks(
    kills=['a_backend_env_reaches_every_command_under_the_call_env'],
    bug="The backend's own env is merged over a call's env= ({**env, **own}), so the caller's value of a name loses.",
    name='backend_env_wins_over_the_call_env',
)
class BackendEnvWins(LocalWorkspaceBackend):
    async def run(self, command: Any, *, shell: bool = False, env: Mapping[str, str] | None = None, **rest: Any) -> Any:
        own = {name: value for name, value in self._env.items() if name in (env or {})}
        return await super().run(command, shell=shell, env={**(env or {}), **own}, **rest)


@breaks(kills=['env_is_added'], bug='run() accepts env= but never passes it to the process it starts.')
class IgnoresEnv(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        return await self._forward(dataclasses.replace(call, env=None))


@breaks(
    kills=['env_layers_over_the_backend_environment'],
    bug="env= is passed as the process's whole environment (Popen(env=env)), dropping PATH and the backend's own.",
)
class EnvReplacesTheEnvironment(HandRolled):
    def _environment(self, env: Mapping[str, str] | None) -> dict[str, str]:
        return dict(env) if env else _command_env(None)


@breaks(
    kills=['env_overrides_the_backend_variable_of_the_same_name'],
    bug="The backend's own variables are merged over env= ({**env, **own}), so the caller cannot override one.",
)
class BackendEnvironmentWins(HandRolled):
    def _environment(self, env: Mapping[str, str] | None) -> dict[str, str]:
        return dict(env or {}) | _command_env(None)


@breaks(
    kills=['env_does_not_leak_into_later_commands'],
    bug="run() does self.env.update(env), so one call's variables stay set for every later command.",
)
class EnvSticksToTheBackend(InterceptsRun):
    def __init__(self, working_dir: str | Path) -> None:
        super().__init__(working_dir)
        self._sticky: dict[str, str] = {}

    async def _take_run(self, call: RunCall) -> CommandResult:
        self._sticky.update(call.env or {})
        return await self._forward(dataclasses.replace(call, env=self._sticky))


@breaks(
    kills=['env_values_arrive_byte_exact'],
    bug='env= travels as a line-based env file (like `docker --env-file`): values lose all but their first line.',
)
class EnvThroughAnEnvFile(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        # What a line-based KEY=VALUE env file carries: one line per variable, and no empty values.
        if call.env is not None:
            call = dataclasses.replace(
                call, env={name: value.split('\n')[0] for name, value in call.env.items() if value}
            )
        return await self._forward(call)


@breaks(
    kills=['exit_codes_0_to_255_round_trip'],
    bug="The provider's API carries the exit status as a signed byte, so 128 to 255 come back negative.",
)
class ExitCodeAsASignedByte(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        code = result.exit_code
        return dataclasses.replace(result, exit_code=code - 256 if code > 127 else code)


@breaks(
    kills=['death_by_signal_is_exit_code_128_plus_n'],
    bug="A signal death is reported as Popen's returncode -N instead of the shell's 128 + N.",
)
class SignalDeathIsANegativeCode(HandRolled):
    def _exit_code(self, returncode: int) -> int:
        return returncode


@breaks(
    kills=['a_non_executable_program_exits_126'],
    bug="The spawn's PermissionError for an argv program without execute permission escapes instead of exit 126.",
)
class RaisesForANonExecutableProgram(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        if not isinstance(call.command, str) and call.command and os.path.isabs(call.command[0]):
            program = call.command[0]
            if await _blocking(lambda: os.path.isfile(program) and not os.access(program, os.X_OK)):
                # What `subprocess.Popen` raises for it when nothing turns it into a result.
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
        return await self._forward(call)


@breaks(
    kills=['timeout_error_carries_partial_output'],
    bug='A timeout raises WorkspaceTimeoutError without the output read so far, which the backend throws away.',
)
class TimeoutDropsPartialOutput(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        try:
            return await self._forward(call)
        except WorkspaceTimeoutError as error:
            raise WorkspaceTimeoutError(str(error)) from error


@breaks(
    kills=['invalid_timeouts_raise_value_error'],
    bug='A timeout of 0, a negative one, NaN or infinity silently means "no timeout", and a string is converted.',
)
class AcceptsAnyTimeout(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        # `if timeout:` style handling: anything that is not a usable positive number means "no timeout".
        value = float(call.timeout) if call.timeout is not None else None
        if value is not None and not (math.isfinite(value) and value > 0):
            value = None
        return await self._forward(dataclasses.replace(call, timeout=value))


@breaks(
    kills=['an_unreached_timeout_returns_the_result'],
    bug='timeout= is handed to a provider field that counts milliseconds, so a 30 s timeout fires after 30 ms.',
)
class TimeoutInMilliseconds(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        timeout = None if call.timeout is None else call.timeout / 1000
        return await self._forward(dataclasses.replace(call, timeout=timeout))


@breaks(
    kills=['output_past_a_cap_is_complete_or_an_output_limit_error'],
    bug="Output past the backend's cap is cut to what was kept and returned as a successful result.",
)
class OutputCapTruncatesSilently(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        try:
            return await self._forward(call)
        except WorkspaceOutputLimitError as error:
            return CommandResult(exit_code=0, stdout=error.stdout, stderr=error.stderr)


@breaks(
    kills=['line_endings_and_tabs_are_preserved'],
    bug='Output is decoded in text mode with universal newlines, turning CR LF and lone CR into LF.',
)
class OutputInUniversalNewlinesMode(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:

        def universal(text: str) -> str:
            return text.replace('\r\n', '\n').replace('\r', '\n')

        return dataclasses.replace(result, stdout=universal(result.stdout), stderr=universal(result.stderr))


@breaks(
    kills=['non_ascii_output_round_trips'],
    bug="Output bytes are decoded with the host's latin-1 locale, so UTF-8 text comes back as mojibake.",
)
class OutputDecodedAsLatin1(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:

        def latin1(text: str) -> str:
            return text.encode('utf-8', errors='surrogateescape').decode('latin-1')

        return dataclasses.replace(result, stdout=latin1(result.stdout), stderr=latin1(result.stderr))


@breaks(
    kills=['output_whitespace_is_not_trimmed'],
    bug='stdout and stderr are .strip()ped for tidier tool output, losing leading and trailing whitespace.',
)
class OutputIsStripped(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        return dataclasses.replace(result, stdout=result.stdout.strip(), stderr=result.stderr.strip())


@breaks(
    kills=['nul_bytes_in_output_are_kept'],
    bug='Output passes through a C string in the agent, so it ends at the first NUL byte.',
)
class OutputAsCStrings(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        return dataclasses.replace(result, stdout=result.stdout.split('\x00')[0], stderr=result.stderr.split('\x00')[0])


@breaks(
    kills=['non_ascii_argv_items_are_literal'],
    bug="argv items are encoded as ASCII with replacement for the provider's exec request, so non-ASCII becomes '?'.",
)
class ArgvThroughAnAsciiChannel(RewritesCommands):
    def _rewrite_command(self, command: WorkspaceCommand, shell: bool) -> WorkspaceCommand:
        if not isinstance(command, str):
            command = [item.encode('ascii', errors='replace').decode('ascii') for item in command]
        return command


@breaks(
    kills=['stdout_and_stderr_stay_apart'],
    bug='Commands run on a pty, which carries stderr interleaved into stdout and leaves stderr empty.',
)
class StreamsMergedOnAPty(RewritesCommands):
    def _rewrite_command(self, command: WorkspaceCommand, shell: bool) -> WorkspaceCommand:
        # A pty has one output channel: whatever the command writes to stderr arrives on stdout, in order.
        if isinstance(command, str):
            command = f'exec 2>&1\n{command}'
        else:
            command = ['sh', '-c', 'exec "$@" 2>&1', 'sh', *command]
        return command


@breaks(
    kills=['stderr_alone_is_returned'],
    bug="stderr is only attached to failed commands (as the provider's error message), so a success drops it.",
)
class StderrOnlyOnFailure(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        return result if result.exit_code else dataclasses.replace(result, stderr='')


@breaks(
    kills=['output_after_stdout_closes_is_kept'],
    bug='Output collection ends when stdout reaches end of file, dropping stderr the command writes afterwards.',
)
class StopsReadingAtStdoutEof(HandRolled):
    async def _collect(self, process: anyio.abc.Process, stdout: bytearray, stderr: bytearray) -> int:
        async with anyio.create_task_group() as group:
            group.start_soon(_drain, process.stderr, stderr)
            await _drain(process.stdout, stdout)
            group.cancel_scope.cancel()  # "the output is complete" once stdout ends
        return await process.wait()


@breaks(
    kills=['concurrent_commands_keep_their_own_output'],
    bug="All commands share one session whose output is read from a command's start to its end, others' included.",
)
class CommandsShareOneTranscript(InterceptsRun):
    def __init__(self, working_dir: str | Path) -> None:
        super().__init__(working_dir)
        self._transcript: list[str] = []

    async def _take_run(self, call: RunCall) -> CommandResult:
        start = len(self._transcript)
        result = await self._forward(call)
        self._transcript.append(result.stdout)
        # Everything the shared session printed since this command was sent, whoever printed it.
        return dataclasses.replace(result, stdout=''.join(self._transcript[start:]))


@breaks(
    kills=['result_fields_have_the_declared_types'],
    bug="stdout and stderr are returned as the provider's raw bytes, never decoded to str.",
)
class ReturnsRawOutputBytes(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        raw: Any = (result.stdout.encode(), result.stderr.encode())
        return dataclasses.replace(result, stdout=raw[0], stderr=raw[1])


@breaks(
    kills=['result_fields_have_the_declared_types'],
    bug="exit_code is filled from the provider's boolean `failed` field, so it is True or False.",
)
class ExitCodeAsAFailureFlag(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        flag: Any = result.exit_code != 0
        return dataclasses.replace(result, exit_code=flag)


@breaks(
    kills=['shell_strings_are_interpreted_by_a_posix_shell'],
    bug='A shell string is shlex.split and exec-ed directly, so pipes, `&&`, variables and globs are literal words.',
)
class ShellStringsSplitWithoutAShell(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        if isinstance(call.command, str) and call.shell:
            call = dataclasses.replace(call, command=shlex.split(call.command), shell=False)
        return await self._forward(call)


@breaks(
    kills=['shell_strings_start_in_the_working_dir'],
    bug='Shell strings run in a login shell (`bash -lc`), which starts in $HOME instead of the working directory.',
)
class ShellStringsStartAtHome(RewritesCommands):
    def _rewrite_command(self, command: WorkspaceCommand, shell: bool) -> WorkspaceCommand:
        if isinstance(command, str) and shell:
            command = f'cd "${{HOME:-/}}" 2>/dev/null || cd /\n{command}'
        return command


@breaks(
    kills=['shell_strings_run_with_default_shell_options'],
    bug='Shell strings run as `bash -euo pipefail -c`, so a failing command stops the script and pipelines fail early.',
)
class ShellStringsInStrictMode(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        if isinstance(call.command, str) and call.shell:
            call = dataclasses.replace(call, command=['bash', '-euo', 'pipefail', '-c', call.command], shell=False)
        return await self._forward(call)


@breaks(
    kills=['a_relative_argv_program_resolves_in_the_working_dir'],
    bug="A relative argv program is made absolute against the client's directory, not the command's working dir.",
)
class RelativeProgramsResolvedOnTheHost(RewritesCommands):
    def _rewrite_command(self, command: WorkspaceCommand, shell: bool) -> WorkspaceCommand:
        if not isinstance(command, str) and command and '/' in command[0]:
            # Made absolute against the client's own directory before the command is sent.
            command = [os.path.abspath(command[0]), *command[1:]]
        return command


class _RewritesOutputLimitErrors(InterceptsRun):
    """`LocalWorkspaceBackend.run`, its `WorkspaceOutputLimitError` replaced by what `_rewrite_error` makes of it."""

    def _rewrite_error(self, error: WorkspaceOutputLimitError) -> WorkspaceOutputLimitError:
        return error

    async def _take_run(self, call: RunCall) -> CommandResult:
        try:
            return await self._forward(call)
        except WorkspaceOutputLimitError as error:
            raise self._rewrite_error(error) from error


@breaks(
    kills=['output_past_a_cap_is_complete_or_an_output_limit_error'],
    bug='The output limit error is built from the stdout buffer alone, so its stderr preview is always empty.',
)
class OutputLimitErrorDropsStderr(_RewritesOutputLimitErrors):
    def _rewrite_error(self, error: WorkspaceOutputLimitError) -> WorkspaceOutputLimitError:
        return WorkspaceOutputLimitError(str(error), limit=error.limit, stdout=error.stdout)


@breaks(
    kills=['output_past_a_cap_is_complete_or_an_output_limit_error'],
    bug="The output limit error is raised with limit=None because the provider's response omits the cap.",
)
class OutputLimitErrorWithoutALimit(_RewritesOutputLimitErrors):
    def _rewrite_error(self, error: WorkspaceOutputLimitError) -> WorkspaceOutputLimitError:
        limit: Any = None  # the bug
        return WorkspaceOutputLimitError(str(error), limit=limit, stdout=error.stdout, stderr=error.stderr)


@breaks(
    kills=['local_output_past_10_mib_raises_with_64_kib_previews'],
    bug='A LocalWorkspaceBackend subclass reports its cap as 10 MB in decimal units (10,000,000), not 10 MiB.',
)
class OutputLimitInDecimalMegabytes(_RewritesOutputLimitErrors):
    def _rewrite_error(self, error: WorkspaceOutputLimitError) -> WorkspaceOutputLimitError:
        return WorkspaceOutputLimitError(str(error), limit=10_000_000, stdout=error.stdout, stderr=error.stderr)


@breaks(
    kills=[
        'output_of_1_mib_is_whole_or_an_output_limit_error',
        'output_of_4_mib_is_whole_or_an_output_limit_error',
        'output_of_8_mib_is_whole_or_an_output_limit_error',
    ],
    bug='Each stream is read into a buffer of 1 MB in decimal units (1,000,000 bytes) and what overflowed is dropped, '
    "the command's exit code kept.",
)
class OutputCappedAtADecimalMegabyte(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        return dataclasses.replace(result, stdout=result.stdout[:1_000_000], stderr=result.stderr[:1_000_000])


@breaks(
    kills=['output_of_4_mib_is_whole_or_an_output_limit_error', 'output_of_8_mib_is_whole_or_an_output_limit_error'],
    bug="Each stream comes back in one gRPC message of at most 4 MiB including its framing, so a stream's last bytes "
    'are lost from a successful result.',
)
class OutputInOneGrpcMessage(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        room = 4 * 1024 * 1024 - 16  # the message's 5-byte header and the result's field tags
        return dataclasses.replace(result, stdout=result.stdout[:room], stderr=result.stderr[:room])


@breaks(
    kills=['output_of_8_mib_is_whole_or_an_output_limit_error'],
    bug='The exec API keeps 8 MB in decimal units (8,000,000 bytes) of each stream and reports the command as '
    'having succeeded.',
)
class OutputCappedAtEightDecimalMegabytes(RewritesResults):
    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        return dataclasses.replace(result, stdout=result.stdout[:8_000_000], stderr=result.stderr[:8_000_000])


@breaks(
    kills=['env_names_keep_their_case', 'generated_env_values_are_exact'],
    bug="The provider's API upper-cases environment variable names, as Windows-style case-insensitive environments do.",
)
class EnvNamesUpperCased(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        if call.env is not None:
            call = dataclasses.replace(call, env={name.upper(): value for name, value in call.env.items()})
        return await self._forward(call)


@breaks(
    kills=['two_hundred_env_variables_arrive_in_one_call'],
    bug="The provider's exec request takes at most 128 environment variables and the backend drops the rest "
    'without a word.',
)
class EnvCappedAt128Variables(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        if call.env is not None:
            call = dataclasses.replace(call, env=dict(list(call.env.items())[:128]))
        return await self._forward(call)


@breaks(
    kills=['concurrent_commands_see_only_their_own_env'],
    bug="run() stores env= on the shared session before awaiting the provider's exec, so a concurrent call's "
    'variables replace it.',
)
class EnvOnTheSharedSession(InterceptsRun):
    def __init__(self, working_dir: str | Path) -> None:
        super().__init__(working_dir)
        self._session_env: Mapping[str, str] | None = None

    async def _take_run(self, call: RunCall) -> CommandResult:
        self._session_env = call.env
        await anyio.sleep(0.05)  # the round trip that opens the exec session
        return await self._forward(dataclasses.replace(call, env=self._session_env))

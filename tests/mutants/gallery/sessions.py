"""Mutants of the session rules: exec layers that lose output now and then, keep one shell, or cut long commands."""

from __future__ import annotations

import dataclasses
import re
import shlex

from pydantic_ai.workspaces import CommandResult, WorkspaceCommand

from workspace_conformance.doubles.forwarding import RunCall

from ..registry import breaks
from ._shared import InterceptsRun, RewritesCommands, RewritesResults

_MARK = '__wc_exit_code='
_STATE = '\n__wc_session_state__\n'
_KEPT_OPTIONS = frozenset({'errexit', 'nounset', 'noglob', 'noclobber', 'allexport', 'xtrace', 'verbose'})


@breaks(
    kills=['output_stays_exact_over_many_runs'],
    bug='run() returns only the first half of stdout on every ninth call, as an SDK losing its last chunk does.',
)
class LosesOutputNowAndThen(RewritesResults):
    calls = 0

    def _rewrite_result(self, result: CommandResult) -> CommandResult:
        self.calls += 1
        if self.calls % 9:
            return result
        return dataclasses.replace(result, stdout=result.stdout[: len(result.stdout) // 2])


@breaks(
    kills=['exec_reports_the_exit_code_of_the_program_it_becomes'],
    bug='run() appends `printf marker$?` to a shell string and reads the exit code from it, 0 when exec skipped it.',
)
class ReadsTheExitCodeFromAMarker(InterceptsRun):
    async def _take_run(self, call: RunCall) -> CommandResult:
        if not call.shell or not isinstance(call.command, str):
            return await self._forward(call)
        result = await self._forward(dataclasses.replace(call, command=f'{call.command}\nprintf "{_MARK}%s" "$?"'))
        stdout, found, code = result.stdout.rpartition(_MARK)
        if not found:
            return dataclasses.replace(result, exit_code=0)  # the SDK's default when its marker is missing
        return dataclasses.replace(result, stdout=stdout, exit_code=int(code))


@breaks(
    kills=[
        'a_cd_does_not_carry_into_the_next_run',
        'shell_options_do_not_carry_into_the_next_run',
        'exports_do_not_carry_into_the_next_run',
    ],
    bug="run() keeps one shell session: each command starts in the last one's directory, exports and `set` options.",
)
class KeepsOneShellSession(InterceptsRun):
    state = ''

    async def _take_run(self, call: RunCall) -> CommandResult:
        script = call.command if isinstance(call.command, str) else shlex.join(call.command)
        wrapped = (
            f'{self.state}\n{script}\n'
            f'__wc_rc=$?; printf "{_STATE.encode("unicode_escape").decode()}"; pwd -P; export -p; set +o; exit $__wc_rc'
        )
        result = await self._forward(dataclasses.replace(call, command=wrapped, shell=True))
        stdout, found, state = result.stdout.partition(_STATE)
        if found:
            self.state = '\n'.join(_replayed(state))
        return dataclasses.replace(result, stdout=stdout)


def _replayed(state: str) -> list[str]:
    """The lines that put a new shell where the last one was left: `cd`, its exports, its `set -o` options."""
    first, _, rest = state.partition('\n')
    lines = [f'cd {shlex.quote(first)}']
    for line in rest.splitlines():
        option = re.fullmatch(r'set -o (\w+)', line)
        kept_option = option is not None and option.group(1) in _KEPT_OPTIONS
        if kept_option or (line.startswith('export ') and not line.startswith(('export PWD=', 'export OLDPWD='))):
            lines.append(line)
    return lines


@breaks(
    kills=['a_100_kib_script_runs_whole_or_fails_clearly'],
    bug="run() cuts a shell string and each argv item at 64 KiB, the exec API's limit, and reports the rest's success.",
)
class CutsLongCommands(RewritesCommands):
    def _rewrite_command(self, command: WorkspaceCommand, shell: bool) -> WorkspaceCommand:
        if isinstance(command, str):
            return command[: 64 * 1024]
        return [item[: 64 * 1024] for item in command]

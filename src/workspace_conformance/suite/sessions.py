"""Rules on what a provider's exec layer has got wrong: output under repetition, shell state between runs, long scripts.

Each `run` is a command of its own: hosted sandboxes that keep one shell session per environment, parse the exit code
from a marker they append, cut long command lines at an API limit, or lose output now and then under load broke
these promises where the one-call rules saw nothing.
"""

from __future__ import annotations

import shlex
import uuid

import anyio
from pydantic_ai.workspaces import CommandResult, WorkspaceBackend, WorkspaceError

from ..authoring import commands_of, current_run, gather, paths, rule, scratch, workspace_of
from ._timeouts import timed_out_once_started

__all__ = ('SessionRules',)

REPEATS = 40
"""How many times the repetition rule runs its command: half one after another, half at once."""
LONG_SCRIPT_BYTES = 100 * 1024
"""The size of the long script: past the 64 KiB some exec APIs cut at, under Linux's 128 KiB for one argument."""
TICK = 'n=0; while [ "$n" -lt 1200 ] && [ -d "${1%/*}" ]; do printf x >> "$1"; n=$((n + 1)); sleep 0.05; done'
"""Shell that appends a byte to the file `$1` every 50 ms: for a minute at most, and only while its directory exists."""
STILL = 0.5
"""Seconds (at time scale 1) a stopped tree's file must keep its size to count as written no more."""


def _shown(result: CommandResult) -> str:
    return f'exit {result.exit_code}, stdout {result.stdout[:120]!r}, stderr {result.stderr[:120]!r}'


def _long_script(marker: str) -> tuple[str, str]:
    """A shell script of at least `LONG_SCRIPT_BYTES`, and what its last line prints of its first and last lines."""
    last = LONG_SCRIPT_BYTES // 12
    body = ''.join(f'v{index}={index:06d}\n' for index in range(last + 1))
    return f'first={marker}\n{body}printf "%s:%s" "$first" "$v{last}"\n', f'{marker}:{last:06d}'


class SessionRules:
    """Rules on runs that must stay apart: each its own output, exit code and shell, whatever ran before."""

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.3.0', timeout=120, must='B28')
    async def test_output_stays_exact_over_many_runs(self, backend: WorkspaceBackend) -> None:
        """A fast command run 40 times, in turn and at once, gives its exact stdout, stderr and exit code every time.

        A provider SDK that drops or cuts output now and then passes every rule that runs a command once.
        """
        commands = commands_of(backend)
        script = 'printf "out-%s\\n" "$1"; printf "err-%s" "$1" >&2; exit $(($1 % 7))'

        async def one(index: int) -> tuple[int, CommandResult]:
            return index, await commands.run(['sh', '-c', script, 'sh', str(index)])

        half = REPEATS // 2
        results = [await one(index) for index in range(half)]
        results += await gather(*(one(index) for index in range(half, REPEATS)))
        wrong = [
            f'run {index}: {_shown(result)}'
            for index, result in results
            if (result.exit_code, result.stdout, result.stderr) != (index % 7, f'out-{index}\n', f'err-{index}')
        ]
        assert not wrong, (
            f'{len(wrong)} of {REPEATS} runs of one fast command came back wrong (expected exit N % 7, stdout '
            f'"out-N\\n", stderr "err-N"): ' + '; '.join(wrong[:4])
        )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.3.0', must='B03')
    async def test_exec_reports_the_exit_code_of_the_program_it_becomes(self, backend: WorkspaceBackend) -> None:
        """A shell string that `exec`s a program reports that program's exit code, as `sh -c` does.

        A backend that appends an exit-code marker to the script, or reads one from the shell it wrapped, loses it.
        """
        commands = commands_of(backend)
        for code in (0, 7):
            result = await commands.run(f"printf before; exec sh -c 'printf after; exit {code}'", shell=True)
            assert (result.exit_code, result.stdout) == (code, 'beforeafter'), (
                f"`exec sh -c 'exit {code}'` in a shell string gave {_shown(result)}: the exit code must be the "
                "exec'd program's"
            )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.3.0', must='B21')
    async def test_a_cd_does_not_carry_into_the_next_run(self, backend: WorkspaceBackend) -> None:
        """A shell string that changes directory leaves the next `run` starting in `working_dir()`, as a new process.

        A backend that keeps one shell session for the environment starts the next command where the last one left.
        """
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            moved = await commands.run(f'cd {shlex.quote(root)} && pwd -P', shell=True)
            assert moved.exit_code == 0, f'`cd` into the scratch directory failed: {_shown(moved)}'
            home = await workspace.realpath(await workspace.working_dir())
            for form, command, shell in (
                ('a shell string', 'pwd -P', True),
                ('an argv', ['sh', '-c', 'pwd -P'], False),
            ):
                after = await commands.run(command, shell=shell)
                assert after.stdout == f'{home}\n', (
                    f'after a shell string ran `cd {root}`, {form} started in {after.stdout.strip()!r}, not {home!r}'
                )

    @rule(area='commands', level='extended', requires=['commands', 'posix_shell'], since='0.3.0', must='B46')
    async def test_shell_options_do_not_carry_into_the_next_run(self, backend: WorkspaceBackend) -> None:
        """After a shell string runs `set -eu`, the next shell string still runs with the shell's default options."""
        commands = commands_of(backend)
        first = await commands.run('set -eu; printf set', shell=True)
        assert (first.exit_code, first.stdout) == (0, 'set'), f'`set -eu; printf set` gave {_shown(first)}'
        after = await commands.run('false; printf "[%s]" "$WORKSPACE_CONFORMANCE_NEVER_SET"', shell=True)
        assert (after.exit_code, after.stdout) == (0, '[]'), (
            f'after a shell string ran `set -eu`, `false; printf "[$UNSET]"` gave {_shown(after)}: the options of one '
            'run reached the next'
        )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.3.0')
    async def test_exports_do_not_carry_into_the_next_run(self, backend: WorkspaceBackend) -> None:
        """A variable one shell string exports is not set for the next command, shell string or argv."""
        commands = commands_of(backend)
        name = 'WORKSPACE_CONFORMANCE_EXPORTED'
        first = await commands.run(f'export {name}=leaked; printf "%s" "${name}"', shell=True)
        assert (first.exit_code, first.stdout) == (0, 'leaked'), f'exporting a variable gave {_shown(first)}'
        for form, command, shell in (
            ('a shell string', f'printf "[%s]" "${{{name}-}}"', True),
            ('an argv', ['sh', '-c', f'printf "[%s]" "${{{name}-}}"'], False),
        ):
            after = await commands.run(command, shell=shell)
            assert after.stdout == '[]', (
                f"after a shell string exported {name}=leaked, {form} saw {after.stdout!r}: one run's exports "
                'reached the next'
            )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.3.0', timeout=120, must='B47')
    async def test_a_100_kib_script_runs_whole_or_fails_clearly(self, backend: WorkspaceBackend) -> None:
        """A 100 KiB script, as a shell string and as one argv item, runs whole or raises a clear error: never cut.

        Exec APIs with an argument-size limit have run the first 64 KiB and reported success, or never returned.
        """
        commands = commands_of(backend)
        marker = uuid.uuid4().hex[:12]
        script, expected = _long_script(marker)
        bound = current_run().seconds(60)
        for form, command, shell in (('a shell string', script, True), ('one argv item', ['sh', '-c', script], False)):
            result: CommandResult | None = None
            refused: Exception | None = None
            with anyio.move_on_after(bound) as waited:
                try:
                    result = await commands.run(command, shell=shell)
                except (WorkspaceError, OSError, ValueError) as error:
                    refused = error
            assert not waited.cancelled_caught, f'{len(script)} bytes of script as {form} ran past {bound:g} s'
            if refused is not None:  # refused with an error that says why: allowed
                assert str(refused).strip(), f'{len(script)} bytes of script as {form} raised an empty {refused!r}'
                continue
            assert result is not None
            assert (result.exit_code, result.stdout) == (0, expected), (
                f'{len(script)} bytes of script as {form} gave {_shown(result)}, not exit 0 and {expected!r}: '
                'the script was cut or changed on the way'
            )

    @rule(area='processes', level='extended', requires=['commands', 'posix_shell'], since='0.3.0', timeout=120)
    async def test_a_timed_out_command_s_grandchild_writes_nothing_more(self, backend: WorkspaceBackend) -> None:
        """Once a shell string times out, a grandchild it started writes nothing more into the environment.

        A hosted sandbox once stopped only the process its exec API spawned on a timeout: the grandchildren went on
        writing. This rule watches what they do, not their pids: the file a grandchild appends to every 50 ms stops
        growing within 15 s of the timeout.
        """
        commands = commands_of(backend)
        workspace = workspace_of(backend)
        run = current_run()
        async with scratch(workspace) as root:
            ticks = paths.join(root, 'ticks')
            child = f'sh -c {shlex.quote(TICK)} sh "$1"'  # the shell string's child starts the ticking grandchild
            script = f'sh -c {shlex.quote(child)} sh {shlex.quote(ticks)}; printf not-reached'
            _, never = await timed_out_once_started(
                lambda timeout: commands.run(script, shell=True, timeout=timeout),
                lambda _: workspace.exists(ticks),
                'a shell string whose grandchild writes every 50 ms',
            )
            if never is not None:
                raise AssertionError(f'the grandchild never wrote before its timeout, given {never}')
            deadline = anyio.current_time() + run.seconds(15)
            sizes = [len(await workspace.read_bytes(ticks))]
            while True:
                await anyio.sleep(run.seconds(STILL))
                sizes.append(len(await workspace.read_bytes(ticks)))
                if sizes[-1] == sizes[-2]:
                    return
                if anyio.current_time() > deadline:
                    grew = ' -> '.join(map(str, sizes))
                    raise AssertionError(
                        f'the grandchild went on writing after its timeout: its file grew {grew} bytes, read '
                        f'{run.seconds(STILL):g} s apart, for {run.seconds(15):g} s'
                    )

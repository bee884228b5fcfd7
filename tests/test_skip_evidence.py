"""A run-time skip rests on what the environment held before the rules acted, never on what the backend broke since.

A backend that works when the suite first looks at it, then loses its tools and its environment mid-run, must fail
the rules that find them gone: not one of them may skip for a reason the same suite on a sound backend does not have.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from workspace_conformance.vocabulary import OUTCOME_PROPERTY

from .test_waivers_and_guards import HEADER

BREAKING = '''
from pydantic_ai.workspaces import CommandResult

LOST = ('env', 'ln', 'mkfifo', 'chmod', 'setsid')


class Breaking(LocalWorkspaceBackend):
    """Sound when the suite first looks; from then on its commands lose their tools and their environment."""

    async def run(self, command, *, shell=False, env=None, timeout=None):
        argv = [command] if isinstance(command, str) else list(command)
        if 'workspace-conformance baseline' in ' '.join(argv):  # the suite's first look at the environment
            return await super().run(command, shell=shell, env=env, timeout=timeout)
        if argv == ['env']:
            return CommandResult(exit_code=0, stdout='', stderr='')
        if argv[0] in LOST or any('setsid' in part for part in argv[1:]):
            return CommandResult(exit_code=127, stdout='', stderr=f'{argv[0]}: not found')
        return await super().run(command, shell=shell, env=env, timeout=timeout)


TestSound = suite_over(LocalWorkspaceBackend)
TestBreaking = suite_over(Breaking)
'''

SITES = (
    'env_layers_over_the_backend_environment or env_overrides_the_backend_variable or '
    'commands_do_not_see_the_runners_environment or permission_denied_uses_builtin_error or fifo or '
    'detached_process_outlives or symlink_loop or dangling'
)
"""The rules whose run-time skips the broken backend used to reach."""
GAPS = ('environment', 'runner', 'declared-limit')


def _outcomes(result: pytest.RunResult) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(class, rule id, structured outcome) of every rule the run reported on."""
    for report in result.reprec.getreports('pytest_runtest_logreport'):  # type: ignore[attr-defined]
        for key, value in report.user_properties:
            if key == OUTCOME_PROPERTY:
                _, cls, name = report.nodeid.split('::')
                yield cls, name.partition('[')[0].removeprefix('test_'), value


def _gaps_and_failures(pytester: pytest.Pytester, *args: str) -> dict[str, tuple[set[str], set[str]]]:
    """Per class: the rules that skipped as a gap of the runner's, and the rules that failed."""
    pytester.makepyfile(test_subject=HEADER + BREAKING)
    result = pytester.runpytest_inprocess('-p', 'no:randomly', '-p', 'no:cacheprovider', *args)
    found: dict[str, tuple[set[str], set[str]]] = {'TestSound': (set(), set()), 'TestBreaking': (set(), set())}
    for cls, rule_id, outcome in _outcomes(result):
        if outcome.get('skip_kind') in GAPS:
            found[cls][0].add(f'{rule_id}: {outcome["skip_kind"]}')
        if 'failure' in outcome:
            found[cls][1].add(rule_id)
    return found


def _check(found: dict[str, tuple[set[str], set[str]]], must_fail: set[str]) -> None:
    sound_gaps, sound_failures = found['TestSound']
    broken_gaps, broken_failures = found['TestBreaking']
    assert not sound_failures, sound_failures
    assert broken_gaps <= sound_gaps, f'skips the breakage made: {sorted(broken_gaps - sound_gaps)}'
    assert must_fail <= broken_failures, f'broken, yet not failed: {sorted(must_fail - broken_failures)}'


def test_a_backend_broken_mid_run_fails_the_rules_that_used_to_skip(pytester: pytest.Pytester) -> None:
    found = _gaps_and_failures(pytester, '-k', SITES)
    _check(
        found,
        {
            'env_layers_over_the_backend_environment',
            'env_overrides_the_backend_variable_of_the_same_name',
            'commands_do_not_see_the_runners_environment',
            'fifo_read_does_not_wait_for_writer',
            'a_detached_process_outlives_the_command',
        },
    )


@pytest.mark.slow
def test_no_rule_of_the_whole_suite_skips_on_the_breakage(pytester: pytest.Pytester) -> None:
    _check(_gaps_and_failures(pytester), {'env_layers_over_the_backend_environment'})


CONCURRENT_ENV = '''
import anyio

class Corrupting(LocalWorkspaceBackend):
    """Concurrent `env=` calls corrupt each other: a command started while another with `env=` runs has none."""

    running_with_env = 0

    async def run(self, command, *, shell=False, env=None, timeout=None):
        if env is None and list(command) == ['env']:
            await anyio.sleep(0.1)  # by then a concurrent rule's env= call is under way
        if env is None and Corrupting.running_with_env:
            command = ['env', '-i', *command]  # what the concurrent env= call left this one: nothing
        Corrupting.running_with_env += env is not None
        try:
            if env is not None:
                await anyio.sleep(0.5)
            return await super().run(command, shell=shell, env=env, timeout=timeout)
        finally:
            Corrupting.running_with_env -= env is not None


class TestCorrupting(Base):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory):
        return Corrupting(tmp_path_factory.mktemp('ws'))
'''


def test_env_corrupted_by_a_concurrent_rule_is_a_failure_not_a_skip(pytester: pytest.Pytester) -> None:
    """Run beside `env_is_added`, whose `env=` call empties the environment of the rule's `env` listing."""
    pytester.makepyfile(test_subject=HEADER + CONCURRENT_ENV)
    result = pytester.runpytest_inprocess(
        '-p', 'no:randomly', '-p', 'no:cacheprovider', '--conformance-concurrency', '4',
        '-k', 'test_env_is_added or env_layers_over_the_backend_environment',
    )  # fmt: skip
    outcomes = {rule_id: outcome for _, rule_id, outcome in _outcomes(result)}
    layered = outcomes['env_layers_over_the_backend_environment']
    assert 'failure' in layered, layered
    assert 'before the rules ran, `env` listed PATH=' in layered['failure'], layered

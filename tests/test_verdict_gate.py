"""Under plain pytest: the verdict gate (`--conformance-fail-under`, ini `conformance_fail_under`) and the root hint."""

from __future__ import annotations

import os

import pytest

from workspace_conformance.targets.certification import SPEC_ENVIRONMENT

from .runner import bypasses_permissions

SUITE = """
import os

import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend
from workspace_conformance import WorkspaceBackendSuite
from workspace_conformance.suite import narrow


class Interrupts(LocalWorkspaceBackend):
    async def exists(self, path):
        raise KeyboardInterrupt  # Ctrl-C in the middle of the run


class TestSubject(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def anyio_backend(cls):
        return 'asyncio'

    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory):
        kind = Interrupts if os.environ.get('INTERRUPT') else LocalWorkspaceBackend
        return kind(tmp_path_factory.mktemp('ws'))

    @pytest.fixture
    def declared_limits(self):  # an extended rule declared a limit: the verdict is partial
        return {'background_child_does_not_hold_up_completed_command': 'the SDK waits for pipe EOF'}


narrow(TestSubject, {'exists', 'background_child_does_not_hold_up_completed_command'})
"""
BELOW = 'workspace-conformance: verdict partial is below --conformance-fail-under certified'


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_subject=SUITE)
    return pytester.runpytest_inprocess('-p', 'no:cacheprovider', *args)


def _gate_lines(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith('workspace-conformance: verdict')]


def test_a_verdict_below_the_gate_exits_1_and_the_last_line_says_why(pytester: pytest.Pytester) -> None:
    result = _run(pytester, '--conformance-fail-under', 'certified')
    result.assert_outcomes(passed=1, skipped=1)  # every test passed: only the verdict fails the session
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.outlines[-1] == BELOW, result.outlines[-5:]


@pytest.mark.parametrize(
    ('args', 'ini', 'status', 'line'),
    [
        pytest.param((), None, pytest.ExitCode.OK, None, id='off by default'),
        pytest.param(('--conformance-fail-under', 'partial'), None, pytest.ExitCode.OK, None, id='met'),
        pytest.param((), 'certified', pytest.ExitCode.TESTS_FAILED, 'conformance_fail_under = certified', id='ini'),
        pytest.param(('--conformance-fail-under', 'partial'), 'certified', pytest.ExitCode.OK, None, id='flag wins'),
        pytest.param(
            ('--conformance-fail-under', 'certified'),
            'partial',
            pytest.ExitCode.TESTS_FAILED,
            '--conformance-fail-under certified',
            id='flag wins over a laxer ini',
        ),
    ],
)
def test_the_gate_from_the_command_line_or_the_ini_file(
    pytester: pytest.Pytester, args: tuple[str, ...], ini: str | None, status: pytest.ExitCode, line: str | None
) -> None:
    if ini is not None:
        pytester.makeini(f'[pytest]\nconformance_fail_under = {ini}\n')
    result = _run(pytester, *args)
    assert result.ret == status, result.outlines[-5:]
    if line is None:
        assert _gate_lines(result) == []
    else:
        assert result.outlines[-1] == f'workspace-conformance: verdict partial is below {line}'


@pytest.mark.parametrize(
    ('args', 'ini', 'says'),
    [
        pytest.param(('--conformance-fail-under', 'gold'), None, "--conformance-fail-under: 'gold'", id='flag'),
        pytest.param((), 'not certified', "conformance_fail_under: 'not certified'", id='ini'),
    ],
)
def test_a_bad_value_is_a_usage_error_saying_what_it_accepts(
    pytester: pytest.Pytester, args: tuple[str, ...], ini: str | None, says: str
) -> None:
    if ini is not None:
        pytester.makeini(f'[pytest]\nconformance_fail_under = {ini}\n')
    result = _run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    [error] = [line for line in result.errlines if 'pass certified or partial' in line]
    assert says in error, result.errlines


def test_an_incomplete_report_fails_the_gate_and_says_so(pytester: pytest.Pytester) -> None:
    result = _run(pytester, '--conformance-fail-under', 'partial', '-k', 'exists')
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.outlines[-1] == (
        'workspace-conformance: verdict not certified is below --conformance-fail-under partial '
        '(the report is incomplete: 1 rule has no result)'
    )


def test_an_interrupted_run_keeps_its_own_exit_status(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('INTERRUPT', '1')
    pytester.makepyfile(test_subject=SUITE)  # in a process of its own: Ctrl-C would reach this session
    result = pytester.runpytest_subprocess('-p', 'no:cacheprovider', '--conformance-fail-under', 'certified')
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert _gate_lines(result) == []


def test_a_session_without_conformance_rules_ignores_the_gate(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain='def test_plain():\n    pass\n')
    result = pytester.runpytest_inprocess('-p', 'no:cacheprovider', '--conformance-fail-under', 'certified')
    assert result.ret == pytest.ExitCode.OK
    assert _gate_lines(result) == []


def test_the_gate_needs_the_reports_plugin(pytester: pytest.Pytester) -> None:
    result = _run(pytester, '-p', 'no:workspace-conformance-reports', '--conformance-fail-under', 'partial')
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(['*--conformance-fail-under partial needs the reports plugin*'])


BYPASSED = """
import os

import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend
from workspace_conformance import WorkspaceBackendSuite
from workspace_conformance.engine._baseline import BASELINE_ARGV, CHECKS
from workspace_conformance.suite import narrow

PROBE = 'cat -- "$1" >/dev/null 2>&1'  # how the permission rule asks whether the command user reads a mode-000 file
READS_LOCKED = CHECKS['reads mode 000'][0]  # how the suite's first look at the environment asks the same


class ReadsEverything(LocalWorkspaceBackend):  # as root does: the rule's probe reads the locked file
    async def run(self, command, **kwargs):
        if isinstance(command, list) and list(command) == list(BASELINE_ARGV):  # and so does the suite's first look
            command = [*command[:2], command[2].replace(READS_LOCKED, 'true')]
        result = await super().run(command, **kwargs)
        if isinstance(command, list) and PROBE in command:
            return type(result)(exit_code=0, stdout=result.stdout, stderr=result.stderr)
        return result


class Checked(WorkspaceBackendSuite):
    @pytest.fixture(scope='class', params=['asyncio', 'trio'])
    @classmethod
    def anyio_backend(cls, request):
        return request.param

    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory):
        return BACKEND(tmp_path_factory.mktemp('ws'))

    @pytest.fixture
    def declared_limits(self):
        limit = os.environ.get('LIMIT')
        return {'permission_denied_uses_builtin_error': limit} if limit else {}


class TestOne(Checked):
    pass


class TestTwo(Checked):
    pass


for suite in (TestOne, TestTwo):
    narrow(suite, {'permission_denied_uses_builtin_error'})
"""


def _bypassed(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # As root the real backend bypasses file permissions; otherwise one whose probe reads the file stands in for it.
    backend = 'LocalWorkspaceBackend' if bypasses_permissions() else 'ReadsEverything'
    pytester.makepyfile(test_subject=BYPASSED.replace('BACKEND(', f'{backend}('))
    return pytester.runpytest_inprocess('-p', 'no:cacheprovider', *args)


def _hints(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith('runner gap:')]


def test_a_runner_gap_on_the_permission_rule_says_once_how_to_check_it(pytester: pytest.Pytester) -> None:
    result = _bypassed(pytester)
    result.assert_outcomes(skipped=4)  # two suites, two event loops: one hint
    [hint] = _hints(result)
    assert '[files/permission_denied_uses_builtin_error] was not checked' in hint
    if os.geteuid() == 0:
        assert 'run `workspace-conformance certify`' in hint and 'setpriv --bounding-set' in hint, hint
    else:
        assert 'run its commands as a user without that override' in hint, hint


@pytest.mark.slow  # a whole-suite run
def test_under_xdist_the_controller_prints_the_hint_once_and_applies_the_gate(pytester: pytest.Pytester) -> None:
    backend = 'LocalWorkspaceBackend' if bypasses_permissions() else 'ReadsEverything'
    pytester.makepyfile(test_subject=BYPASSED.replace('BACKEND(', f'{backend}('))
    result = pytester.runpytest_subprocess('-p', 'no:cacheprovider', '-n', '2', '--conformance-fail-under', 'certified')
    assert len(_hints(result)) == 1, result.outlines
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the runner gap makes the verdict partial
    assert _gate_lines(result) == [BELOW] and result.outlines[-1] == BELOW


def test_no_hint_when_the_permission_rule_is_not_a_runner_gap(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('LIMIT', 'no permissions in this store')
    result = _bypassed(pytester, '-rs')
    result.stdout.fnmatch_lines(['*declared-limit: no permissions in this store*'])
    assert _hints(result) == []


def test_no_hint_under_certify_which_drops_the_override_itself(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SPEC_ENVIRONMENT, '{}')  # set while `certify` runs its session
    result = _bypassed(pytester)
    result.assert_outcomes(skipped=4)
    assert _hints(result) == []

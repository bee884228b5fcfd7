"""Expected failures in a file: waived like the fixture's, stale entries fail with a line to remove them, bundled.

`pytest --conformance-expected-failures FILE` and `certify --expected-failures FILE` read a YAML mapping of rule id
to reason. An unknown id, bad YAML, or a value that is not a reason is one line of usage error.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .test_waivers_and_guards import HEADER

IGNORES_ENV = """

class IgnoresEnv(LocalWorkspaceBackend):
    async def run(self, command, *, shell=False, env=None, timeout=None):
        return await super().run(command, shell=shell, timeout=timeout)


TestIgnoresEnv = suite_over(IgnoresEnv)
"""
RULES = 'test_env_is_added or test_stdin_is_at_eof'


def _run(pytester: pytest.Pytester, waivers: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_subject=HEADER + IGNORES_ENV)
    path = pytester.path / 'expected-failures.yaml'
    path.write_text(waivers)
    return pytester.runpytest_inprocess(
        '-p', 'no:cacheprovider', '--conformance-expected-failures', str(path), '-k', RULES, *args
    )  # fmt: skip


def test_a_waived_failure_is_an_expected_failure_recorded_in_the_report(pytester: pytest.Pytester) -> None:
    result = _run(pytester, 'env_is_added: the SDK drops env= (tracked upstream)\n', '--conformance-report', 'out')
    result.assert_outcomes(passed=1, xfailed=1)
    report = json.loads((pytester.path / 'out' / 'report.json').read_text())
    assert report['expected_failures_file']['rule_ids'] == ['env_is_added']
    assert report['expected_failures_file']['name'] == 'expected-failures.yaml'
    [suite] = report['suites']
    assert suite['expected_failures'] == [
        {'rule_id': 'env_is_added', 'reason': 'the SDK drops env= (tracked upstream)'}
    ]


def test_an_entry_whose_rule_passes_fails_the_run_with_a_line_to_remove_it(pytester: pytest.Pytester) -> None:
    result = _run(pytester, 'env_is_added: dropped\nstdin_is_at_eof: once hung\n')
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    stale = [line for line in result.outlines if 'remove `' in line]
    assert len(stale) == 1, result.outlines
    assert stale[0].endswith('expected-failures.yaml: remove `stdin_is_at_eof`: it passes now (on asyncio)')


def test_an_entry_whose_rule_does_not_apply_is_stale_too_and_fails_its_rule(pytester: pytest.Pytester) -> None:
    # A POSIX backend has no 'windows' form of a rule that only a 'windows' backend is asked to pass.
    waivers = 'env_is_added: dropped\na_windows_backend_runs_in_a_directory: not on windows yet\n'
    result = _run(pytester, waivers, '-k', 'a_windows_backend_runs_in_a_directory', '--conformance-report', 'out')
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    stale = [line for line in result.outlines if 'remove `' in line]
    assert stale == [
        f'{pytester.path / "expected-failures.yaml"}: remove `a_windows_backend_runs_in_a_directory`: it does not '
        'apply to this backend (on asyncio)'
    ], result.outlines
    [suite] = json.loads((pytester.path / 'out' / 'report.json').read_text())['suites']
    [summary] = [rule for rule in suite['rules'] if rule['rule_id'] == 'a_windows_backend_runs_in_a_directory']
    assert summary['status'] == 'failed' and 'stale waiver' in summary['detail'], summary


def test_an_expected_failure_of_the_fixture_that_does_not_apply_fails_its_rule(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_subject=HEADER
        + IGNORES_ENV
        + """

class TestWaived(TestIgnoresEnv):
    @pytest.fixture
    def expected_failures(self):
        return {'a_windows_backend_runs_in_a_directory': 'not on windows yet'}
"""
    )
    result = pytester.runpytest_inprocess('-p', 'no:cacheprovider', '-k', 'TestWaived and windows_backend_runs')
    result.assert_outcomes(failed=1)
    assert any(
        'stale waiver: it is declared an expected failure, but it does not apply' in line for line in result.outlines
    )


@pytest.mark.parametrize(
    ('text', 'said'),
    [
        ('env_is_addd: typo\n', "names unknown rule ids: 'env_is_addd' (did you mean 'env_is_added'?)"),
        ('- env_is_added\n', 'holds a list, not a mapping'),
        ('env_is_added: [a, b]\n', 'is not a rule id and a reason'),
        ('env_is_added: "unclosed\n', 'not a YAML file at line'),
    ],
)
def test_a_bad_file_is_one_line_of_usage_error(pytester: pytest.Pytester, text: str, said: str) -> None:
    result = _run(pytester, text)
    assert result.ret in (pytest.ExitCode.USAGE_ERROR, 2), result.outlines
    assert said in '\n'.join(result.errlines), result.errlines
    assert 'Traceback' not in result.stderr.str()


def _certify(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, '-m', 'workspace_conformance', 'certify', *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow  # `certify` in a subprocess
def test_certify_bundles_the_file_and_verify_checks_its_bytes(tmp_path: Path) -> None:
    waivers = tmp_path / 'waivers.yaml'
    waivers.write_text('stdin_is_at_eof: once hung on our SDK\n')
    bundle = tmp_path / 'bundle'
    done = _certify(
        tmp_path, 'local', '--anyio-backend', 'asyncio', '-k', 'stdin_is_at_eof', '--expected-failures',
        str(waivers), '--bundle', str(bundle),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-2000:]
    assert f'{waivers}: remove `stdin_is_at_eof`: it passes now (on asyncio)' in done.stdout, done.stdout[-2000:]
    assert (bundle / 'expected-failures.yaml').read_bytes() == waivers.read_bytes()
    verified = subprocess.run(
        [sys.executable, '-m', 'workspace_conformance', 'verify', str(bundle)], capture_output=True, text=True
    )
    assert 'expected-failures.yaml' not in verified.stdout + verified.stderr
    (bundle / 'expected-failures.yaml').write_text('stdin_is_at_eof: changed after the run\n')
    tampered = subprocess.run(
        [sys.executable, '-m', 'workspace_conformance', 'verify', str(bundle)], capture_output=True, text=True
    )
    assert tampered.returncode != 0
    assert 'expected-failures.yaml' in tampered.stdout + tampered.stderr


@pytest.mark.slow  # `certify` in a subprocess
def test_certify_refuses_an_unknown_rule_id_in_one_line(tmp_path: Path) -> None:
    waivers = tmp_path / 'waivers.yaml'
    waivers.write_text('stdin_is_at_oef: typo\n')
    done = _certify(tmp_path, 'local', '--expected-failures', str(waivers))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"workspace-conformance: `--expected-failures {waivers}` names unknown rule ids: 'stdin_is_at_oef' (did you "
        "mean 'stdin_is_at_eof'?). Use rule ids as `workspace-conformance rules` lists them (the test name without "
        '`test_`).'
    ]

"""A vendor's first `certify`, the way a stranger runs it: their backend in their own module, through the command line.

`first_contact/acme_sandbox.py` is written as a vendor writes an integration: commands only, over an asyncio-only
client, its factory putting its sandbox straight into the scratch directory it is handed, and one planted bug
(stderr dropped whenever a command succeeds). These tests copy it outside the package and certify it as a vendor
does: the planted bug's rules fail and nothing else does, trio is left out and said so, and the output stays short.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workspace_conformance.engine._versions import pydantic_ai_at_least

from .runner import certify

VENDOR_MODULE = Path(__file__).resolve().parent / 'first_contact' / 'acme_sandbox.py'
PLANTED = frozenset(
    {
        'undecodable_command_bytes_are_replaced',
        'command_output_is_complete',
        'output_past_a_cap_is_complete_or_an_output_limit_error',
        'line_endings_and_tabs_are_preserved',
        'non_ascii_output_round_trips',
        'output_whitespace_is_not_trimmed',
        'nul_bytes_in_output_are_kept',
        'stdout_and_stderr_stay_apart',
        'stderr_alone_is_returned',
        'output_of_1_mib_is_whole_or_an_output_limit_error',
        'output_of_4_mib_is_whole_or_an_output_limit_error',
        'output_of_8_mib_is_whole_or_an_output_limit_error',
        'output_stays_exact_over_many_runs',
    }
)
"""Every rule that checks stderr of a successful command: what dropping it breaks."""
LINE_BUDGET = 100
"""Lines a certification of a backend with a few failing rules may print, summary and verdict included."""
BROKEN_FACTORY_BUDGET = 5


@pytest.fixture
def vendor(tmp_path: Path) -> Path:
    """A vendor's project directory holding their module, and nothing of ours."""
    project = tmp_path / 'acme'
    project.mkdir()
    shutil.copy(VENDOR_MODULE, project / 'acme_sandbox.py')
    return project


def printed(result: subprocess.CompletedProcess[str]) -> list[str]:
    return (result.stdout + result.stderr).splitlines()


def failed_rules(report: dict[str, object]) -> dict[str, list[str]]:
    """Rule id -> the loops it failed on, from a report.json."""
    found: dict[str, list[str]] = {}
    for suite in report['suites']:  # type: ignore[attr-defined]
        for outcome in suite['results']:
            if outcome['outcome'] == 'failed':
                found.setdefault(outcome['rule_id'], []).append(outcome['anyio_backend'])
    return found


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which('sh'), reason='the vendor backend runs commands with sh')
def test_the_planted_bug_fails_its_rules_and_nothing_else_on_the_loop_the_backend_runs_on(
    vendor: Path, tmp_path: Path
) -> None:
    pytest.importorskip('trio', reason='the loop left out is trio')
    result = certify(vendor, 'acme_sandbox:build', '--conformance-profile', 'ci', '--report', str(tmp_path / 'r'))
    lines = printed(result)
    assert result.returncode == 1, '\n'.join(lines[-40:])
    report = json.loads((tmp_path / 'r' / 'report.json').read_text())
    assert set(failed_rules(report)) == PLANTED, '\n'.join(lines)
    (suite,) = report['suites']
    assert suite['anyio_backends'] == ['asyncio']
    assert set(suite['loops_left_out']) == {'trio'}
    assert 'no running event loop' in suite['loops_left_out']['trio']
    left_out = [line for line in lines if 'trio left out' in line]
    assert len(left_out) == 1, '\n'.join(lines)
    assert 'asyncio' in left_out[0] and '--anyio-backend' in left_out[0]
    assert len(lines) <= LINE_BUDGET, f'{len(lines)} lines printed:\n' + '\n'.join(lines)
    for rule in PLANTED:  # every finding is shown, once
        assert sum(rule in line for line in lines) >= 1, rule
    assert result.stdout.splitlines()[-1] == 'workspace-conformance: not certified (acme_sandbox:build)'
    assert 'Traceback' not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ('factory', 'says'),
    [
        ('acme_sandbox:build_without_credentials', 'raised PermissionError when called: ACME_API_KEY is not set'),
        ('acme_sandbox:build_class', 'returns a class; return an instance'),
    ],
)
def test_a_factory_that_cannot_work_stops_before_any_rule_in_one_line(vendor: Path, factory: str, says: str) -> None:
    result = certify(vendor, factory, '--report', str(vendor / 'report'))
    lines = printed(result)
    assert result.returncode == 2, '\n'.join(lines)
    assert len(lines) <= BROKEN_FACTORY_BUDGET, '\n'.join(lines)
    (line,) = [line for line in lines if factory in line]
    assert says in line
    assert 'Traceback' not in result.stderr
    assert not (vendor / 'report' / 'report.json').exists()


def test_an_async_factory_is_awaited(vendor: Path, tmp_path: Path) -> None:
    result = certify(
        vendor,
        'acme_sandbox:connect',
        '--anyio-backend',
        'asyncio',
        '-k',
        'run_starts_in_cwd or stderr_alone_is_returned',
        '--report',
        str(tmp_path / 'r'),
    )
    report = json.loads((tmp_path / 'r' / 'report.json').read_text())
    assert result.returncode == 1, result.stdout + result.stderr
    assert failed_rules(report) == {'stderr_alone_is_returned': ['asyncio']}
    statuses = {rule['rule_id']: rule['status'] for suite in report['suites'] for rule in suite['rules']}
    # `run(cwd=)` is pydantic-ai 2.68's: on 2.62 the rule is not applicable, and said so (not a failure, not a pass).
    assert statuses['run_starts_in_cwd'] == ('passed' if pydantic_ai_at_least((2, 68)) else 'not-applicable')


def test_the_command_imports_the_factory_from_the_directory_it_is_run_in(vendor: Path, tmp_path: Path) -> None:
    command = Path(sys.executable).with_name('workspace-conformance')
    environment = {key: value for key, value in os.environ.items() if key != 'PYTHONPATH'}
    narrowed = ['--anyio-backend', 'asyncio', '-k', 'run_starts_in_cwd', '--report', str(tmp_path / 'r')]
    here = subprocess.run(
        [str(command), 'certify', 'acme_sandbox:build', *narrowed],
        cwd=vendor,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads((tmp_path / 'r' / 'report.json').read_text())
    outcomes = {outcome['rule_id']: outcome['outcome'] for outcome in report['suites'][0]['results']}
    ran = 'passed' if pydantic_ai_at_least((2, 68)) else 'skipped'  # `run(cwd=)` is 2.68's: on 2.62 not applicable
    assert outcomes['run_starts_in_cwd'] == ran, here.stderr
    elsewhere = subprocess.run(
        [str(command), 'certify', 'acme_sandbox:build'],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert elsewhere.returncode == 2
    assert elsewhere.stderr.strip().endswith('is its directory on PYTHONPATH? run from it or set PYTHONPATH')


CLOUD_MODULE = Path(__file__).resolve().parent / 'first_contact' / 'cloud_files.py'
FAULT_RULES = 'transient_error_reaches or setup_failing_right'


def _certify_cloud(tmp_path: Path, factory: str, fault: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """`certify cloud_files:FACTORY --fresh ... --inject-fault cloud_files:FAULT` on the fault rules, in its project."""
    project = tmp_path / 'cloud'
    project.mkdir()
    shutil.copy(CLOUD_MODULE, project / 'cloud_files.py')
    options = ['--fresh', f'cloud_files:{factory}', '--inject-fault', f'cloud_files:{fault}', '-k', FAULT_RULES]
    result = certify(project, f'cloud_files:{factory}', *options, '--report', str(tmp_path / 'r'))
    report = json.loads((tmp_path / 'r' / 'report.json').read_text())
    statuses = {rule['rule_id']: rule['status'] for suite in report['suites'] for rule in suite['rules']}
    return result, {rule: status for rule, status in statuses.items() if status != 'missing'}


def test_a_vendors_fault_hook_reaches_the_fault_rules_through_the_command_line(tmp_path: Path) -> None:
    result, statuses = _certify_cloud(tmp_path, 'build', 'inject_fault')
    assert statuses == {
        'a_provider_s_transient_error_reaches_the_caller_unchanged': 'passed',
        'a_setup_failing_right_after_the_create_leaves_the_ref': 'passed',
    }, result.stdout[-3000:]


def test_an_sdk_error_reported_as_a_lost_sandbox_is_an_advisory_naming_the_retry(tmp_path: Path) -> None:
    result, statuses = _certify_cloud(tmp_path, 'build_wrapping', 'inject_fault')
    assert statuses['a_provider_s_transient_error_reaches_the_caller_unchanged'] == 'advisory', result.stdout[-3000:]
    assert 'a WorkspaceError, which durable engines never retry' in result.stdout, result.stdout[-3000:]


def test_a_fault_hook_returning_a_coroutine_is_told_what_to_return(tmp_path: Path) -> None:
    result, _ = _certify_cloud(tmp_path, 'build', 'inject_fault_async')
    assert 'return the exception type the armed fault raises' in result.stdout + result.stderr, result.stdout[-3000:]
    assert 'Traceback' not in result.stdout + result.stderr
    assert 'never awaited' not in result.stdout + result.stderr


def test_an_async_fault_hook_is_refused_at_load_saying_what_to_return(tmp_path: Path) -> None:
    shutil.copy(CLOUD_MODULE, tmp_path / 'cloud_files.py')
    options = ['--fresh', 'cloud_files:build', '--inject-fault', 'cloud_files:inject_fault_awaited']
    result = certify(tmp_path, 'cloud_files:build', *options)
    assert result.returncode == 2, result.stdout[-3000:] + result.stderr[-3000:]
    line = result.stderr.strip()
    assert line.endswith(
        'is an async function: --inject-fault takes a plain function returning the exception type '
        'the armed fault raises (or None)'
    ), line
    assert '\n' not in line and 'Traceback' not in result.stdout + result.stderr


def test_a_vendors_stop_and_start_reach_the_restart_rules_through_the_command_line(tmp_path: Path) -> None:
    project = tmp_path / 'cloud'
    project.mkdir()
    shutil.copy(CLOUD_MODULE, project / 'cloud_files.py')
    hooks = ['--fresh', 'cloud_files:build', '--attach', 'cloud_files:attach']
    hooks += ['--stop', 'cloud_files:stop', '--start', 'cloud_files:start']
    narrowed = ['-k', 'init_died or after_a_restart', '--report', str(tmp_path / 'r')]
    result = certify(project, 'cloud_files:build', *hooks, *narrowed)
    report = json.loads((tmp_path / 'r' / 'report.json').read_text())
    statuses = {rule['rule_id']: rule['status'] for suite in report['suites'] for rule in suite['rules']}
    assert {rule: status for rule, status in statuses.items() if status != 'missing'} == {
        'an_environment_whose_init_died_raises_unavailable_in_time': 'passed',
        'a_backend_attached_after_a_restart_finds_the_files_written_before': 'passed',
    }, result.stdout[-3000:]

"""`--conformance-max-duration` ends a run incomplete, its unchecked rules `missing`; each rule reports its cost."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workspace_conformance.reports.model import Report

REMOTE = """
from pydantic_ai.workspaces import LocalWorkspaceBackend
from workspace_conformance.doubles import FaultyBackend


def remote(directory):
    directory.mkdir(parents=True, exist_ok=True)
    return FaultyBackend(LocalWorkspaceBackend(directory), latency={'*': 0.01})
"""


def _certify(tmp_path: Path, *extra: str, target: str = 'memory') -> tuple[subprocess.CompletedProcess[str], Report]:
    out = tmp_path / 'out'
    (tmp_path / 'slow_remote.py').write_text(REMOTE)
    result = subprocess.run(
        [
            sys.executable,
            '-m',
            'workspace_conformance',
            'certify',
            target,
            '--anyio-backend',
            'asyncio',
            '--conformance-profile',
            'ci',
            '--report',
            str(out),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=tmp_path,
        env={**os.environ, 'PYTHONPATH': str(tmp_path)},
    )
    return result, Report.model_validate_json((out / 'report.json').read_text())


def test_a_session_past_its_deadline_is_incomplete_and_its_unchecked_rules_are_missing(tmp_path: Path) -> None:
    result, report = _certify(tmp_path, '--conformance-max-duration', '0.5')
    assert result.returncode == 1, result.stdout[-2000:]
    assert report.complete is False and report.verdict == 'not certified'
    outcomes = [outcome for suite in report.suites for outcome in suite.results]
    missing = [outcome for outcome in outcomes if outcome.outcome == 'missing']
    assert missing, [outcome.outcome for outcome in outcomes]
    # The deadline never turns a rule into a pass: only rules that ran to the end before it passed.
    assert all(outcome.outcome != 'passed' or outcome.calls is not None for outcome in outcomes)
    assert 'conformance-max-duration' in result.stdout


def test_a_bad_deadline_is_a_usage_error() -> None:
    result = subprocess.run(
        [sys.executable, '-m', 'workspace_conformance', 'certify', 'memory', '--conformance-max-duration', '-3'],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert 'pass a finite number of seconds > 0' in result.stderr
    assert 'Traceback' not in result.stderr


@pytest.mark.slow  # a certification through a double with round-trip latency injected
def test_every_rule_that_ran_reports_its_calls_round_trips_and_seconds(tmp_path: Path) -> None:
    _, report = _certify(tmp_path, '-k', 'round_trip or exists', target='slow_remote:remote')
    ran = [outcome for suite in report.suites for outcome in suite.results if outcome.outcome == 'passed']
    assert ran
    for outcome in ran:
        assert outcome.calls is not None and outcome.round_trips is not None, outcome
        assert 1 <= outcome.round_trips <= outcome.calls, outcome
        assert outcome.duration > 0
    batched = [outcome for outcome in ran if outcome.rule_id == 'generated_names_round_trip']
    assert batched and batched[0].round_trips is not None and batched[0].calls is not None
    assert batched[0].round_trips < batched[0].calls / 2  # its calls go several at a time

"""`certify --capability` runs the capability suite beside the backend suite: two verdicts side by side, one overall."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a whole certify session


def _certify(arguments: list[str]) -> int:
    command = [sys.executable, '-m', 'workspace_conformance', 'certify', *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False).returncode


def test_certify_provider_with_its_capability(tmp_path: Path) -> None:
    status = _certify(
        [
            'provider',
            '--capability',
            '--anyio-backend',
            'asyncio',
            '-k',
            'has_the_required_members or get_workspace_builds_without_io or hostile_ref_ids_are_declined',
            '--report',
            str(tmp_path / 'report'),
        ]
    )
    report = json.loads((tmp_path / 'report' / 'report.json').read_text())
    subjects = sorted(suite['subject'].rsplit('::', 1)[-1] for suite in report['suites'])
    assert subjects == ['TestCapability[provider]', 'TestCertification[provider]']
    assert [suite['verdict'] for suite in report['suites']] and report['verdict'] == 'not certified'  # narrowed
    assert status == 1


def test_a_capability_factory_that_returns_no_capability_is_refused(tmp_path: Path) -> None:
    status = _certify(['local', '--capability', 'os:getcwd', '--report', str(tmp_path / 'report')])
    assert status == 2


def test_k_may_name_only_capability_rules(tmp_path: Path) -> None:
    status = _certify(
        ['local', '--capability', '-k', 'get_workspace_builds_without_io', '--report', str(tmp_path / 'report')]
    )
    report = json.loads((tmp_path / 'report' / 'report.json').read_text())
    statuses = {rule['rule_id']: rule['status'] for suite in report['suites'] for rule in suite['rules']}
    assert statuses['get_workspace_builds_without_io'] == 'passed'
    assert status == 1  # narrowed by -k: not certified

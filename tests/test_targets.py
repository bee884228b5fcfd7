"""Named targets from the command line: the listing, options, not-run targets, and the in-process targets' verdicts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workspace_conformance.reports.verify import load_report
from workspace_conformance.targets import NAMED_TARGETS, TargetError


def _cli(cwd: Path, *args: str, **environment: str) -> subprocess.CompletedProcess[str]:
    clean = {key: value for key, value in os.environ.items() if key not in ('E2B_API_KEY', 'DAYTONA_API_KEY')}
    return subprocess.run(
        [sys.executable, '-m', 'workspace_conformance', *args],
        cwd=cwd,
        env={**clean, **environment},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_targets_lists_every_named_target_with_its_status_here(tmp_path: Path) -> None:
    listed = _cli(tmp_path, 'targets', '--format', 'json')
    assert listed.returncode == 0, listed.stderr
    rows = {row['target']: row for row in json.loads(listed.stdout)}
    expected = ['local', 'local-shell', 'memory', 'provider', 'docker', 'podman', 'ssh', 'bubblewrap']
    assert list(rows) == [*expected, 'e2b', 'modal', 'daytona']
    for name in ('local', 'local-shell', 'memory', 'provider'):
        assert rows[name]['runnable'] and rows[name]['missing'] is None
    assert rows['e2b'] == {**rows['e2b'], 'runnable': False, 'missing': 'no E2B_API_KEY'}
    assert rows['docker']['options'].keys() == {'image', 'user', 'working-dir'}
    table = _cli(tmp_path, 'targets').stdout
    assert 'e2b          not run: no E2B_API_KEY' in table
    assert '--image:' in table


def test_a_target_without_its_credentials_is_not_run_never_passed(tmp_path: Path) -> None:
    result = _cli(tmp_path, 'certify', 'e2b', '--report', str(tmp_path / 'out'))
    assert result.returncode == 3, result
    assert result.stdout.strip() == 'workspace-conformance: e2b: not run: no E2B_API_KEY'
    record = json.loads((tmp_path / 'out' / 'not-run.json').read_text())
    assert record == {'target': 'e2b', 'verdict': 'not run', 'reason': 'no E2B_API_KEY'}
    assert not (tmp_path / 'out' / 'report.json').exists()
    required = _cli(tmp_path, 'certify', 'e2b', '--require')
    assert required.returncode == 1, 'a required target that cannot run fails'


def test_an_option_the_target_does_not_take_is_a_one_line_error(tmp_path: Path) -> None:
    result = _cli(tmp_path, 'certify', 'local', '--image', 'busybox')
    assert result.returncode == 2
    assert result.stderr.strip() == ("workspace-conformance: target 'local' does not take --image; it takes no options")


def test_target_options_are_refused_for_a_factory_target() -> None:
    from workspace_conformance.targets import resolve_target

    with pytest.raises(TargetError, match='--image go with a named target'):
        resolve_target('my.module:factory', options={'image': 'x'})


def test_every_named_target_documents_its_options() -> None:
    for target in NAMED_TARGETS.values():
        assert target.description
        for option in target.options:
            assert option.help, f'{target.name} --{option.name} has no help'


@pytest.mark.slow
@pytest.mark.parametrize(
    ('target', 'verdict'), [('local-shell', 'certified'), ('provider', 'certified'), ('memory', 'partial')]
)
def test_an_in_process_target_gets_its_verdict(tmp_path: Path, target: str, verdict: str) -> None:
    result = _cli(
        tmp_path,
        'certify',
        target,
        '--anyio-backend',
        'asyncio',
        '--conformance-profile',
        'ci',
        '--report',
        str(tmp_path / 'out'),
        TMPDIR=str(tmp_path),
    )
    report = load_report(tmp_path / 'out' / 'report.json')
    assert report.verdict == verdict, result.stdout[-3000:]
    assert result.returncode == (0 if verdict == 'certified' else 1)
    assert sorted(path.name for path in tmp_path.iterdir()) == ['out'], 'the run left files in TMPDIR'

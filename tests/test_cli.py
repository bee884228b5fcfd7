"""`workspace-conformance certify` as a user runs it: exit codes, one-line errors, nothing written to cwd."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workspace_conformance import rules

FACTORIES = """
from pydantic_ai.workspaces import LocalWorkspaceBackend

def local(run_dir):
    run_dir.mkdir(parents=True, exist_ok=True)
    return LocalWorkspaceBackend(run_dir)

def explodes():
    raise RuntimeError('no credentials')

def not_a_backend():
    return 42

value = 3
"""


def _certify(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, 'PYTHONPATH': str(cwd)}
    return subprocess.run(
        [sys.executable, '-m', 'workspace_conformance', 'certify', *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / 'my_factories.py').write_text(FACTORIES)
    return tmp_path


@pytest.mark.parametrize(
    ('target', 'says'),
    [
        ('no_such_module:thing', "cannot import 'no_such_module'"),
        ('my_factories:missing', "has no attribute 'missing'"),
        ('my_factories:value', 'is a int, not a callable'),
        ('my_factories:explodes', 'raised RuntimeError when called: no credentials'),
        ('my_factories:not_a_backend', 'returned a int, not a WorkspaceBackend'),
        ('nonsense', "unknown target 'nonsense'"),
    ],
)
def test_a_bad_target_exits_2_with_one_line(workdir: Path, target: str, says: str) -> None:
    result = _certify(workdir, target)
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], result.stderr
    assert 'Traceback' not in result.stderr + result.stdout


def test_the_default_local_target_is_certified_and_writes_nothing_here(workdir: Path) -> None:
    before = sorted(path.name for path in workdir.iterdir())
    result = _certify(workdir)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert result.stdout.rstrip().splitlines()[-1] == 'workspace-conformance: certified (local)'
    total = len(rules())
    assert (
        f'({total} passed, 0 failed, 0 gaps, 0 not applicable, 0 missing; {total} rules on asyncio, trio)'
        in result.stdout
    )
    assert sorted(path.name for path in workdir.iterdir() if path.name != '__pycache__') == before


def test_a_factory_target_narrowed_with_k_runs_but_is_not_certified(workdir: Path) -> None:
    result = _certify(
        workdir,
        'my_factories:local',
        '-k',
        'test_exists and not below and not working_dir',
        '--anyio-backend',
        'asyncio',
        '--conformance-time-scale',
        '2',
    )
    assert result.returncode == 1, result.stdout[-3000:]
    assert '1 passed' in result.stdout
    assert result.stdout.rstrip().splitlines()[-1] == 'workspace-conformance: not certified (my_factories:local)'

"""Rules checked at once against one environment give exactly the outcomes of a serial run, failures included."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from .runner import QUICK_CERTIFY

pytestmark = pytest.mark.slow

BROKEN = '''
from pydantic_ai.workspaces import LocalWorkspaceBackend


class Mangling(LocalWorkspaceBackend):
    """Loses the last byte of every file longer than 100 bytes, and hides dotfiles from listings."""

    async def read_bytes(self, path):
        data = await super().read_bytes(path)
        return data[:-1] if len(data) > 100 else data

    async def list_dir(self, path):
        return [entry for entry in await super().list_dir(path) if not entry.name.startswith('.')]


def mangling(directory):
    directory.mkdir(parents=True, exist_ok=True)
    return Mangling(directory)
'''


def _certify(target: str, report: Path, *extra: str, cwd: Path) -> dict[str, Any]:
    environment = {**os.environ, 'PYTHONPATH': f'{cwd}{os.pathsep}{os.environ.get("PYTHONPATH", "")}'}
    subprocess.run(
        [
            sys.executable,
            '-m',
            'workspace_conformance',
            'certify',
            target,
            *QUICK_CERTIFY,
            '--report',
            str(report),
            *extra,
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
        timeout=900,
        check=False,
    )
    loaded: dict[str, Any] = json.loads((report / 'report.json').read_text())
    return loaded


_VARYING = re.compile(r'[0-9a-f]{8,}|/tmp/\S+|\d+\.\d+ s')
"""What differs between any two runs, serial or not: scratch directory ids, temporary paths, measured seconds."""


def _outcomes(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    def steady(text: object) -> object:
        return _VARYING.sub('~', text) if isinstance(text, str) else text

    return sorted(
        (
            outcome['rule_id'],
            outcome['anyio_backend'],
            outcome['outcome'],
            outcome.get('skip_kind'),
            steady(outcome.get('reason')),
            steady(outcome.get('excerpt')),
        )
        for suite in report['suites']
        for outcome in suite['results']
    )


@pytest.mark.parametrize('target', ['local', 'local-shell', 'memory', 'provider', 'broken:mangling'])
def test_concurrent_and_serial_runs_give_the_same_outcomes(target: str, tmp_path: Path) -> None:
    (tmp_path / 'broken.py').write_text(textwrap.dedent(BROKEN))
    serial = _certify(target, tmp_path / 'serial', '--conformance-concurrency', '1', cwd=tmp_path)
    together = _certify(target, tmp_path / 'together', '--conformance-concurrency', '16', cwd=tmp_path)
    assert serial['complete'] and together['complete']
    only_serial = sorted(set(_outcomes(serial)) - set(_outcomes(together)))
    only_together = sorted(set(_outcomes(together)) - set(_outcomes(serial)))
    assert not only_serial and not only_together, f'serial only: {only_serial}; concurrent only: {only_together}'
    assert serial['verdict'] == together['verdict']
    assert _outcomes(serial) == _outcomes(together)
    if target.startswith('broken'):
        failed = [outcome for outcome in _outcomes(together) if outcome[2] == 'failed']
        assert len(failed) >= 3, failed  # the comparison covered failure messages, not only passes

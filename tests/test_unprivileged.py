"""The permission rule runs for real when the runner cannot bypass permissions, even on a root-only CI machine.

Root bypasses file permissions through CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, so as root the rule skips as a
`runner` gap. Here the same suite runs with those capabilities dropped (util-linux `setpriv`), which makes root
an ordinary owner for permission checks; a separate unprivileged account would not do on this machine, because
the Python installation lives under root's 0700 home directory and no other user could import it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workspace_conformance.vocabulary import BYPASS_CAPABILITIES

from .runner import bypasses_permissions

SUITE = """
import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend
from workspace_conformance import WorkspaceBackendSuite
from workspace_conformance.targets.local_shell import CommandsOnly


class TestNative(WorkspaceBackendSuite):
    @pytest.fixture
    def backend(self, tmp_path):
        return LocalWorkspaceBackend(tmp_path)


class TestShellDerived(WorkspaceBackendSuite):
    @pytest.fixture
    def backend(self, tmp_path):
        return CommandsOnly(LocalWorkspaceBackend(tmp_path))
"""

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(
    not bypasses_permissions(),
    reason='this runner cannot bypass permissions: the main self-certification runs this rule',
)
@pytest.mark.skipif(shutil.which('setpriv') is None, reason='no setpriv (util-linux) to drop capabilities')
def test_permission_rule_passes_without_the_bypass_capabilities(tmp_path: Path) -> None:
    (tmp_path / 'test_unprivileged_suite.py').write_text(SUITE)
    drop = BYPASS_CAPABILITIES
    result = subprocess.run(
        [
            'setpriv',
            '--bounding-set',
            drop,
            '--inh-caps',
            drop,
            sys.executable,
            '-m',
            'pytest',
            '-p',
            'no:cacheprovider',
            '-rs',
            '-k',
            'permission_denied',
            '--rootdir',
            str(tmp_path),
            str(tmp_path),
        ],
        cwd=tmp_path,
        env={**os.environ, 'PYTHONPATH': str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-4000:]
    assert ' 4 passed' in result.stdout and 'skipped' not in result.stdout, result.stdout[-4000:]

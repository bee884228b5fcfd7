"""Facts about the runner that tests depend on, and how tests run `certify` and build reports."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from workspace_conformance import rules
from workspace_conformance.engine._versions import pydantic_ai_at_least
from workspace_conformance.reports.model import Report, SuiteReport

QUICK_CERTIFY = ('--anyio-backend', 'asyncio', '--conformance-profile', 'ci')
"""`certify` options for a quick run: one event loop, the `ci` profile."""


NOT_ON_LOCAL = frozenset({'shell_files', 'files_only', 'faults', 'stop', 'restart'})
"""Requirements a LocalWorkspaceBackend never meets: a shell-derived filesystem (it has native files and realpath), a
files-only backend, a provider SDK's faults (it calls none), and an init to stop (it is a directory); a rule needing
one is not applicable there."""


def rules_not_applicable_on_local() -> int:
    """Rules a LocalWorkspaceBackend is not asked to pass, whatever fixtures it has: an oracle from the catalog."""
    return sum(1 for rule in rules() if NOT_ON_LOCAL & set(rule.requires)) + platform_rules_not_applicable_on_local()


def platform_rules_not_applicable_on_local() -> int:
    """Platform rules a 'posix' backend without `run_in_directory` (LocalWorkspaceBackend) is not asked to pass.

    Before pydantic-ai 2.78 every one (the clause is newer); from 2.78 the 'windows'-only rule and those that need
    `run_in_directory`. An oracle from the catalog, so a new platform rule changes the count without an edit here.
    """
    platform = [rule for rule in rules() if rule.area == 'platform']
    if not pydantic_ai_at_least((2, 78)):
        return len(platform)
    return sum(1 for rule in platform if 'run_in_directory' in rule.requires or 'posix' not in rule.platforms)


def bypasses_permissions() -> bool:
    """Whether this process reads a mode-000 file (root with CAP_DAC_OVERRIDE)."""
    with tempfile.NamedTemporaryFile() as probe:
        os.chmod(probe.name, 0)
        try:
            with open(probe.name, 'rb'):
                return True
        except PermissionError:
            return False


def certify(
    cwd: Path, *args: str, pythonpath: Path | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """`python -m workspace_conformance certify ARGS` in `cwd`, as a vendor runs it with their module importable.

    `pythonpath` (default `cwd`) goes first on PYTHONPATH, before the inherited one (a worktree's own sources).
    """
    path = os.pathsep.join(filter(None, [str(pythonpath or cwd), os.environ.get('PYTHONPATH')]))
    return subprocess.run(
        [sys.executable, '-m', 'workspace_conformance', 'certify', *args],
        cwd=cwd,
        env={**os.environ, 'PYTHONPATH': path},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def report_of(suite: SuiteReport) -> Report:
    """A complete report of one suite, its verdict the suite's, with placeholder versions and times."""
    return Report(
        toolkit_version='0.2.0',
        pydantic_ai_version='1.0',
        python='3',
        platform='linux',
        hypothesis_profile='ci',
        started='t0',
        finished='t1',
        complete=True,
        suites=[suite],
        verdict=suite.verdict,
    )

"""On an older pydantic-ai, a rule whose clause or API is newer skips as not-applicable and names the version."""

from __future__ import annotations

import inspect

import pytest
from pydantic_ai.workspaces import Workspace

from workspace_conformance.engine._versions import pydantic_ai_at_least

HAS_CWD = 'cwd' in inspect.signature(Workspace.run).parameters


def test_version_probe_agrees_with_the_api() -> None:
    assert pydantic_ai_at_least((2, 68)) == HAS_CWD


def test_newer_rules_run_or_skip_as_not_applicable(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_newer="""
import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend
from workspace_conformance import WorkspaceBackendSuite
from workspace_conformance.targets.local import LazyLocalBackend


class TestNewer(WorkspaceBackendSuite):
    @pytest.fixture
    def backend(self, tmp_path):
        return LocalWorkspaceBackend(tmp_path)

    @pytest.fixture
    def attach_backend(self, tmp_path):
        return lambda ref: LocalWorkspaceBackend(ref.id)
"""
    )
    result = pytester.runpytest_inprocess(
        '-p', 'no:cacheprovider', '-rs', '-k', 'run_starts_in_cwd or reaches_a_detached_process'
    )
    if HAS_CWD:
        result.assert_outcomes(passed=4)
    else:
        result.assert_outcomes(skipped=4)
        result.stdout.fnmatch_lines(['*[[]commands/run_starts_in_cwd[]] not-applicable: *predates this clause*(2.68)*'])
        result.stdout.fnmatch_lines(
            ['*[[]processes/a_backend_attached_by_ref_reaches_a_detached_process[]] not-applicable: *(2.68)*']
        )

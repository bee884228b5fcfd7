"""A vendor's tool capability, certified the way its author would: `notes_vendor.py` copied into a project of its
own, and a test module that subclasses `WorkspaceToolSuite` with nothing but a `capability` fixture.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

VENDOR_MODULE = Path(__file__).resolve().parent / 'notes_vendor.py'
VENDOR_TESTS = """
import pytest
from notes_vendor import Notes
from workspace_conformance import WorkspaceToolSuite


class TestNotes(WorkspaceToolSuite):
    @pytest.fixture
    def capability(self):
        return Notes()
"""


@pytest.fixture
def vendor(pytester: pytest.Pytester) -> pytest.Pytester:
    """The vendor's project: their module and their test module, nothing of ours."""
    shutil.copy(VENDOR_MODULE, pytester.path / 'notes_vendor.py')
    pytester.makepyfile(test_notes=VENDOR_TESTS)
    pytester.syspathinsert()
    return pytester


def test_a_vendor_subclass_with_only_a_capability_gets_rules_run(vendor: pytest.Pytester) -> None:
    result = vendor.runpytest_inprocess('-p', 'no:cacheprovider', '-k', 'no_host_writes or fails_at_start')
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(['*containment*core*1*0*', '*unattached*core*1*0*'])


@pytest.mark.slow
def test_a_vendor_tool_capability_is_certified_with_no_configuration(vendor: pytest.Pytester) -> None:
    result = vendor.runpytest_inprocess('-p', 'no:cacheprovider', '-rs')
    # its tools check ctx.workspace.attached, not before_run (the docs' suggestion): one advisory, skipped in pytest
    result.assert_outcomes(passed=12, skipped=2)
    result.stdout.fnmatch_lines(
        [
            '*fails_at_the_start_without_a_workspace*advisory*',
            'verdict: certified*',
            '*no_silent_empty_toolset*not-app*',
        ]
    )


def test_a_capability_bringing_its_own_workspace_makes_the_unattached_rule_not_applicable(
    vendor: pytest.Pytester,
) -> None:
    vendor.makepyfile(
        test_own_workspace="""
import pytest
from pydantic_ai.capabilities import CombinedCapability, LocalWorkspace
from notes_vendor import Notes
from workspace_conformance import WorkspaceToolSuite


class TestNotesInTheirOwnWorkspace(WorkspaceToolSuite):
    @pytest.fixture
    def capability(self, tmp_path):
        return CombinedCapability([LocalWorkspace(tmp_path), Notes()])
"""
    )
    result = vendor.runpytest_inprocess(
        '-p', 'no:cacheprovider', '-rs', '-k', 'fails_at_start', 'test_own_workspace.py'
    )
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        ['*[[]unattached/fails_at_start_or_reports[]] not-applicable: the capability supplies*']
    )

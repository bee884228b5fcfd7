"""A capability that attaches to any directory, or creates one in `get_workspace`, fails saying what it did."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

MODULE = """
import tempfile
import pytest
from pydantic_ai.capabilities import LocalWorkspace
from pydantic_ai.workspaces import LocalWorkspaceBackend
from workspace_conformance.capability import WorkspaceCapabilitySuite


class AnyDirectory(LocalWorkspace):
    def get_workspace(self, ctx, *, ref):
        return LocalWorkspaceBackend(ref.id) if ref is not None else super().get_workspace(ctx, ref=ref)


class EagerDirectory(LocalWorkspace):
    def get_workspace(self, ctx, *, ref):
        tempfile.mkdtemp(prefix='eager-', dir=self.working_dir)
        return super().get_workspace(ctx, ref=ref)


class TestAnyDirectory(WorkspaceCapabilitySuite):
    @pytest.fixture
    def capability(self, tmp_path):
        return AnyDirectory(tmp_path)


class TestEagerDirectory(WorkspaceCapabilitySuite):
    @pytest.fixture
    def capability(self, tmp_path):
        return EagerDirectory(tmp_path)
"""


def test_the_failures_name_the_accepted_ref_and_the_created_directory(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_capabilities=MODULE)
    # A short base for the inner run's tmp_path: a failure shortens a long path in what it quotes, and pytester's
    # own base, under a worker's and a TMPDIR's, left `/eager-` cut off where TMPDIR was a longer directory.
    base = Path(tempfile.mkdtemp(prefix='wc-'))
    try:
        result = pytester.runpytest_inprocess(
            *('-p', 'no:cacheprovider', '-k', 'hostile_ref_ids or builds_without_io'),
            *('-p', 'no:workspace-conformance-reports', f'--basetemp={base / "t"}'),
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    result.assert_outcomes(failed=2, passed=2)  # each capability breaks one of the two
    text = result.stdout.str()
    assert "accepted WorkspaceRef(provider='local', id='/etc')" in text
    assert "os.mkdir('" in text and '/eager-' in text

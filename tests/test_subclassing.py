"""The suite works however a project writes its `backend` fixture, and is never collected on its own."""

from __future__ import annotations

import pytest

VARIANTS = {
    'class_scoped_sync': """
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory):
        return LocalWorkspaceBackend(tmp_path_factory.mktemp('ws'))
""",
    'function_scoped_sync': """
    @pytest.fixture
    def backend(self, tmp_path):
        return LocalWorkspaceBackend(tmp_path)
""",
    'function_scoped_async': """
    @pytest.fixture
    async def backend(self, tmp_path):
        return LocalWorkspaceBackend(tmp_path)
""",
    'class_scoped_async_generator': """
    @pytest.fixture(scope='class')
    @classmethod
    async def backend(cls, tmp_path_factory, anyio_backend):
        yield LocalWorkspaceBackend(tmp_path_factory.mktemp('ws'))
""",
    'function_scoped_sync_generator': """
    @pytest.fixture
    def backend(self, tmp_path):
        yield LocalWorkspaceBackend(tmp_path)
""",
}


@pytest.mark.parametrize('variant', sorted(VARIANTS))
def test_backend_fixture_variants_run_on_asyncio_and_trio(pytester: pytest.Pytester, variant: str) -> None:
    pytester.makepyfile(
        test_variant=f"""
import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend
from workspace_conformance import WorkspaceBackendSuite


class TestVariant(WorkspaceBackendSuite):
{VARIANTS[variant]}
"""
    )
    result = pytester.runpytest_inprocess(
        '-p', 'no:cacheprovider', '-v', '-k', '(test_exists and not below and not working_dir) or env_is_added'
    )
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(['*test_exists?asyncio?*PASSED*', '*test_exists?trio?*PASSED*'], consecutive=False)


def test_the_suite_itself_is_not_collected(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_import='from workspace_conformance import WorkspaceBackendSuite\n')
    result = pytester.runpytest_inprocess('-p', 'no:cacheprovider')
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_without_a_backend_fixture_the_error_says_what_to_do(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_missing="""
from workspace_conformance import WorkspaceBackendSuite

class TestForgot(WorkspaceBackendSuite):
    pass
"""
    )
    result = pytester.runpytest_inprocess(
        '-p', 'no:cacheprovider', '-k', 'test_exists and not below and not working_dir and asyncio'
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(['*WorkspaceBackendSuite needs a `backend` fixture*'])


def test_swapping_the_upstream_import_keeps_overrides(pytester: pytest.Pytester) -> None:
    # An upstream user's subclass with its switch overrides, unchanged but for the import line.
    pytester.makepyfile(
        test_swap="""
import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend
from workspace_conformance import WorkspaceBackendSuite


class TestSwapped(WorkspaceBackendSuite):
    @pytest.fixture
    def anyio_backend(self):
        return 'asyncio'

    @pytest.fixture
    def backend(self, tmp_path):
        return LocalWorkspaceBackend(tmp_path)

    @pytest.fixture
    def can_detect_exit_with_inherited_output_pipes(self):
        return False
"""
    )
    result = pytester.runpytest_inprocess('-p', 'no:cacheprovider', '-rs', '-k', 'background_child')
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(['*declared-limit: `can_detect_exit_with_inherited_output_pipes` is False*'])

"""The suite works however a project writes its `backend` fixture, and is never collected on its own."""

from __future__ import annotations

import pytest

from workspace_conformance.reports.model import Report, RuleStatus, RuleSummary, SkipKind, verdict_of

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


OVERRIDING = """
import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend
from workspace_conformance import WorkspaceBackendSuite


@pytest.fixture(scope='module')
def anyio_backend():
    return 'asyncio'


class TestOverriding(WorkspaceBackendSuite):
    @pytest.fixture
    def backend(self, tmp_path):
        return LocalWorkspaceBackend(tmp_path)

    @pytest.mark.skip(reason='too slow on our CI')
    async def test_large_file_round_trip(self, backend):
        raise AssertionError('never runs')

    async def test_stdin_is_at_eof(self, backend):
        assert True  # our own, weaker check

    test_exists = None
"""


def test_a_replaced_skipped_or_deleted_rule_is_reported_as_overridden(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_overriding=OVERRIDING)
    out = pytester.path / 'report'
    result = pytester.runpytest_inprocess(
        '-p', 'no:cacheprovider', '-rs', '--conformance-report', str(out), '-k', 'stdin or large_file or test_exists'
    )
    skips = [line for line in result.stdout.lines if line.startswith('SKIPPED')]
    # Each at the subclass's override, with its kind; the replacement still ran, as the user's own test.
    assert any(
        'test_overriding.py:' in line
        and '[files/large_file_round_trip] overridden: skipped by the subclass TestOverriding: too slow on our CI'
        in line
        for line in skips
    ), skips
    assert any(
        '[commands/stdin_is_at_eof] overridden: replaced by the subclass TestOverriding' in line for line in skips
    )
    assert any('[files/exists] overridden: deleted by the subclass TestOverriding' in line for line in skips), skips
    assert result.parseoutcomes().get('passed', 0) >= 1  # the replacement of test_stdin_is_at_eof
    result.stdout.fnmatch_lines(['overridden (gaps*', '*commands/stdin_is_at_eof] (core) overridden: replaced*'])
    report = Report.model_validate_json((out / 'report.json').read_text())
    kinds = {rule.rule_id: rule.skip_kind for suite in report.suites for rule in suite.rules}
    for rule_id in ('large_file_round_trip', 'stdin_is_at_eof', 'exists'):
        assert kinds[rule_id] == 'overridden', (rule_id, kinds.get(rule_id))


def test_an_overridden_core_rule_makes_the_verdict_partial_never_certified() -> None:
    def summary(rule_id: str, status: RuleStatus, kind: SkipKind | None = None) -> RuleSummary:
        return RuleSummary(rule_id=rule_id, area='files', level='core', status=status, skip_kind=kind)

    passed = [summary('a', 'passed'), summary('b', 'passed')]
    assert verdict_of(passed) == 'certified'
    assert verdict_of([*passed, summary('c', 'gap', 'overridden')]) == 'partial'
    assert verdict_of([*passed, summary('c', 'gap', 'declared-limit')]) == 'not certified'


def test_a_module_level_anyio_backend_runs_no_trio_item(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_overriding=OVERRIDING)
    result = pytester.runpytest_inprocess('-p', 'no:cacheprovider', '--collect-only', '-q')
    items = [line for line in result.stdout.lines if '::' in line]
    assert items and not [line for line in items if 'trio' in line], items


def test_the_suite_works_without_the_reports_plugin(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_overriding=OVERRIDING)
    result = pytester.runpytest_inprocess(
        '-p', 'no:cacheprovider', '-p', 'no:workspace-conformance-reports', '-rs', '-k', 'stdin or building_a_backend'
    )
    # Rules, classified skips at their rule's line and overridden items all come from the suite and its runtime.
    result.stdout.fnmatch_lines(
        [
            '*lifecycle.py:*building_a_backend_creates_nothing] fixture-missing: provide the `fresh_backend`*',
            '*commands/stdin_is_at_eof] overridden: replaced by the subclass TestOverriding*',
        ],
        consecutive=False,
    )
    assert 'workspace conformance:' not in result.stdout.str()

"""Declared limits, expected failures, the hang guard and skip classification, seen from a real pytest run."""

from __future__ import annotations

import re
import time

import pytest

from workspace_conformance import rules
from workspace_conformance.engine._tracing import HANGS, Hangs, Hung, hangs_of
from workspace_conformance.reports.model import Report
from workspace_conformance.vocabulary import SKIP_KINDS

from .runner import NOT_ON_LOCAL, bypasses_permissions, rules_not_applicable_on_local

HEADER = """
import anyio
import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend
from workspace_conformance import WorkspaceBackendSuite


class Base(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def anyio_backend(cls):
        return 'asyncio'

    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory):
        return LocalWorkspaceBackend(tmp_path_factory.mktemp('ws'))


def suite_over(backend_class):  # a suite class whose shared backend is a `backend_class` over its own directory
    class Over(Base):
        @pytest.fixture(scope='class')
        @classmethod
        def backend(cls, tmp_path_factory):
            return backend_class(tmp_path_factory.mktemp('ws'))

    return Over
"""


HANGING = """
class Hanging(LocalWorkspaceBackend):
    async def working_dir(self):
        await anyio.sleep_forever()

TestHangs = suite_over(Hanging)
"""


def _as_root() -> int:
    return int(bypasses_permissions())


def _run(pytester: pytest.Pytester, body: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_subject=HEADER + body)
    return pytester.runpytest_inprocess('-p', 'no:cacheprovider', '-rsxX', *args)


@pytest.mark.slow  # a whole-suite run
def test_declared_limit_skips_with_its_reason_and_makes_the_verdict_partial(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
class TestLimited(Base):
    @pytest.fixture
    def declared_limits(self):
        return {'background_child_does_not_hold_up_completed_command': 'the SDK waits for pipe EOF'}
    @pytest.fixture
    def fresh_backend(self, tmp_path):
        from workspace_conformance.targets import LazyLocalBackend
        return lambda: LazyLocalBackend(tmp_path)

    @pytest.fixture
    def attach_backend(self, tmp_path):
        from workspace_conformance.targets import LazyLocalBackend
        return lambda ref: LazyLocalBackend(tmp_path, ref=ref)

    @pytest.fixture
    def destroy_environment(self):
        from workspace_conformance.targets.local import destroy_local_environment
        return destroy_local_environment
""",
        '--conformance-time-scale',
        '0.5',
    )
    # skipped: the declared limit, the permission rule as root, and what a LocalWorkspaceBackend is not asked to pass
    skipped = 1 + _as_root() + rules_not_applicable_on_local()
    result.assert_outcomes(passed=len(rules()) - skipped, skipped=skipped)
    result.stdout.fnmatch_lines(
        [
            '  [[]processes/background_child_does_not_hold_up_completed_command[]] (extended) declared-limit: '
            'the SDK waits for pipe EOF',
        ]
    )
    result.stdout.fnmatch_lines(['verdict: partial*'])
    result.stdout.fnmatch_lines(
        [
            'SKIPPED*[[]processes/background_child_does_not_hold_up_completed_command[]] '
            'declared-limit: the SDK waits for pipe EOF'
        ]
    )


def test_a_run_narrowed_by_k_is_never_certified(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
class TestNarrow(Base):
    pass
""",
        '-k',
        'test_exists and not below and not working_dir',
    )
    result.assert_outcomes(passed=1)
    # The rules -k left out are a count, not a line each.
    result.stdout.fnmatch_lines([f'missing: {len(rules()) - 1} rules have no result*', 'verdict: not certified*'])
    result.stdout.no_fnmatch_line('*no result on asyncio*')


def test_unknown_rule_id_in_declared_limits_is_one_clear_error(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
class TestTypo(Base):
    @pytest.fixture
    def declared_limits(self):
        return {'exist': 'typo', 'no_such_rule': 'invented'}
""",
        '-k',
        'test_exists and not below and not working_dir',
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*`declared_limits` names unknown rule ids: 'exist' (did you mean 'exists'?), 'no_such_rule'*"]
    )


def test_unknown_rule_id_in_expected_failures_is_an_error(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
class TestTypo(Base):
    @pytest.fixture
    def expected_failures(self):
        return {'nope': 'invented'}
""",
        '-k',
        'test_exists and not below and not working_dir',
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*`expected_failures` names unknown rule ids: 'nope'*"])


def test_expected_failure_is_strict(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
class Broken(LocalWorkspaceBackend):
    async def exists(self, path):
        return True

class TestKnownBug(Base):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory):
        return Broken(tmp_path_factory.mktemp('ws'))

    @pytest.fixture
    def expected_failures(self):
        return {'exists': 'exists() answers True for everything', 'env_is_added': 'claimed broken, but works'}
""",
        '-k',
        '(test_exists and not below and not working_dir) or env_is_added',
    )
    # The broken rule is an expected failure; the working one is an XPASS(strict) telling the author to drop it.
    result.assert_outcomes(xfailed=1, failed=1)
    result.stdout.fnmatch_lines(['*XPASS(strict)*[[]commands/env_is_added[]] expected failure: claimed broken*'])


def test_a_hanging_backend_fails_each_rule_with_hung_after_and_the_session_goes_on(pytester: pytest.Pytester) -> None:
    out = pytester.path / 'report'
    result = _run(
        pytester,
        HANGING,
        '-k',
        'working_dir_is_canonical or (test_exists and not below and not working_dir) or stat_and_list_dir',
        '--conformance-time-scale',
        '0.02',
        '--conformance-report',
        str(out),
    )
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(
        [
            '*[[]lifecycle/working_dir_is_canonical[]] contract:*',
            '*observed: hung after 1.2 s: backend.working_dir() never returned*',
        ]
    )
    # Each rule ends at its guard (60 s x 0.02) plus its bounded cleanup, as the report records it: not wall clock.
    report = Report.model_validate_json((out / 'report.json').read_text())
    durations = {r.rule_id: r.duration for suite in report.suites for r in suite.results if r.outcome == 'failed'}
    assert len(durations) == 3 and all(seconds < 1.2 + 0.6 + 1.5 for seconds in durations.values()), durations


def test_a_session_inside_another_keeps_its_hangs_to_itself(
    pytester: pytest.Pytester, request: pytest.FixtureRequest
) -> None:
    """An in-process session remembers its hangs in its own state, leaves the outer's alone, and drops its own."""
    outer = hangs_of(request.config)
    remembered = Hung('files/outer_rule', 'outer_operation()')
    kept: list[tuple[pytest.Config, Hangs]] = []

    class Keep:
        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(self, session: pytest.Session) -> None:
            kept.append((session.config, hangs_of(session.config)))

    pytester.makepyfile(test_subject=HEADER + HANGING)
    outer.hung['outer_operation'] = remembered
    try:
        result = pytester.runpytest_inprocess(
            '-p',
            'no:cacheprovider',
            '-k',
            'working_dir_is_canonical',
            '--conformance-time-scale',
            '0.02',
            plugins=[Keep()],
        )
        after = dict(outer.hung)
    finally:
        del outer.hung['outer_operation']
    result.assert_outcomes(failed=1)
    [(config, inner)] = kept
    assert inner is not outer and inner.enclosing is outer
    assert set(inner.hung) == {'working_dir'}, inner.hung  # what hung in the inner session, remembered there
    assert after.get('outer_operation') is remembered and 'working_dir' not in after, after
    assert HANGS not in config.stash and hangs_of(request.config) is outer
    for _ in range(50):  # closed, the inner watchdog's thread ends once it wakes
        if not inner.watchdog.thread_alive:
            break
        time.sleep(0.1)
    assert not inner.watchdog.thread_alive


def test_a_command_given_a_timeout_hangs_once_it_runs_the_slack_past_it(pytester: pytest.Pytester) -> None:
    out = pytester.path / 'report'
    result = _run(
        pytester,
        """
class IgnoresTimeouts(LocalWorkspaceBackend):
    async def run(self, command, *, timeout=None, **kwargs):
        if timeout is not None:
            await anyio.sleep_forever()
        return await super().run(command, **kwargs)

TestIgnoresTimeouts = suite_over(IgnoresTimeouts)
""",
        '-k',
        'working_dir_is_canonical or timeout_raises_workspace_timeout_error',
        '--conformance-time-scale',
        '0.1',
        '--conformance-report',
        str(out),
    )
    # The first rule's calls show the environment exists: from then on a `run` given a timeout is bounded by it.
    result.assert_outcomes(passed=1, failed=1)
    # The rule gives `run` a timeout of 1 s; 10 s of slack at time scale 0.1 is 1 s: the call is cut at 2 s, not at the
    # 6 s a call without a timeout may take at that scale.
    result.stdout.fnmatch_lines(
        ['*observed: hung after 2.? s: backend.run(*timeout=1) never returned*1 s past its own*']
    )
    report = Report.model_validate_json((out / 'report.json').read_text())
    [duration] = [r.duration for suite in report.suites for r in suite.results if r.outcome == 'failed']
    assert duration is not None and duration < 4.0, duration


def test_a_first_call_given_a_timeout_may_also_create_the_environment(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
class SlowToCreate(LocalWorkspaceBackend):
    created = False

    async def run(self, command, **kwargs):
        if not self.created:  # the first operation creates the sandbox, which its timeout does not cover
            await anyio.sleep(2.5)
            self.created = True
        return await super().run(command, **kwargs)

TestSlowToCreate = suite_over(SlowToCreate)
""",
        '-k',
        'timeout_raises_workspace_timeout_error',
        '--conformance-time-scale',
        '0.1',
    )
    # 1 s of timeout and 1 s of slack would cut this call, which spends 2.5 s creating before its command starts.
    result.assert_outcomes(passed=1)


def test_failure_message_names_the_rule_and_quotes_the_clause(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
class Lies(LocalWorkspaceBackend):
    async def run(self, command, *, shell=False, env=None, timeout=None):
        result = await super().run(command, shell=shell, env=env, timeout=timeout)
        return type(result)(exit_code=0, stdout=result.stdout, stderr=result.stderr)

class TestLies(Base):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory):
        return Lies(tmp_path_factory.mktemp('ws'))
""",
        '-k',
        'a_missing_program_exits_127',
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            '*RuleFailure: [[]commands/a_missing_program_exits_127[]] contract: '
            '"An argv program that does not exist is a '
            'result with exit code 127, as in `sh`."',
            '*observed: running a missing program returned exit code 0',
        ]
    )


def test_an_exception_group_around_one_error_is_reported_by_that_error(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
class Grouped(LocalWorkspaceBackend):
    async def read_bytes(self, path):
        async def fail():
            raise ConnectionResetError('peer went away')

        async with anyio.create_task_group() as group:
            group.start_soon(fail)

class TestGrouped(Base):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory):
        return Grouped(tmp_path_factory.mktemp('ws'))
""",
        '-k',
        'test_empty_file_round_trip',
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ['*observed: raised ConnectionResetError: peer went away (inside ExceptionGroup: unhandled errors*']
    )


@pytest.mark.slow  # a whole-suite run
def test_every_skip_of_a_bare_backend_is_classified(pytester: pytest.Pytester) -> None:
    # Only `backend`: each optional-fixture rule skips as fixture-missing, and nothing skips unclassified.
    result = _run(
        pytester,
        """
class TestBare(Base):
    pass
""",
    )
    skipped = [line for line in result.stdout.lines if line.startswith('SKIPPED')]
    assert skipped, result.stdout.str()
    kinds = '|'.join(SKIP_KINDS)
    pattern = re.compile(r'^SKIPPED \[\d+\] \S+: \[[a-z]+/[a-z0-9_]+\] (' + kinds + '): ')
    assert all(pattern.match(line) for line in skipped), '\n'.join(skipped)
    # A rule a LocalWorkspaceBackend is never asked to pass (a provider's faults) is not applicable before it lacks a
    # fixture.
    optional = {'fresh', 'attach', 'destroy', 'sacrificial'}
    expected = sum(1 for r in rules() if optional & set(r.requires) and not NOT_ON_LOCAL & set(r.requires))
    assert sum('fixture-missing' in line for line in skipped) == expected

"""Platforms (pydantic-ai 2.78): a 'windows' workspace gets no POSIX command and no false failure; `platforms=`.

No Windows machine runs here. `WindowsMemoryBackend` declares 'windows' and keeps Windows path rules (a drive,
backslashes, names without case, names Windows refuses); its commands are a script that records every POSIX program
it is sent. A whole run of the backend suite on it must send none, fail no rule, and report every rule without a
'windows' form as not applicable with kind `platform`.
"""

from __future__ import annotations

import ntpath
from pathlib import Path

import pytest

from workspace_conformance import rules
from workspace_conformance.authoring import rule
from workspace_conformance.doubles.windows import WindowsMemoryBackend
from workspace_conformance.engine._platform import platform_of
from workspace_conformance.engine._requires import resolve
from workspace_conformance.engine._versions import pydantic_ai_at_least
from workspace_conformance.reports.model import Report

ROOT = Path(__file__).resolve().parent.parent
NEEDS_2_78 = pytest.mark.skipif(not pydantic_ai_at_least((2, 78)), reason='platforms are pydantic-ai 2.78 contract')

WINDOWS_MODULE = """
import pytest
from workspace_conformance import WorkspaceBackendSuite
from workspace_conformance.doubles.windows import WindowsMemoryBackend

BUILT = []


def built():
    backend = WindowsMemoryBackend()
    BUILT.append(backend)
    return backend


class TestWindows(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    def backend(self):
        return built()

    @pytest.fixture
    def fresh_backend(self):
        return built


def test_no_rule_sent_a_posix_command():
    assert BUILT and [command for backend in BUILT for command in backend.posix_commands] == []
    assert any(command for backend in BUILT for command in backend.commands), 'the commands rules ran no command'
"""


def _report(pytester: pytest.Pytester, module: str, *args: str) -> tuple[pytest.RunResult, Report]:
    pytester.makepyfile(test_subject=module)
    out = pytester.path / 'report'
    ran = pytester.runpytest_subprocess(
        '-p', 'no:cacheprovider', '-p', 'no:randomly', '--conformance-report', str(out), *args
    )
    return ran, Report.model_validate_json((out / 'report.json').read_text())


@NEEDS_2_78
@pytest.mark.slow  # a whole-suite run
def test_a_windows_workspace_gets_no_posix_command_and_no_false_failure(pytester: pytest.Pytester) -> None:
    ran, report = _report(pytester, WINDOWS_MODULE, '-p', 'no:xdist')
    outcomes = ran.parseoutcomes()  # the module's own check too: no POSIX program reached the backend
    assert ran.ret == 0 and 'failed' not in outcomes and 'errors' not in outcomes, ran.stdout.str()[-3000:]
    (suite,) = report.suites
    by_id = {summary.rule_id: summary for summary in suite.rules}
    failed = [
        summary.rule_id for summary in suite.rules if summary.status in ('failed', 'broken', 'advisory', 'missing')
    ]
    assert failed == []
    for meta in rules():
        summary = by_id[meta.id]
        if 'windows' not in meta.platforms and summary.status != 'not-applicable':
            raise AssertionError(f'{meta.id} has no windows form, yet it is {summary.status}')
        if summary.skip_kind == 'platform':
            assert 'windows' not in meta.platforms, f'{meta.id} has a windows form, yet was skipped for its platform'
    netted = [summary.rule_id for summary in suite.rules if 'the engine stopped it' in (summary.detail or '')]
    assert netted == [], 'rules that rely on the safety net instead of declaring their platforms'
    commands = [meta for meta in rules() if 'commands' in meta.requires]
    ran_there = [meta.id for meta in commands if by_id[meta.id].status == 'passed']
    platform = [meta.id for meta in commands if by_id[meta.id].skip_kind == 'platform']
    assert {'a_missing_program_exits_127', 'run_starts_in_cwd', 'a_windows_backend_runs_in_a_directory'} <= set(
        ran_there
    )
    others = [
        (meta.id, by_id[meta.id].status, by_id[meta.id].detail)
        for meta in commands
        if meta.id not in ran_there + platform and by_id[meta.id].skip_kind not in ('fixture-missing', 'not-applicable')
    ]
    assert others == []
    files = [meta.id for meta in rules() if meta.requires == ('filesystem',) and 'windows' in meta.platforms]
    assert len(files) >= 30 and all(by_id[rule_id].status == 'passed' for rule_id in files), [
        (rule_id, by_id[rule_id].status, by_id[rule_id].detail)
        for rule_id in files
        if by_id[rule_id].status != 'passed'
    ]


RUNS_IN_DIRECTORY_MODULE = """
import pytest
from workspace_conformance import WorkspaceBackendSuite
from tests.mutants.gallery.platform import RunsInDirectory


class TestRunsInDirectory(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    def backend(self, tmp_path_factory):
        return RunsInDirectory(tmp_path_factory.mktemp('runs-in-directory'))
"""


@NEEDS_2_78
def test_the_run_in_directory_rules_pass_on_a_correct_backend(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('PYTHONPATH', str(ROOT))
    ran, report = _report(
        pytester,
        RUNS_IN_DIRECTORY_MODULE,
        '-k',
        'declared_platform or absolute_paths or windows_backend or run_in_directory',
        '-p',
        'no:xdist',
    )
    (suite,) = report.suites
    statuses = {summary.rule_id: summary.status for summary in suite.rules if summary.area == 'platform'}
    assert statuses == {
        'a_declared_platform_is_posix_or_windows': 'passed',
        'paths_are_absolute_paths_of_the_platform': 'passed',
        'a_windows_backend_runs_in_a_directory': 'not-applicable',
        'run_in_directory_starts_in_cwd': 'passed',
        'run_in_directory_adds_env_and_reports_like_run': 'passed',
        'run_in_directory_honours_timeout': 'passed',
        'run_in_directory_keeps_the_command_form': 'passed',
    }, ran.stdout.str()[-3000:]


def test_every_platform_rule_states_the_2_78_contract_so_older_slims_get_none() -> None:
    platform_rules = [meta for meta in rules() if meta.area == 'platform']
    assert len(platform_rules) == 7 and {meta.contract for meta in platform_rules} == {'2.78'}
    if not pydantic_ai_at_least((2, 78)):
        unmet = resolve(platform_rules[0], WindowsMemoryBackend(), {})
        assert unmet is not None and unmet.kind == 'not-applicable' and 'predates' in unmet.why


def test_a_rule_that_needs_commands_has_a_posix_form_only_unless_it_says_more() -> None:
    by_id = {meta.id: meta for meta in rules()}
    assert by_id['stdin_is_at_eof'].platforms == ('posix',)  # commands: 'posix' by default
    assert by_id['a_missing_program_exits_127'].platforms == ('posix', 'windows')  # declared
    assert by_id['exists'].platforms == ('posix', 'windows')  # files: both by default
    assert by_id['names_with_control_characters_round_trip'].platforms == ('posix',)  # Windows refuses them


@pytest.mark.parametrize(
    ('declared', 'says'),
    [
        ({'requires': ['commands', 'mkfifo'], 'platforms': ['posix', 'windows']}, "has no 'windows' form"),
        ({'platforms': []}, 'must name some of'),
        ({'platforms': ['linux']}, 'must name some of'),
    ],
)
def test_a_platform_declaration_that_cannot_hold_fails_at_definition(declared: dict[str, object], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        rule(area='commands', **declared)  # type: ignore[arg-type]


def test_a_windows_workspace_is_read_once_per_rule_and_posix_by_default() -> None:
    assert platform_of(object()) == 'posix'
    expected = 'windows' if pydantic_ai_at_least((2, 78)) else 'posix'  # older slims know no platform
    assert platform_of(WindowsMemoryBackend()) == expected


@pytest.mark.anyio
async def test_the_windows_double_keeps_windows_path_rules() -> None:
    backend = WindowsMemoryBackend()
    home = await backend.working_dir()
    await backend.write_bytes(ntpath.join(home, 'Sub', 'Read Me.TXT'), b'x')
    assert await backend.read_bytes(ntpath.join(home.lower(), 'sub', 'read me.txt')) == b'x'  # no case
    assert await backend.read_bytes(f'{home}/Sub/Read Me.TXT'.replace('\\', '/')) == b'x'  # forward slashes
    (entry,) = await backend.list_dir(ntpath.join(home, 'SUB'))
    assert (entry.name, entry.path) == ('Read Me.TXT', ntpath.join(home, 'Sub', 'Read Me.TXT'))  # case kept
    for refused in ('a<b', 'q?', 'CON', 'nul.txt', 'tab\there'):
        with pytest.raises(OSError):
            await backend.write_bytes(ntpath.join(home, refused), b'x')
    with pytest.raises(ValueError):
        await backend.remove(home.upper())
    assert await backend.realpath(ntpath.join(home, 'sub', 'Missing')) == ntpath.join(home, 'Sub', 'Missing')
    result = await backend.run(['sh', '-c', 'exit 0'])
    assert result.exit_code == 127 and backend.posix_commands == [['sh', '-c', 'exit 0']]


@pytest.fixture
def anyio_backend() -> str:
    return 'asyncio'


CARELESS_RULE_MODULE = """
import pytest
from workspace_conformance import WorkspaceBackendSuite
from workspace_conformance.authoring import commands_of, rule
from workspace_conformance.doubles.windows import WindowsMemoryBackend

BACKEND = WindowsMemoryBackend()


class TestCareless(WorkspaceBackendSuite):
    @pytest.fixture
    def backend(self):
        return BACKEND

    @rule(area='commands', requires=['commands'], platforms=['posix', 'windows'])
    async def test_says_windows_but_sends_sh(self, backend):
        \"\"\"A rule that declares a 'windows' form and still sends `sh`: the engine stops the command.\"\"\"
        await commands_of(backend).run(['sh', '-c', 'exit 0'])


def test_the_backend_saw_no_posix_command():
    assert BACKEND.posix_commands == []
"""


@NEEDS_2_78
def test_a_posix_command_never_reaches_a_windows_workspace_even_from_a_careless_rule(pytester: pytest.Pytester) -> None:
    ran, report = _report(pytester, CARELESS_RULE_MODULE, '-k', 'says_windows or saw_no', '-p', 'no:xdist')
    assert ran.ret == 0, ran.stdout.str()[-3000:]
    summary = next(
        rule for suite in report.suites for rule in suite.rules if rule.rule_id == 'says_windows_but_sends_sh'
    )
    assert (summary.status, summary.skip_kind) == ('not-applicable', 'platform')
    assert 'the engine stopped it before the backend saw it' in (summary.detail or '')


def test_docs_platforms_md_names_every_command_rule_with_a_windows_form() -> None:
    page = (ROOT / 'docs' / 'platforms.md').read_text()
    table = {line.split('`')[1] for line in page.splitlines() if line.startswith('| `')}
    forms = {meta.id for meta in rules() if 'windows' in meta.platforms and 'commands' in meta.requires}
    assert forms <= table and table - forms <= {'working_dir_is_canonical'}
    posix_only = sum('windows' not in meta.platforms for meta in rules())
    assert f"({posix_only} of the backend suite's {len(rules())} rules)" in page

"""`workspace-conformance certify` as a user runs it: exit codes, one-line errors, nothing written to cwd."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workspace_conformance import rules

from .runner import QUICK_CERTIFY, certify, rules_not_applicable_on_local

FACTORIES = """
from pydantic_ai.workspaces import LocalWorkspaceBackend

def local(run_dir):
    run_dir.mkdir(parents=True, exist_ok=True)
    return LocalWorkspaceBackend(run_dir)

def explodes():
    raise RuntimeError('no credentials')

def not_a_backend():
    return 42

value = 3
"""


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / 'my_factories.py').write_text(FACTORIES)
    return tmp_path


@pytest.mark.parametrize(
    ('target', 'says'),
    [
        ('no_such_module:thing', "cannot import 'no_such_module'"),
        ('my_factories:missing', "has no attribute 'missing'"),
        ('my_factories:value', 'is a int, not a callable'),
        ('my_factories:explodes', 'raised RuntimeError when called: no credentials'),
        ('my_factories:not_a_backend', 'returned a int, not a WorkspaceBackend'),
        ('nonsense', "unknown target 'nonsense'"),
    ],
)
def test_a_bad_target_exits_2_with_one_line(workdir: Path, target: str, says: str) -> None:
    result = certify(workdir, target)
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], result.stderr
    assert 'Traceback' not in result.stderr + result.stdout


@pytest.mark.slow
def test_the_default_local_target_is_certified_and_writes_nothing_here(workdir: Path) -> None:
    """With no TARGET, `certify` certifies `local` and leaves the directory it runs in as it was.

    On asyncio: test_self_certification certifies the local target (the adapter `certify` uses) on trio too, and
    test_first_contact proves that `certify` tries both loops by default.
    """
    before = sorted(path.name for path in workdir.iterdir())
    result = certify(workdir, *QUICK_CERTIFY)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert result.stdout.rstrip().splitlines()[-1] == 'workspace-conformance: certified (local)'
    total = len(rules())
    absent = rules_not_applicable_on_local()
    assert (
        f'({total - absent} passed, 0 failed, 0 broken, 0 advisories, 0 gaps, {absent} not applicable, 0 missing; '
        f'{total} rules on asyncio)' in result.stdout
    )
    assert sorted(path.name for path in workdir.iterdir() if path.name != '__pycache__') == before


def test_a_factory_target_narrowed_with_k_runs_but_is_not_certified(workdir: Path) -> None:
    result = certify(
        workdir,
        'my_factories:local',
        '-k',
        'test_exists and not below and not working_dir',
        '--anyio-backend',
        'asyncio',
        '--conformance-time-scale',
        '2',
    )
    assert result.returncode == 1, result.stdout[-3000:]
    assert '1 passed' in result.stdout
    assert result.stdout.rstrip().splitlines()[-1] == 'workspace-conformance: not certified (my_factories:local)'


LEAKY_FACTORIES = """
import os

from pydantic_ai.workspaces import LocalWorkspaceBackend

KEY = os.environ['FAKE_PROVIDER_API_KEY']


class Leaky(LocalWorkspaceBackend):
    async def exists(self, path):
        raise RuntimeError(f'provider refused: api_key={KEY}')


def leaky(run_dir):
    run_dir.mkdir(parents=True, exist_ok=True)
    return Leaky(run_dir)


def refuses():
    raise RuntimeError(f'bad credentials: Bearer {KEY}')
"""
FAKE_KEY = 'sk-test-9876543210fedcbaSECRET'


@pytest.mark.slow  # a whole-suite run
def test_a_key_in_the_environment_and_in_failures_reaches_no_bundle_file_and_no_terminal(tmp_path: Path) -> None:
    (tmp_path / 'leaky_factories.py').write_text(LEAKY_FACTORIES)
    os.environ['FAKE_PROVIDER_API_KEY'] = FAKE_KEY  # read by the child through os.environ, removed below
    try:
        bundle = tmp_path / 'bundle'
        failing = certify(tmp_path, 'leaky_factories:leaky', '-k', 'exists', '--bundle', str(bundle))
        refused = certify(tmp_path, 'leaky_factories:refuses')
    finally:
        del os.environ['FAKE_PROVIDER_API_KEY']
    assert failing.returncode == 1, failing.stdout[-2000:]
    assert refused.returncode == 2 and 'bad credentials' in refused.stderr, refused.stderr
    assert 'provider refused' in (bundle / 'report.json').read_text()  # the failure is there, its key is not
    written = sorted(path.name for path in bundle.iterdir())
    assert {'REPRODUCE.md', 'SHA256SUMS', 'environment.json', 'report.json', 'report.html', 'junit.xml'} <= set(
        written
    ), written
    for path in bundle.iterdir():
        assert FAKE_KEY not in path.read_text(errors='replace'), path.name
    for finished in (failing, refused):
        assert FAKE_KEY not in finished.stdout + finished.stderr


@pytest.mark.parametrize(
    ('arguments', 'says'),
    [
        (['--conformance-time-scale', '-1'], "argument --conformance-time-scale: '-1': pass a finite number > 0"),
        (['--conformance-time-scale', '0'], "argument --conformance-time-scale: '0': pass a finite number > 0"),
        (['--conformance-time-scale', 'nan'], "argument --conformance-time-scale: 'nan': pass a finite number > 0"),
        (['-n', 'abc'], "argument -n: 'abc': pass a positive integer or auto"),
        (['-n', '0'], "argument -n: '0': pass a positive integer or auto"),
        (['--report', '/proc/x'], '--report /proc/x: cannot write there'),
        (['--bundle', 'my_factories.py'], '--bundle my_factories.py: is a file, not a directory'),
        (['--conformance-profile', 'fast'], "argument --conformance-profile: invalid choice: 'fast'"),
        (['-k', 'exists', '-k', 'remove'], 'argument -k: given twice: pass it once'),
        (['--report', 'a', '--bundle', 'b'], '--report and --bundle: pass one'),
        (['-k', 'no_rule_has_this_name'], "-k 'no_rule_has_this_name' selects no rule"),
        (['-k', 'exists and'], "-k 'exists and': not a pytest -k expression"),
        (['--frobnicate'], 'unrecognized arguments: --frobnicate'),
    ],
)
def test_a_bad_option_exits_2_with_one_line_and_runs_nothing(workdir: Path, arguments: list[str], says: str) -> None:
    tmp = workdir / 'tmp'
    tmp.mkdir()
    before = sorted(path.name for path in workdir.iterdir())
    environment = {
        **os.environ,
        'PYTHONPATH': os.pathsep.join(filter(None, [str(workdir), os.environ.get('PYTHONPATH')])),
        'TMPDIR': str(tmp),
    }
    result = subprocess.run(
        [sys.executable, '-m', 'workspace_conformance', 'certify', 'local', *arguments],
        cwd=workdir,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], result.stderr
    assert result.stdout == ''
    assert sorted(path.name for path in workdir.iterdir() if path.name != '__pycache__') == before
    assert list(tmp.iterdir()) == []


SUITE = """
import pytest
from pydantic_ai.workspaces import LocalWorkspaceBackend

from workspace_conformance import WorkspaceBackendSuite


class TestLocal(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory):
        return LocalWorkspaceBackend(tmp_path_factory.mktemp('workspace'))
"""


@pytest.mark.parametrize(
    ('option', 'says'),
    [
        ('--conformance-time-scale=-2', "argument --conformance-time-scale: '-2': pass a finite number > 0"),
        ('--conformance-time-scale=0', "argument --conformance-time-scale: '0': pass a finite number > 0"),
        ('--conformance-time-scale=inf', "argument --conformance-time-scale: 'inf': pass a finite number > 0"),
        ('--conformance-report=/proc/x', '--conformance-report /proc/x: cannot write there'),
        ('--conformance-profile=fast', "argument --conformance-profile: invalid choice: 'fast'"),
    ],
)
def test_under_pytest_a_bad_conformance_option_is_a_usage_error_not_rule_failures(
    pytester: pytest.Pytester, option: str, says: str
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest_inprocess('-p', 'no:cacheprovider', option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert says in result.stderr.str()
    assert 'passed' not in result.stdout.str() and 'failed' not in result.stdout.str()

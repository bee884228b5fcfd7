"""`certify` of a stranger's factory module: the preflight, the scratch directory, event loops chosen by evidence."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from workspace_conformance.loop_ties import loop_tie, where_raised
from workspace_conformance.reports.model import Report, RuleOutcome, SuiteReport
from workspace_conformance.reports.render.terminal import write_summary
from workspace_conformance.targets.base import Target
from workspace_conformance.targets.preflight import preflight

from .runner import certify

NARROW = 'working_dir or exit_code'
"""A -k expression selecting a few cheap rules, so a certification takes seconds."""

ACME = '''
"""A vendor's backend over an asyncio-only SDK, in a module of its own."""
import asyncio
import os
from pathlib import Path

from pydantic_ai.workspaces import CommandResult, WorkspaceRef


class Acme:
    def __init__(self, root: Path) -> None:
        self._root = root
        self._ref = None

    @property
    def ref(self):
        return self._ref

    async def _ensure(self) -> Path:
        asyncio.get_running_loop()  # the SDK is asyncio-only
        if self._ref is None:
            path = self._root / 'env'
            path.mkdir()  # no parents=True: the scratch directory must exist
            self._ref = WorkspaceRef(provider='acme', id=str(path.resolve()))
        return Path(self._ref.id)

    async def working_dir(self) -> str:
        return str(await self._ensure())

    async def run(self, command, *, shell=False, env=None, timeout=None):
        cwd = await self._ensure()
        argv = ['/bin/sh', '-c', command] if shell else list(command)
        process = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env={'PATH': os.environ['PATH'], **(env or {})},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, err = await process.communicate()
        code = process.returncode
        return CommandResult(exit_code=128 - code if code < 0 else code, stdout=out.decode(), stderr=err.decode())


def build(scratch):
    return Acme(scratch)


async def build_async(scratch):
    await asyncio.sleep(0)
    return Acme(scratch)


def returns_awaitable(scratch):
    return build_async(scratch)


async def destroy(backend):
    with open(Path(__file__).parent / 'destroyed.txt', 'a') as destroyed:
        destroyed.write(backend.ref.id + '\\n')


def returns_class(scratch):
    return Acme


def explodes(scratch):
    raise RuntimeError('no credentials')


def writes_in_scratch(scratch):
    (scratch / 'config.json').write_text('{}')  # straight into the scratch directory, no mkdir
    return Acme(scratch)


def missing_parents(scratch):
    return Acme(scratch / 'sandboxes' / 'deep')
'''


def _certify(cwd: Path, *args: str, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    return certify(cwd, *args, '--conformance-profile', 'ci', pythonpath=pythonpath, timeout=300)


@pytest.fixture
def vendor(tmp_path: Path) -> Path:
    (tmp_path / 'acme_sdk.py').write_text(ACME)
    return tmp_path


def _report(directory: Path) -> Report:
    return Report.model_validate_json((directory / 'report.json').read_text())


@pytest.mark.slow
def test_an_asyncio_only_backend_runs_on_asyncio_and_trio_is_left_out_with_its_reason(vendor: Path) -> None:
    out = vendor / 'out'
    result = _certify(vendor, 'acme_sdk:writes_in_scratch', '-k', NARROW, '--report', str(out))
    left_out = [line for line in result.stderr.splitlines() if 'left out' in line]
    assert left_out == [
        'workspace-conformance: trio left out: the backend is tied to asyncio (RuntimeError: no running event loop, '
        'acme_sdk.py:20); pass --anyio-backend trio to force it'
    ], result.stderr
    suite = _report(out).suites[0]
    assert suite.anyio_backends == ['asyncio']
    assert suite.loops_left_out == {
        'trio': 'the backend is tied to asyncio (RuntimeError: no running event loop, acme_sdk.py:20)'
    }
    assert {outcome.outcome for outcome in suite.results} <= {'passed', 'skipped', 'missing'}, result.stdout[-3000:]
    assert any(outcome.outcome == 'passed' for outcome in suite.results)


@pytest.mark.slow
def test_forcing_trio_on_an_asyncio_only_backend_runs_its_rules_and_they_fail_with_the_hint(vendor: Path) -> None:
    out = vendor / 'out'
    result = _certify(vendor, 'acme_sdk:build', '-k', NARROW, '--anyio-backend', 'trio', '--report', str(out))
    assert result.returncode == 1, result.stderr + result.stdout[-3000:]
    suite = _report(out).suites[0]
    failed = [outcome for outcome in suite.results if outcome.outcome == 'failed']
    assert suite.anyio_backends == ['trio'] and suite.loops_left_out == {} and failed
    assert all(outcome.loop_tie == 'asyncio' for outcome in failed)
    hint = 'hint: the backend called asyncio-only code on trio: make it loop-neutral with anyio'
    assert all(hint in (outcome.excerpt or '') for outcome in failed)
    assert result.stdout.count("def anyio_backend(): return 'asyncio'") == 1


@pytest.mark.slow
@pytest.mark.parametrize('factory', ['build_async', 'returns_awaitable'])
def test_an_async_factory_is_awaited_in_the_preflight_and_in_the_rules(vendor: Path, factory: str) -> None:
    out = vendor / 'out'
    result = _certify(vendor, f'acme_sdk:{factory}', '-k', NARROW, '--report', str(out))
    suite = _report(out).suites[0]
    assert suite.anyio_backends == ['asyncio'] and 'trio' in suite.loops_left_out
    assert suite.backend_class == 'acme_sdk.Acme', result.stderr
    assert not [outcome for outcome in suite.results if outcome.outcome in ('failed', 'error')], result.stdout[-3000:]


def test_a_factory_that_raises_stops_before_any_rule_in_one_line_naming_it_and_the_loops(vendor: Path) -> None:
    out = vendor / 'out'
    result = _certify(vendor, 'acme_sdk:explodes', '--report', str(out))
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) <= 5 and 'Traceback' not in result.stderr + result.stdout
    assert lines[-1] == (
        "workspace-conformance: target 'acme_sdk:explodes' raised RuntimeError when called: no credentials "
        '(on asyncio and trio)'
    )
    assert result.stdout == '' and not (out / 'report.json').exists()


def test_a_factory_that_returns_a_class_stops_with_the_hint(vendor: Path) -> None:
    result = _certify(vendor, 'acme_sdk:returns_class')
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and 'Traceback' not in result.stderr
    assert "target 'acme_sdk:returns_class' returned the class Acme" in lines[0]
    assert lines[0].endswith('hint: returns a class; return an instance')


def test_a_backend_whose_first_call_finds_no_parent_directory_says_mkdir(vendor: Path) -> None:
    result = _certify(vendor, 'acme_sdk:missing_parents', '--anyio-backend', 'asyncio')
    assert result.returncode == 2, result
    [line] = result.stderr.strip().splitlines()
    assert 'working_dir(), raised FileNotFoundError' in line and '(on asyncio)' in line
    assert line.endswith('(mkdir(parents=True))')


def test_a_module_not_on_pythonpath_says_how_to_put_it_there(
    vendor: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp('elsewhere')
    result = _certify(elsewhere, 'acme_sdk:build')
    assert result.returncode == 2, result
    [line] = result.stderr.strip().splitlines()
    assert "cannot import 'acme_sdk': ModuleNotFoundError" in line
    assert line.endswith('is its directory on PYTHONPATH? run from it or set PYTHONPATH')


@pytest.mark.slow
def test_a_bundle_reproduces_with_the_module_directory_on_pythonpath_and_destroy_ends_the_preflight(
    vendor: Path,
) -> None:
    bundle = vendor / 'bundle'
    run_from = vendor / 'elsewhere'
    run_from.mkdir()
    arguments = ['-k', 'working_dir_is_stable', '--destroy', 'acme_sdk:destroy', '--bundle', str(bundle)]
    result = _certify(run_from, 'acme_sdk:build', *arguments, pythonpath=vendor)
    assert result.returncode == 1, result.stderr  # narrowed: never certified
    reproduce = (bundle / 'REPRODUCE.md').read_text()
    assert f'PYTHONPATH={vendor.resolve()} workspace-conformance certify acme_sdk:build' in reproduce
    destroyed = (vendor / 'destroyed.txt').read_text().splitlines()
    assert any('/environments/preflight/asyncio/backend-' in ref for ref in destroyed), destroyed


def test_a_loop_tie_is_read_from_the_error_and_its_place_from_the_backend_frame() -> None:
    def asyncio_only() -> None:
        import asyncio

        asyncio.get_running_loop()

    with pytest.raises(RuntimeError) as raised:
        asyncio_only()
    assert loop_tie(raised.value, 'trio') == 'asyncio'
    assert loop_tie(raised.value, 'asyncio') is None  # the same loop: no evidence of another
    assert (where_raised(raised.value) or '').startswith('test_preflight.py:')
    wrapped = AssertionError('expected WorkspaceFileNotFoundError')
    wrapped.__cause__ = RuntimeError('must be called from async context')
    assert loop_tie(wrapped, 'asyncio') == 'trio'
    assert loop_tie(RuntimeError('connection refused'), 'trio') is None


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_sep(self, sep: str, title: str | None = None, **markup: bool) -> None:
        self.lines.append(f'{sep * 3} {title}')

    def write_line(self, line: str, **markup: bool) -> None:
        self.lines.append(line)


def _outcome(rule_id: str, loop: str, outcome: str, tie: str | None) -> RuleOutcome:
    return RuleOutcome.model_validate(
        {
            'rule_id': rule_id,
            'area': 'commands',
            'level': 'core',
            'clause': 'c',
            'anyio_backend': loop,
            'outcome': outcome,
            'loop_tie': tie,
        }
    )


def test_the_terminal_summary_names_the_anyio_backend_override_once_for_loop_tied_failures() -> None:
    results = [
        _outcome('a', 'trio', 'failed', 'asyncio'),
        _outcome('b', 'trio', 'failed', 'asyncio'),
        _outcome('a', 'asyncio', 'passed', None),
    ]
    suite = SuiteReport(
        subject='s', anyio_backends=['asyncio', 'trio'], results=results, rules=[], verdict='not certified'
    )
    report = Report.model_validate(
        {
            'toolkit_version': '0',
            'pydantic_ai_version': '0',
            'python': '3',
            'platform': 'p',
            'hypothesis_profile': 'ci',
            'started': 's',
            'finished': 'f',
            'complete': True,
            'suites': [suite.model_dump()],
            'verdict': 'not certified',
        }
    )
    writer = _Lines()
    write_summary(writer, report)
    text = '\n'.join(writer.lines)
    assert text.count("def anyio_backend(): return 'asyncio'") == 1
    assert 'hint: 2 rule(s) failed on trio because the backend called asyncio-only code' in text
    untied = report.model_copy(
        update={'suites': [suite.model_copy(update={'results': [_outcome('a', 'trio', 'failed', None)]})]}
    )
    writer = _Lines()
    write_summary(writer, untied)
    assert not any('anyio_backend' in line for line in writer.lines)


def test_the_report_schema_carries_the_loops_left_out() -> None:
    schema = json.loads((Path(__file__).parents[1] / 'docs' / 'report-schema.json').read_text())
    assert 'loops_left_out' in json.dumps(schema) and 'loop_tie' in json.dumps(schema)


PYTEST_SUITE = """
import pytest

from acme_sdk import Acme
from workspace_conformance import WorkspaceBackendSuite


class TestAcme(WorkspaceBackendSuite):
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory):
        return Acme(tmp_path_factory.mktemp('acme'))
"""


@pytest.mark.slow
def test_under_plain_pytest_asyncio_only_failures_on_trio_end_in_one_hint(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(acme_sdk=ACME, test_acme=PYTEST_SUITE)
    result = pytester.runpytest_subprocess('-p', 'no:cacheprovider', '-k', 'working_dir_is_stable')
    output = result.stdout.str()
    assert '1 failed, 1 passed' in output, output[-3000:]
    assert output.count("def anyio_backend(): return 'asyncio'") == 1
    assert 'hint: 1 rule(s) failed on trio because the backend called asyncio-only code' in output


def test_each_factory_call_gets_an_existing_directory_of_its_own(vendor: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from workspace_conformance.targets import resolve_target

    monkeypatch.syspath_prepend(str(vendor))
    target = resolve_target('acme_sdk:writes_in_scratch', fresh='acme_sdk:writes_in_scratch')
    assert target.fresh_backend is not None
    parent = vendor / 'run' / 'asyncio'  # neither exists yet
    built = [target.backend(parent), target.fresh_backend(parent), target.fresh_backend(parent)]
    scratches = {vars(backend)['_root'] for backend in built}
    assert len(scratches) == 3 and all((scratch / 'config.json').is_file() for scratch in scratches)
    assert all(scratch.parent == parent for scratch in scratches)


def test_an_async_fresh_factory_is_refused_in_one_line(vendor: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from workspace_conformance.targets import TargetError, resolve_target

    monkeypatch.syspath_prepend(str(vendor))
    with pytest.raises(TargetError, match=r"--fresh 'acme_sdk:build_async' is an async function"):
        resolve_target('acme_sdk:build', fresh='acme_sdk:build_async')


class _Panic(BaseException):
    """A provider SDK's own BaseException."""


class _Panicking:
    ref = None

    async def working_dir(self) -> str:
        raise _Panic('the SDK panicked')

    async def run(self, *args: object, **kwargs: object) -> None:
        raise AssertionError('not called')


def _target(build: object) -> Target:
    return Target(name='vendor:build', description='d', backend=build)  # type: ignore[arg-type]


def test_the_preflight_turns_an_sdks_base_exception_into_its_one_line(tmp_path: Path) -> None:
    found = preflight(_target(lambda scratch: _Panicking()), ['asyncio', 'trio'], tmp_path)
    assert found.loops == () and found.failure == (
        "target 'vendor:build' built a backend whose first call, working_dir(), raised _Panic: the SDK panicked "
        '(on asyncio and trio)'
    )


def test_the_preflight_leaves_a_tied_loop_out_only_when_it_may_choose(
    vendor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workspace_conformance.targets import resolve_target

    monkeypatch.syspath_prepend(str(vendor))
    target = resolve_target('acme_sdk:writes_in_scratch')
    chosen = preflight(target, ['asyncio', 'trio'], tmp_path_of(vendor, 'chosen'))
    assert chosen.loops == ('asyncio',) and list(chosen.left_out) == ['trio']
    forced = preflight(target, ['trio'], tmp_path_of(vendor, 'forced'), choose=False)
    assert forced.loops == ('trio',) and forced.left_out == {} and forced.failure is None
    assert forced.lines() == [
        'trio kept as --anyio-backend asks, though the backend is tied to asyncio '
        '(RuntimeError: no running event loop, acme_sdk.py:20): its rules will fail'
    ]
    unforced = preflight(target, ['trio'], tmp_path_of(vendor, 'unforced'))
    assert unforced.failure is not None and '(on trio)' in unforced.failure


def tmp_path_of(base: Path, name: str) -> Path:
    return base / name

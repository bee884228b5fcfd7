"""Run one module of the parity corpus twice, with upstream's suite and with ours, and collect what each run did.

Each run happens in a fresh temporary directory holding the module's files, the corpus's shared helpers and a
one-line `parity_suite.py` that imports either `pydantic_ai.workspaces.conformance.WorkspaceBackendSuite` or
`workspace_conformance.WorkspaceBackendSuite`. Per-test outcomes come from pytest's JUnit XML; our run's verdict and
rule statuses come from its `report.json`.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from workspace_conformance.reports.model import Report, RuleSummary

__all__ = (
    'CORPUS',
    'LOOPS',
    'ModuleResult',
    'Outcome',
    'Run',
    'Suite',
    'TestOutcome',
    'collect_only',
    'corpus_modules',
    'module_constants',
    'run_module',
    'run_suite',
)

CORPUS = Path(__file__).resolve().parent / 'corpus'
LOOPS = ('asyncio', 'trio')
IMPORTS = {
    'upstream': 'from pydantic_ai.workspaces.conformance import WorkspaceBackendSuite\n',
    'ours': 'from workspace_conformance import WorkspaceBackendSuite\n',
}
OVERRIDDEN_SUFFIX = '[overridden]'
SUITE_MODULE = 'parity_suite.py'
UPSTREAM_ONLY_PLUGIN = '_parity_upstream_only'
UPSTREAM_ONLY = '''
from pydantic_ai.workspaces.conformance import WorkspaceBackendSuite

UPSTREAM = frozenset(name for name in dir(WorkspaceBackendSuite) if name.startswith('test_'))


def pytest_collection_modifyitems(config, items):
    """Keep only the tests upstream's suite has: ours runs them as upstream's run does, nothing more."""
    kept = [item for item in items if getattr(item, 'originalname', item.name) in UPSTREAM]
    config.hook.pytest_deselected(items=[item for item in items if item not in kept])
    items[:] = kept
'''
"""A plugin for our run of a module whose backend is a plain LocalWorkspaceBackend (`UPSTREAM_RULES_ONLY = True`):
our extra rules on that backend are test_self_certification's, so the corpus pays only for the drop-in comparison."""
TIMEOUT = 900.0

Suite = Literal['upstream', 'ours']
Outcome = Literal['passed', 'failed', 'error', 'skipped']


@dataclass(frozen=True)
class TestOutcome:
    """One test item of a run: `test_x[a-asyncio]` is name `test_x`, params `a`, loop `asyncio`."""

    name: str
    params: str
    loop: str | None
    outcome: Outcome
    message: str = ''
    overridden: bool = False

    @property
    def key(self) -> tuple[str, str]:
        """The test irrespective of its event loop."""
        return self.name, self.params


@dataclass(frozen=True)
class Run:
    """One pytest run of a corpus module with one suite."""

    suite: Suite
    returncode: int
    seconds: float
    outcomes: tuple[TestOutcome, ...]
    stdout: str
    report: Report | None = None

    @property
    def tests(self) -> tuple[TestOutcome, ...]:
        """The outcomes, without our `[overridden]` items."""
        return tuple(outcome for outcome in self.outcomes if not outcome.overridden)

    @property
    def overridden(self) -> tuple[TestOutcome, ...]:
        return tuple(outcome for outcome in self.outcomes if outcome.overridden)

    def loops(self) -> set[str]:
        """The event loops the tests ran on (`none` for a test without a loop parameter)."""
        return {outcome.loop or 'none' for outcome in self.tests}

    def with_outcome(self, outcome: Outcome) -> dict[tuple[str, str], set[str]]:
        """Test -> the loops it had `outcome` on."""
        found: dict[tuple[str, str], set[str]] = {}
        for test in self.tests:
            if test.outcome == outcome:
                found.setdefault(test.key, set()).add(test.loop or 'none')
        return found

    def counts(self) -> Counter[str]:
        return Counter(test.outcome for test in self.tests)

    def message(self, key: tuple[str, str]) -> str:
        """The first non-pass message of a test, for a failure that says what our suite observed."""
        for test in self.tests:
            if test.key == key and test.outcome != 'passed':
                return f'{test.outcome} on {test.loop}: {test.message}'
        return 'no result' if not any(test.key == key for test in self.tests) else 'passed'

    def rule(self, rule_id: str) -> RuleSummary | None:
        """Our report's summary of a rule (ours only)."""
        if self.report is None:
            return None
        for suite in self.report.suites:
            for summary in suite.rules:
                if summary.rule_id == rule_id:
                    return summary
        return None

    def statuses(self) -> Counter[str]:
        """Our report's rule statuses, with `overridden` counted apart from the other gaps."""
        counted: Counter[str] = Counter()
        for suite in self.report.suites if self.report else ():
            for summary in suite.rules:
                counted['overridden' if summary.skip_kind == 'overridden' else summary.status] += 1
        return counted


@dataclass(frozen=True)
class ModuleResult:
    """A corpus module run with both suites, and what the module says about its backend."""

    name: str
    upstream: Run
    ours: Run
    defects: dict[str, str] = field(default_factory=dict)
    correct: bool = True
    upstream_only: bool = False

    @property
    def verdict(self) -> str:
        return self.ours.report.verdict if self.ours.report else 'no report'


def corpus_modules() -> list[str]:
    """Every module of the corpus: a directory under `corpus/` holding `test_<name>.py`."""
    return sorted(path.name for path in CORPUS.iterdir() if (path / f'test_{path.name}.py').is_file())


def module_source(name: str) -> str:
    return (CORPUS / name / f'test_{name}.py').read_text()


def module_constants(name: str) -> tuple[dict[str, str], bool, bool]:
    """The module's `DEFECTS` (none unless it lists some), `CORRECT` (True unless it says False) and
    `UPSTREAM_RULES_ONLY` (False unless it says True), from its source."""
    defects: dict[str, str] = {}
    correct = True
    upstream_only = False
    for node in ast.parse(module_source(name)).body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        if target == 'DEFECTS' and value is not None:
            defects = {str(key): str(reason) for key, reason in ast.literal_eval(value).items()}
        elif target == 'CORRECT' and value is not None:
            correct = bool(ast.literal_eval(value))
        elif target == 'UPSTREAM_RULES_ONLY' and value is not None:
            upstream_only = bool(ast.literal_eval(value))
    return defects, correct, upstream_only


def _stage(name: str, suite: Suite, into: Path) -> Path:
    """A directory holding the module, the corpus helpers and the `parity_suite.py` of `suite`."""
    into.mkdir(parents=True)
    for path in CORPUS.glob('*.py'):
        if path.name != SUITE_MODULE:
            shutil.copy(path, into / path.name)
    for path in (CORPUS / name).glob('*.py'):
        if path.name != '__init__.py':
            shutil.copy(path, into / path.name)
    (into / SUITE_MODULE).write_text(IMPORTS[suite])
    (into / f'{UPSTREAM_ONLY_PLUGIN}.py').write_text(UPSTREAM_ONLY)
    (into / 'pytest.ini').write_text('[pytest]\n')
    return into


def _environment() -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith(('PYTEST_', 'COV_'))}
    environment['PYTHONDONTWRITEBYTECODE'] = '1'
    return environment


def _pytest(directory: Path, suite: Suite, arguments: Sequence[str]) -> subprocess.CompletedProcess[str]:
    plugins = ['-p', 'no:workspace_conformance'] if suite == 'upstream' else []
    command = [sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '-p', 'no:randomly', *plugins, *arguments]
    return subprocess.run(
        command, cwd=directory, env=_environment(), capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


def _split(name: str) -> tuple[str, str, str | None]:
    """`test_x[a-asyncio]` -> (`test_x`, `a`, `asyncio`)."""
    match = re.fullmatch(r'(?P<name>[^\[]+)(?:\[(?P<params>.*)\])?', name)
    if match is None:
        return name, '', None
    parts = (match.group('params') or '').split('-') if match.group('params') else []
    loops = [part for part in parts if part in LOOPS]
    return match.group('name'), '-'.join(part for part in parts if part not in LOOPS), loops[0] if loops else None


def parse_junit(path: Path) -> tuple[TestOutcome, ...]:
    """Every test case of a JUnit XML file, with its outcome and message."""
    outcomes: list[TestOutcome] = []
    for case in ElementTree.parse(path).getroot().iter('testcase'):
        full = case.get('name', '')
        overridden = full.endswith(OVERRIDDEN_SUFFIX)
        name, params, loop = _split(full.removesuffix(OVERRIDDEN_SUFFIX) if overridden else full)
        outcome: Outcome = 'passed'
        message = ''
        for child in case:
            if child.tag in ('failure', 'error', 'skipped'):
                outcome = 'failed' if child.tag == 'failure' else 'error' if child.tag == 'error' else 'skipped'
                message = child.get('message', '') or (child.text or '')[:500]
                break
        outcomes.append(TestOutcome(name, params, loop, outcome, message, overridden))
    return tuple(outcomes)


def run_suite(name: str, suite: Suite, scratch: Path, extra: Sequence[str] = ()) -> Run:
    """Run the module with `suite`'s class in `scratch/suite`."""
    directory = _stage(name, suite, scratch / suite)
    junit, report_dir = scratch / f'{suite}.xml', scratch / f'{suite}-report'
    arguments = ['-q', '-rs', f'--junitxml={junit}', *extra]
    if suite == 'ours':
        arguments.append(f'--conformance-report={report_dir}')
    started = time.monotonic()
    completed = _pytest(directory, suite, arguments)
    seconds = time.monotonic() - started
    outcomes = parse_junit(junit) if junit.exists() else ()
    report_file = report_dir / 'report.json'
    report = Report.model_validate_json(report_file.read_text()) if report_file.exists() else None
    return Run(suite, completed.returncode, seconds, outcomes, completed.stdout + completed.stderr, report)


def run_module(name: str, extra: Sequence[str] = ()) -> ModuleResult:
    """Run a corpus module with upstream's suite and with ours at the same time, each in a fresh temporary directory."""
    defects, correct, upstream_only = module_constants(name)
    ours_extra = [*extra, '-p', UPSTREAM_ONLY_PLUGIN] if upstream_only else extra
    with tempfile.TemporaryDirectory(prefix=f'parity-{name}-') as temporary, ThreadPoolExecutor(2) as pool:
        scratch = Path(temporary)
        # At once: upstream's run sleeps through most of its wall (its background-child rule waits 30 s per loop on
        # a backend that cannot run commands), so ours computes meanwhile; each has its own directory.
        upstream = pool.submit(run_suite, name, 'upstream', scratch, extra)
        ours = pool.submit(run_suite, name, 'ours', scratch, ours_extra)
        return ModuleResult(name, upstream.result(), ours.result(), defects, correct, upstream_only)


def collect_only(name: str, suite: Suite) -> str:
    """`pytest --collect-only -q` of the module with `suite`'s class: one line per item."""
    with tempfile.TemporaryDirectory(prefix=f'parity-{name}-collect-') as temporary:
        completed = _pytest(_stage(name, suite, Path(temporary) / suite), suite, ['--collect-only', '-q'])
    return completed.stdout

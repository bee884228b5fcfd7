"""The sensitivity gate: every rule has a mutant that makes it fail, and every mutant is killed.

Each mutant becomes a suite class running only the rules it declares, as strict expected failures: a rule that
passes against its mutant is an XPASS and fails this test run; a rule that skips there fails it too (conftest).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import pytest
from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef

from workspace_conformance import WorkspaceBackendSuite, rules
from workspace_conformance.suite import narrow

from ..runner import bypasses_permissions
from .gallery import load_all
from .registry import Mutant

ROOT = Path(__file__).resolve().parents[2]
TIME_SCALE = 0.25
DROP = '-dac_override,-dac_read_search'
MUTANTS = load_all()


def suite_for(mutant: Mutant) -> type[WorkspaceBackendSuite]:
    """A suite class that runs only the rules `mutant` must fail, each as a strict expected failure."""

    class MutantSuite(WorkspaceBackendSuite):
        mutant_name = mutant.name
        conformance_summary = False  # 50 partial verdicts of broken backends would bury the real summaries

        @pytest.fixture(scope='class')
        @classmethod
        def anyio_backend(cls) -> str:
            return 'asyncio'

        @pytest.fixture(scope='class')
        @classmethod
        def run_dir(cls, tmp_path_factory: pytest.TempPathFactory) -> Path:
            return tmp_path_factory.mktemp(mutant.name)

        @pytest.fixture(scope='class')
        @classmethod
        def backend(cls, run_dir: Path) -> WorkspaceBackend:
            return mutant.backend(run_dir)

        @pytest.fixture
        def fresh_backend(self, run_dir: Path) -> Callable[[], WorkspaceBackend] | None:
            build = mutant.fresh_backend
            return None if build is None else (lambda: build(run_dir))

        @pytest.fixture
        def destructive_backend(self, run_dir: Path) -> Callable[[], WorkspaceBackend] | None:
            build = mutant.destructive_backend
            return None if build is None else (lambda: build(run_dir))

        @pytest.fixture
        def attach_backend(self, run_dir: Path) -> Callable[[WorkspaceRef], WorkspaceBackend] | None:
            build = mutant.attach_backend
            return None if build is None else (lambda ref: build(run_dir, ref))

        @pytest.fixture
        def destroy_environment(self) -> Callable[[WorkspaceBackend], Awaitable[None]] | None:
            return mutant.destroy_environment

        @pytest.fixture
        def make_symlink(self) -> Callable[[WorkspaceBackend, str, str], Awaitable[None]] | None:
            return mutant.make_symlink

        @pytest.fixture
        def conformance_time_scale(self) -> float:
            return TIME_SCALE

        @pytest.fixture
        def expected_failures(self) -> Mapping[str, str]:
            return dict.fromkeys(mutant.kills, f'mutant {mutant.name}: {mutant.bug}')

    narrow(MutantSuite, mutant.kills)
    MutantSuite.__name__ = MutantSuite.__qualname__ = f'TestMutant_{mutant.name}'
    return MutantSuite


BYPASS = bypasses_permissions()
for _mutant in MUTANTS:
    if not (_mutant.unprivileged and BYPASS):
        globals()[f'TestMutant_{_mutant.name}'] = suite_for(_mutant)


def test_every_rule_has_a_killing_mutant() -> None:
    proven = {rule_id for mutant in MUTANTS for rule_id in mutant.kills}
    unproven = [rule.qualified for rule in rules() if rule.id not in proven]
    assert not unproven, f'rules no mutant makes fail (checks that cannot fail): {unproven}'


def test_every_mutant_names_real_rules_and_a_bug() -> None:
    known = {rule.id for rule in rules()}
    for mutant in MUTANTS:
        assert mutant.kills and set(mutant.kills) <= known, (mutant.name, set(mutant.kills) - known)
        assert mutant.bug.endswith('.'), mutant.name


@pytest.mark.skipif(not BYPASS, reason='this run cannot bypass permissions: the unprivileged mutants ran in-process')
@pytest.mark.skipif(shutil.which('setpriv') is None, reason='no setpriv (util-linux) to drop capabilities')
def test_unprivileged_mutants_are_killed_without_the_bypass_capabilities() -> None:
    names = [mutant.name for mutant in MUTANTS if mutant.unprivileged]
    assert names
    selection = ' or '.join(f'TestMutant_{name}' for name in names)
    result = subprocess.run(
        [
            'setpriv',
            '--bounding-set',
            DROP,
            '--inh-caps',
            DROP,
            sys.executable,
            '-m',
            'pytest',
            '-p',
            'no:cacheprovider',
            '-q',
            '-k',
            selection,
            str(Path(__file__)),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:]
    assert 'xfailed' in result.stdout and 'xpassed' not in result.stdout, result.stdout[-2000:]

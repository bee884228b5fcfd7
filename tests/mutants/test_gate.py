"""The sensitivity gate: every rule has a mutant that makes it fail, and every mutant is killed.

Each mutant becomes a suite class running only the rules it declares, as strict expected failures: a rule that
passes against its mutant is an XPASS and fails this test run; a rule that skips there fails it too (conftest).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import pytest

from workspace_conformance import Rule, WorkspaceBackendSuite, rules
from workspace_conformance.capability import WorkspaceCapabilitySuite, capability_rules
from workspace_conformance.isolation import WorkspaceIsolationSuite, isolation_rules
from workspace_conformance.targets import Target, suite_for
from workspace_conformance.targets.capability import CapabilityTarget, capability_suite_for
from workspace_conformance.targets.isolation import isolation_suite_for
from workspace_conformance.targets.tools import ToolTarget, tool_suite_for
from workspace_conformance.tools import WorkspaceToolSuite, tool_rules
from workspace_conformance.vocabulary import BYPASS_CAPABILITIES

from ..runner import bypasses_permissions
from .gallery import load_all, load_capability_mutants, load_isolation_mutants, load_tool_mutants
from .registry import CapabilityMutant, IsolationMutant, Mutant, ToolMutant

ROOT = Path(__file__).resolve().parents[2]
TIME_SCALE = 0.25
DROP = BYPASS_CAPABILITIES
SuiteClass = TypeVar('SuiteClass', bound=type)
MUTANTS = load_all()
CAPABILITY_MUTANTS = load_capability_mutants()
TOOL_MUTANTS = load_tool_mutants()
ISOLATION_MUTANTS = load_isolation_mutants()


def _narrowed(
    suite_of: Callable[..., SuiteClass],
    target: Target | CapabilityTarget | ToolTarget,
    mutant: Mutant | CapabilityMutant | ToolMutant | IsolationMutant,
    name: str,
    **options: object,
) -> SuiteClass:
    """`suite_of(target)` narrowed to the rules the mutant must fail, each a strict xfail naming its bug."""
    suite = suite_of(
        target,
        only=mutant.kills,
        expected_failures=dict.fromkeys(mutant.kills, f'mutant {mutant.name}: {mutant.bug}'),
        time_scale=TIME_SCALE,
        name=name,
        summary=False,  # 137 verdicts of broken backends would bury the real summaries
        **options,
    )
    suite.mutant_name = mutant.name  # type: ignore[attr-defined]  # read by conftest: a skip there proves nothing
    return suite


def mutant_suite(mutant: Mutant) -> type[WorkspaceBackendSuite]:
    """The certification suite of the mutant as a target, narrowed to the rules it must fail, as strict xfails."""
    target = Target(
        name=mutant.name,
        description=mutant.bug,
        backend=mutant.backend,
        fresh_backend=mutant.fresh_backend,
        destructive_backend=mutant.destructive_backend,
        attach_backend=mutant.attach_backend,
        destroy_environment=mutant.destroy_environment,
        stop_environment=mutant.stop_environment,
        start_environment=mutant.start_environment,
        make_symlink=mutant.make_symlink,
        inject_fault=mutant.inject_fault,
        event_loops=('asyncio',),
    )
    return _narrowed(suite_for, target, mutant, f'TestMutant_{mutant.name}', rebuild_per_call=mutant.rebuild_per_call)


def capability_mutant_suite(mutant: CapabilityMutant) -> type[WorkspaceCapabilitySuite]:
    """The capability suite of the mutant as a target, narrowed to the rules it must fail, as strict xfails."""
    target = CapabilityTarget(name=mutant.name, description=mutant.bug, build=mutant.build)
    return _narrowed(capability_suite_for, target, mutant, f'TestCapabilityMutant_{mutant.name}')


def tool_mutant_suite(mutant: ToolMutant) -> type[WorkspaceToolSuite]:
    """The tool suite of the mutant as a target, in its own workspaces only, narrowed to the rules it must fail."""
    target = ToolTarget(
        name=mutant.name,
        description=mutant.bug,
        build=mutant.build,
        workspaces=mutant.workspaces,
        claims=mutant.claims,
    )
    return _narrowed(tool_suite_for, target, mutant, f'TestToolMutant_{mutant.name}')


def isolation_mutant_suite(mutant: IsolationMutant) -> type[WorkspaceIsolationSuite]:
    """The isolation suite of the pretending sandbox with the claims it makes, narrowed to the rules it must fail."""
    target = Target(name=mutant.name, description=mutant.bug, backend=mutant.backend, isolation_claims=mutant.claims)
    return _narrowed(isolation_suite_for, target, mutant, f'TestIsolationMutant_{mutant.name}')


for _isolation_mutant in ISOLATION_MUTANTS:
    globals()[f'TestIsolationMutant_{_isolation_mutant.name}'] = isolation_mutant_suite(_isolation_mutant)

for _tool_mutant in TOOL_MUTANTS:
    globals()[f'TestToolMutant_{_tool_mutant.name}'] = tool_mutant_suite(_tool_mutant)

for _capability_mutant in CAPABILITY_MUTANTS:
    globals()[f'TestCapabilityMutant_{_capability_mutant.name}'] = capability_mutant_suite(_capability_mutant)

BYPASS = bypasses_permissions()
for _mutant in MUTANTS:
    if not (_mutant.unprivileged and BYPASS):
        globals()[f'TestMutant_{_mutant.name}'] = mutant_suite(_mutant)


GALLERIES: dict[
    str, tuple[Sequence[Mutant | CapabilityMutant | ToolMutant | IsolationMutant], Callable[[], Sequence[Rule]]]
] = {
    'backend': (MUTANTS, rules),
    'capability': (CAPABILITY_MUTANTS, capability_rules),
    'tools': (TOOL_MUTANTS, tool_rules),
    'isolation': (ISOLATION_MUTANTS, isolation_rules),
}


@pytest.mark.parametrize('gallery', GALLERIES)
def test_every_rule_has_a_killing_mutant(gallery: str) -> None:
    mutants, rules_of = GALLERIES[gallery]
    proven = {rule_id for mutant in mutants for rule_id in mutant.kills}
    unproven = [rule.qualified for rule in rules_of() if rule.id not in proven]
    assert not unproven, f'{gallery} rules no mutant makes fail (checks that cannot fail): {unproven}'


@pytest.mark.parametrize('gallery', GALLERIES)
def test_every_mutant_names_real_rules_and_a_bug(gallery: str) -> None:
    mutants, rules_of = GALLERIES[gallery]
    known = {rule.id for rule in rules_of()}
    for mutant in mutants:
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

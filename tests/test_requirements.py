"""The catalog's `requires` is the single truth: a rule on a backend lacking one thing skips with the kind it implies.

The expected kind comes from an oracle written here from the catalog and the documented order (contract, protocol,
optional fixture, switch or declared limit, the subject's shape, environment tool); the observed one comes from a
real run's report. The capability suite's shape requirements are checked here on `resolve` itself.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.workspaces import LocalWorkspaceBackend, WrapperWorkspace

from workspace_conformance import authoring, rules
from workspace_conformance.capability import capability_rules
from workspace_conformance.doubles import InMemoryProvider, ScriptedCommands, memory_backend
from workspace_conformance.engine._requires import RuleSkipped, resolve, skip_reason
from workspace_conformance.engine._versions import pydantic_ai_at_least
from workspace_conformance.reports.model import Report
from workspace_conformance.suite import Rule

SWITCHES = {
    'posix_shell': 'has_real_posix_shell',
    'inherited_pipes': 'can_detect_exit_with_inherited_output_pipes',
    'shell_permissions': 'filesystem_honors_shell_permissions',
    'parent_file_errors': 'enforces_parent_file_errors',
}
EVERY_SWITCH_OFF = ''.join(
    f"""
    @pytest.fixture
    def {switch}(self):
        return False
"""
    for switch in SWITCHES.values()
)
"""Fixtures that turn every switch off, for a test module body."""
STATIC_KINDS = {'not-applicable', 'fixture-missing', 'declared-limit'}


@dataclass(frozen=True)
class Lacking:
    """A backend and its fixtures, as a test module body, and what it has."""

    name: str
    body: str
    commands: bool
    filesystem: bool
    realpath: bool
    symlinks: bool = False
    """Whether `make_symlink` is supplied."""
    holds_symlinks: bool | None = None
    fixtures: frozenset[str] = frozenset()
    switches_off: frozenset[str] = frozenset()
    limits_all: bool = False
    missing_tools: frozenset[str] = field(default_factory=frozenset)
    local: bool = False
    """Whether the backend is a `LocalWorkspaceBackend`."""


def expected_kind(rule: Rule, backend: Lacking) -> str | None:
    """The skip kind the catalog implies for `rule` on `backend`, in the documented order; None when all hold."""
    needs = set(rule.requires)
    if rule.contract is not None and not pydantic_ai_at_least(tuple(map(int, rule.contract.split('.')))):  # type: ignore[arg-type]
        return 'not-applicable'
    has = {
        'commands': backend.commands,
        'filesystem': backend.filesystem or backend.commands,
        'realpath': backend.realpath,
        'shell_files': backend.commands and not (backend.filesystem and backend.realpath),
        'native_files': backend.filesystem,
        'run_in_directory': False,  # no backend here implements pydantic-ai 2.78's SupportsRunInDirectory
    }
    if any(not has[need] for need in needs & set(has)):
        return 'not-applicable'
    holds = backend.holds_symlinks
    if holds is None:
        holds = backend.commands or backend.realpath or backend.symlinks
    if needs & {'ln', 'holds_symlinks'} and not holds:
        return 'not-applicable'
    if 'faults' in needs and 'inject_fault' not in backend.fixtures and backend.local:
        return 'not-applicable'  # a LocalWorkspaceBackend calls no provider SDK
    if needs & {'stop', 'restart'} and 'stop' not in backend.fixtures and backend.local:
        return 'not-applicable'  # a LocalWorkspaceBackend is a directory, with no init to stop
    if 'posix' not in rule.platforms:  # every backend here is 'posix'; the platform comes after the protocols
        return 'platform'
    lifecycle = {
        'fresh': {'fresh'},
        'attach': {'attach'},
        'destroy': {'destructive', 'destroy'},
        'sacrificial': {'destructive'},
        'stop': {'destructive', 'stop'},
        'restart': {'destructive', 'attach', 'stop', 'start'},
    }
    if any(not lifecycle[need] <= backend.fixtures for need in needs & set(lifecycle)):
        return 'fixture-missing'
    if 'faults' in needs and 'inject_fault' not in backend.fixtures:
        return 'fixture-missing'
    if 'ln' in needs and not backend.commands and not backend.symlinks:
        return 'fixture-missing'
    if any(SWITCHES[need] in backend.switches_off for need in needs & set(SWITCHES)) or backend.limits_all:
        return 'declared-limit'
    if 'local_backend' in needs and not backend.local:
        return 'not-applicable'
    if 'files_only' in needs and backend.commands:
        return 'not-applicable'
    tools = needs & {'mkfifo', 'setsid'} | ({'ln'} if 'ln' in needs and not backend.symlinks else set())
    if backend.commands and tools & backend.missing_tools:
        return 'environment'
    return None


MEMORY_FIXTURES = """
    @pytest.fixture
    def fresh_backend(self):
        return lambda: memory_backend(commands=COMMANDS, lazy=True)

    @pytest.fixture
    def attach_backend(self):
        return lambda ref: memory_backend(commands=COMMANDS)

    @pytest.fixture
    def destroy_environment(self):
        async def destroy(backend):
            return None
        return destroy
"""
FILES_ONLY = """
    @pytest.fixture
    def backend(self):
        return memory_backend(realpath=False, symlinks=False)
"""
"""A files-only backend without realpath or symlinks, for a test module body."""
WHOLE_MEMORY_BACKEND = """
    @pytest.fixture
    def backend(self):
        return memory_backend(commands=COMMANDS)

    @pytest.fixture
    def make_symlink(self):
        return memory_symlink
"""
"""The in-memory backend with commands, and its symlinks made in memory, for a test module body."""
EVERY_RULE_A_LIMIT = """
    @pytest.fixture
    def declared_limits(self):
        return {rule.id: 'declared by the test' for rule in rules()}
"""
"""A fixture that declares every rule a limit, for a test module body."""
ALL_FIXTURES = frozenset({'fresh', 'attach', 'destructive', 'destroy'})


WHOLE_MEMORY = Lacking(
    'whole_memory',
    WHOLE_MEMORY_BACKEND + MEMORY_FIXTURES,
    commands=True,
    filesystem=True,
    realpath=True,
    symlinks=True,
    fixtures=ALL_FIXTURES,
)
"""The in-memory backend with commands, symlinks and every optional fixture."""


def whole_memory(
    name: str, extra: str, *, switches_off: frozenset[str] = frozenset(), limits_all: bool = False
) -> Lacking:
    """`WHOLE_MEMORY` named `name`, with the fixtures in `extra` added to its module body."""
    return dataclasses.replace(
        WHOLE_MEMORY, name=name, body=WHOLE_MEMORY.body + extra, switches_off=switches_off, limits_all=limits_all
    )


BACKENDS = [
    Lacking(
        'files_only',
        FILES_ONLY,
        commands=False,
        filesystem=True,
        realpath=False,
    ),
    Lacking(
        'files_only_whose_storage_holds_symlinks',
        FILES_ONLY
        + """
    @pytest.fixture
    def storage_holds_symlinks(self):
        return True
""",
        commands=False,
        filesystem=True,
        realpath=False,
        holds_symlinks=True,
    ),
    Lacking(
        # The measured bug: a files-only backend that also says `has_real_posix_shell=False` got its command rules
        # as declared limits, because the switch was checked before the protocol.
        'files_only_with_every_switch_off_and_every_rule_a_limit',
        FILES_ONLY + EVERY_RULE_A_LIMIT + EVERY_SWITCH_OFF,
        commands=False,
        filesystem=True,
        realpath=False,
        switches_off=frozenset(SWITCHES.values()),
        limits_all=True,
    ),
    Lacking(
        'neither_files_nor_commands',
        """
    @pytest.fixture
    def backend(self, tmp_path):
        class Bare:
            ref = None

            async def working_dir(self):
                return str(tmp_path)

        return Bare()
""",
        commands=False,
        filesystem=False,
        realpath=False,
    ),
    whole_memory('every_switch_off', EVERY_SWITCH_OFF, switches_off=frozenset(SWITCHES.values())),
    whole_memory('every_rule_a_declared_limit', EVERY_RULE_A_LIMIT, limits_all=True),
]

MODULE = """
import pytest
from workspace_conformance import WorkspaceBackendSuite, rules
from workspace_conformance.doubles import ScriptedCommands, memory_backend, memory_symlink

COMMANDS = ScriptedCommands()


@pytest.fixture(scope='module')
def anyio_backend():
    return 'asyncio'


class TestLacking(WorkspaceBackendSuite):
    @pytest.fixture
    def conformance_time_scale(self):
        return 0.05
{body}
"""


def _run(pytester: pytest.Pytester, body: str, *args: str) -> Report:
    pytester.makepyfile(test_lacking=MODULE.format(body=body))
    out = pytester.path / 'report'
    pytester.runpytest_subprocess(
        '-p', 'no:cacheprovider', '-p', 'no:randomly', '--conformance-report', str(out), *args
    )
    return Report.model_validate_json((out / 'report.json').read_text())


def _compare(report: Report, backend: Lacking, only: set[str] | None = None) -> list[str]:
    seen = {summary.rule_id: summary for suite in report.suites for summary in suite.rules}
    wrong = []
    for rule in rules():
        if only is not None and rule.id not in only:
            continue
        expected = expected_kind(rule, backend)
        summary = seen[rule.id]
        observed = summary.skip_kind if summary.status in ('gap', 'not-applicable') else None
        if expected is not None and observed != expected:
            wrong.append(
                f'{rule.id} (requires {list(rule.requires)}): expected {expected}, got {summary.status}/{observed}'
            )
        if expected is None and observed in STATIC_KINDS:
            wrong.append(f'{rule.id} (requires {list(rule.requires)}): all its requirements hold, yet {observed}')
    return wrong


@pytest.mark.slow  # a whole-suite run
@pytest.mark.parametrize('backend', BACKENDS, ids=lambda backend: backend.name)
def test_each_rule_skips_with_the_kind_its_requirements_imply(pytester: pytest.Pytester, backend: Lacking) -> None:
    report = _run(pytester, backend.body)
    wrong = _compare(report, backend)
    assert not wrong, '\n'.join(wrong)


WITHOUT_TOOLS = """
    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, tmp_path_factory):
        return NoTools(tmp_path_factory.mktemp('ws'))

    @pytest.fixture
    def attach_backend(self):
        return lambda ref: NoTools(ref.id)
"""


@pytest.mark.skipif(shutil.which('sh') is None, reason='needs a POSIX shell')
def test_a_missing_environment_tool_is_an_environment_skip(pytester: pytest.Pytester, tmp_path: Path) -> None:
    # A real local backend whose PATH holds only `sh` and `cat`: `ln`, `mkfifo` and `setsid` are missing.
    tools = tmp_path / 'bin'
    tools.mkdir()
    for tool in ('sh', 'cat', 'printf'):
        found = shutil.which(tool)
        if found:
            os.symlink(found, tools / tool)
    pytester.makeconftest(
        f"""
from pydantic_ai.workspaces import LocalWorkspaceBackend

class NoTools(LocalWorkspaceBackend):
    async def run(self, command, *, shell=False, env=None, timeout=None):
        return await super().run(command, shell=shell, env={{**(env or {{}}), 'PATH': {str(tools)!r}}}, timeout=timeout)
"""
    )
    needing = {rule.id for rule in rules() if {'ln', 'mkfifo', 'setsid'} & set(rule.requires)}
    body = 'from conftest import NoTools\n' + MODULE.format(body=WITHOUT_TOOLS).split('\n', 1)[1]
    pytester.makepyfile(test_lacking=body)
    out = pytester.path / 'report'
    selection = ' or '.join(f'test_{rule_id}' for rule_id in sorted(needing))
    pytester.runpytest_subprocess('-p', 'no:cacheprovider', '--conformance-report', str(out), '-k', selection)
    report = Report.model_validate_json((out / 'report.json').read_text())
    backend = Lacking(
        'no_tools',
        '',
        commands=True,
        filesystem=True,
        realpath=True,
        fixtures=frozenset({'attach'}),
        missing_tools=frozenset({'ln', 'mkfifo', 'setsid'}),
        local=True,
    )
    wrong = _compare(report, backend, only=needing)
    assert not wrong, '\n'.join(wrong)
    reasons = [s.detail or '' for suite in report.suites for s in suite.rules if s.skip_kind == 'environment']
    assert any('no `ln` in the environment' in reason for reason in reasons), reasons


def test_the_order_is_protocol_then_fixture_then_limit() -> None:
    # One rule lacking everything at once gives the first kind of the documented order, and names it.
    rule = next(r for r in rules() if r.id == 'destroying_environment_during_command_raises_unavailable')
    assert {'commands', 'posix_shell', 'destroy'} <= set(rule.requires)
    lacking_all = {'declared_limits': {rule.id: 'limit'}, 'has_real_posix_shell': False}
    unmet = resolve(rule, object(), lacking_all)
    assert unmet is not None and unmet.kind == 'not-applicable' and 'SupportsCommands' in unmet.why

    class Commands:
        async def run(self, *args: object, **kwargs: object) -> None: ...

    unmet = resolve(rule, Commands(), lacking_all)
    assert unmet is not None and unmet.kind == 'fixture-missing'
    unmet = resolve(rule, Commands(), {**lacking_all, 'destructive_backend': object, 'destroy_environment': object})
    assert unmet is not None and unmet.kind == 'declared-limit' and 'has_real_posix_shell' in unmet.why
    skipped = RuleSkipped(rule, unmet.kind, unmet.why)
    assert (skipped.kind, skipped.why, skipped.msg) == (unmet.kind, unmet.why, skip_reason(rule, unmet.kind, unmet.why))


def _capability_rule(rule_id: str) -> Rule:
    return next(rule for rule in capability_rules() if rule.id == rule_id)


def test_a_capability_rule_reads_the_shape_of_the_workspace_supplied(tmp_path: Path) -> None:
    # The shape requirements read `get_workspace(ref=None)`'s workspace, each one a not-applicable naming what lacks.
    local = _capability_rule('local_commands_inherit_only_the_documented_variables')
    assert local.requires == ('local_workspace', 'workspace_commands', 'local_backend')
    cases: list[tuple[object, str | None]] = [
        (InMemoryProvider().capability(), 'the capability is not a LocalWorkspace'),
        (LocalWorkspace(tmp_path, read_only=True), "the capability's workspace runs no commands"),
        (LocalWorkspace(tmp_path), None),
    ]
    for capability, why in cases:
        unmet = resolve(local, capability, {'deps': None})
        seen = None if unmet is None else (unmet.kind, unmet.why)
        assert seen == (None if why is None else ('not-applicable', why)), (capability, unmet)
    files_only = _capability_rule('a_files_only_workspace_refuses_run_with_user_error')
    assert resolve(files_only, InMemoryProvider().capability(), {'deps': None}) is None
    unmet = resolve(files_only, InMemoryProvider().capability(read_only=True), {'deps': None})
    assert unmet is not None and 'read-only' in unmet.why
    unmet = resolve(files_only, LocalWorkspace(tmp_path), {'deps': None})
    assert unmet is not None and unmet.why == "the capability's workspace runs commands"
    wrapper = _capability_rule('wrapper_layers_delegate_what_they_do_not_override')
    unmet = resolve(wrapper, LocalWorkspace(tmp_path), {'deps': None, 'policy': None})
    assert unmet is not None and 'has no WrapperWorkspace layer' in unmet.why
    assert resolve(wrapper, LocalWorkspace(tmp_path), {'deps': None, 'policy': WrapperWorkspace}) is None
    assert resolve(wrapper, LocalWorkspace(tmp_path, read_only=True), {'deps': None, 'policy': None}) is None


def test_the_shape_is_resolved_after_fixtures_switches_and_limits(tmp_path: Path) -> None:
    # Where rule bodies used to check the shape: a gap found before it stays that gap.
    policy_rule = _capability_rule('a_policy_wrapper_keeps_its_policy_when_commands_exist')
    read_only = LocalWorkspace(tmp_path, read_only=True)
    unmet = resolve(policy_rule, read_only, {'deps': None, 'policy': None})
    assert unmet is not None and unmet.kind == 'fixture-missing'
    unmet = resolve(policy_rule, read_only, {'deps': None, 'policy': WrapperWorkspace})
    assert unmet is not None and (unmet.kind, unmet.why) == (
        'not-applicable',
        "the capability's workspace runs no commands",
    )
    local_output = next(r for r in rules() if r.id == 'local_output_past_10_mib_raises_with_64_kib_previews')
    scripted = memory_backend(commands=ScriptedCommands())
    unmet = resolve(local_output, scripted, {'has_real_posix_shell': False})
    assert unmet is not None and unmet.kind == 'declared-limit'
    unmet = resolve(local_output, scripted, {})
    assert unmet is not None and unmet.kind == 'not-applicable' and 'not a LocalWorkspaceBackend' in unmet.why
    assert resolve(local_output, LocalWorkspaceBackend(tmp_path), {}) is None


def test_a_capability_that_supplies_nothing_meets_its_shape_and_fails_in_the_body() -> None:
    class Broken(AbstractCapability[None]):
        def get_workspace(self, ctx: object, *, ref: object) -> None:
            raise RuntimeError('no workspace today')

    for rule_id in ('write_text_encodes_through_write_bytes', 'commands_do_not_see_the_runners_secrets'):
        assert resolve(_capability_rule(rule_id), Broken(), {'deps': None}) is None


def test_a_backend_rule_cannot_require_what_only_a_capability_has() -> None:
    with pytest.raises(ValueError, match=r"\['writable'\] read a capability"):
        authoring.rule(area='files', requires=['writable'])

"""The doubles certified by the suite: the in-memory reference model, the scripted double, the provider model."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

import anyio
import pytest
from pydantic_ai.workspaces import CommandResult, WorkspaceBackend, WorkspaceRef

from workspace_conformance import WorkspaceBackendSuite, rules
from workspace_conformance.doubles import (
    CommandCall,
    InMemoryBackend,
    InMemoryProvider,
    ScriptedCommands,
    ScriptedMemoryBackend,
    memory_symlink,
    result,
)
from workspace_conformance.suite import narrow


class TestInMemoryBackend(WorkspaceBackendSuite):
    """Filesystem-only: every file, symlink and realpath rule it can run passes; command rules are not-applicable."""

    @pytest.fixture
    def backend(self) -> InMemoryBackend:
        return InMemoryBackend()

    @pytest.fixture
    def make_symlink(self) -> Callable[[WorkspaceBackend, str, str], Awaitable[None]]:
        return memory_symlink

    @pytest.fixture
    def fresh_backend(self) -> Callable[[], WorkspaceBackend]:
        return InMemoryBackend


class TestInMemoryProviderWithLocalDirectories(WorkspaceBackendSuite):
    """Certified with every optional fixture and no declared limit, on trio (the `provider` target, this provider
    on local directories, gets its `certified` verdict on asyncio in test_concurrency's serial run)."""

    @pytest.fixture(scope='class')
    def anyio_backend(self) -> str:
        return 'trio'

    @pytest.fixture(scope='class')
    @classmethod
    def provider(cls, tmp_path_factory: pytest.TempPathFactory, anyio_backend: str) -> InMemoryProvider:
        return InMemoryProvider(local_root=tmp_path_factory.mktemp(f'provider-{anyio_backend}'), create_latency=0.02)

    @pytest.fixture(scope='class')
    @classmethod
    def backend(cls, provider: InMemoryProvider) -> WorkspaceBackend:
        return provider.backend()

    @pytest.fixture
    def fresh_backend(self, provider: InMemoryProvider) -> Callable[[], WorkspaceBackend]:
        return provider.backend

    @pytest.fixture
    def attach_backend(self, provider: InMemoryProvider) -> Callable[[WorkspaceRef], WorkspaceBackend]:
        return provider.attach

    @pytest.fixture
    def destroy_environment(self, provider: InMemoryProvider) -> Callable[[WorkspaceBackend], Awaitable[None]]:
        return provider.destroy


def _pwd(call: CommandCall) -> CommandResult:
    return CommandResult(exit_code=0, stdout='/workspace\n', stderr='')


async def _sleep_forever(call: CommandCall) -> CommandResult:
    await anyio.sleep_forever()
    raise AssertionError('unreachable')


def _print_probe(call: CommandCall) -> CommandResult:
    return CommandResult(exit_code=0, stdout=call.env.get('WORKSPACE_CONFORMANCE_PROBE', ''), stderr='')


def scripted_table() -> ScriptedCommands:
    """Answers for the commands the suite's portable rules send; everything else exits 127."""
    return (
        ScriptedCommands()
        .on_argv(['sh', '-c', 'pwd -P'], _pwd)
        .on_argv(['sh', '-c', 'sleep 3600'], _sleep_forever)
        .on_argv(['sh', '-c', 'printf "%s" "$WORKSPACE_CONFORMANCE_PROBE"'], _print_probe)
        .on_shell(r'^printf to-out; printf to-err >&2; exit 42$', result('to-out', 'to-err', 42))
    )


SCRIPTED_LIMITS = {
    'stdin_is_at_eof': 'scripted commands have no stdin: the double answers, no process reads',
    'command_output_is_complete': 'scripted commands do not run the shell loop that writes the output',
    'argv_items_are_literal': 'scripted commands do not run `sh` to echo the arguments back',
    'run_starts_in_cwd': 'scripted commands do not interpret `cd` in the wrapper Workspace.run sends',
    'commands_and_files_share_one_environment': 'scripted commands do not run `read`/`printf` against the files',
}
"""The scripted double's declared limits; `test_scripted_limits_are_honest` proves each one fails without it."""


class ScriptedFixtures:
    @pytest.fixture(scope='class')
    def anyio_backend(self) -> str:
        """On asyncio: the scripted table answers the same on both loops, and TestInMemoryBackend runs its tree on
        trio."""
        return 'asyncio'

    @pytest.fixture
    def backend(self) -> ScriptedMemoryBackend:
        return ScriptedMemoryBackend(scripted_table())

    @pytest.fixture
    def has_real_posix_shell(self) -> bool:
        return False

    @pytest.fixture
    def make_symlink(self) -> Callable[[WorkspaceBackend, str, str], Awaitable[None]]:
        return memory_symlink

    @pytest.fixture
    def fresh_backend(self) -> Callable[[], WorkspaceBackend]:
        return lambda: ScriptedMemoryBackend(scripted_table())


class TestScriptedMemoryBackend(ScriptedFixtures, WorkspaceBackendSuite):
    @pytest.fixture
    def declared_limits(self) -> Mapping[str, str]:
        return SCRIPTED_LIMITS


class TestScriptedLimitsAreHonest(ScriptedFixtures, WorkspaceBackendSuite):
    """The same limits as strict expected failures: a limit that does not really fail is an XPASS here."""

    conformance_summary = False

    @pytest.fixture
    def expected_failures(self) -> Mapping[str, str]:
        return SCRIPTED_LIMITS


narrow(TestScriptedLimitsAreHonest, SCRIPTED_LIMITS)


def test_in_memory_backend_passes_every_file_symlink_and_realpath_rule(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_memory="""
import pytest
from workspace_conformance import WorkspaceBackendSuite
from workspace_conformance.doubles import InMemoryBackend, memory_symlink

class TestMemory(WorkspaceBackendSuite):
    @pytest.fixture
    def backend(self):
        return InMemoryBackend()

    @pytest.fixture
    def make_symlink(self):
        return memory_symlink

    @pytest.fixture
    def fresh_backend(self):
        return InMemoryBackend
"""
    )
    without_commands = [r for r in rules() if r.area in ('files', 'symlinks') and 'commands' not in r.requires]
    assert len(without_commands) >= 17
    # Those rules alone, on asyncio: TestInMemoryBackend runs every rule on both loops (a failure fails it there),
    # and what this adds is that each of these passes rather than skips.
    selected = ' or '.join(f'test_{rule.id}' for rule in without_commands)
    result = pytester.runpytest_inprocess('-p', 'no:cacheprovider', '-v', '-k', f'asyncio and ({selected})')
    for rule in without_commands:
        result.stdout.fnmatch_lines([f'*::test_{rule.id}?asyncio? PASSED*'])

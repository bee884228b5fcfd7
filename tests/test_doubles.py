"""The doubles' own behaviour: scripted commands, the provider lifecycle, fault injection, capability switches."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import anyio
import pytest
from pydantic_ai.workspaces import (
    FileEntry,
    SupportsCommands,
    SupportsFilesystem,
    SupportsRealpath,
    Workspace,
    WorkspaceOutputLimitError,
    WorkspaceTimeoutError,
    WorkspaceUnavailableError,
)

from workspace_conformance.doubles import (
    CommandCall,
    FaultyBackend,
    InMemoryBackend,
    InMemoryProvider,
    ProviderCommandsBackend,
    ScriptedCommands,
    ScriptedMemoryBackend,
    result,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(params=['asyncio', 'trio'])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# Scripted commands


async def test_scripted_handlers_match_in_order_and_unmatched_exits_127() -> None:
    table = (
        ScriptedCommands()
        .on_argv(['git', 'status'], result('clean\n'))
        .on_prefix(['git'], result('', 'unknown git command\n', 1))
        .on_shell(r'^ls\b', result('a\nb\n'))
    )
    backend = ScriptedMemoryBackend(table)
    assert (await backend.run(['git', 'status'])).stdout == 'clean\n'
    assert (await backend.run(['git', 'push'])).exit_code == 1
    assert (await backend.run('ls -la', shell=True)).stdout == 'a\nb\n'
    missing = await backend.run(['make'])
    assert (missing.exit_code, missing.stderr) == (127, 'make: command not found\n')
    assert [call.argv[0] for call in table.calls] == ['git', 'git', 'sh', 'make']


async def test_scripted_handlers_see_layered_env_and_the_files() -> None:
    def build(call: CommandCall) -> object:
        call.backend.write_file('/workspace/out.txt', f'{call.env["TARGET"]} {call.env["HOME"]}'.encode())
        return result()(call)

    backend = ScriptedMemoryBackend(ScriptedCommands().on_program('make', build))  # type: ignore[arg-type]
    await backend.run(['make'], env={'TARGET': 'all'})
    assert await backend.read_bytes('/workspace/out.txt') == b'all /workspace'


async def test_scripted_timeout_and_invalid_arguments() -> None:
    async def slow(call: CommandCall) -> object:
        await anyio.sleep(10)
        return result()(call)

    backend = ScriptedMemoryBackend(ScriptedCommands().on_program('slow', slow))  # type: ignore[arg-type]
    with pytest.raises(WorkspaceTimeoutError):
        await backend.run(['slow'], timeout=0.05)
    for bad in (0, -1, float('nan'), float('inf')):
        with pytest.raises(ValueError, match='timeout'):
            await backend.run(['slow'], timeout=bad)
    with pytest.raises(TypeError):
        await backend.run('slow')


# The in-memory reference model


async def test_memory_semantics_follow_posix() -> None:
    backend = InMemoryBackend(files={'docs/readme.md': b'hello'})
    assert backend.ref is None
    workspace = Workspace(backend)
    assert await workspace.read_text('docs/readme.md') == 'hello'
    assert backend.ref is not None
    await workspace.make_dir('docs/deep')
    backend.symlink('docs/deep', '/workspace/link')
    backend.symlink('/workspace/nowhere', '/workspace/dangling')
    # `..` after a link climbs from its target, not from where the link stands.
    assert await workspace.realpath('link/../readme.md') == '/workspace/docs/readme.md'
    assert await workspace.realpath('dangling/x') == '/workspace/nowhere/x'
    await workspace.write_bytes('link/inner', b'through')
    assert await workspace.read_bytes('docs/deep/inner') == b'through'
    await workspace.remove('link')
    assert await workspace.exists('docs/readme.md')
    with pytest.raises(ValueError, match='working directory'):
        await workspace.remove('/')
    backend.chmod('/workspace/docs/readme.md', 0o000)
    with pytest.raises(PermissionError):
        await workspace.read_bytes('docs/readme.md')
    assert 'f /workspace/docs/readme.md (5 bytes, 0)' in backend.dump()


async def test_root_bypasses_modes() -> None:
    backend = InMemoryBackend(uid=0, files={'secret': b'x'})
    backend.chmod('/workspace/secret', 0)
    backend_lazy_created = await backend.read_bytes('/workspace/secret')
    assert backend_lazy_created == b'x'


async def test_a_listing_shows_each_entry_as_it_is_now_under_the_path_asked() -> None:
    backend = InMemoryBackend(files={'d/a': b'1', 'd/b': b''})
    backend.symlink('/workspace/d/a', '/workspace/d/link')
    backend.symlink('d', '/workspace/alias')

    def entry(path: str, is_dir: bool, size: int | None) -> FileEntry:
        return FileEntry(name=path.rsplit('/', 1)[-1], path=path, is_dir=is_dir, size=size)

    assert await backend.list_dir('/workspace/d') == (
        entry('/workspace/d/a', False, 1),
        entry('/workspace/d/b', False, 0),
        entry('/workspace/d/link', False, 1),
    )
    await backend.write_bytes('/workspace/d/a', b'123')
    await backend.remove('/workspace/d/b')
    await backend.make_dir('/workspace/d/b')
    listed = (
        entry('/workspace/d/a', False, 3),
        entry('/workspace/d/b', True, None),
        entry('/workspace/d/link', False, 3),
    )
    assert await backend.list_dir('/workspace/d/') == listed
    assert await backend.list_dir('/workspace/alias') == tuple(
        entry(e.path.replace('/d/', '/alias/'), e.is_dir, e.size) for e in listed
    )


async def test_eager_ref_exists_from_construction() -> None:
    assert InMemoryBackend(lazy=False).ref is not None


# The provider model


async def test_concurrent_first_use_creates_exactly_one_environment() -> None:
    provider = InMemoryProvider(create_latency=0.05)
    backend = provider.backend()
    async with anyio.create_task_group() as group:
        for index in range(8):
            group.start_soon(backend.write_bytes, f'/workspace/f{index}', b'x')
    assert provider.creations == 1
    assert len(await backend.list_dir('/workspace')) == 8


async def test_a_caller_cancelled_mid_create_still_leaves_the_ref() -> None:
    provider = InMemoryProvider(create_latency=0.2)
    backend = provider.backend()
    with anyio.move_on_after(0.05):
        await backend.working_dir()
    assert backend.ref is not None and provider.creations == 1


async def test_attach_never_creates_and_a_destroyed_environment_is_unavailable(tmp_path: Path) -> None:
    provider = InMemoryProvider(local_root=tmp_path)
    backend = provider.backend()
    await backend.write_bytes(f'{await backend.working_dir()}/kept', b'kept')
    assert backend.ref is not None
    attached = provider.attach(backend.ref)
    assert await attached.read_bytes(f'{await attached.working_dir()}/kept') == b'kept'
    assert (provider.creations, provider.attaches) == (1, 1)
    await provider.destroy(backend.ref)
    for survivor in (backend, attached, provider.attach(backend.ref)):
        with pytest.raises(WorkspaceUnavailableError):
            await survivor.working_dir()
    assert provider.creations == 1


async def test_destroying_during_a_command_raises_unavailable(tmp_path: Path) -> None:
    provider = InMemoryProvider(local_root=tmp_path)
    backend = provider.backend()
    assert isinstance(backend, ProviderCommandsBackend), 'a provider with local_root runs commands for real'
    root = await backend.working_dir()
    errors: list[BaseException] = []

    async def run() -> None:
        try:
            await backend.run(['sh', '-c', 'while [ -d "$1" ]; do sleep 0.05; done', 'sh', root], timeout=10)
        except WorkspaceUnavailableError as error:
            errors.append(error)

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await anyio.sleep(0.2)
        await provider.destroy(backend)
    assert errors


# Fault injection


async def test_faulty_backend_mirrors_the_protocols_it_wraps() -> None:
    filesystem_only = FaultyBackend(InMemoryBackend())
    assert isinstance(filesystem_only, SupportsFilesystem) and isinstance(filesystem_only, SupportsRealpath)
    assert not isinstance(filesystem_only, SupportsCommands)
    assert isinstance(FaultyBackend(ScriptedMemoryBackend()), SupportsCommands)


async def test_transient_errors_follow_the_schedule_and_the_seed() -> None:
    scheduled = FaultyBackend(InMemoryBackend(), transient_on={'exists': {2, 3}})
    outcomes = []
    for _ in range(4):
        try:
            outcomes.append(await scheduled.exists('/workspace'))
        except ConnectionError:
            outcomes.append('error')
    assert outcomes == [True, 'error', 'error', True]
    assert [(i.operation, i.call, i.fault) for i in scheduled.injected] == [
        ('exists', 2, 'transient error'),
        ('exists', 3, 'transient error'),
    ]

    async def pattern(seed: int) -> list[int]:
        faulty = FaultyBackend(InMemoryBackend(), transient_rate=0.5, seed=seed)
        for _ in range(20):
            with contextlib.suppress(ConnectionError):
                await faulty.exists('/workspace')
        return [injection.call for injection in faulty.injected]

    assert await pattern(7) == await pattern(7)
    assert await pattern(7) != await pattern(8)


async def test_hang_latency_death_and_output_limit() -> None:
    faulty = FaultyBackend(InMemoryBackend(), hang_on={'stat': 1}, latency={'*': 0.01}, unavailable_after=3)
    with anyio.move_on_after(0.3) as waited:
        await faulty.stat('/workspace')
    assert waited.cancelled_caught
    await faulty.exists('/workspace')
    await faulty.exists('/workspace')
    with pytest.raises(WorkspaceUnavailableError):
        await faulty.exists('/workspace')
    chatty = FaultyBackend(
        ScriptedMemoryBackend(ScriptedCommands().on_program('yes', result('y\n' * 100))), output_limit=50
    )
    with pytest.raises(WorkspaceOutputLimitError) as raised:
        await chatty.run(['yes'])
    assert raised.value.limit == 50 and len(raised.value.stdout) == 50


# Capability switches drive the suite's skip paths


SWITCHES = {
    'no-commands': ('memory_backend()', {'commands': 'not-applicable'}, set()),
    # Without realpath a filesystem-only backend's links can't be resolved: the contract asks for it, so it fails.
    'no-realpath': (
        'memory_backend(realpath=False)',
        {'native_realpath': 'not-applicable'},
        {'realpath_and_entries_follow_symlinks', 'writes_go_through_a_symlink'},
    ),
    # Its SupportsRealpath says its storage holds symlinks: without `make_symlink` they are gaps, not applicable.
    'no-symlinks': (
        'memory_backend(symlinks=False)',
        {'symlink': 'fixture-missing', 'realpath_and': 'fixture-missing'},
        set(),
    ),
    'no-filesystem': (
        'memory_backend(filesystem=False, realpath=False)',
        {'bytes_round_trip': 'not-applicable', 'large_file': 'not-applicable', 'symlink_loop': 'not-applicable'},
        {'has_the_required_members'},
    ),
}


@pytest.mark.parametrize('switch', sorted(SWITCHES))
def test_each_capability_switch_gives_the_expected_skip_kinds(pytester: pytest.Pytester, switch: str) -> None:
    build, expected, failing = SWITCHES[switch]
    pytester.makepyfile(
        test_switch=f"""
import pytest
from workspace_conformance import WorkspaceBackendSuite
from workspace_conformance.doubles import memory_backend, memory_symlink

class TestSwitch(WorkspaceBackendSuite):
    @pytest.fixture
    def anyio_backend(self):
        return 'asyncio'

    @pytest.fixture
    def backend(self):
        return {build}

    @pytest.fixture
    def make_symlink(self):
        return None if {switch!r} == 'no-symlinks' else memory_symlink
"""
    )
    result = pytester.runpytest_inprocess('-p', 'no:cacheprovider', '-rsf')
    skips = [line for line in result.stdout.lines if line.startswith('SKIPPED')]
    for fragment, kind in expected.items():
        matching = [
            line for line in skips if re.search(rf'\[[a-z]+/[a-z0-9_]*{fragment}[a-z0-9_]*\]|\[{fragment}/', line)
        ]
        assert matching, f'no skip for {fragment!r} in:\n' + '\n'.join(skips)
        assert all(f'] {kind}: ' in line for line in matching), '\n'.join(matching)
    failed = {line.split('::test_')[1].split()[0] for line in result.stdout.lines if line.startswith('FAILED')}
    assert failed == failing, result.stdout.str()[-3000:]

"""Property rules: Hypothesis-generated names, paths, payloads, argv items and env values, checked for exactness."""

from __future__ import annotations

import posixpath
import uuid
from collections.abc import Callable
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from pydantic_ai.workspaces import Workspace, WorkspaceBackend

from .. import strategies
from ..authoring import call_in_loop, commands_of, profile_settings, rule, run_in_worker, scratch, workspace_of
from ..strategies import TRICKY_NAMES, TRICKY_PAYLOADS

__all__ = ('PropertyRules',)


async def _name_round_trip(workspace: Workspace, root: str, name: str, data: bytes) -> None:
    folder = posixpath.join(root, uuid.uuid4().hex[:8])
    path = posixpath.join(folder, name)
    await workspace.write_bytes(path, data)
    try:
        listed = [entry.name for entry in await workspace.list_dir(folder)]
        assert listed == [name], f'the file {name!r} was listed as {listed!r}'
        entry = await workspace.stat(path)
        assert (entry.name, entry.is_dir) == (name, False), f'stat of {name!r} gave {entry!r}'
        back = await workspace.read_bytes(path)
        assert back == data, f'{name!r} read back {back[:40]!r}, not the {len(data)} bytes written'
    finally:
        await workspace.remove(folder)


async def _payload_round_trip(workspace: Workspace, root: str, data: bytes) -> None:
    path = posixpath.join(root, 'payload.bin')
    await workspace.write_bytes(path, data)
    back = await workspace.read_bytes(path)
    assert back == data, f'wrote {len(data)} bytes {data[:40]!r}, read back {len(back)} bytes {back[:40]!r}'
    entry = await workspace.stat(path)
    assert entry.size in (None, len(data)), f'stat gave size {entry.size} for {len(data)} bytes'


async def _path_round_trip(workspace: Workspace, root: str, relative: str) -> None:
    folder = posixpath.join(root, uuid.uuid4().hex[:8])
    path = posixpath.join(folder, relative)
    await workspace.write_bytes(path, relative.encode())
    try:
        assert await workspace.exists(path), f'{relative!r} does not exist after it was written'
        assert await workspace.read_bytes(path) == relative.encode(), f'{relative!r} read back other bytes'
        parent = posixpath.dirname(path)
        listed = [entry.name for entry in await workspace.list_dir(parent)]
        assert listed == [posixpath.basename(path)], f'the directory of {relative!r} listed {listed!r}'
    finally:
        await workspace.remove(folder)


def _with_examples(test: Callable[..., None], cases: list[dict[str, Any]]) -> Callable[..., None]:
    """`test` that always tries each of `cases` first (Hypothesis's `@example`), whatever the profile."""
    for case in reversed(cases):
        test = example(**case)(test)
    return test


class PropertyRules:
    """Rules checked on many generated inputs (`workspace_conformance.strategies`), under a Hypothesis profile."""

    @rule(area='properties', requires=['filesystem'], since='0.2.0', timeout=180)
    async def test_generated_names_round_trip(self, backend: WorkspaceBackend, conformance_profile: str) -> None:
        """Any POSIX file name is written, listed, stat'ed and read back exactly, byte for byte."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:

            @profile_settings(conformance_profile)
            @given(name=strategies.names(), data=strategies.payloads(max_size=64))
            def names_round_trip(name: str, data: bytes) -> None:
                call_in_loop(_name_round_trip, workspace, root, name, data)

            await run_in_worker(_with_examples(names_round_trip, [{'name': n, 'data': b'x'} for n in TRICKY_NAMES]))

    @rule(area='properties', requires=['filesystem'], since='0.2.0', timeout=180)
    async def test_generated_payloads_round_trip(self, backend: WorkspaceBackend, conformance_profile: str) -> None:
        """Any bytes (empty, NUL, CR/LF, invalid UTF-8, binary) are read back exactly as written."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:

            @profile_settings(conformance_profile)
            @given(data=strategies.payloads(max_size=16 * 1024))
            def payloads_round_trip(data: bytes) -> None:
                call_in_loop(_payload_round_trip, workspace, root, data)

            await run_in_worker(_with_examples(payloads_round_trip, [{'data': d} for d in TRICKY_PAYLOADS]))

    @rule(area='properties', requires=['filesystem'], since='0.2.0', timeout=180)
    async def test_generated_nested_paths_round_trip(self, backend: WorkspaceBackend, conformance_profile: str) -> None:
        """A write to any relative nested path creates its parents, and the file exists, reads and lists there."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:

            @profile_settings(conformance_profile)
            @given(relative=strategies.relative_paths(max_depth=4))
            def paths_round_trip(relative: str) -> None:
                call_in_loop(_path_round_trip, workspace, root, relative)

            await run_in_worker(paths_round_trip)

    @rule(area='properties', requires=['commands', 'posix_shell'], since='0.2.0', timeout=180)
    async def test_generated_argv_items_are_literal(self, backend: WorkspaceBackend, conformance_profile: str) -> None:
        """Any argv items without NUL reach the program exactly, each as one argument."""
        commands = commands_of(backend)
        echo = 'for a do printf "%s\\0" "$a"; done'

        async def check(items: list[str]) -> None:
            result = await commands.run(['sh', '-c', echo, 'sh', *items])
            back = result.stdout.split('\0')[:-1]
            assert (result.exit_code, back) == (0, items), f'argv {items!r} arrived as {back!r}'

        @profile_settings(conformance_profile)
        @given(items=st.lists(strategies.argv_items(), min_size=1, max_size=5))
        def argv_literal(items: list[str]) -> None:
            call_in_loop(check, items)

        await run_in_worker(_with_examples(argv_literal, [{'items': ['', '-n', 'a b', '$(id)', "'", '\n']}]))

    @rule(area='properties', requires=['commands', 'posix_shell'], since='0.2.0', timeout=180)
    async def test_generated_env_values_are_exact(self, backend: WorkspaceBackend, conformance_profile: str) -> None:
        """Any env names and values passed with `env=` reach the command exactly."""
        commands = commands_of(backend)

        async def check(env: dict[str, str]) -> None:
            script = 'for n do eval "printf \'%s\\0\' \\"\\$$n\\""; done'
            result = await commands.run(['sh', '-c', script, 'sh', *env], env=env)
            back = dict(zip(env, result.stdout.split('\0')[:-1], strict=False))
            assert back == env, f'env {env!r} arrived as {back!r}'

        @profile_settings(conformance_profile)
        @given(env=st.dictionaries(strategies.env_names(), strategies.env_values(), min_size=1, max_size=4))
        def env_exact(env: dict[str, str]) -> None:
            call_in_loop(check, env)

        tricky = {'WC_SPACE': ' padded ', 'WC_NEWLINE': 'a\nb', 'WC_EQUALS': 'a=b', 'WC_UNICODE': 'caf\u00e9'}
        await run_in_worker(_with_examples(env_exact, [{'env': tricky}]))

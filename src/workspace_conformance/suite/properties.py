"""Property rules: Hypothesis-generated names, paths, payloads, argv items and env values, checked for exactness."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from pydantic_ai.workspaces import Workspace, WorkspaceBackend

from .. import strategies
from ..authoring import (
    call_in_loop,
    commands_of,
    current_platform,
    gather,
    paths,
    profile_settings,
    rule,
    run_in_worker,
    scratch,
    workspace_of,
)
from ..strategies import TRICKY_NAMES, TRICKY_PAYLOADS, windows_name

__all__ = ('PropertyRules',)


async def _names_round_trip(workspace: Workspace, root: str, cases: list[tuple[str, bytes]]) -> None:
    """Each (name, data) in a folder of its own: all written at once, then all listed, stat'ed and read at once."""
    files = [paths.join(root, uuid.uuid4().hex[:8], name) for name, _ in cases]
    await gather(*(workspace.write_bytes(path, data) for path, (_, data) in zip(files, cases, strict=True)))
    seen = await gather(
        *(
            gather(workspace.list_dir(paths.dirname(path)), workspace.stat(path), workspace.read_bytes(path))
            for path in files
        )
    )
    for (name, data), (listing, entry, back) in zip(cases, seen, strict=True):
        listed = [item.name for item in listing]
        assert listed == [name], f'the file {name!r} was listed as {listed!r}'
        assert (entry.name, entry.is_dir) == (name, False), f'stat of {name!r} gave {entry!r}'
        assert back == data, f'{name!r} read back {back[:40]!r}, not the {len(data)} bytes written'


async def _payloads_round_trip(workspace: Workspace, root: str, payloads: list[bytes]) -> None:
    """Each payload in a file of its own: all written at once, then all read back and stat'ed at once."""
    files = [paths.join(root, f'{uuid.uuid4().hex[:8]}.bin') for _ in payloads]
    await gather(*(workspace.write_bytes(path, data) for path, data in zip(files, payloads, strict=True)))
    seen = await gather(*(gather(workspace.read_bytes(path), workspace.stat(path)) for path in files))
    for data, (back, entry) in zip(payloads, seen, strict=True):
        assert back == data, f'wrote {len(data)} bytes {data[:40]!r}, read back {len(back)} bytes {back[:40]!r}'
        assert entry.size in (None, len(data)), f'stat gave size {entry.size} for {len(data)} bytes'


async def _paths_round_trip(workspace: Workspace, root: str, relatives: list[str]) -> None:
    """Each relative path under a folder of its own: all written at once, then all checked, read and listed at once."""
    files = [paths.join(root, uuid.uuid4().hex[:8], relative) for relative in relatives]
    await gather(
        *(workspace.write_bytes(path, relative.encode()) for path, relative in zip(files, relatives, strict=True))
    )
    seen = await gather(
        *(
            gather(workspace.exists(path), workspace.read_bytes(path), workspace.list_dir(paths.dirname(path)))
            for path in files
        )
    )
    for path, relative, (exists, back, listing) in zip(files, relatives, seen, strict=True):
        assert exists, f'{relative!r} does not exist after it was written'
        assert back == relative.encode(), f'{relative!r} read back other bytes'
        listed = [entry.name for entry in listing]
        assert listed == [paths.basename(path)], f'the directory of {relative!r} listed {listed!r}'


def _with_examples(test: Callable[..., None], cases: list[dict[str, Any]]) -> Callable[..., None]:
    """`test` that always tries each of `cases` first (Hypothesis's `@example`), whatever the profile."""
    for case in reversed(cases):
        test = example(**case)(test)
    return test


class PropertyRules:
    """Rules checked on many generated inputs (`workspace_conformance.strategies`), under a Hypothesis profile."""

    @rule(area='properties', requires=['filesystem'], since='0.2.0', timeout=180, must='F09')
    async def test_generated_names_round_trip(self, backend: WorkspaceBackend, conformance_profile: str) -> None:
        """Any POSIX file name is written, listed, stat'ed and read back exactly, byte for byte.

        On a 'windows' workspace, any name Windows keeps as written (`strategies.windows_name`).
        """
        workspace = workspace_of(backend)
        platform = current_platform()
        async with scratch(workspace) as root:

            @profile_settings(conformance_profile)
            @given(
                cases=st.lists(
                    st.tuples(strategies.names(platform), strategies.payloads(max_size=64)), min_size=1, max_size=4
                )
            )
            def names_round_trip(cases: list[tuple[str, bytes]]) -> None:
                call_in_loop(_names_round_trip, workspace, root, cases)

            tricky = [(name, b'x') for name in TRICKY_NAMES if platform == 'posix' or windows_name(name)]
            await run_in_worker(_with_examples(names_round_trip, [{'cases': tricky}]))

    @rule(area='properties', requires=['filesystem'], since='0.2.0', timeout=180, must='B33')
    async def test_generated_payloads_round_trip(self, backend: WorkspaceBackend, conformance_profile: str) -> None:
        """Any bytes (empty, NUL, CR/LF, invalid UTF-8, binary) are read back exactly as written."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:

            @profile_settings(conformance_profile)
            @given(payloads=st.lists(strategies.payloads(max_size=16 * 1024), min_size=1, max_size=3))
            def payloads_round_trip(payloads: list[bytes]) -> None:
                call_in_loop(_payloads_round_trip, workspace, root, payloads)

            await run_in_worker(_with_examples(payloads_round_trip, [{'payloads': list(TRICKY_PAYLOADS)}]))

    @rule(area='properties', requires=['filesystem'], since='0.2.0', timeout=180, must='B33')
    async def test_generated_nested_paths_round_trip(self, backend: WorkspaceBackend, conformance_profile: str) -> None:
        """A write to any relative nested path creates its parents, and the file exists, reads and lists there."""
        workspace = workspace_of(backend)
        platform = current_platform()
        async with scratch(workspace) as root:

            @profile_settings(conformance_profile)
            @given(
                relatives=st.lists(strategies.relative_paths(max_depth=4, platform=platform), min_size=1, max_size=3)
            )
            def paths_round_trip(relatives: list[str]) -> None:
                call_in_loop(_paths_round_trip, workspace, root, relatives)

            await run_in_worker(paths_round_trip)

    @rule(area='properties', requires=['commands', 'posix_shell'], since='0.2.0', timeout=180, must='B47')
    async def test_generated_argv_items_are_literal(self, backend: WorkspaceBackend, conformance_profile: str) -> None:
        """Any argv items without NUL reach the program exactly, each as one argument."""
        commands = commands_of(backend)
        echo = 'for a do printf "%s\\0" "$a"; done'

        async def check(argvs: list[list[str]]) -> None:
            results = await gather(*(commands.run(['sh', '-c', echo, 'sh', *items]) for items in argvs))
            for items, result in zip(argvs, results, strict=True):
                back = result.stdout.split('\0')[:-1]
                assert (result.exit_code, back) == (0, items), f'argv {items!r} arrived as {back!r}'

        @profile_settings(conformance_profile)
        @given(argvs=st.lists(st.lists(strategies.argv_items(), min_size=1, max_size=5), min_size=1, max_size=3))
        def argv_literal(argvs: list[list[str]]) -> None:
            call_in_loop(check, argvs)

        await run_in_worker(_with_examples(argv_literal, [{'argvs': [['', '-n', 'a b', '$(id)', "'", '\n']]}]))

    @rule(area='properties', requires=['commands', 'posix_shell'], since='0.2.0', timeout=180, must='B26')
    async def test_generated_env_values_are_exact(self, backend: WorkspaceBackend, conformance_profile: str) -> None:
        """Any env names and values passed with `env=` reach the command exactly."""
        commands = commands_of(backend)

        async def check(envs: list[dict[str, str]]) -> None:
            script = 'for n do eval "printf \'%s\\0\' \\"\\$$n\\""; done'
            results = await gather(*(commands.run(['sh', '-c', script, 'sh', *env], env=env) for env in envs))
            for env, result in zip(envs, results, strict=True):
                back = dict(zip(env, result.stdout.split('\0')[:-1], strict=False))
                assert back == env, f'env {env!r} arrived as {back!r}'

        @profile_settings(conformance_profile)
        @given(
            envs=st.lists(
                st.dictionaries(strategies.env_names(), strategies.env_values(), min_size=1, max_size=4),
                min_size=1,
                max_size=3,
            )
        )
        def env_exact(envs: list[dict[str, str]]) -> None:
            call_in_loop(check, envs)

        tricky = {
            'WC_SPACE': ' padded ',
            'wc_space': 'its lower-case twin',
            'WC_NEWLINE': 'a\nb',
            'WC_EQUALS': 'a=b',
            'Wc_Unicode': 'caf\u00e9',
        }
        await run_in_worker(_with_examples(env_exact, [{'envs': [tricky]}]))

"""Rules on symlinks and `realpath`: following, resolving, loops, and writes through links."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

import anyio
from pydantic_ai.workspaces import SupportsCommands, SupportsRealpath, Workspace, WorkspaceBackend

from ..authoring import MakeSymlink, current_run, make_link, paths, rule, scratch, skip, unwrap, workspace_of

__all__ = ('SymlinkRules',)


class SymlinkRules:
    """Rules for backends whose storage holds symlinks (created with `make_symlink` or `ln -s`)."""

    @rule(area='symlinks', requires=['filesystem', 'ln'], upstream=True, must='B39')
    async def test_symlink_loop_does_not_break_listing(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """A symlink loop in a directory is listed as a non-directory entry; it does not break `list_dir`."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            await make_link(backend, make_symlink, 'ouroboros', paths.join(root, 'ouroboros'))
            await make_link(backend, make_symlink, 'ping', paths.join(root, 'pong'))
            await make_link(backend, make_symlink, 'pong', paths.join(root, 'ping'))
            with anyio.move_on_after(current_run().seconds(30)) as waited:
                listed = sorted((entry.name, entry.is_dir) for entry in await workspace.list_dir(root))
            assert not waited.cancelled_caught, 'list_dir of a directory holding symlink loops did not return'
            expected = [('ouroboros', False), ('ping', False), ('pong', False)]
            assert listed == expected, f'list_dir gave {listed!r}, expected {expected!r}'

    @rule(area='symlinks', requires=['filesystem', 'ln'], upstream=True, must='B40')
    async def test_realpath_and_entries_follow_symlinks(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """`realpath` resolves links like `os.path.realpath(strict=False)`, and `stat`/`list_dir` follow them."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            real = await workspace.realpath(root)
            target, link = paths.join(root, 'target'), paths.join(root, 'link')
            await workspace.make_dir(target)
            await make_link(backend, make_symlink, target, link)
            nest = paths.join(root, 'nest')
            await workspace.make_dir(paths.join(nest, 'inner'))
            for name, points_to in (('down', 'inner'), ('sideways', '../target'), ('loop-a', 'loop-b')):
                await make_link(backend, make_symlink, points_to, paths.join(nest, name))
            await make_link(backend, make_symlink, 'loop-a', paths.join(nest, 'loop-b'))
            for path, expected in (
                (paths.join(link, 'not-yet'), paths.join(real, 'target', 'not-yet')),
                (paths.join(nest, 'down', 'leaf'), paths.join(real, 'nest', 'inner', 'leaf')),
                (paths.join(nest, 'sideways', 'leaf'), paths.join(real, 'target', 'leaf')),
                (paths.join(nest, 'down', '..'), paths.join(real, 'nest')),
                (paths.join(nest, 'sideways', '..'), real),
            ):
                resolved = await workspace.realpath(path)
                assert resolved == expected, f'realpath({path!r}) gave {resolved!r}, expected {expected!r}'
            loop = paths.join(nest, 'loop-a', 'tail')
            with anyio.move_on_after(current_run().seconds(30)) as waited:
                try:
                    through_loop: str | None = await workspace.realpath(loop)
                except OSError:
                    through_loop = None
            assert not waited.cancelled_caught, f'realpath({loop!r}) through a symlink loop did not return'
            if through_loop is not None:
                inside = paths.join(real, 'nest') + '/'
                assert through_loop.startswith(inside), (
                    f'realpath through a loop gave {through_loop!r}, outside the directory holding the loop'
                )
            assert (await workspace.stat(link)).is_dir, 'stat of a link to a directory said it is not a directory'
            kinds = {entry.name: entry.is_dir for entry in await workspace.list_dir(root)}
            assert kinds == {'link': True, 'nest': True, 'target': True}, f'list_dir gave {kinds!r}'

    @rule(area='symlinks', requires=['filesystem', 'ln'], upstream=True, must='B34')
    async def test_writes_go_through_a_symlink(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """`write_bytes` to a symlink replaces its target's contents and keeps the link a link."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            target, link = paths.join(root, 'target'), paths.join(root, 'link')
            await workspace.write_bytes(target, b'before')
            await make_link(backend, make_symlink, target, link)
            await workspace.write_bytes(link, b'after, and longer')
            back = await workspace.read_bytes(target)
            assert back == b'after, and longer', f'after writing through the link its target held {back!r}'
            real_target = await workspace.realpath(target)
            resolved = await workspace.realpath(link)
            assert resolved == real_target, f'after the write the link resolved to {resolved!r}: it was replaced'

    @rule(area='symlinks', requires=['filesystem', 'files_only', 'holds_symlinks'], since='0.3.0')
    async def test_a_files_only_backend_that_holds_symlinks_resolves_them_natively(
        self, backend: WorkspaceBackend
    ) -> None:
        """A filesystem-only backend whose storage can hold symlinks implements `SupportsRealpath`."""
        assert isinstance(backend, SupportsRealpath), (
            f'{type(unwrap(backend)).__qualname__} has no commands and its storage holds symlinks, but it does not '
            "implement SupportsRealpath: Workspace.realpath then only normalizes the path as text, so a path policy's "
            'preflight (realpath(await resolve(path))) cannot see where a link leads'
        )

    @rule(area='symlinks', requires=['realpath'], upstream=True, must='B40', grounds=('realpath',))
    async def test_native_realpath_keeps_the_working_dir_and_missing_names(self, backend: WorkspaceBackend) -> None:
        """`SupportsRealpath.realpath` returns the working directory unchanged and keeps missing names as written."""
        assert isinstance(backend, SupportsRealpath)  # the guard resolved `requires=['realpath']`
        working_dir = await backend.working_dir()
        same = await backend.realpath(working_dir)
        assert same == working_dir, f'realpath of the working directory {working_dir!r} gave {same!r}'
        missing = paths.join(working_dir, f'.workspace-conformance-missing-{uuid.uuid4().hex[:12]}', 'Child')
        kept = await backend.realpath(missing)
        assert kept == missing, f'realpath of the missing path {missing!r} gave {kept!r}'

    @rule(area='symlinks', requires=['filesystem', 'ln'], since='0.2.0', must='B36')
    async def test_removing_a_symlink_removes_the_link_not_its_target(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """`remove` of a symlink deletes the link itself and leaves its target, a file or a directory, untouched."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            file_target, dir_target = paths.join(root, 'file-target'), paths.join(root, 'dir-target')
            await workspace.write_bytes(file_target, b'file target')
            await workspace.write_bytes(paths.join(dir_target, 'kept'), b'kept inside')
            file_link, dir_link = paths.join(root, 'file-link'), paths.join(root, 'dir-link')
            await make_link(backend, make_symlink, 'file-target', file_link)
            await make_link(backend, make_symlink, dir_target, dir_link)
            await workspace.remove(file_link)
            await workspace.remove(dir_link)
            names = sorted(entry.name for entry in await workspace.list_dir(root))
            assert names == ['dir-target', 'file-target'], f'after removing both links the directory held {names!r}'
            back = await workspace.read_bytes(file_target)
            assert back == b'file target', f'after removing a link to it, the file target held {back!r}'
            inside = [entry.name for entry in await workspace.list_dir(dir_target)]
            assert inside == ['kept'], f'after removing a link to it, the directory target held {inside!r}'

    @rule(area='symlinks', requires=['filesystem', 'ln'], since='0.2.0', must='B36')
    async def test_removing_a_tree_does_not_follow_links_out_of_it(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """Removing a directory removes the links inside it, never the directories outside it that they point to."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            outside, tree = paths.join(root, 'outside'), paths.join(root, 'tree')
            precious = {'precious': b'precious', 'sub/deeper': b'deeper'}
            for name, data in precious.items():
                await workspace.write_bytes(paths.join(outside, name), data)
            await workspace.write_bytes(paths.join(tree, 'own', 'file'), b'own')
            await make_link(backend, make_symlink, '../outside', paths.join(tree, 'relative-out'))
            await make_link(backend, make_symlink, outside, paths.join(tree, 'own', 'absolute-out'))
            await workspace.remove(tree)
            assert not await workspace.exists(tree), f'{tree} still exists after remove'
            for name, data in precious.items():
                path = paths.join(outside, name)
                assert await workspace.exists(path), (
                    f'removing {tree} deleted {path}, which a link inside it pointed to'
                )
                back = await workspace.read_bytes(path)
                assert back == data, f'removing {tree} changed {path} (outside it) to {back!r}'

    @rule(area='symlinks', requires=['filesystem', 'ln'], since='0.2.0', must='B35')
    async def test_make_dir_over_a_symlink_to_a_directory_succeeds(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """`make_dir` of a symlink to a directory succeeds like `mkdir -p`, and a path below it lands in the target."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            target, link = paths.join(root, 'target'), paths.join(root, 'link')
            await workspace.write_bytes(paths.join(target, 'inside'), b'inside')
            await make_link(backend, make_symlink, 'target', link)
            await workspace.make_dir(link)
            await workspace.make_dir(paths.join(link, 'made-through-link'))
            names = sorted(entry.name for entry in await workspace.list_dir(target))
            assert names == ['inside', 'made-through-link'], (
                f'after make_dir through the link the target held {names!r}'
            )
            kinds = {entry.name: entry.is_dir for entry in await workspace.list_dir(root)}
            assert kinds == {'link': True, 'target': True}, f'after make_dir of the link the directory listed {kinds!r}'

    @rule(area='symlinks', requires=['filesystem', 'ln'], since='0.2.0', must='B32')
    async def test_stat_follows_a_symlink_to_a_file(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """`stat` and `list_dir` of a symlink to a file report a regular file with the target's size (or `None`)."""
        workspace = workspace_of(backend)
        data = b'thirty-seven bytes of target content!'
        async with scratch(workspace) as root:
            target, link = paths.join(root, 'target.bin'), paths.join(root, 'link.bin')
            await workspace.write_bytes(target, data)
            await make_link(backend, make_symlink, 'target.bin', link)
            entry = await workspace.stat(link)
            observed = (entry.name, entry.path, entry.is_dir, entry.size)
            assert observed[:3] == ('link.bin', link, False), f'stat of a link to a file gave {observed!r}'
            assert entry.size in (None, len(data)), (
                f'stat of a link to a {len(data)}-byte file gave size {entry.size!r}, not the size of its target'
            )
            listed = {item.name: (item.is_dir, item.size) for item in await workspace.list_dir(root)}
            assert listed['link.bin'][0] is False and listed['link.bin'][1] in (None, len(data)), (
                f'list_dir gave the link to a {len(data)}-byte file (is_dir, size) = {listed["link.bin"]!r}'
            )
            back = await workspace.read_bytes(link)
            assert back == data, f'read_bytes of the link gave {back!r}'

    @rule(area='symlinks', requires=['filesystem', 'ln'], since='0.2.0', must='B40')
    async def test_realpath_keeps_the_missing_target_of_a_dangling_link(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """`realpath` follows a dangling link to its missing target and keeps the missing names as written."""
        workspace = _resolving_workspace(backend)
        async with scratch(workspace) as root:
            real = await workspace.realpath(root)
            await make_link(backend, make_symlink, 'missing-target', paths.join(root, 'dangling'))
            await make_link(backend, make_symlink, paths.join(root, 'gone', 'deeper'), paths.join(root, 'far'))
            await _expect_realpaths(
                workspace,
                (
                    (paths.join(root, 'dangling'), paths.join(real, 'missing-target')),
                    (
                        paths.join(root, 'dangling', 'child', 'leaf'),
                        paths.join(real, 'missing-target', 'child', 'leaf'),
                    ),
                    (paths.join(root, 'far'), paths.join(real, 'gone', 'deeper')),
                ),
            )

    @rule(area='symlinks', requires=['filesystem', 'ln'], since='0.2.0', must='B40')
    async def test_realpath_resolves_a_chain_of_links(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """`realpath` follows a link whose target is itself a link, to the end of the chain."""
        workspace = _resolving_workspace(backend)
        async with scratch(workspace) as root:
            real = await workspace.realpath(root)
            await workspace.make_dir(paths.join(root, 'final'))
            await workspace.make_dir(paths.join(root, 'sub'))
            for link, target in (('hop-3', 'final'), ('hop-2', 'hop-3'), ('hop-1', 'hop-2'), ('sub/hop-a', '../hop-1')):
                await make_link(backend, make_symlink, target, paths.join(root, link))
            final = paths.join(real, 'final')
            await _expect_realpaths(
                workspace,
                (
                    (paths.join(root, 'hop-1'), final),
                    (paths.join(root, 'hop-1', 'leaf'), paths.join(final, 'leaf')),
                    (paths.join(root, 'sub', 'hop-a', 'leaf'), paths.join(final, 'leaf')),
                ),
            )

    @rule(area='symlinks', requires=['filesystem', 'ln'], since='0.2.0', must='B40')
    async def test_realpath_follows_an_absolute_target(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """At a link with an absolute target `realpath` restarts from `/`, never joining it to the link's directory."""
        workspace = _resolving_workspace(backend)
        async with scratch(workspace) as root:
            real = await workspace.realpath(root)
            target = paths.join(real, 'target')
            await workspace.make_dir(paths.join(target, 'inner'))
            await make_link(backend, make_symlink, target, paths.join(root, 'absolute'))
            await make_link(backend, make_symlink, paths.join(root, 'absolute', 'inner'), paths.join(root, 'via'))
            await _expect_realpaths(
                workspace,
                (
                    (paths.join(root, 'absolute'), target),
                    (paths.join(root, 'absolute', 'leaf'), paths.join(target, 'leaf')),
                    (paths.join(root, 'via', 'leaf'), paths.join(target, 'inner', 'leaf')),
                ),
            )

    @rule(area='symlinks', requires=['filesystem', 'ln'], since='0.2.0', must='B40')
    async def test_realpath_climbs_dotdot_from_the_link_target(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """A `..` after a link climbs from the link's target, not from the directory holding the link."""
        workspace = _resolving_workspace(backend)
        async with scratch(workspace) as root:
            real = await workspace.realpath(root)
            await workspace.make_dir(paths.join(root, 'a', 'b'))
            await workspace.make_dir(paths.join(root, 'c', 'd'))
            link = paths.join(root, 'a', 'b', 'link')
            await make_link(backend, make_symlink, '../../c/d', link)
            await _expect_realpaths(
                workspace,
                (
                    (paths.join(link, '..'), paths.join(real, 'c')),
                    (paths.join(link, '..', 'missing'), paths.join(real, 'c', 'missing')),
                    (paths.join(link, '..', '..', 'a'), paths.join(real, 'a')),
                ),
            )

    @rule(area='symlinks', requires=['filesystem', 'ln'], since='0.2.0', must='B40')
    async def test_realpath_resolves_relative_names_from_the_right_directory(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """A relative path starts in the working directory, and a relative link target in the link's own directory."""
        workspace = _resolving_workspace(backend)
        async with scratch(workspace) as root:
            real = await workspace.realpath(root)
            working_dir = await workspace.working_dir()
            relative = paths.relpath(root, working_dir)
            await workspace.make_dir(paths.join(root, 'sub', 'target'))
            await make_link(backend, make_symlink, 'target', paths.join(root, 'sub', 'link'))
            await _expect_realpaths(
                workspace,
                (
                    ('.', working_dir),
                    (relative, real),
                    (f'{relative}/sub/link', paths.join(real, 'sub', 'target')),
                    (f'{relative}/sub/link/leaf', paths.join(real, 'sub', 'target', 'leaf')),
                ),
            )

    @rule(area='symlinks', requires=['filesystem', 'ln'], since='0.2.0', must='B40')
    async def test_realpath_returns_an_absolute_normalized_path(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """`realpath` returns an absolute path with no empty, `.` or `..` segments and no trailing slash."""
        workspace = _resolving_workspace(backend)
        async with scratch(workspace) as root:
            real = await workspace.realpath(root)
            await workspace.make_dir(paths.join(root, 'dir'))
            await make_link(backend, make_symlink, 'dir', paths.join(root, 'link'))
            cases = (
                (f'{root}/', real),
                (f'{root}//x//y/', paths.join(real, 'x', 'y')),
                (f'{root}/./x/.', paths.join(real, 'x')),
                (f'{root}/x/../y', paths.join(real, 'y')),
                (f'{root}//link/./', paths.join(real, 'dir')),
                (f'{root}/link/.//leaf/', paths.join(real, 'dir', 'leaf')),
            )
            for path, _ in cases:
                resolved = await workspace.realpath(path)
                assert isinstance(resolved, str) and paths.isabs(resolved), (
                    f'realpath({path!r}) gave {resolved!r}, not an absolute path'
                )
                assert paths.normpath(resolved) == resolved, f'realpath({path!r}) gave the unnormalized {resolved!r}'
            await _expect_realpaths(workspace, cases)

    @rule(area='symlinks', requires=['filesystem', 'ln'], since='0.2.0', must='B40')
    async def test_realpath_through_a_link_loop_is_bounded(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """`realpath` through a link loop returns promptly, with `OSError` or a path inside the directory holding it."""
        workspace = _resolving_workspace(backend)
        async with scratch(workspace) as root:
            real = await workspace.realpath(root)
            await workspace.make_dir(paths.join(root, 'one'))
            await workspace.make_dir(paths.join(root, 'two'))
            for link, target in (
                ('self', 'self'),
                ('ping', 'pong'),
                ('pong', 'ping'),
                ('one/across', '../two/across'),
                ('two/across', '../one/across'),
            ):
                await make_link(backend, make_symlink, target, paths.join(root, link))
            bound = current_run().seconds(10)
            for name in ('self', 'ping', 'one/across'):
                path = paths.join(root, name, 'tail')
                with anyio.move_on_after(bound) as waited:
                    try:
                        resolved: str | None = await workspace.realpath(path)
                    except OSError:
                        resolved = None
                assert not waited.cancelled_caught, f'realpath({path!r}) through a link loop ran past {bound:g} s'
                if resolved is not None:
                    assert resolved.startswith(real + '/'), (
                        f'realpath({path!r}) through a loop gave {resolved!r}, outside the directory holding the loop'
                    )

    @rule(area='symlinks', requires=['filesystem', 'ln'], contract='2.68', since='0.3.0', must='W09')
    async def test_a_link_never_raises_the_authority_of_what_it_reaches(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """Under `AuthorityWorkspace` a path through a symlink gets the lower of the link's level and its target's.

        A link into a `'none'` directory does not raise what it reaches, and a link kept in one does not lend its
        target's higher level to the paths through it: `authority_of` finds both with the backend's `realpath`.
        """
        from pydantic_ai.workspaces import AuthorityWorkspace  # pydantic-ai >= 2.68, as contract='2.68' ensures

        workspace = _resolving_workspace(backend)
        async with scratch(workspace) as root:
            vendor, own = paths.join(root, 'vendor'), paths.join(root, 'own')
            for directory in (vendor, own):
                await workspace.make_dir(directory)
                await workspace.write_bytes(paths.join(directory, 'notes.md'), b'notes')
            await make_link(backend, make_symlink, vendor, paths.join(own, 'into-vendor'))
            await make_link(backend, make_symlink, own, paths.join(vendor, 'into-own'))
            leveled = AuthorityWorkspace(workspace, authority='operator', path_authority={vendor: 'none'})
            for path, expected in (
                (paths.join(own, 'notes.md'), 'operator'),
                (paths.join(vendor, 'notes.md'), 'none'),
                (paths.join(own, 'into-vendor', 'notes.md'), 'none'),
                (paths.join(vendor, 'into-own', 'notes.md'), 'none'),
            ):
                level = await leveled.authority_of(path)
                assert level == expected, (
                    f"with path_authority {{{vendor!r}: 'none'}}, authority_of({path!r}) is {level!r}, not "
                    f'{expected!r} (realpath gives {await workspace.realpath(path)!r})'
                )

    @rule(area='symlinks', requires=['filesystem', 'ln'], contract='2.78', since='0.3.0', must='P06')
    async def test_lowest_authority_under_counts_entries_where_they_lead(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """`lowest_authority_under(workspace, d)` counts each `path_authority` entry under `d` where written and led.

        An entry that is a link lowers the directory its target is in, and a directory reached through a link is
        judged where it leads: both come from the backend's `realpath`.
        """
        from pydantic_ai.workspaces import AuthorityWorkspace, lowest_authority_under  # 2.78, as contract= ensures

        workspace = _resolving_workspace(backend)
        async with scratch(workspace) as root:
            kept, real, plain = (paths.join(root, *parts) for parts in (('tree', 'kept'), ('away', 'real'), ('plain',)))
            for directory in (kept, real, plain):
                await workspace.make_dir(directory)
            entry = paths.join(kept, 'entry')
            await make_link(backend, make_symlink, real, entry)
            await make_link(backend, make_symlink, paths.join(root, 'tree'), paths.join(root, 'via'))
            leveled = AuthorityWorkspace(workspace, authority='operator', path_authority={entry: 'user'})
            for directory, expected, why in (
                (paths.join(root, 'tree'), 'user', 'the entry is written there'),
                (paths.join(root, 'away'), 'user', 'the entry, a link, leads there'),
                (paths.join(root, 'via'), 'user', 'it is a link to the directory the entry is written in'),
                (plain, 'operator', 'no entry is written or leads there'),
            ):
                level = await lowest_authority_under(leveled, directory)
                assert level == expected, (
                    f"with path_authority {{{entry!r}: 'user'}}, lowest_authority_under({directory!r}) is {level!r}, "
                    f'not {expected!r}: {why} (realpath gives {await workspace.realpath(directory)!r})'
                )


def _resolving_workspace(backend: WorkspaceBackend) -> Workspace:
    """A `Workspace` whose `realpath` follows links (natively or through commands), else a not-applicable skip."""
    workspace = workspace_of(backend)
    if not isinstance(backend, SupportsRealpath | SupportsCommands):
        skip(
            'not-applicable',
            'the backend has neither SupportsRealpath nor commands, so Workspace.realpath only normalizes text '
            '(realpath_and_entries_follow_symlinks is the rule that requires one)',
        )
    return workspace


async def _expect_realpaths(workspace: Workspace, cases: Iterable[tuple[str, str]]) -> None:
    """Require `realpath(path) == expected` for each case, saying which path resolved wrongly."""
    for path, expected in cases:
        resolved = await workspace.realpath(path)
        assert resolved == expected, f'realpath({path!r}) gave {resolved!r}, expected {expected!r}'

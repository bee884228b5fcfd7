"""Rules on symlinks and `realpath`: following, resolving, loops, and writes through links."""

from __future__ import annotations

import posixpath
import uuid

import anyio
from pydantic_ai.workspaces import SupportsRealpath, WorkspaceBackend

from ._guard import current_run
from ._rules import rule
from ._support import MakeSymlink, make_link, scratch, skip, workspace_of

__all__ = ('SymlinkRules',)


class SymlinkRules:
    """Rules for backends whose storage holds symlinks (created with `make_symlink` or `ln -s`)."""

    @rule(area='symlinks', requires=['filesystem', 'ln'], upstream=True)
    async def test_symlink_loop_does_not_break_listing(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """A symlink loop in a directory is listed as a non-directory entry; it does not break `list_dir`."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            await make_link(backend, make_symlink, 'ouroboros', posixpath.join(root, 'ouroboros'))
            await make_link(backend, make_symlink, 'ping', posixpath.join(root, 'pong'))
            await make_link(backend, make_symlink, 'pong', posixpath.join(root, 'ping'))
            with anyio.move_on_after(current_run().seconds(30)) as waited:
                listed = sorted((entry.name, entry.is_dir) for entry in await workspace.list_dir(root))
            assert not waited.cancelled_caught, 'list_dir of a directory holding symlink loops did not return'
            expected = [('ouroboros', False), ('ping', False), ('pong', False)]
            assert listed == expected, f'list_dir gave {listed!r}, expected {expected!r}'

    @rule(area='symlinks', requires=['filesystem', 'ln'], upstream=True)
    async def test_realpath_and_entries_follow_symlinks(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """`realpath` resolves links like `os.path.realpath(strict=False)`, and `stat`/`list_dir` follow them."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            real = await workspace.realpath(root)
            target, link = posixpath.join(root, 'target'), posixpath.join(root, 'link')
            await workspace.make_dir(target)
            await make_link(backend, make_symlink, target, link)
            nest = posixpath.join(root, 'nest')
            await workspace.make_dir(posixpath.join(nest, 'inner'))
            for name, points_to in (('down', 'inner'), ('sideways', '../target'), ('loop-a', 'loop-b')):
                await make_link(backend, make_symlink, points_to, posixpath.join(nest, name))
            await make_link(backend, make_symlink, 'loop-a', posixpath.join(nest, 'loop-b'))
            for path, expected in (
                (posixpath.join(link, 'not-yet'), posixpath.join(real, 'target', 'not-yet')),
                (posixpath.join(nest, 'down', 'leaf'), posixpath.join(real, 'nest', 'inner', 'leaf')),
                (posixpath.join(nest, 'sideways', 'leaf'), posixpath.join(real, 'target', 'leaf')),
                (posixpath.join(nest, 'down', '..'), posixpath.join(real, 'nest')),
                (posixpath.join(nest, 'sideways', '..'), real),
            ):
                resolved = await workspace.realpath(path)
                assert resolved == expected, f'realpath({path!r}) gave {resolved!r}, expected {expected!r}'
            loop = posixpath.join(nest, 'loop-a', 'tail')
            with anyio.move_on_after(current_run().seconds(30)) as waited:
                try:
                    through_loop: str | None = await workspace.realpath(loop)
                except OSError:
                    through_loop = None
            assert not waited.cancelled_caught, f'realpath({loop!r}) through a symlink loop did not return'
            if through_loop is not None:
                inside = posixpath.join(real, 'nest') + '/'
                assert through_loop.startswith(inside), (
                    f'realpath through a loop gave {through_loop!r}, outside the directory holding the loop'
                )
            assert (await workspace.stat(link)).is_dir, 'stat of a link to a directory said it is not a directory'
            kinds = {entry.name: entry.is_dir for entry in await workspace.list_dir(root)}
            assert kinds == {'link': True, 'nest': True, 'target': True}, f'list_dir gave {kinds!r}'

    @rule(area='symlinks', requires=['filesystem', 'ln'], upstream=True)
    async def test_writes_go_through_a_symlink(
        self, backend: WorkspaceBackend, make_symlink: MakeSymlink | None
    ) -> None:
        """`write_bytes` to a symlink replaces its target's contents and keeps the link a link."""
        workspace = workspace_of(backend)
        async with scratch(workspace) as root:
            target, link = posixpath.join(root, 'target'), posixpath.join(root, 'link')
            await workspace.write_bytes(target, b'before')
            await make_link(backend, make_symlink, target, link)
            await workspace.write_bytes(link, b'after, and longer')
            back = await workspace.read_bytes(target)
            assert back == b'after, and longer', f'after writing through the link its target held {back!r}'
            real_target = await workspace.realpath(target)
            resolved = await workspace.realpath(link)
            assert resolved == real_target, f'after the write the link resolved to {resolved!r}: it was replaced'

    @rule(area='symlinks', requires=['realpath'], upstream=True)
    async def test_native_realpath_keeps_the_working_dir_and_missing_names(self, backend: WorkspaceBackend) -> None:
        """`SupportsRealpath.realpath` returns the working directory unchanged and keeps missing names as written."""
        if not isinstance(backend, SupportsRealpath):
            skip('not-applicable', 'the backend does not implement SupportsRealpath')
        working_dir = await backend.working_dir()
        same = await backend.realpath(working_dir)
        assert same == working_dir, f'realpath of the working directory {working_dir!r} gave {same!r}'
        missing = posixpath.join(working_dir, f'.workspace-conformance-missing-{uuid.uuid4().hex[:12]}', 'Child')
        kept = await backend.realpath(missing)
        assert kept == missing, f'realpath of the missing path {missing!r} gave {kept!r}'

"""envd's `filesystem.Filesystem` Connect service: `Stat`, `ListDir` (with depth), `MakeDir`, `Remove`, `Move`.

Semantics follow `filesystem.proto` and envd's service in e2b-dev/infra: `Stat` describes the path itself (a
symlink is reported with its target's type and its resolved target), `ListDir` resolves the directory's own
symlinks but not its entries', `Remove` removes recursively and quietly, `Move` creates the destination's parents.
Watches are not emulated (UNIMPLEMENTED).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from e2b.envd.filesystem import filesystem_pb as pb
from e2b.envd.filesystem.filesystem_connect import Filesystem, FilesystemASGIApplication
from protobuf.wkt.google.protobuf.timestamp_pb import Timestamp

from .process import answered_as_connect_errors
from .sandbox import Sandbox, SandboxError, user_from_authorization

__all__ = ('FilesystemService', 'entry_info', 'filesystem_app')

Lookup = Callable[[RequestContext[object, object]], Sandbox]

_MAX_ENTRIES = 100_000
"""The most entries one listing returns (a bound on the response, far beyond any rule's directory)."""


def _type(mode: int) -> pb.FileType:
    if stat.S_ISREG(mode):
        return pb.FileType.FILE
    if stat.S_ISDIR(mode):
        return pb.FileType.DIRECTORY
    return pb.FileType.UNSPECIFIED


def entry_info(sandbox: Sandbox, host: Path, path: str, user: str) -> pb.EntryInfo:
    """The envd description of sandbox `path` (on the host at `host`); a symlink that resolves to nothing has no type.

    Raises `SandboxError('not_found')` when the path does not exist.
    """
    try:
        info = os.lstat(host)
    except (FileNotFoundError, NotADirectoryError):
        raise SandboxError('not_found', f'file not found: {path}') from None
    except OSError as error:
        raise SandboxError('internal', f'error getting file info: {error}') from None
    kind, mode, target = _type(info.st_mode), stat.S_IMODE(info.st_mode), None
    if stat.S_ISLNK(info.st_mode):
        kind, mode = pb.FileType.UNSPECIFIED, 0
        try:
            target_host, target = sandbox.resolve(path, user)
        except SandboxError:  # a loop: envd reports the link's own target and no type
            target = os.readlink(host)
        else:
            with contextlib.suppress(OSError):
                pointed = os.stat(target_host)
                kind, mode = _type(pointed.st_mode), stat.S_IMODE(pointed.st_mode)
        if kind == pb.FileType.UNSPECIFIED and not sandbox.fidelity.omit_looping_symlinks:
            # Typed as a symlink, the SDK lists it, as a plain directory listing would.
            kind = pb.FileType.SYMLINK
    permissions = stat.filemode(info.st_mode)
    if permissions.startswith('l'):
        permissions = 'L' + permissions[1:]  # as Go's FileMode.String() spells a symlink
    inside = sandbox.root in host.parents or host == sandbox.root
    owner = user if inside else 'root'
    modified = Timestamp(seconds=int(info.st_mtime), nanos=info.st_mtime_ns % 1_000_000_000)
    return pb.EntryInfo(
        name=os.path.basename(path.rstrip('/')) or '/',
        type=kind,
        path=path,
        size=info.st_size,
        mode=mode,
        permissions=permissions,
        owner=owner,
        group=owner,
        modified_time=modified,
        symlink_target=target,
        is_symlink=stat.S_ISLNK(info.st_mode),
    )


def _undecodable(name: str) -> bool:
    try:
        name.encode()
    except UnicodeEncodeError:
        return True
    return False


def _walk(sandbox: Sandbox, host: Path, path: str, user: str, depth: int) -> list[pb.EntryInfo]:
    entries: list[pb.EntryInfo] = []
    pending = [(host, path, 1)]
    while pending:
        directory, where, level = pending.pop(0)
        try:
            names = sorted(os.listdir(directory))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as error:
            raise SandboxError('internal', f'error reading directory {where}: {error}') from None
        for name in names:
            if not name.isprintable() and _undecodable(name):
                # Go's protobuf refuses a string that is not UTF-8, so envd cannot answer this listing either.
                raise SandboxError('internal', f'string field contains invalid UTF-8: a name in {where}')
            child_host, child = directory / name, where.rstrip('/') + '/' + name
            try:
                entry = entry_info(sandbox, child_host, child, user)
            except SandboxError as error:
                if error.code == 'not_found':
                    continue
                raise
            entries.append(entry)
            if len(entries) > _MAX_ENTRIES:
                raise SandboxError('resource_exhausted', f'{path} has more than {_MAX_ENTRIES} entries')
            if level < depth and stat.S_ISDIR(os.lstat(child_host).st_mode):
                pending.append((child_host, child, level + 1))
    return entries


class FilesystemService(Filesystem):
    """The `filesystem.Filesystem` service over the sandboxes `lookup` finds from each request's headers."""

    def __init__(self, lookup: Lookup) -> None:
        self._lookup = lookup

    def _context(self, ctx: RequestContext[object, object]) -> tuple[Sandbox, str]:
        sandbox = self._lookup(ctx)
        with answered_as_connect_errors():
            return sandbox, user_from_authorization(ctx.request_headers.get('authorization'))

    async def stat(self, request: pb.StatRequest, ctx: RequestContext[object, object], /) -> pb.StatResponse:  # type: ignore[override]
        """The entry at the path itself (a symlink is not followed)."""
        sandbox, user = self._context(ctx)
        with answered_as_connect_errors():
            host, path = sandbox.resolve(request.path, user, follow=False)
            entry = entry_info(sandbox, host, path, user)
        return pb.StatResponse(entry=entry)

    async def list_dir(self, request: pb.ListDirRequest, ctx: RequestContext[object, object], /) -> pb.ListDirResponse:  # type: ignore[override]
        """The directory's entries down to `depth` (1 when 0), paths under the requested path."""
        sandbox, user = self._context(ctx)
        depth = request.depth or 1
        with answered_as_connect_errors():
            host, _ = sandbox.resolve(request.path, user)
            if not os.path.lexists(host):
                raise SandboxError('not_found', f'directory not found: {request.path}')
            if not host.is_dir():
                raise SandboxError('invalid_argument', f'path is not a directory: {request.path}')
            sandbox.check_access(host, user, os.R_OK | os.X_OK)
            _, requested = sandbox.resolve(request.path, user, follow=False)
            entries = await asyncio.to_thread(_walk, sandbox, host, requested, user, depth)
        return pb.ListDirResponse(entries=entries)

    async def make_dir(self, request: pb.MakeDirRequest, ctx: RequestContext[object, object], /) -> pb.MakeDirResponse:  # type: ignore[override]
        """Create the directory and its parents; ALREADY_EXISTS when it is there."""
        sandbox, user = self._context(ctx)
        with answered_as_connect_errors():
            host, path = sandbox.resolve(request.path, user)
            if host.is_dir():
                raise SandboxError('already_exists', f'directory already exists: {path}')
            if os.path.lexists(host):
                raise SandboxError('invalid_argument', f'path already exists but it is not a directory: {path}')
            sandbox.writable(host)
            parent = next((p for p in host.parents if p.exists()), sandbox.root)
            sandbox.check_access(parent, user, os.W_OK)
            try:
                host.mkdir(parents=True)
            except NotADirectoryError:
                raise SandboxError('invalid_argument', f'a parent of {path} is not a directory') from None
            except OSError as error:
                raise SandboxError('internal', f'error creating directory: {error}') from None
            entry = entry_info(sandbox, host, path, user)
        return pb.MakeDirResponse(entry=entry)

    async def remove(self, request: pb.RemoveRequest, ctx: RequestContext[object, object], /) -> pb.RemoveResponse:  # type: ignore[override]
        """Remove the file or directory tree; a missing path is not an error."""
        sandbox, user = self._context(ctx)
        with answered_as_connect_errors():
            host, _ = sandbox.resolve(request.path, user, follow=False)
            if host == sandbox.root:
                raise SandboxError('invalid_argument', 'refusing to remove /')
            sandbox.writable(host)
            sandbox.check_access(host.parent, user, os.W_OK)
            try:
                if os.path.isdir(host) and not os.path.islink(host):
                    await asyncio.to_thread(shutil.rmtree, host)
                elif os.path.lexists(host):
                    os.unlink(host)
            except OSError as error:
                raise ConnectError(Code.INTERNAL, f'error removing file or directory: {error}') from None
        return pb.RemoveResponse()

    async def move(self, request: pb.MoveRequest, ctx: RequestContext[object, object], /) -> pb.MoveResponse:  # type: ignore[override]
        """Rename source to destination, creating the destination's parents."""
        sandbox, user = self._context(ctx)
        with answered_as_connect_errors():
            source, _ = sandbox.resolve(request.source, user, follow=False)
            destination, path = sandbox.resolve(request.destination, user, follow=False)
            if not os.path.lexists(source):
                raise SandboxError('not_found', f'source file not found: {request.source}')
            sandbox.writable(source)
            sandbox.writable(destination)
            sandbox.check_access(source.parent, user, os.W_OK)
            try:
                destination.parent.mkdir(parents=True, exist_ok=True)
                os.rename(source, destination)
            except OSError as error:
                raise SandboxError('internal', f'error renaming: {error}') from None
            entry = entry_info(sandbox, destination, path, user)
        return pb.MoveResponse(entry=entry)


def filesystem_app(lookup: Lookup, read_max_bytes: int) -> FilesystemASGIApplication:
    """The ASGI application serving `filesystem.Filesystem` for the sandboxes `lookup` finds."""
    return FilesystemASGIApplication(FilesystemService(lookup), read_max_bytes=read_max_bytes)

"""CloudFiles, a vendor's files-only integration over its own SDK client, with a fault hook for its tests.

Not part of workspace-conformance: `tests/test_first_contact.py` copies this module to a directory of its own and
certifies it through the command line with `--fresh`, `--attach`, `--stop`, `--start` and `--inject-fault`, as a
vendor would. The "SDK" keeps each
sandbox in a directory under the scratch directory it is handed; `inject_fault` arms one failure in it, the way the
vendor's own test suite fakes a dropped connection.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pydantic_ai.workspaces import FileEntry, LocalWorkspaceBackend, WorkspaceRef, WorkspaceUnavailableError


class CloudConnectionError(Exception):
    """The SDK's error for a dropped connection: callers (and durable engines) retry it."""


class CloudSetupError(Exception):
    """The SDK's error when a new sandbox could not be prepared."""


class CloudClient:
    """The vendor's SDK client: creates sandboxes, prepares them, and answers calls on them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.armed: set[str] = set()
        self.stopped: set[str] = set()

    async def create(self) -> str:
        path = self.root / f'sandbox-{os.urandom(4).hex()}'
        path.mkdir(parents=True)
        return str(path.resolve())

    async def prepare(self, sandbox: str) -> None:
        if 'setup' in self.armed:
            self.armed.discard('setup')
            raise CloudSetupError(f'preparing {sandbox} failed')
        (Path(sandbox) / 'workspace').mkdir(exist_ok=True)

    async def call(self, sandbox: str) -> LocalWorkspaceBackend:
        if 'transient' in self.armed:
            self.armed.discard('transient')
            raise CloudConnectionError('connection reset by peer')
        if not (Path(sandbox) / 'workspace').is_dir():
            raise WorkspaceUnavailableError(f'sandbox {sandbox} is gone')
        if sandbox in self.stopped:
            raise WorkspaceUnavailableError(f'sandbox {sandbox} is stopped')
        return LocalWorkspaceBackend(Path(sandbox) / 'workspace')


class CloudFiles:
    """One CloudFiles sandbox: created on first use, its ref recorded before it is prepared."""

    def __init__(self, client: CloudClient, ref: WorkspaceRef | None = None) -> None:
        self._client = client
        self._ref = ref

    @property
    def ref(self) -> WorkspaceRef | None:
        return self._ref

    async def _files(self) -> LocalWorkspaceBackend:
        if self._ref is None:
            self._ref = WorkspaceRef(provider='cloud-files', id=await self._client.create())
            await self._client.prepare(self._ref.id)
        return await self._client.call(self._ref.id)

    async def working_dir(self) -> str:
        return await (await self._files()).working_dir()

    async def read_bytes(self, path: str) -> bytes:
        return await (await self._files()).read_bytes(path)

    async def write_bytes(self, path: str, data: bytes) -> None:
        await (await self._files()).write_bytes(path, data)

    async def stat(self, path: str) -> FileEntry:
        return await (await self._files()).stat(path)

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return await (await self._files()).list_dir(path)

    async def make_dir(self, path: str) -> None:
        await (await self._files()).make_dir(path)

    async def remove(self, path: str) -> None:
        await (await self._files()).remove(path)

    async def exists(self, path: str) -> bool:
        return await (await self._files()).exists(path)


class WrappingCloudFiles(CloudFiles):
    """The same integration with a common slip: every SDK error is reported as a lost sandbox."""

    async def _files(self) -> LocalWorkspaceBackend:
        try:
            return await super()._files()
        except CloudConnectionError as error:
            raise WorkspaceUnavailableError(f'sandbox unreachable: {error}') from error


_CLIENTS: dict[Path, CloudClient] = {}


def _client(scratch: Path) -> CloudClient:
    return _CLIENTS.setdefault(scratch, CloudClient(scratch))


def build(scratch: Path) -> CloudFiles:
    """A new sandbox under the directory certify gives this factory."""
    return CloudFiles(_client(scratch))


def build_wrapping(scratch: Path) -> CloudFiles:
    """A new sandbox of the integration with the slip."""
    return WrappingCloudFiles(_client(scratch))


def attach(ref: WorkspaceRef) -> CloudFiles:
    """A backend for the sandbox a ref names, through the client that created it."""
    (client,) = [client for client in _CLIENTS.values() if ref.id.startswith(str(client.root.resolve()) + os.sep)]
    return CloudFiles(client, ref)


async def stop(backend: CloudFiles) -> None:
    """The vendor's hook for its tests: the sandbox's init dies, its disk is kept."""
    assert backend.ref is not None
    backend._client.stopped.add(backend.ref.id)


async def start(backend: CloudFiles) -> None:
    """Start the stopped sandbox again, with its disk."""
    assert backend.ref is not None
    backend._client.stopped.discard(backend.ref.id)


def inject_fault(backend: CloudFiles, kind: str) -> type[Exception] | None:
    """The vendor's own fault hook: arm one failure of its SDK client."""
    errors: dict[str, type[Exception]] = {'transient': CloudConnectionError, 'setup': CloudSetupError}
    if kind in errors:
        backend._client.armed.add(kind)
    return errors.get(kind)


def inject_fault_async(backend: CloudFiles, kind: str) -> object:
    """A slip: a coroutine where the fixture wants the error type."""

    async def armed() -> type[Exception] | None:
        return inject_fault(backend, kind)

    return armed()


async def inject_fault_awaited(backend: CloudFiles, kind: str) -> type[Exception] | None:
    """A slip `certify` refuses at load: an `async def` hook, which the suite calls without awaiting."""
    return inject_fault(backend, kind)

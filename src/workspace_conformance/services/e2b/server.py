"""The service: one loopback HTTP/1.1 port answering E2B's control plane and every sandbox's envd.

A request carrying `E2b-Sandbox-Id` goes to that sandbox's envd (as E2B's edge routes it when the SDK is given
`E2B_SANDBOX_URL`), after its `X-Access-Token` is checked; any other request is the control plane's.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shutil
import socket
import tempfile
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .confinement import bwrap_path
from .control import ControlPlane
from .files import BodyTooLarge, download, error_response, health, read_body, upload
from .filesystem import filesystem_app
from .process import process_app
from .sandbox import Fidelity, Sandbox

__all__ = ('DEFAULT_MAX_BODY', 'E2BService', 'E2BSettings', 'ServiceThread', 'serve_e2b')

DEFAULT_MAX_BODY = 256 * 1024 * 1024
"""The largest upload (and Connect message) the service reads, in bytes."""

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class E2BSettings:
    """Where a running service is and how the real `e2b` SDK reaches it."""

    api_url: str
    sandbox_url: str
    api_key: str
    confined: bool
    """Whether sandboxes run in bubblewrap namespaces (False: unconfined host processes)."""
    state_dir: Path

    def environ(self) -> dict[str, str]:
        """The environment variables that point the `e2b` SDK at the service."""
        return {
            'E2B_API_URL': self.api_url,
            'E2B_SANDBOX_URL': self.sandbox_url,
            'E2B_API_KEY': self.api_key,
            # The service speaks HTTP/1.1 only (uvicorn); the SDK defaults to HTTP/2.
            'E2B_HTTP_VERSION': '1.1',
        }


class E2BService:
    """The ASGI application: control plane and envd, over the sandboxes of one `ControlPlane`."""

    def __init__(self, control: ControlPlane, max_body: int) -> None:
        self.control = control
        self.max_body = max_body
        self._process = process_app(self._lookup, max_body)
        self._filesystem = filesystem_app(self._lookup, max_body)

    def _lookup(self, ctx: RequestContext[Any, Any]) -> Sandbox:
        sandbox_id = ctx.request_headers.get('e2b-sandbox-id', '')
        sandbox = self.control.sandboxes.get(sandbox_id)
        if sandbox is None or sandbox.paused:
            raise ConnectError(Code.UNAVAILABLE, f'The sandbox {sandbox_id} was not found')
        return sandbox

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope['type'] != 'http':
            return
        try:
            await self._dispatch(scope, receive, send)
        except Exception as error:  # never a traceback on the wire: E2B's error shape
            with contextlib.suppress(Exception):
                await error_response(500, f'internal error: {type(error).__name__}: {error}')(scope, receive, send)

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        sandbox_id = request.headers.get('e2b-sandbox-id')
        if sandbox_id is None:
            response = await self.control.handle(request)
            await response(scope, receive, send)
            return
        path = scope['path']
        rpc = path.startswith(('/process.Process/', '/filesystem.Filesystem/'))
        sandbox = self.control.sandboxes.get(sandbox_id)
        if sandbox is None or sandbox.paused:
            # What E2B's edge answers for a sandbox that is not running (killed, timed out or paused).
            gone = {'code': 502, 'message': f'The sandbox {sandbox_id} was not found', 'sandboxId': sandbox_id}
            await JSONResponse(gone, status_code=502)(scope, receive, send)
            return
        if path == '/health':
            await health(request)(scope, receive, send)
            return
        token = request.headers.get('x-access-token', '')
        if not secrets.compare_digest(token, sandbox.access_token):
            message = 'invalid or missing X-Access-Token for this sandbox'
            answer: Response = (
                JSONResponse({'code': 'unauthenticated', 'message': message}, status_code=401)
                if rpc
                else error_response(401, message)
            )
            await answer(scope, receive, send)
            return
        if path.startswith('/process.Process/'):
            await self._process(scope, receive, send)
            return
        if path.startswith('/filesystem.Filesystem/'):
            await self._filesystem(scope, receive, send)
            return
        if path == '/files' and request.method == 'GET':
            response = await download(request, sandbox)
        elif path == '/files' and request.method == 'POST':
            try:
                body = await read_body(request, self.max_body)
            except BodyTooLarge as error:
                response = error_response(413, str(error))
            else:
                response = await upload(request, sandbox, body, self.max_body)
        else:
            response = error_response(404, f'{request.method} {path} is not an envd path')
        await response(scope, receive, send)


class _Server(uvicorn.Server):
    """uvicorn's server, leaving SIGINT and SIGTERM to whoever runs the service."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.asynccontextmanager
async def serve_e2b(
    *,
    port: int = 0,
    root: Path | None = None,
    fidelity: Fidelity = Fidelity(),  # noqa: B008 - frozen, shared safely
    confine: bool = True,
    max_body: int = DEFAULT_MAX_BODY,
    api_key: str | None = None,
) -> AsyncIterator[E2BSettings]:
    """Serve E2B on 127.0.0.1:`port` (0: a free one) while the block runs; then kill every sandbox and its files.

    Sandboxes live under `root` (default: a new temporary directory, removed afterwards). `confine=False`, or no
    `bwrap` installed, runs them unconfined.
    """
    owned = root is None
    base = Path(tempfile.mkdtemp(prefix='e2b-local-')) if root is None else root
    base.mkdir(parents=True, exist_ok=True)
    state_dir = Path(tempfile.mkdtemp(prefix='sandboxes-', dir=base))
    bwrap = bwrap_path() if confine else None
    key = api_key or 'e2b_' + secrets.token_hex(20)
    control = ControlPlane(state_dir, key, fidelity, bwrap)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(('127.0.0.1', port))
    except OSError as error:
        listener.close()
        shutil.rmtree(state_dir, ignore_errors=True)
        if owned:
            shutil.rmtree(base, ignore_errors=True)
        raise OSError(f'cannot listen on 127.0.0.1:{port}: {error.strerror}') from None
    bound = listener.getsockname()[1]
    config = uvicorn.Config(
        E2BService(control, max_body),
        lifespan='off',
        log_level='warning',
        access_log=False,
        # Longer than the SDK keeps an idle connection (E2B_KEEPALIVE_EXPIRY, 300 s), so the client closes it first
        # and never sends a request on a connection the server is closing.
        timeout_keep_alive=330,
        timeout_graceful_shutdown=2,
    )
    server = _Server(config)
    serving = asyncio.ensure_future(server.serve(sockets=[listener]))
    reaper = asyncio.ensure_future(control.reap())
    try:
        while not server.started:
            if serving.done():
                serving.result()
                raise RuntimeError('the E2B service stopped as it started')
            await asyncio.sleep(0.01)
        url = f'http://127.0.0.1:{bound}'
        yield E2BSettings(url, url, key, bwrap is not None, state_dir)
    finally:
        reaper.cancel()
        server.should_exit = True
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(serving, 10)
        await control.kill_all()
        listener.close()
        shutil.rmtree(state_dir, ignore_errors=True)
        if owned:
            shutil.rmtree(base, ignore_errors=True)


class ServiceThread:
    """`serve_e2b` in a thread of its own with its own event loop, for callers without one (targets)."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._error: BaseException | None = None
        self.settings: E2BSettings | None = None
        self._thread = threading.Thread(target=self._run, name='e2b-local-service', daemon=True)

    def start(self) -> E2BSettings:
        """Start the service and return its settings once it listens."""
        self._thread.start()
        self._ready.wait(60)
        if self._error is not None:
            raise self._error
        if self.settings is None:
            raise RuntimeError('the E2B service did not start within 60 s')
        return self.settings

    def stop(self) -> None:
        """Stop the service, killing every sandbox, and wait for it."""
        if self._loop is not None and self._stop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(60)

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            async with serve_e2b(**self._options) as settings:
                self.settings = settings
                self._ready.set()
                await self._stop.wait()

        try:
            asyncio.run(main())
        except BaseException as error:
            self._error = error
        finally:
            self._ready.set()

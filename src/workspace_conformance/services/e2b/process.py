"""envd's `process.Process` Connect service: start commands, stream their output, list, signal and feed them.

The wire format is the one `process.proto` in e2b-dev/infra defines; messages and the Connect protocol come from
the `e2b` SDK's generated modules and `connectrpc`, imported at run time (this module is loaded only by `serve`).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Literal

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from e2b.envd.process import process_pb as pb
from e2b.envd.process.process_connect import ProcessASGIApplication
from protobuf import Oneof

from .sandbox import Event, Gone, ProcessEnd, Sandbox, SandboxError, SandboxProcess, user_from_authorization

__all__ = ('ProcessService', 'answered_as_connect_errors', 'connect_error', 'process_app')

KEEPALIVE_SECONDS = 30.0
"""How often an idle output stream carries a keepalive event, as envd's do."""

_SIGNALS = {pb.Signal.SIGKILL: signal.SIGKILL, pb.Signal.SIGTERM: signal.SIGTERM}

Lookup = Callable[[RequestContext[object, object]], Sandbox]


def connect_error(error: SandboxError) -> ConnectError:
    """The Connect error envd answers for `error`."""
    try:
        code = Code(error.code)
    except ValueError:
        code = Code.INTERNAL
    return ConnectError(code, error.message)


@contextlib.contextmanager
def answered_as_connect_errors() -> Iterator[None]:
    """Inside, a `SandboxError` leaves as the Connect error envd answers for it (`connect_error`)."""
    try:
        yield
    except SandboxError as error:
        raise connect_error(error) from None


def _start(pid: int) -> pb.ProcessEvent:
    start: Oneof[Literal['start'], pb.ProcessEvent.StartEvent] = Oneof('start', pb.ProcessEvent.StartEvent(pid=pid))
    return pb.ProcessEvent(event=start)


def _event(event: tuple[str, bytes] | ProcessEnd) -> pb.ProcessEvent:
    if isinstance(event, ProcessEnd):
        end = pb.ProcessEvent.EndEvent(
            exit_code=event.exit_code, exited=event.exited, status=event.status, error=event.error
        )
        ended: Oneof[Literal['end'], pb.ProcessEvent.EndEvent] = Oneof('end', end)
        return pb.ProcessEvent(event=ended)
    name, data = event
    if name == 'stdout':
        out: Oneof[Literal['stdout'], bytes] = Oneof('stdout', data)
        data_event = pb.ProcessEvent.DataEvent(output=out)
    else:
        err: Oneof[Literal['stderr'], bytes] = Oneof('stderr', data)
        data_event = pb.ProcessEvent.DataEvent(output=err)
    chunk: Oneof[Literal['data'], pb.ProcessEvent.DataEvent] = Oneof('data', data_event)
    return pb.ProcessEvent(event=chunk)


async def _stream(handle: SandboxProcess, queue: asyncio.Queue[Event]) -> AsyncIterator[pb.ProcessEvent]:
    """The start event, then the process's events until its end, with keepalives while it is quiet."""
    try:
        yield _start(handle.pid)
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
            except TimeoutError:
                alive: Oneof[Literal['keepalive'], pb.ProcessEvent.KeepAlive] = Oneof(
                    'keepalive', pb.ProcessEvent.KeepAlive()
                )
                yield pb.ProcessEvent(event=alive)
                continue
            if isinstance(event, Gone):
                raise ConnectError(
                    Code.UNAVAILABLE, f'The sandbox was not found: killed while process {handle.pid} ran'
                )
            yield _event(event)
            if isinstance(event, ProcessEnd):
                return
    finally:
        handle.unsubscribe(queue)


def _select(sandbox: Sandbox, selector: pb.ProcessSelector | None) -> SandboxProcess:
    chosen = selector.selector if selector is not None else None
    if chosen is None:
        raise SandboxError('invalid_argument', 'no process selector (pid or tag)')
    if chosen.field == 'pid':
        return sandbox.find(int(chosen.value), None)
    return sandbox.find(None, str(chosen.value))


class ProcessService:
    """The `process.Process` service over the sandboxes `lookup` finds from each request's headers."""

    def __init__(self, lookup: Lookup) -> None:
        self._lookup = lookup

    def _sandbox(self, ctx: RequestContext[object, object]) -> Sandbox:
        return self._lookup(ctx)

    async def list(self, request: pb.ListRequest, ctx: RequestContext[object, object], /) -> pb.ListResponse:
        """Every running process of the sandbox with its config and tag."""
        sandbox = self._sandbox(ctx)
        infos = [
            pb.ProcessInfo(
                config=pb.ProcessConfig(cmd=p.cmd, args=p.args, envs=p.envs, cwd=p.cwd),
                pid=p.pid,
                tag=p.tag,
            )
            for p in sandbox.processes.values()
            if p.end is None
        ]
        return pb.ListResponse(processes=infos)

    async def start(
        self, request: pb.StartRequest, ctx: RequestContext[object, object], /
    ) -> AsyncIterator[pb.StartResponse]:
        """Start the configured command and stream its start, output and end."""
        sandbox = self._sandbox(ctx)
        config = request.process
        if config is None or not config.cmd:
            raise ConnectError(Code.INVALID_ARGUMENT, 'process.cmd is required')
        if request.pty is not None:
            raise ConnectError(Code.UNIMPLEMENTED, 'PTY processes are not emulated by workspace-conformance')
        with answered_as_connect_errors():
            user = user_from_authorization(ctx.request_headers.get('authorization'))
            handle, queue = await sandbox.start(
                cmd=config.cmd,
                args=list(config.args),
                envs=dict(config.envs),
                cwd=config.cwd or None,
                user=user,
                tag=request.tag,
                stdin=bool(request.stdin),
            )
        async for event in _stream(handle, queue):
            yield pb.StartResponse(event=event)

    async def connect(
        self, request: pb.ConnectRequest, ctx: RequestContext[object, object], /
    ) -> AsyncIterator[pb.ConnectResponse]:
        """Stream a running process's events from now on (its end, if it just ended)."""
        sandbox = self._sandbox(ctx)
        with answered_as_connect_errors():
            handle = _select(sandbox, request.process)
        async for event in _stream(handle, handle.subscribe()):
            yield pb.ConnectResponse(event=event)

    async def update(self, request: pb.UpdateRequest, ctx: RequestContext[object, object], /) -> pb.UpdateResponse:
        """Resizing a PTY: not emulated."""
        raise ConnectError(Code.UNIMPLEMENTED, 'PTY processes are not emulated by workspace-conformance')

    async def stream_input(
        self, request: AsyncIterator[pb.StreamInputRequest], ctx: RequestContext[object, object], /
    ) -> pb.StreamInputResponse:
        """Write a stream of input to the process its first event selects."""
        sandbox = self._sandbox(ctx)
        handle: SandboxProcess | None = None
        with answered_as_connect_errors():
            async for message in request:
                chosen = message.event
                if chosen is None or chosen.field == 'keepalive':
                    continue
                if chosen.field == 'start':
                    handle = _select(sandbox, chosen.value.process)
                elif handle is None:
                    raise SandboxError('invalid_argument', 'input before the start event')
                else:
                    await _write(handle, chosen.value.input)
        return pb.StreamInputResponse()

    async def send_input(
        self, request: pb.SendInputRequest, ctx: RequestContext[object, object], /
    ) -> pb.SendInputResponse:
        """Write bytes to the selected process's stdin."""
        with answered_as_connect_errors():
            await _write(_select(self._sandbox(ctx), request.process), request.input)
        return pb.SendInputResponse()

    async def send_signal(
        self, request: pb.SendSignalRequest, ctx: RequestContext[object, object], /
    ) -> pb.SendSignalResponse:
        """Send SIGTERM or SIGKILL to the selected process (its whole process group)."""
        sandbox = self._sandbox(ctx)
        with answered_as_connect_errors():
            handle = _select(sandbox, request.process)
        signum = _SIGNALS.get(request.signal)
        if signum is None:
            raise ConnectError(Code.INVALID_ARGUMENT, f'unsupported signal {request.signal!r}')
        sandbox.signal(handle, signum)
        return pb.SendSignalResponse()

    async def close_stdin(
        self, request: pb.CloseStdinRequest, ctx: RequestContext[object, object], /
    ) -> pb.CloseStdinResponse:
        """Close the selected process's stdin (EOF)."""
        with answered_as_connect_errors():
            handle = _select(self._sandbox(ctx), request.process)
        stdin = handle.process.stdin
        if stdin is None:
            raise ConnectError(Code.FAILED_PRECONDITION, 'the process was started without stdin')
        with contextlib.suppress(OSError):
            stdin.close()
        return pb.CloseStdinResponse()


async def _write(handle: SandboxProcess, given: pb.ProcessInput | None) -> None:
    stdin = handle.process.stdin
    if stdin is None:
        raise SandboxError('failed_precondition', 'the process was started without stdin')
    chosen = given.input if given is not None else None
    if chosen is None or chosen.field != 'stdin':
        raise SandboxError('invalid_argument', 'only stdin input is emulated (no PTY)')
    try:
        stdin.write(chosen.value)
        await stdin.drain()
    except (OSError, RuntimeError) as error:
        raise SandboxError('failed_precondition', f'stdin is closed: {error}') from None


def process_app(lookup: Lookup, read_max_bytes: int) -> ProcessASGIApplication:
    """The ASGI application serving `process.Process` for the sandboxes `lookup` finds."""
    return ProcessASGIApplication(ProcessService(lookup), read_max_bytes=read_max_bytes)  # type: ignore[arg-type]

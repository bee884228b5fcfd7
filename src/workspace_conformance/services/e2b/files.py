"""envd's HTTP API (`envd.yaml` in e2b-dev/infra): `GET /health`, and `GET`/`POST /files` to download and upload.

Uploads are `multipart/form-data` (each part's filename is its path unless `?path=` names the only one) or, as
envd 0.5.7 takes them, a raw `application/octet-stream` body (optionally gzip) to `?path=`. Parents are created.
Errors are envd's JSON `{"code": status, "message": ...}`.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
import zlib
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .sandbox import Sandbox, SandboxError, check_user

__all__ = ('BodyTooLarge', 'download', 'error_response', 'health', 'read_body', 'upload')

_STATUS = {
    'not_found': 404,
    'invalid_argument': 400,
    'permission_denied': 403,
    'failed_precondition': 400,
    'already_exists': 409,
    'resource_exhausted': 507,
    'unauthenticated': 401,
}


class BodyTooLarge(Exception):
    """A request body went over the service's bound."""


def error_response(status: int, message: str) -> JSONResponse:
    """The error body of envd and of E2B's API: `{"code": status, "message": message}`."""
    return JSONResponse({'code': status, 'message': message}, status_code=status)


def _answer(error: SandboxError) -> JSONResponse:
    return error_response(_STATUS.get(error.code, 500), error.message)


async def read_body(request: Request, limit: int) -> bytes:
    """The whole request body, or `BodyTooLarge` as soon as it passes `limit` bytes."""
    declared = request.headers.get('content-length')
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(f'the request body is larger than {limit} bytes')
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f'the request body is larger than {limit} bytes')
        chunks.append(chunk)
    return b''.join(chunks)


def health(_: Request) -> Response:
    """The health check: 204 and no body, as envd answers it."""
    return Response(status_code=204)


def _user(request: Request) -> str:
    return check_user(request.query_params.get('username') or 'user')


async def download(request: Request, sandbox: Sandbox) -> Response:
    """The file at `?path=` as `application/octet-stream`, byte for byte."""
    path = request.query_params.get('path')
    try:
        user = _user(request)
        if not path:
            raise SandboxError('invalid_argument', 'the path query parameter is required')
        host, resolved = sandbox.resolve(path, user)
        if not os.path.exists(host):
            raise SandboxError('not_found', f'path {resolved!r} does not exist')
        if os.path.isdir(host):
            raise SandboxError('invalid_argument', f'path {resolved!r} is a directory')
        if not os.path.isfile(host):  # a FIFO or a device: never wait on it
            raise SandboxError('invalid_argument', f'path {resolved!r} is not a regular file')
        sandbox.check_access(host, user, os.R_OK)
        # Read whole, so the length sent is the length read even while a command rewrites the file.
        data = await asyncio.to_thread(sandbox.as_envd, host, stat.S_IRUSR, lambda: _read(host))
    except SandboxError as error:
        return _answer(error)
    except PermissionError:
        return error_response(403, f'open {path}: permission denied')
    except OSError as error:
        return error_response(500, f'error reading {path!r}: {error}')
    return Response(data, media_type='application/octet-stream')


def _read(host: Path) -> bytes:
    with open(host, 'rb') as stream:
        return stream.read()


_BOUNDARY = re.compile(r'boundary=(?:"([^"]+)"|([^;\s]+))', re.IGNORECASE)
_DISPOSITION = re.compile(rb'(\w+)="((?:[^"\\]|\\.)*)"')


def parse_multipart(body: bytes, content_type: str) -> list[tuple[str | None, bytes]]:
    """The (filename, content) of each part of a `multipart/form-data` body; `SandboxError` when malformed."""
    match = _BOUNDARY.search(content_type)
    if match is None:
        raise SandboxError('invalid_argument', 'multipart body without a boundary')
    delimiter = b'\r\n--' + (match.group(1) or match.group(2)).encode('latin-1')
    pieces = (b'\r\n' + body).split(delimiter)
    if len(pieces) < 3 or not pieces[-1].startswith(b'--'):
        raise SandboxError('invalid_argument', 'malformed multipart body')
    parts: list[tuple[str | None, bytes]] = []
    for piece in pieces[1:-1]:
        head, separator, content = piece.partition(b'\r\n\r\n')
        if not separator:
            raise SandboxError('invalid_argument', 'malformed multipart part')
        filename = None
        for line in head.split(b'\r\n'):
            if line.lower().startswith(b'content-disposition:'):
                fields = {k.lower(): v.replace(b'\\"', b'"') for k, v in _DISPOSITION.findall(line)}
                if b'filename' in fields:
                    filename = fields[b'filename'].decode('utf-8', 'surrogateescape')
        parts.append((filename, content))
    return parts


def _write(sandbox: Sandbox, path: str, user: str, data: bytes) -> dict[str, str]:
    host, resolved = sandbox.resolve(path, user)
    if os.path.isdir(host):
        raise SandboxError('invalid_argument', f'path {resolved!r} is a directory')
    sandbox.writable(host)
    existing = next((p for p in (host, *host.parents) if p.exists()), sandbox.root)
    sandbox.check_access(existing, user, os.W_OK)
    try:
        host.parent.mkdir(parents=True, exist_ok=True)
    except (NotADirectoryError, FileExistsError):
        raise SandboxError('invalid_argument', f'a parent of {resolved!r} is not a directory') from None
    if os.path.lexists(host) and not os.path.isfile(host):  # a FIFO or a device: never wait on it, never replace it
        raise SandboxError('invalid_argument', f'path {resolved!r} is not a regular file')

    # Written in place, as envd writes: the file keeps its inode, mode and links.
    def write() -> None:
        with open(host, 'wb') as stream:
            stream.write(data)

    try:
        if os.path.exists(host):
            sandbox.as_envd(host, stat.S_IWUSR, write)
        else:
            sandbox.as_envd(host.parent, stat.S_IWUSR | stat.S_IXUSR, write)
    except PermissionError:
        raise SandboxError('permission_denied', f'open {resolved}: permission denied') from None
    except OSError as error:
        raise SandboxError('internal', f'error writing {resolved!r}: {error}') from None
    return {'name': os.path.basename(resolved), 'type': 'file', 'path': resolved}


def _gunzip(body: bytes, limit: int) -> bytes:
    """The gzip `body` decompressed, refused once it passes `limit` bytes (a small body can inflate enormously)."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, limit + 1)
    except zlib.error as error:
        raise SandboxError('invalid_argument', f'the gzip body does not decompress: {error}') from None
    if len(data) > limit or inflater.unconsumed_tail:
        raise SandboxError('resource_exhausted', f'the gzip body inflates past {limit} bytes')
    if not inflater.eof:
        raise SandboxError('invalid_argument', 'the gzip body is truncated')
    return data


async def upload(request: Request, sandbox: Sandbox, body: bytes, limit: int) -> Response:
    """Write the uploaded file(s), creating parents; answers the list of written entries."""
    content_type = request.headers.get('content-type', '')
    try:
        user = _user(request)
        path = request.query_params.get('path')
        if content_type.startswith('multipart/form-data'):
            parts = parse_multipart(body, content_type)
            if not parts:
                raise SandboxError('invalid_argument', 'no file in the multipart body')
            if path is not None and len(parts) != 1:
                raise SandboxError('invalid_argument', 'the path parameter names one file, the body has several')
            files = []
            for filename, content in parts:
                target = path if path is not None else filename
                if not target:
                    raise SandboxError('invalid_argument', 'a multipart part names no file path')
                files.append((target, content))
        else:
            if not path:
                raise SandboxError('invalid_argument', 'the path query parameter is required')
            if request.headers.get('content-encoding', '').lower() == 'gzip':
                body = _gunzip(body, limit)
            files = [(path, body)]
        written = [_write(sandbox, target, user, content) for target, content in files]
    except SandboxError as error:
        return _answer(error)
    return JSONResponse(written)

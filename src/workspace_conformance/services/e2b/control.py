"""E2B's control plane (its OpenAPI `/sandboxes` paths): create, connect, get, list, pause, resume, set timeout, kill.

Requests carry the API key in `X-API-KEY`; a wrong or missing key is 401. Bodies are E2B's JSON shapes, errors
its `{"code": status, "message": ...}`; an unknown or killed sandbox is 404. A pause keeps the filesystem only
(E2B's `mode="filesystem"`: its processes end, and connecting or resuming cold-boots it with its files); a memory
snapshot is not emulated (400). A sandbox whose timeout runs out is killed (the harness asks E2B to pause it then;
here its files go); a paused one does not run out.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .files import BodyTooLarge, error_response, read_body
from .sandbox import Fidelity, Sandbox

__all__ = ('DEFAULT_TIMEOUT', 'ENVD_VERSION', 'MAX_TIMEOUT', 'ControlPlane')

ENVD_VERSION = '0.5.7'
"""The envd version sandboxes report: the SDK then uses stdin closing and octet-stream uploads."""

DEFAULT_TIMEOUT = 15
"""E2B's default sandbox lifetime in seconds when a create request names none."""

MAX_TIMEOUT = 24 * 3600
"""The longest lifetime accepted, as E2B's Pro plan allows."""

CLIENT_ID = 'workspace-conformance'
_CONTROL_BODY_LIMIT = 1024 * 1024


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat().replace('+00:00', 'Z')


def _string_map(value: object, name: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValueError(f'{name} must be an object of strings')
    return dict(value)


def _timeout(value: object) -> int:
    if value is None:
        return DEFAULT_TIMEOUT
    if type(value) is not int or value < 0:
        raise ValueError('timeout must be a non-negative integer of seconds')
    if value > MAX_TIMEOUT:
        raise ValueError(f'Timeout cannot be greater than {MAX_TIMEOUT // 3600} hours')
    return value


class ControlPlane:
    """The sandboxes of one service and the HTTP handlers of E2B's API over them."""

    def __init__(self, state_dir: Path, api_key: str, fidelity: Fidelity, bwrap: str | None) -> None:
        self.state_dir = state_dir
        self.api_key = api_key
        self.fidelity = fidelity
        self.bwrap = bwrap
        self.sandboxes: dict[str, Sandbox] = {}

    # -- lifecycle ----------------------------------------------------------------------------------------------

    async def kill(self, sandbox_id: str) -> bool:
        """Kill the sandbox `sandbox_id` (its processes and files); False when there is none."""
        sandbox = self.sandboxes.pop(sandbox_id, None)
        if sandbox is None:
            return False
        await sandbox.kill()
        return True

    async def kill_all(self) -> None:
        """Kill every sandbox."""
        await asyncio.gather(*(self.kill(sandbox_id) for sandbox_id in list(self.sandboxes)))

    async def reap(self) -> None:
        """Kill the sandboxes whose lifetime ran out, once a second, until cancelled."""
        while True:
            await asyncio.sleep(1)
            now = time.time()
            for sandbox_id, sandbox in list(self.sandboxes.items()):
                if sandbox.end_at <= now and not sandbox.paused:
                    await self.kill(sandbox_id)

    # -- HTTP ---------------------------------------------------------------------------------------------------

    def _created(self, sandbox: Sandbox) -> dict[str, Any]:
        return {
            'templateID': sandbox.template,
            'sandboxID': sandbox.sandbox_id,
            'clientID': CLIENT_ID,
            'envdVersion': ENVD_VERSION,
            'envdAccessToken': sandbox.access_token,
            'domain': None,
        }

    def _detail(self, sandbox: Sandbox) -> dict[str, Any]:
        return {
            'templateID': sandbox.template,
            'sandboxID': sandbox.sandbox_id,
            'clientID': CLIENT_ID,
            'startedAt': _iso(sandbox.started_at),
            'endAt': _iso(sandbox.end_at),
            'envdVersion': ENVD_VERSION,
            'envdAccessToken': sandbox.access_token,
            'cpuCount': 2,
            'memoryMB': 512,
            'diskSizeMB': 1024,
            'state': 'paused' if sandbox.paused else 'running',
            'metadata': sandbox.metadata,
            'domain': None,
        }

    def _listed(self, sandbox: Sandbox) -> dict[str, Any]:
        detail = self._detail(sandbox)
        del detail['envdAccessToken'], detail['domain']
        return detail

    def _not_found(self, sandbox_id: str) -> JSONResponse:
        return error_response(404, f"sandbox '{sandbox_id}' not found")

    async def handle(self, request: Request) -> Response:
        """Answer one control-plane request, as E2B's API would."""
        if not secrets.compare_digest(request.headers.get('x-api-key', ''), self.api_key):
            return error_response(401, 'Invalid API key, it must start with e2b_ and be the key this service printed')
        parts = [part for part in request.url.path.split('/') if part]
        if parts[:1] == ['v2']:
            parts = parts[1:]
        method = request.method
        try:
            body = await self._json(request) if method in ('POST', 'PUT') else {}
            if parts == ['sandboxes'] and method == 'POST':
                return await self._create(body)
            if parts == ['sandboxes'] and method == 'GET':
                return self._list(request.query_params)
            if len(parts) >= 2 and parts[0] == 'sandboxes':
                return await self._one(parts[1], parts[2:], method, body)
        except ValueError as error:
            return error_response(400, str(error))
        except BodyTooLarge as error:
            return error_response(413, str(error))
        return error_response(404, f'{method} {request.url.path} is not a path of this E2B emulation')

    async def _json(self, request: Request) -> dict[str, Any]:
        raw = await read_body(request, _CONTROL_BODY_LIMIT)
        if not raw.strip():
            return {}
        try:
            value = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f'request body is not JSON: {error}') from None
        if not isinstance(value, dict):
            raise ValueError('request body must be a JSON object')
        return value

    async def _create(self, body: Mapping[str, Any]) -> Response:
        template = body.get('templateID', 'base')
        if not isinstance(template, str) or not template:
            raise ValueError('templateID must be a non-empty string')
        timeout = _timeout(body.get('timeout'))
        sandbox = await asyncio.to_thread(
            Sandbox,
            self.state_dir,
            template=template,
            timeout=timeout,
            env_vars=_string_map(body.get('envVars'), 'envVars'),
            metadata=_string_map(body.get('metadata'), 'metadata'),
            fidelity=self.fidelity,
            bwrap=self.bwrap,
        )
        self.sandboxes[sandbox.sandbox_id] = sandbox
        return JSONResponse(self._created(sandbox), status_code=201)

    def _list(self, query: QueryParams) -> Response:
        wanted: dict[str, str] = {}
        if query.get('metadata'):
            from urllib.parse import parse_qsl, unquote

            wanted = {unquote(k): unquote(v) for k, v in parse_qsl(query['metadata'])}
        # `state=running,paused` or `state=running&state=paused` (the SDK's list): running alone by default.
        given = query.getlist('state') or ['running']
        states = {state.strip() for value in given for state in value.split(',') if state.strip()}
        listed = [
            self._listed(sandbox)
            for sandbox in self.sandboxes.values()
            if ('paused' if sandbox.paused else 'running') in states
            and all(sandbox.metadata.get(k) == v for k, v in wanted.items())
        ]
        return JSONResponse(listed)

    async def _one(self, sandbox_id: str, rest: list[str], method: str, body: Mapping[str, Any]) -> Response:
        sandbox = self.sandboxes.get(sandbox_id)
        if rest == [] and method == 'DELETE':
            return Response(status_code=204) if await self.kill(sandbox_id) else self._not_found(sandbox_id)
        if sandbox is None:
            return self._not_found(sandbox_id)
        if rest == [] and method == 'GET':
            return JSONResponse(self._detail(sandbox))
        if rest in (['connect'], ['resume']) and method == 'POST':
            return self._connect(sandbox, body, resume_only=rest == ['resume'])
        if rest == ['timeout'] and method == 'POST':
            sandbox.end_at = time.time() + _timeout(body.get('timeout'))
            return Response(status_code=204)
        if rest == ['pause'] and method == 'POST':
            return await self._pause(sandbox, body)
        return error_response(404, f'{method} /sandboxes/{sandbox_id}/{"/".join(rest)} is not emulated')

    def _connect(self, sandbox: Sandbox, body: Mapping[str, Any], *, resume_only: bool) -> Response:
        """Connect (200: it was running) or resume (201: it was paused, and is cold-booted now)."""
        if not sandbox.paused:
            if resume_only:
                return error_response(409, f'sandbox {sandbox.sandbox_id!r} is already running')
            if body.get('timeout') is not None:
                sandbox.end_at = max(sandbox.end_at, time.time() + _timeout(body['timeout']))
            return JSONResponse(self._created(sandbox), status_code=200)
        sandbox.resume(_timeout(body.get('timeout')))
        return JSONResponse(self._created(sandbox), status_code=201)

    async def _pause(self, sandbox: Sandbox, body: Mapping[str, Any]) -> Response:
        """A filesystem-only pause (204); 409 when it is paused already; 400 for a memory snapshot."""
        if sandbox.paused:
            return error_response(409, f'sandbox {sandbox.sandbox_id!r} is already paused')
        if body.get('memory', True) is not False:
            return error_response(
                400,
                'memory snapshots are not emulated by workspace-conformance serve e2b: pause with '
                "mode='filesystem' (the sandbox then cold-boots on resume, its files kept)",
            )
        await sandbox.pause()
        return Response(status_code=204)

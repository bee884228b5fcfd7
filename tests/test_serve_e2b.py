"""`serve e2b` driven by the real `e2b` SDK, async and sync, including calls the harness never makes.

Skipped where the SDK or the service's libraries are not installed (`workspace-conformance[serve]`); run by the
`targets` session (COMPAT_TESTS), which has pydantic-ai-harness[e2b]. Every test stops what it starts: the service's
fixture checks that no process of the service's sandboxes is left and that its state directory is gone.
"""

from __future__ import annotations

import asyncio
import gzip
import http.client
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

e2b = pytest.importorskip('e2b')
pytest.importorskip('uvicorn')
pytest.importorskip('starlette')

from workspace_conformance.services.e2b.confinement import bwrap_path  # noqa: E402
from workspace_conformance.services.e2b.sandbox import Fidelity  # noqa: E402
from workspace_conformance.services.e2b.server import E2BSettings, ServiceThread  # noqa: E402

pytestmark = pytest.mark.xdist_group('serve-e2b')

UNDECODABLE = b'\x00caf\xe9 \xff\xfe\r\n\x80end'


def _processes_under(root: Path) -> list[str]:
    """Processes whose command line or working directory names `root`."""
    found = []
    for entry in Path('/proc').iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / 'cmdline').read_bytes().replace(b'\0', b' ').decode(errors='replace')
            cwd = os.readlink(entry / 'cwd')
        except OSError:
            continue
        if str(root) in command or cwd.startswith(str(root)):
            found.append(f'{entry.name}: {command[:120]}')
    return found


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[E2BSettings]:
    """A service on a free port, the SDK pointed at it; afterwards nothing of it may be left."""
    fidelity = getattr(request, 'param', Fidelity())
    thread = ServiceThread(root=tmp_path / 'service', fidelity=fidelity)
    settings = thread.start()
    _FIDELITIES[settings.api_url] = fidelity
    for name, value in settings.environ().items():
        monkeypatch.setenv(name, value)
    try:
        yield settings
    finally:
        thread.stop()
        assert not settings.state_dir.exists()
        assert _processes_under(settings.state_dir) == []


def _raw(
    settings: E2BSettings, method: str, path: str, body: bytes = b'', headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    """One HTTP request to the service, without the SDK: (status, body)."""
    request = urllib.request.Request(settings.api_url + path, data=body or None, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _declared_too_large(settings: E2BSettings, path: str, headers: dict[str, str]) -> int:
    """The status of a request declaring a 2 GiB body, answered before any of it is sent."""
    host, _, port = settings.api_url.removeprefix('http://').partition(':')
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.putrequest('POST', path)
        for name, value in {**headers, 'Content-Length': str(2 << 30)}.items():
            connection.putheader(name, value)
        connection.endheaders()
        return connection.getresponse().status
    finally:
        connection.close()


# -- the async SDK -----------------------------------------------------------------------------------------------


def test_the_async_sdk_creates_runs_writes_reads_lists_reconnects_and_kills(service: E2BSettings) -> None:
    async def scenario() -> None:
        sandbox = await e2b.AsyncSandbox.create(timeout=120, envs={'GREETING': 'hi'}, metadata={'suite': 'wc'})
        result = await sandbox.commands.run('echo "$GREETING"; echo oops >&2; pwd; whoami')
        assert (result.stdout, result.stderr, result.exit_code) == ('hi\n/home/user\nuser\n', 'oops\n', 0)
        assert (await sandbox.commands.run('whoami; echo $HOME', user='root')).stdout == 'root\n/root\n'

        with pytest.raises(e2b.CommandExitException) as raised:
            await sandbox.commands.run('echo before; exit 7')
        assert raised.value.exit_code == 7
        assert raised.value.stdout == 'before\n'

        await sandbox.files.write('deep/er/blob.bin', UNDECODABLE)  # relative: under the home, parents made
        assert bytes(await sandbox.files.read('/home/user/deep/er/blob.bin', format='bytes')) == UNDECODABLE
        listed = await sandbox.files.list('/home/user', depth=2)
        assert {(entry.path, entry.type.value) for entry in listed} >= {
            ('/home/user/deep', 'dir'),
            ('/home/user/deep/er', 'dir'),
        }
        assert '/home/user/deep/er/blob.bin' not in {entry.path for entry in listed}  # depth 2 stops above it
        assert await sandbox.files.make_dir('/home/user/new') is True
        assert await sandbox.files.make_dir('/home/user/new') is False
        moved = await sandbox.files.rename('/home/user/deep/er/blob.bin', '/home/user/elsewhere/blob.bin')
        assert moved.path == '/home/user/elsewhere/blob.bin'
        assert (await sandbox.files.get_info('/home/user/elsewhere/blob.bin')).size == len(UNDECODABLE)
        await sandbox.files.remove('/home/user/deep')
        assert not await sandbox.files.exists('/home/user/deep')

        # Undecodable output reaches the SDK byte for byte; it decodes with U+FFFD as it does for E2B.
        printed = await sandbox.commands.run("printf 'caf\\351\\n'")
        assert printed.stdout == 'caf\ufffd\n'

        infos = await e2b.AsyncSandbox.list().next_items()
        assert [info.sandbox_id for info in infos] == [sandbox.sandbox_id]
        assert (await e2b.AsyncSandbox.get_info(sandbox.sandbox_id)).metadata == {'suite': 'wc'}
        again = await e2b.AsyncSandbox.connect(sandbox.sandbox_id)
        assert (await again.commands.run('cat /home/user/elsewhere/blob.bin | wc -c')).stdout.strip() == str(
            len(UNDECODABLE)
        )

        assert await e2b.AsyncSandbox.kill(sandbox.sandbox_id) is True
        with pytest.raises(e2b.SandboxNotFoundException):
            await e2b.AsyncSandbox.connect(sandbox.sandbox_id)
        assert await e2b.AsyncSandbox.kill(sandbox.sandbox_id) is False
        with pytest.raises(e2b.SandboxException):
            await sandbox.commands.run('true')

    asyncio.run(scenario())


def test_a_filesystem_pause_ends_the_processes_keeps_the_files_and_connecting_resumes(service: E2BSettings) -> None:
    async def scenario() -> None:
        sandbox = await e2b.AsyncSandbox.create(timeout=120)
        await sandbox.files.write('/home/user/kept.txt', b'written before the pause')
        await sandbox.commands.run('sleep 600', background=True)
        with pytest.raises(e2b.SandboxException, match='memory snapshots are not emulated'):
            await e2b.AsyncSandbox.pause(sandbox.sandbox_id)  # `mode="full"`, the SDK's default
        assert await e2b.AsyncSandbox.pause(sandbox.sandbox_id, mode='filesystem') is True
        assert await e2b.AsyncSandbox.pause(sandbox.sandbox_id, mode='filesystem') is False  # paused already: 409
        assert (await e2b.AsyncSandbox.get_info(sandbox.sandbox_id)).state == e2b.SandboxState.PAUSED
        assert await e2b.AsyncSandbox.list().next_items() == []  # running ones by default
        paused = e2b.SandboxQuery(state=[e2b.SandboxState.RUNNING, e2b.SandboxState.PAUSED])
        assert [info.sandbox_id for info in await e2b.AsyncSandbox.list(query=paused).next_items()] == [
            sandbox.sandbox_id
        ]
        assert not [line for line in _processes_under(service.state_dir) if 'sleep 600' in line]
        # envd behind a paused sandbox: the edge's 502 for a sandbox that is not running.
        with pytest.raises(e2b.SandboxNotRunningException):
            await sandbox.files.read('/home/user/kept.txt')
        with pytest.raises(e2b.SandboxNotRunningException):
            await sandbox.commands.run('true')

        resumed = await e2b.AsyncSandbox.connect(sandbox.sandbox_id)  # resumes: cold-booted from its files
        assert (await e2b.AsyncSandbox.get_info(sandbox.sandbox_id)).state == e2b.SandboxState.RUNNING
        assert bytes(await resumed.files.read('/home/user/kept.txt', format='bytes')) == b'written before the pause'
        assert await resumed.commands.list() == []
        assert (await resumed.commands.run('echo up again')).stdout == 'up again\n'
        assert await e2b.AsyncSandbox.kill(sandbox.sandbox_id) is True

    asyncio.run(scenario())


def test_background_commands_take_stdin_are_listed_and_killed(service: E2BSettings) -> None:
    async def scenario() -> None:
        sandbox = await e2b.AsyncSandbox.create()
        cat = await sandbox.commands.run('cat', background=True, stdin=True)
        await sandbox.commands.send_stdin(cat.pid, 'through stdin\n')
        await sandbox.commands.close_stdin(cat.pid)
        assert (await cat.wait()).stdout == 'through stdin\n'

        late = await sandbox.commands.run('sleep 1; echo late', background=True)
        joined = await sandbox.commands.connect(late.pid)  # a second stream on the running command
        assert (await joined.wait()).stdout == 'late\n'

        sleeper = await sandbox.commands.run('sleep 300', background=True)
        assert sleeper.pid in [process.pid for process in await sandbox.commands.list()]
        assert await sandbox.commands.kill(sleeper.pid) is True
        with pytest.raises(e2b.CommandExitException) as raised:
            await sleeper.wait()
        assert raised.value.exit_code == -1
        await sandbox.kill()

    asyncio.run(scenario())


# -- the sync SDK ------------------------------------------------------------------------------------------------


def test_the_sync_sdk_does_the_same(service: E2BSettings) -> None:
    sandbox = e2b.Sandbox.create()
    assert sandbox.commands.run('echo sync').stdout == 'sync\n'
    with pytest.raises(e2b.CommandExitException) as raised:
        sandbox.commands.run('false')
    assert raised.value.exit_code == 1
    sandbox.files.write('/tmp/s/x.bin', UNDECODABLE)
    assert bytes(sandbox.files.read('/tmp/s/x.bin', format='bytes')) == UNDECODABLE
    assert [entry.name for entry in sandbox.files.list('/tmp/s')] == ['x.bin']
    assert [info.sandbox_id for info in e2b.Sandbox.list().next_items()] == [sandbox.sandbox_id]
    same = e2b.Sandbox.connect(sandbox.sandbox_id)
    assert same.commands.run('cat /tmp/s/x.bin | wc -c').stdout.strip() == str(len(UNDECODABLE))
    sandbox.kill()
    with pytest.raises(e2b.SandboxNotFoundException):
        e2b.Sandbox.connect(sandbox.sandbox_id)


# -- refusals and bad input --------------------------------------------------------------------------------------


def test_a_wrong_api_key_and_a_wrong_access_token_are_refused(service: E2BSettings) -> None:
    with pytest.raises(e2b.AuthenticationException):
        e2b.Sandbox.create(api_key='e2b_' + '0' * 40)
    sandbox = e2b.Sandbox.create()
    for token in ('', 'not-the-token'):
        status, body = _raw(
            service,
            'GET',
            '/files?path=/etc/hostname',
            headers={'E2b-Sandbox-Id': sandbox.sandbox_id, 'X-Access-Token': token},
        )
        assert status == 401 and json.loads(body)['code'] == 401
    status, body = _raw(service, 'GET', '/health', headers={'E2b-Sandbox-Id': 'nosuch'})
    assert status == 502 and 'was not found' in json.loads(body)['message']
    sandbox.kill()


def test_malformed_requests_get_e2b_error_shapes_never_a_traceback(service: E2BSettings) -> None:
    key = {'X-API-KEY': service.api_key, 'Content-Type': 'application/json'}
    for body in (b'{not json', b'[1, 2]', b'{"templateID": 5}', b'{"timeout": "long"}', b'{"envVars": {"A": 1}}'):
        status, answer = _raw(service, 'POST', '/v2/sandboxes', body, key)
        assert status == 400, body
        assert set(json.loads(answer)) == {'code', 'message'}
    status, answer = _raw(service, 'GET', '/no/such/path', headers=key)
    assert status == 404 and json.loads(answer)['code'] == 404
    assert _raw(service, 'GET', '/sandboxes/nosuch', headers=key)[0] == 404
    assert _declared_too_large(service, '/v2/sandboxes', key) == 413

    sandbox = e2b.Sandbox.create()
    envd = {'E2b-Sandbox-Id': sandbox.sandbox_id, 'X-Access-Token': sandbox._envd_access_token or ''}
    bad_multipart = {**envd, 'Content-Type': 'multipart/form-data; boundary=zz'}
    status, answer = _raw(service, 'POST', '/files?path=/tmp/x', b'--zz\r\nno end', bad_multipart)
    assert status == 400 and set(json.loads(answer)) == {'code', 'message'}
    assert _declared_too_large(service, '/files?path=/tmp/big', envd) == 413
    raw = {**envd, 'Content-Type': 'application/octet-stream', 'Content-Encoding': 'gzip'}
    status, answer = _raw(service, 'POST', '/files?path=/tmp/z', b'not gzip', raw)
    assert status == 400 and set(json.loads(answer)) == {'code', 'message'}
    status, answer = _raw(service, 'POST', '/files?path=/tmp/z', gzip.compress(UNDECODABLE), raw)
    assert status == 200 and json.loads(answer) == [{'name': 'z', 'type': 'file', 'path': '/tmp/z'}]
    assert bytes(sandbox.files.read('/tmp/z', format='bytes')) == UNDECODABLE
    status, answer = _raw(service, 'GET', '/files?path=/home/user/missing', headers=envd)
    assert status == 404 and json.loads(answer)['code'] == 404
    rpc = {**envd, 'Content-Type': 'application/proto'}
    status, answer = _raw(service, 'POST', '/filesystem.Filesystem/Stat', b'\xff\xff\xff', rpc)
    assert status >= 400 and b'Traceback' not in answer
    status, answer = _raw(
        service, 'POST', '/process.Process/Start', b'{"process": 3}', {**envd, 'Content-Type': 'application/json'}
    )
    assert status >= 400 and b'Traceback' not in answer
    sandbox.kill()


def test_twenty_sandboxes_created_concurrently_all_work(service: E2BSettings) -> None:
    async def one() -> tuple[str, str]:
        sandbox = await e2b.AsyncSandbox.create()
        result = await sandbox.commands.run('echo $E2B_SANDBOX_ID > /tmp/me; cat /tmp/me')
        await sandbox.files.write('/home/user/me', sandbox.sandbox_id)
        mine = await sandbox.files.read('/home/user/me')
        return sandbox.sandbox_id, result.stdout.strip() + '|' + mine

    async def scenario() -> list[tuple[str, str]]:
        return await asyncio.gather(*(one() for _ in range(20)))

    results = asyncio.run(scenario())
    assert len({sandbox_id for sandbox_id, _ in results}) == 20
    assert all(seen == f'{sandbox_id}|{sandbox_id}' for sandbox_id, seen in results)


def test_a_killed_sandbox_leaves_no_process_and_no_file(service: E2BSettings) -> None:
    sandbox = e2b.Sandbox.create()
    # A background child, a grandchild in a session of its own, and files.
    sandbox.commands.run('sleep 600', background=True)
    sandbox.commands.run('setsid sh -c "sleep 700 & sleep 800" >/dev/null 2>&1 &', background=False)
    sandbox.files.write('/home/user/left.txt', 'x')
    root = service.state_dir / sandbox.sandbox_id
    assert (root / 'root' / 'home' / 'user' / 'left.txt').exists()
    assert _sleepers() != []
    sandbox.kill()
    assert not root.exists()
    deadline = time.monotonic() + 5
    while _sleepers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _sleepers() == []


def _sleepers(durations: tuple[bytes, ...] = (b'600', b'700', b'800')) -> list[str]:
    """`sleep` processes of these durations (each test sleeps its own, so tests beside it do not count)."""
    found = []
    for entry in Path('/proc').iterdir():
        try:
            command = (entry / 'cmdline').read_bytes().split(b'\0')
        except OSError:
            continue
        if command[:1] == [b'sleep'] and command[1:2] and command[1] in durations:
            found.append(entry.name)
    return found


# -- what a sandbox looks like from inside -----------------------------------------------------------------------


@pytest.mark.skipif(bwrap_path() is None, reason='bubblewrap (bwrap) is not installed')
def test_a_sandbox_has_its_own_root_and_no_host_path_leaks(service: E2BSettings, tmp_path: Path) -> None:
    assert service.confined
    secret = tmp_path / 'host-secret'
    secret.write_text('host only')
    sandbox = e2b.Sandbox.create()
    listing = sandbox.commands.run('ls -A /').stdout.split()
    assert 'work' not in listing and 'home' in listing and 'tmp' in listing
    assert sandbox.commands.run(f'test -e {secret} && echo leaked || echo absent').stdout == 'absent\n'
    # A symlink pointing at a host path resolves inside the sandbox, for commands and for envd alike.
    sandbox.commands.run(f'ln -s {secret} /home/user/link; ln -s / /home/user/top')
    with pytest.raises(e2b.FileNotFoundException):
        sandbox.files.read('/home/user/link')
    assert sandbox.files.read('/home/user/top/home/user/top/etc/hostname', format='bytes') is not None
    sandbox.files.write('/tmp/inside.txt', 'inside')
    assert sandbox.commands.run('cat /tmp/inside.txt').stdout == 'inside'
    assert not Path('/tmp/inside.txt').exists()
    sandbox.kill()


# -- fidelity switches -------------------------------------------------------------------------------------------


@pytest.mark.parametrize('service', [Fidelity(), Fidelity(end_after_pipes_close=False)], indirect=True)
def test_a_command_ends_after_its_output_pipes_close_unless_switched_off(service: E2BSettings) -> None:
    sandbox = e2b.Sandbox.create()
    started = time.monotonic()
    sandbox.commands.run('sleep 2 & echo started')
    waited = time.monotonic() - started
    if sandbox_fidelity(service).end_after_pipes_close:
        assert waited >= 1.9
    else:
        assert waited < 1.5
    sandbox.kill()


@pytest.mark.parametrize('service', [Fidelity(), Fidelity(omit_looping_symlinks=False)], indirect=True)
def test_looping_symlinks_are_left_out_of_listings_unless_switched_off(service: E2BSettings) -> None:
    sandbox = e2b.Sandbox.create()
    sandbox.commands.run('mkdir /home/user/d && cd /home/user/d && ln -s a b && ln -s b a && touch f')
    names = sorted(entry.name for entry in sandbox.files.list('/home/user/d'))
    expected = ['f'] if sandbox_fidelity(service).omit_looping_symlinks else ['a', 'b', 'f']
    assert names == expected
    sandbox.kill()


@pytest.mark.parametrize('service', [Fidelity(), Fidelity(privileged_files=False)], indirect=True)
def test_envd_file_operations_ignore_mode_bits_unless_switched_off(service: E2BSettings) -> None:
    sandbox = e2b.Sandbox.create()
    sandbox.files.write('/home/user/locked', 'secret')
    sandbox.commands.run('chmod 000 /home/user/locked')
    if service.confined:  # the shell, as `user`, is refused
        assert sandbox.commands.run('cat /home/user/locked 2>&1; true').stdout.endswith('Permission denied\n')
    if sandbox_fidelity(service).privileged_files:
        assert sandbox.files.read('/home/user/locked') == 'secret'
    else:
        with pytest.raises(e2b.SandboxException):
            sandbox.files.read('/home/user/locked')
    sandbox.kill()


def sandbox_fidelity(settings: E2BSettings) -> Fidelity:
    """The fidelity the running service was started with (read back from the service thread's options)."""
    return _FIDELITIES.get(settings.api_url, Fidelity())


_FIDELITIES: dict[str, Fidelity] = {}


# -- the command line --------------------------------------------------------------------------------------------


@pytest.mark.parametrize('signum', [signal.SIGTERM, signal.SIGINT])
def test_serve_prints_the_settings_and_stops_on_a_signal_leaving_nothing(tmp_path: Path, signum: int) -> None:
    root = tmp_path / 'root'
    process = subprocess.Popen(
        [sys.executable, '-m', 'workspace_conformance', 'serve', 'e2b', '--port', '0', '--root', str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        settings: dict[str, str] = {}
        while len(settings) < 4:
            line = process.stdout.readline()
            assert line, process.stderr.read() if process.stderr else ''
            key, _, value = line.strip().partition('=')
            settings[key] = value
        assert set(settings) == {'E2B_API_URL', 'E2B_SANDBOX_URL', 'E2B_API_KEY', 'E2B_HTTP_VERSION'}
        assert settings['E2B_API_URL'].startswith('http://127.0.0.1:')
        sandbox = e2b.Sandbox.create(
            api_key=settings['E2B_API_KEY'],
            api_url=settings['E2B_API_URL'],
            sandbox_url=settings['E2B_SANDBOX_URL'],
            http_version='1.1',
        )
        sandbox.commands.run(f'sleep {9000 + signum}', background=True)  # its own duration: xdist neighbours differ
        process.send_signal(signum)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert list(root.iterdir()) == []
    assert not any(str(9000 + signum).encode() in (entry / 'cmdline').read_bytes() for entry in _sleeper_entries())


def _sleeper_entries() -> list[Path]:
    entries = []
    for entry in Path('/proc').iterdir():
        try:
            if (entry / 'cmdline').read_bytes().startswith(b'sleep\0'):
                entries.append(entry)
        except OSError:
            continue
    return entries


def test_without_bubblewrap_the_service_says_it_runs_unconfined_and_still_cleans_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    thread = ServiceThread(root=tmp_path / 'service', confine=False)
    settings = thread.start()
    try:
        assert not settings.confined
        for name, value in settings.environ().items():
            monkeypatch.setenv(name, value)
        sandbox = e2b.Sandbox.create()
        home = sandbox.commands.run('pwd').stdout.strip()
        assert home == str(settings.state_dir / sandbox.sandbox_id / 'root' / 'home' / 'user')  # host paths
        sandbox.files.write('/home/user/x', UNDECODABLE)
        assert sandbox.commands.run('wc -c < x').stdout.strip() == str(len(UNDECODABLE))
        sandbox.commands.run('sleep 601', background=True)
    finally:
        thread.stop()
    assert not settings.state_dir.exists()
    assert _sleepers((b'601',)) == []


def test_an_upload_is_bounded_also_after_gzip_inflates_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    thread = ServiceThread(root=tmp_path / 'service', max_body=4096)
    settings = thread.start()
    try:
        for name, value in settings.environ().items():
            monkeypatch.setenv(name, value)
        sandbox = e2b.Sandbox.create()
        envd = {'E2b-Sandbox-Id': sandbox.sandbox_id, 'X-Access-Token': sandbox._envd_access_token or ''}
        bomb = gzip.compress(b'\0' * 100_000)
        assert len(bomb) < 4096
        headers = {**envd, 'Content-Type': 'application/octet-stream', 'Content-Encoding': 'gzip'}
        status, answer = _raw(settings, 'POST', '/files?path=/tmp/bomb', bomb, headers)
        assert status == 507 and 'inflates past 4096' in json.loads(answer)['message']
        assert not sandbox.files.exists('/tmp/bomb')
    finally:
        thread.stop()
    assert not settings.state_dir.exists()


def test_lifetimes_metadata_filters_and_the_end_of_a_timeout(service: E2BSettings) -> None:
    from e2b.sandbox.sandbox_api import SandboxQuery

    short = e2b.Sandbox.create(timeout=1, metadata={'kind': 'short'})
    kept = e2b.Sandbox.create(timeout=60, metadata={'kind': 'kept'})
    kept.set_timeout(120)
    assert (kept.get_info().end_at - kept.get_info().started_at).total_seconds() > 100
    found = e2b.Sandbox.list(query=SandboxQuery(metadata={'kind': 'kept'})).next_items()
    assert [info.sandbox_id for info in found] == [kept.sandbox_id]
    short.commands.run('sleep 901 &>/dev/null &')
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and short.sandbox_id in [i.sandbox_id for i in e2b.Sandbox.list().next_items()]:
        time.sleep(0.2)
    with pytest.raises(e2b.SandboxNotFoundException):
        e2b.Sandbox.get_info(short.sandbox_id)  # its lifetime ran out: killed, as E2B kills (pausing is not emulated)
    assert not (service.state_dir / short.sandbox_id).exists()
    assert kept.commands.run('echo alive').stdout == 'alive\n'

"""Acme's sandbox integration for pydantic-ai, written the way a vendor would: commands only, asyncio only.

Not part of workspace-conformance: `tests/test_first_contact.py` copies this module to a directory of its own and
certifies it through the command line, as a vendor does. It carries one planted bug (stderr dropped on success).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic_ai.workspaces import CommandResult, WorkspaceRef, WorkspaceTimeoutError

DRAIN_GRACE = 0.5


class AcmeSandbox:
    """One Acme sandbox: a directory its commands run in."""

    def __init__(self, root: Path, ref: WorkspaceRef | None = None) -> None:
        self._root = root
        self._ref = ref

    @property
    def ref(self) -> WorkspaceRef | None:
        return self._ref

    async def _sandbox(self) -> Path:
        asyncio.get_running_loop()  # Acme's client only runs on asyncio
        if self._ref is None:
            path = self._root / f'sandbox-{id(self):x}'
            path.mkdir()
            self._ref = WorkspaceRef(provider='acme', id=str(path.resolve()))
        return Path(self._ref.id)

    async def working_dir(self) -> str:
        return str(await self._sandbox())

    async def run(
        self,
        command: str | Sequence[str],
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        cwd = await self._sandbox()
        if shell != isinstance(command, str):
            raise TypeError('pass a string with shell=True and a sequence without it')
        if timeout is not None and not 0 < timeout < float('inf'):
            raise ValueError('timeout must be a positive finite number of seconds')
        argv = ['/bin/sh', '-c', command] if isinstance(command, str) else list(command)
        variables = {'PATH': '/usr/local/bin:/usr/bin:/bin', 'HOME': str(cwd), 'LANG': 'C.UTF-8', **(env or {})}
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=cwd,
                env=variables,
                start_new_session=True,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except FileNotFoundError:
            return CommandResult(exit_code=127, stdout='', stderr=f'{argv[0]}: not found\n')
        except PermissionError:
            return CommandResult(exit_code=126, stdout='', stderr=f'{argv[0]}: permission denied\n')
        stdout: list[bytes] = []
        stderr: list[bytes] = []

        async def drain(stream: asyncio.StreamReader | None, into: list[bytes]) -> None:
            assert stream is not None
            while chunk := await stream.read(1 << 16):
                into.append(chunk)

        readers = asyncio.ensure_future(asyncio.gather(drain(process.stdout, stdout), drain(process.stderr, stderr)))

        async def exited() -> int:
            while process.returncode is None:  # not process.wait(): it also waits for a background child's pipes
                await asyncio.sleep(0.005)
            return process.returncode

        try:
            code = await asyncio.wait_for(exited(), timeout)
        except BaseException as error:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await asyncio.wait({readers}, timeout=DRAIN_GRACE)
            readers.cancel()
            if isinstance(error, asyncio.TimeoutError):
                raise WorkspaceTimeoutError(
                    f'command timed out after {timeout} s',
                    stdout=b''.join(stdout).decode(errors='replace'),
                    stderr=b''.join(stderr).decode(errors='replace'),
                ) from None
            raise
        await asyncio.wait({readers}, timeout=DRAIN_GRACE)
        readers.cancel()
        if code < 0:
            code = 128 - code
        # THE PLANTED BUG: Acme's client drops stderr whenever the command succeeds.
        err = b''.join(stderr).decode(errors='replace') if code != 0 else ''
        return CommandResult(exit_code=code, stdout=b''.join(stdout).decode(errors='replace'), stderr=err)


def build(scratch: Path) -> AcmeSandbox:
    """A new sandbox under the directory certify gives this factory."""
    return AcmeSandbox(scratch)


async def connect(scratch: Path) -> AcmeSandbox:
    """The same sandbox from an `async def` factory, as users of async SDKs write them."""
    await asyncio.sleep(0)
    return AcmeSandbox(scratch)


def build_class(scratch: Path) -> type[AcmeSandbox]:
    """A common slip: the class instead of an instance."""
    return AcmeSandbox


def build_without_credentials() -> AcmeSandbox:
    """A factory that cannot work here: Acme's client wants a key."""
    raise PermissionError('ACME_API_KEY is not set')

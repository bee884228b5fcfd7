"""A sandbox a vendor might ship, written as an outsider would: commands run in a bubblewrap jail of its own.

It knows nothing of workspace-conformance. Each command runs as `bwrap --unshare-all --die-with-parent --new-session
--clearenv` over a read-only /usr and /etc, a private /proc, /dev and /tmp, and the workspace bound read-write at its
own path. Its files methods are `LocalWorkspaceBackend`'s, on the host directory; only commands are jailed.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic_ai.workspaces import CommandResult, LocalWorkspaceBackend, WorkspaceCommand

JAIL = (
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    *('--setenv', 'PATH', '/usr/local/bin:/usr/bin:/bin'),
    *('--setenv', 'HOME', '/tmp'),
    *('--ro-bind', '/usr', '/usr'),
    *('--ro-bind', '/etc', '/etc'),
    *('--symlink', 'usr/bin', '/bin'),
    *('--symlink', 'usr/sbin', '/sbin'),
    *('--symlink', 'usr/lib', '/lib'),
    *('--symlink', 'usr/lib64', '/lib64'),
    *('--proc', '/proc'),
    *('--dev', '/dev'),
    *('--tmpfs', '/tmp'),
)
"""The jail's own isolation: every namespace new, no host variable, no host /tmp, nothing of the host's root."""


class BwrapJail(LocalWorkspaceBackend):
    """A workspace on a host directory whose commands run in a bubblewrap jail; `jail` replaces the default options."""

    def __init__(self, root: Path | str, *, jail: Sequence[str] = JAIL) -> None:
        super().__init__(root)
        self._jail = tuple(jail)
        self._root = str(Path(root).resolve())

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        if isinstance(command, str):
            if not shell:
                raise TypeError('a string command needs shell=True')
            inner = ['sh', '-c', command]
        elif shell:
            raise TypeError('an argv cannot be combined with shell=True')
        else:
            inner = ['sh', '-c', 'exec "$@"', 'sh', *command]
        variables = [part for name, value in (env or {}).items() for part in ('--setenv', name, value)]
        argv = ['bwrap', *self._jail, '--bind', self._root, self._root, '--chdir', self._root, *variables, '--', *inner]
        return await super().run(argv, timeout=timeout)

    def __repr__(self) -> str:
        return f'BwrapJail({self._root!r}, jail={shlex.join(self._jail)!r})'

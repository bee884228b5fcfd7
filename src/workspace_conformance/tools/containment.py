"""Rules on where tools act: inside the run's workspace only, never on the host's cwd, home or other paths."""

from __future__ import annotations

from collections.abc import Sequence

from ..authoring import rule, skip
from ._shared import listed
from ._sweeps import Recorded, ToolSweeps

__all__ = ('ContainmentRules',)


def _inside(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip('/') + '/') for root in roots)


def _read_findings(recorded: Recorded) -> list[str]:
    """Reads, listings and existence checks of a decoy path, or of a path bearing the workspace's token."""
    found = []
    for call in recorded.calls:
        for event in call.host:
            if event.kind == 'read' and (_inside(event.path, recorded.decoys) or recorded.seeds.token in event.path):
                found.append(f'{call}: {event}')
    return found


class ContainmentRules:
    """Rules on the host I/O of tool calls, watched with Python's audit hooks and decoy trees."""

    @rule(area='containment', alone=True, must='T01')
    async def test_no_host_writes(self, sweeps: ToolSweeps) -> None:
        """No tool call writes, removes, renames, creates or changes anything on the host outside the workspace."""
        found: list[str] = []
        for recorded in await sweeps.sweep_all():
            found += [f'{call}: {event}' for call in recorded.calls for event in call.host if event.kind == 'write']
            found += [f'on {recorded.workspace.name}: {path} changed' for path in recorded.decoys_changed]
        assert not found, f'tool calls changed the host outside the workspace:{listed(found)}'

    @rule(area='containment', alone=True, must='T01')
    async def test_no_host_processes_or_sockets(self, sweeps: ToolSweeps) -> None:
        """No tool call starts a host process or opens a host connection instead of using `ctx.workspace`."""
        found = [
            f'{call}: {event}'
            for recorded in await sweeps.sweep_all()
            for call in recorded.calls
            for event in call.host
            if event.kind in ('process', 'connect')
        ]
        assert not found, f'tool calls started host processes or connections:{listed(found)}'

    @rule(area='containment', alone=True, must='T01')
    async def test_no_host_reads(self, sweeps: ToolSweeps) -> None:
        """No tool call reads, lists or checks the existence of a host path outside the workspace."""
        found: list[str] = []
        for recorded in await sweeps.sweep_all():
            found += _read_findings(recorded)
            found += [
                f'{call}: returned decoy content'
                for call in recorded.calls
                if f'decoy {recorded.seeds.token}' in call.content
            ]
        assert not found, f'tool calls read host paths outside the workspace:{listed(found)}'

    @rule(area='containment', alone=True, must='T01')
    async def test_nothing_on_the_host_for_remote_workspaces(self, sweeps: ToolSweeps) -> None:
        """In a workspace without a host root (memory, commands-only, files-only), tools touch no host path."""
        remote = [where for where in sweeps.workspaces if not where.local]
        if not remote:
            skip('not-applicable', 'every workspace of the `workspaces` fixture is local')
        found: list[str] = []
        for recorded in await sweeps.sweep_all(remote):
            roots = (str(recorded.root.resolve()), recorded.working_dir)
            found += [
                f'{call}: {event}'
                for call in recorded.calls
                for event in call.host
                if event.kind not in ('process', 'connect') and _inside(event.path, roots)
            ]
        assert not found, f'tools touched the host where the workspace keeps nothing on it:{listed(found)}'

    @rule(area='containment', alone=True, claim='contained')
    async def test_symlinks_do_not_lead_out(self, sweeps: ToolSweeps) -> None:
        """A symlink in the workspace that points outside lets no tool read or write outside it."""
        linked = [where for where in sweeps.workspaces if where.symlinks]
        if not linked:
            skip('not-applicable', 'no workspace of the `workspaces` fixture holds symlinks')
        found: list[str] = []
        for recorded in await sweeps.sweep_all(linked, tool_calls={}, symlinked=True):
            secret = f'outside secret {recorded.seeds.token}'
            found += [f'{call} returned the outside file' for call in recorded.calls if secret in call.content]
            outside = recorded.decoys[-1]
            found += [
                f'on {recorded.workspace.name}: {path} changed'
                for path in recorded.decoys_changed
                if path.startswith(outside)
            ]
        assert not found, f'symlinks in the workspace led tools outside it:{listed(found)}'

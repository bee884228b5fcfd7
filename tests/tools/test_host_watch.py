"""The host watch the tool suite stands on, and the arguments it derives from a tool's JSON schema."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic_ai.tools import ToolDefinition

from workspace_conformance.authoring import calling, owning, watching_host
from workspace_conformance.runtime import host_audit
from workspace_conformance.tools._discovery import derive_arguments, path_parameter
from workspace_conformance.tools._fit import needs_commands
from workspace_conformance.tools._host_audit import host_tree
from workspace_conformance.tools._workspaces import Seeds


def test_a_tools_stray_write_is_refused_and_recorded_and_reads_are_recorded(tmp_path: Path) -> None:
    stray, seen = tmp_path / 'stray.txt', tmp_path / 'seen.txt'
    seen.write_text('x')
    with watching_host() as watch, calling('save'):
        with pytest.raises(PermissionError, match=r'tools must act through ctx\.workspace'):
            stray.write_text('x')
        assert seen.exists() and seen.read_text() == 'x'
    assert not stray.exists()
    assert [(event.kind, event.event, event.path) for event in watch.events] == [
        ('write', 'open', str(stray)),
        ('read', 'os.stat', str(seen)),
        ('read', 'open', str(seen)),
    ]
    assert all(event.tool == 'save' for event in watch.events)


def test_the_workspaces_own_io_and_io_outside_a_tool_call_are_not_findings(tmp_path: Path) -> None:
    with watching_host() as watch:
        (tmp_path / 'setup.txt').write_text('x')  # no tool is running
        with calling('save'), owning():
            (tmp_path / 'backend.txt').write_text('x')  # the workspace backend's own I/O
        with calling('save'):
            (tmp_path / 'setup.txt').read_bytes()  # a read by the tool: recorded
    assert [event.event for event in watch.events] == ['open']
    assert os.stat is host_audit._ORIGINAL['stat']  # the wrappers are gone after the window


def test_writes_inside_an_allowed_root_are_not_findings(tmp_path: Path) -> None:
    with watching_host([str(tmp_path)]) as watch, calling('save'):
        (tmp_path / 'inside.txt').write_text('x')
    assert watch.events == []


def test_windows_do_not_nest() -> None:
    with watching_host(), pytest.raises(RuntimeError, match='do not nest'), watching_host():
        pass


def _tool(name: str, properties: dict[str, object], required: list[str]) -> ToolDefinition:
    schema = {'type': 'object', 'properties': properties, 'required': required}
    return ToolDefinition(name=name, parameters_json_schema=schema)


def test_arguments_are_derived_from_the_schema() -> None:
    seeds = Seeds('t0k')
    read = _tool(
        'read_file',
        {
            'path': {'type': 'string'},
            'mode': {'type': 'string', 'enum': ['text', 'bytes']},
            'limit': {'type': 'integer'},
            'raw': {'type': 'boolean'},
            'file_type': {'type': 'string'},
            'offset': {'type': 'integer'},
        },
        ['path', 'mode', 'limit', 'raw', 'file_type'],
    )
    assert derive_arguments(read, seeds) == {
        'path': 'notes-t0k.txt',
        'mode': 'text',
        'limit': 1,
        'raw': False,
        'file_type': 'marker-t0k',
    }
    write = _tool('write_file', {'file_path': {'type': 'string'}, 'content': {'type': 'string'}}, ['file_path'])
    assert derive_arguments(write, seeds) == {'file_path': 'new-t0k.txt'}
    listing = _tool('list_directory', {'directory': {'type': 'string'}}, ['directory'])
    assert derive_arguments(listing, seeds) == {'directory': 'dir-t0k'}
    shell = _tool('run', {'command': {'type': 'string'}}, ['command'])
    assert derive_arguments(shell, seeds, huge='huge.txt') == {'command': 'cat huge.txt'}
    assert needs_commands(shell) and not needs_commands(read)
    assert path_parameter(read) == 'path' and path_parameter(listing) is None


def test_the_workspace_snapshot_leaves_out_a_file_that_goes_while_it_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A background job the tool started renames its status file as it ends, between the walk and the read: the
    # snapshot must not raise in the tool's place (the harness Shell's stop_command was blamed for it in CI).
    (tmp_path / 'kept').write_bytes(b'kept')
    (tmp_path / 'status.tmp').write_bytes(b'{}')
    read = Path.read_bytes

    def renamed_first(self: Path) -> bytes:
        if self.name == 'status.tmp':
            self.rename(self.with_name('status.json'))
        return read(self)

    monkeypatch.setattr(Path, 'read_bytes', renamed_first)
    assert sorted(host_tree(tmp_path)) == ['kept']

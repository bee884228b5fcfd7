"""Mutants of the property rules: bugs that only some generated names, payloads, paths, argv or env values reveal."""

from __future__ import annotations

import dataclasses
import os
import unicodedata
from collections.abc import Sequence

from pydantic_ai.workspaces import CommandResult, FileEntry, LocalWorkspaceBackend, WorkspaceCommand

from workspace_conformance.doubles.forwarding import RunCall

from ..registry import mutant, on_shared_dir
from ._shared import InterceptsRun, RewritesCommands


class StripsNameWhitespace(LocalWorkspaceBackend):
    """Lists names through a line-based tool that trims them, so ` leading` and `trailing ` lose their spaces."""

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        entries = await super().list_dir(path)
        return [FileEntry(name=e.name.strip(), path=e.path, is_dir=e.is_dir, size=e.size) for e in entries]


class NormalizesNames(LocalWorkspaceBackend):
    """Stores every name in Unicode NFC, as HFS+ did, so an NFD name lists as another name."""

    async def write_bytes(self, path: str, data: bytes) -> None:
        await super().write_bytes(unicodedata.normalize('NFC', path), data)

    async def read_bytes(self, path: str) -> bytes:
        return await super().read_bytes(unicodedata.normalize('NFC', path))


class TextModeReads(LocalWorkspaceBackend):
    """Reads files as UTF-8 text and re-encodes them, so invalid UTF-8 comes back as U+FFFD."""

    async def read_bytes(self, path: str) -> bytes:
        return (await super().read_bytes(path)).decode('utf-8', 'replace').encode()


class OneLevelOfParents(LocalWorkspaceBackend):
    """Creates only the immediate parent of a file (`mkdir`, not `mkdir -p`), so deeper writes fail."""

    async def write_bytes(self, path: str, data: bytes) -> None:
        parent = os.path.dirname(path)
        if not os.path.isdir(os.path.dirname(parent)):
            raise FileNotFoundError(2, 'No such file or directory', path)
        await super().write_bytes(path, data)


class DropsEmptyArguments(RewritesCommands):
    """Passes argv through a layer that drops empty strings, as naive command builders do."""

    def _rewrite_command(self, command: WorkspaceCommand, shell: bool) -> WorkspaceCommand:
        if not isinstance(command, str):
            command = [item for item in command if item]
        return command


class StripsEnvValues(InterceptsRun):
    """Trims whitespace from env values, as an SDK that serializes env into a config file might."""

    async def _take_run(self, call: RunCall) -> CommandResult:
        trimmed = None if call.env is None else {name: value.strip() for name, value in call.env.items()}
        return await self._forward(dataclasses.replace(call, env=trimmed))


for name, kind, kills, bug in [
    (
        'lists_trimmed_names',
        StripsNameWhitespace,
        ['generated_names_round_trip'],
        'Names pass through a line-based listing that trims surrounding whitespace.',
    ),
    (
        'normalizes_names_to_nfc',
        NormalizesNames,
        ['generated_names_round_trip'],
        'The filesystem stores names in Unicode NFC, so an NFD name comes back spelled differently.',
    ),
    (
        'reads_in_text_mode',
        TextModeReads,
        ['generated_payloads_round_trip'],
        'Files are read as UTF-8 text and re-encoded, replacing invalid bytes.',
    ),
    (
        'creates_one_level_of_parents',
        OneLevelOfParents,
        ['generated_nested_paths_round_trip'],
        'A write creates only the immediate parent directory, not the whole chain.',
    ),
    (
        'drops_empty_arguments',
        DropsEmptyArguments,
        ['generated_argv_items_are_literal'],
        'The command builder drops empty argv items.',
    ),
    (
        'trims_env_values',
        StripsEnvValues,
        ['generated_env_values_are_exact'],
        'Env values are trimmed when serialized for the sandbox.',
    ),
]:
    mutant(name=name, kills=kills, bug=bug, backend=on_shared_dir(kind))

"""Mutants of the stateful rules: bugs that only a model-based sequence of file operations reveals."""

from __future__ import annotations

import os

from pydantic_ai.workspaces import LocalWorkspaceBackend

from ..registry import breaks


@breaks(
    kills=['file_operations_match_the_reference_model'],
    bug='`exists` checks for a regular file, so directories do not exist.',
)
class ExistsMeansIsFile(LocalWorkspaceBackend):
    """`exists` implemented with `isfile`: a directory does not exist."""

    async def exists(self, path: str) -> bool:
        return os.path.isfile(path)

"""Mutants of the stateful rules: bugs that only a model-based sequence of file operations reveals."""

from __future__ import annotations

import os

from pydantic_ai.workspaces import LocalWorkspaceBackend

from ..registry import mutant, on_shared_dir


class ExistsMeansIsFile(LocalWorkspaceBackend):
    """`exists` implemented with `isfile`: a directory does not exist."""

    async def exists(self, path: str) -> bool:
        return os.path.isfile(path)


mutant(
    name='exists_means_is_file',
    kills=['file_operations_match_the_reference_model'],
    bug='`exists` checks for a regular file, so directories do not exist.',
    backend=on_shared_dir(ExistsMeansIsFile),
)

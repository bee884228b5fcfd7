"""The suite every corpus module subclasses, under one name: the runner writes this module anew for each run.

In a run it imports upstream's `WorkspaceBackendSuite` or ours (see `runner.IMPORTS`); this copy, which imports ours,
is what the type checker reads.
"""

from workspace_conformance import WorkspaceBackendSuite

__all__ = ('WorkspaceBackendSuite',)

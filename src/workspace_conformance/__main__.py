"""`python -m workspace_conformance`, the same as the `workspace-conformance` command."""

import sys

from .cli import main

sys.exit(main())

"""Write docs/rules.md from the rule catalog; `--check` exits 1 when the file is stale instead."""

from __future__ import annotations

import sys
from pathlib import Path

from workspace_conformance.catalog_format import render_catalog
from workspace_conformance.suite import rules

RULES_MD = Path(__file__).resolve().parent.parent / 'docs' / 'rules.md'


def main() -> int:
    text = render_catalog(rules(), 'markdown')
    if '--check' in sys.argv[1:]:
        if not RULES_MD.exists() or RULES_MD.read_text() != text:
            print(f'{RULES_MD} is stale: run python scripts/generate_docs.py')
            return 1
        return 0
    RULES_MD.write_text(text)
    print(f'wrote {RULES_MD}')
    return 0


if __name__ == '__main__':
    sys.exit(main())

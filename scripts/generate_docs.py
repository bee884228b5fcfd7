"""Write docs/rules.md (the rule catalog) and docs/report-schema.json; `--check` exits 1 when one is stale."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from workspace_conformance.capability import capability_rules
from workspace_conformance.catalog_format import render_catalog
from workspace_conformance.reports.model import Report
from workspace_conformance.suite import rules

DOCS = Path(__file__).resolve().parent.parent / 'docs'


def generated() -> dict[Path, str]:
    """Every generated doc and its current text: the rule catalog and the report's JSON Schema."""
    schema = json.dumps(Report.model_json_schema(), indent=2, sort_keys=True) + '\n'
    return {
        DOCS / 'rules.md': render_catalog((*rules(), *capability_rules()), 'markdown'),
        DOCS / 'report-schema.json': schema,
    }


def main() -> int:
    stale = [path for path, text in generated().items() if not path.exists() or path.read_text() != text]
    if '--check' in sys.argv[1:]:
        for path in stale:
            print(f'{path} is stale: run python scripts/generate_docs.py')
        return 1 if stale else 0
    for path, text in generated().items():
        path.write_text(text)
        print(f'wrote {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())

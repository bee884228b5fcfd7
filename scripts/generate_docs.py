"""Write docs/rules.md (the rule catalog), docs/contract-coverage.md and docs/report-schema.json.

`--check` exits 1 when one is stale, or when docs/contract-clauses.toml covers fewer clauses than it promises.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from contract_coverage import counts, load, render

from workspace_conformance.capability import capability_rules
from workspace_conformance.catalog_format import render_suites
from workspace_conformance.isolation import isolation_rules
from workspace_conformance.reports.model import Report
from workspace_conformance.suite import rules
from workspace_conformance.tools import tool_rules

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / 'docs'
REAL_TARGETS = ('docker', 'gvisor', 'podman', 'ssh', 'bubblewrap', 'e2b-local')
"""The project's submissions certified on real services (ci/services), not in this process."""


def held_on() -> dict[str, list[str]]:
    """Rule id -> the real targets whose committed bundle recorded it passed on every event loop it ran on."""
    held: dict[str, list[str]] = {}
    for target in REAL_TARGETS:
        path = ROOT / 'submissions' / 'workspace-conformance' / target / 'bundle' / 'report.json'
        if not path.is_file():
            continue
        report = Report.model_validate_json(path.read_text())
        for suite in report.suites:
            for summary in suite.rules:
                if summary.status == 'passed' and target not in held.setdefault(summary.rule_id, []):
                    held[summary.rule_id].append(target)
    return held


def generated() -> dict[Path, str]:
    """Every generated doc and its current text: the rule catalog and the report's JSON Schema."""
    promised, clauses = load()
    schema = json.dumps(Report.model_json_schema(), indent=2, sort_keys=True) + '\n'
    return {
        DOCS / 'rules.md': render_suites(
            {
                'WorkspaceBackendSuite': rules(),
                'WorkspaceCapabilitySuite': capability_rules(),
                'WorkspaceToolSuite': tool_rules(),
                'WorkspaceIsolationSuite': isolation_rules(),
            },
            'markdown',
            held_on(),
        ),
        DOCS / 'contract-coverage.md': render(promised, clauses),
        DOCS / 'report-schema.json': schema,
    }


def main() -> int:
    stale = [path for path, text in generated().items() if not path.exists() or path.read_text() != text]
    if '--check' in sys.argv[1:]:
        for path in stale:
            print(f'{path} is stale: run python scripts/generate_docs.py')
        promised, clauses = load()
        covered = counts(clauses)['covered']
        if covered < promised:
            print(f'docs/contract-clauses.toml covers {covered} clauses, fewer than the {promised} it promises')
        return 1 if stale or covered < promised else 0
    for path, text in generated().items():
        path.write_text(text)
        print(f'wrote {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())

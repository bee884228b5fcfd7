"""The HTML report as a person sees it, in headless Chromium: verdict, counts, and filtering that hides rows."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from workspace_conformance.reports.matrix import AreaCount, MatrixRow, group_rows
from workspace_conformance.reports.matrix import render_html as render_matrix_html
from workspace_conformance.reports.model import (
    Report,
    RuleOutcome,
    SuiteReport,
    Verdict,
    Waiver,
    summarize,
    verdict_of,
)
from workspace_conformance.reports.render import render_html

from .runner import report_of

CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser')
FLAGS = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason='no Chromium installed (.ci/run installs Debian chromium)')


def _outcome(rule_id: str, area: str, outcome: str, **extra: str) -> RuleOutcome:
    fields: dict[str, object] = {
        'rule_id': rule_id,
        'area': area,
        'level': 'core',
        'clause': f'The {rule_id} clause.',
        'anyio_backend': 'asyncio',
        'outcome': outcome,
        **extra,
    }
    return RuleOutcome.model_validate(fields)


LONG_TOKEN = 'x' * 900
"""A token with no space to break at, as a base64 payload or a long path in a backend's output gives."""
LONG_OBSERVED = (
    "backend.run(['sh', '-c', 'printf before-TERM; kill -TERM $$']) returned exit code -15: "
    + 'which n | ' * 120
    + f'{LONG_TOKEN}, expected exit 143'
)


def sample_report(*, long_evidence: bool = False) -> Report:
    """Passes, every skip kind, an expected failure and failures (one with a long observation, if asked)."""
    broken = 'read back 0 bytes' if not long_evidence else LONG_OBSERVED
    results = [
        _outcome('passes_one', 'files', 'passed'),
        _outcome('passes_two', 'commands', 'passed'),
        _outcome('not_for_it', 'commands', 'skipped', skip_kind='not-applicable', reason='no SupportsCommands'),
        _outcome(
            'limited',
            'processes',
            'skipped',
            skip_kind='declared-limit',
            reason='the SDK waits for pipe EOF',
            level='extended',
        ),
        _outcome(
            'needs_fixture',
            'lifecycle',
            'skipped',
            skip_kind='fixture-missing',
            reason='no attach_backend',
            level='extended',
        ),
        _outcome('needs_tool', 'symlinks', 'skipped', skip_kind='environment', reason='no ln', level='extended'),
        _outcome(
            'root_bypasses',
            'files',
            'skipped',
            skip_kind='runner',
            reason='root bypasses permissions',
            level='extended',
        ),
        _outcome('known_bug', 'files', 'xfailed', reason='writes append', level='extended'),
        _outcome('broken', 'files', 'failed', excerpt=f'observed: {broken}', observed=broken),
        _outcome('broken_too', 'commands', 'failed', excerpt='observed: exit code 0', observed='exit code 0'),
    ]
    rules = summarize(results)
    suite = SuiteReport(
        subject='test_x.py::TestSample',
        backend_class='sample.Backend',
        anyio_backends=['asyncio'],
        declared_limits=[Waiver(rule_id='limited', reason='the SDK waits for pipe EOF')],
        results=results,
        rules=rules,
        verdict=verdict_of(rules),
    )
    return report_of(suite)


def _dom(page: Path, fragment: str, *extra: str) -> str:
    assert CHROMIUM is not None
    result = subprocess.run(
        [CHROMIUM, *FLAGS, *extra, '--dump-dom', f'file://{page}{fragment}'],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert '</html>' in result.stdout, result.stderr[-2000:]
    return result.stdout


def _rows(dom: str) -> dict[str, bool]:
    """Each rule row's status and whether it is shown."""
    rows = re.findall(r'<tr class="rule [^"]*"([^>]*)>', dom)
    return {
        re.search(r'data-status="([^"]+)"', attributes).group(1) + str(index): 'hidden' not in attributes  # type: ignore[union-attr]
        for index, attributes in enumerate(rows)
    }


def test_a_person_sees_the_verdict_counts_and_filters(tmp_path: Path) -> None:
    page = tmp_path / 'report.html'
    page.write_text(render_html(sample_report()))
    everything = _dom(page, '')
    assert re.search(r'id="verdict"[^>]*>not certified<', everything)
    counts = re.sub(r'<[^>]+>', ' ', re.search(r'id="counts">(.*?)</p>', everything).group(1))  # type: ignore[union-attr]
    assert ' '.join(counts.split()) == '2 passed 2 failed 0 broken 0 advisory 5 gap 1 not-applicable 0 missing'
    assert all(_rows(everything).values())  # unfiltered: every row is shown
    failed_only = _rows(_dom(page, '#status=failed'))
    shown = sorted(key.rstrip('0123456789') for key, visible in failed_only.items() if visible)
    assert shown == ['failed', 'failed']
    assert not any(visible for key, visible in failed_only.items() if key.startswith('passed'))
    core_gaps = _rows(_dom(page, '#status=gap&level=extended'))
    assert sum(core_gaps.values()) == 5


def test_a_screenshot_renders(tmp_path: Path) -> None:
    assert CHROMIUM is not None
    page = tmp_path / 'report.html'
    page.write_text(render_html(sample_report()))
    shot = tmp_path / 'report.png'
    subprocess.run(
        [CHROMIUM, *FLAGS, f'--screenshot={shot}', '--window-size=1200,800', f'file://{page}'],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.stat().st_size > 10_000


OVERFLOW_PROBE = """
<script>
document.body.dataset.overflow = JSON.stringify({
  page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
  wider: Array.from(document.querySelectorAll('body *')).filter(function (element) {
    return element.getBoundingClientRect().right > document.documentElement.clientWidth + 1
      || element.scrollWidth > element.clientWidth + 1 && getComputedStyle(element).display !== 'inline';
  }).map(function (element) { return element.tagName + '.' + element.className; }),
  first: Array.from(document.querySelectorAll('tr.rule')).slice(0, 2).map(function (row) {
    return row.dataset.status;
  }),
});
</script>
"""


@pytest.mark.parametrize('width', [1200, 700])
def test_long_evidence_wraps_inside_the_page_and_failures_come_first(tmp_path: Path, width: int) -> None:
    page = tmp_path / 'report.html'
    html = render_html(sample_report(long_evidence=True))
    assert LONG_TOKEN in html and 'expected exit 143' in html  # the whole observation is there...
    page.write_text(html.replace('</body>', OVERFLOW_PROBE + '</body>'))
    dom = _dom(page, '', f'--window-size={width},800')
    found = re.search(r'data-overflow="([^"]*)"', dom)
    assert found is not None, dom[-2000:]
    probe = json.loads(found.group(1).replace('&quot;', '"'))
    scroll_width, client_width = probe['page']
    assert scroll_width <= client_width, probe  # ...and nothing makes the page scroll sideways
    assert probe['wider'] == [], probe
    assert probe['first'] == ['failed', 'failed'], probe


def _matrix_rows(count: int) -> list[MatrixRow]:
    """`count` rows of one catalog: verdicts in turn, seven areas, some waivers, long subjects here and there."""
    verdicts: tuple[Verdict, ...] = ('certified', 'partial', 'not certified')
    areas = ('commands', 'files', 'lifecycle', 'processes', 'properties', 'stateful', 'symlinks')
    return [
        MatrixRow(
            bundle=Path(f'/bundles/{index}'),
            subject=f'vendor-{index:02d}/'
            + ('a-very-long-backend-name-' * 3 if index % 7 == 0 else f'backend-{index}'),
            toolkit_version='0.2.0',
            pydantic_ai_version='2.68.0',
            catalog_hash='51fcd8036402',
            rules=139,
            event_loops=('asyncio', 'trio'),
            verdict=verdicts[index % 3],
            areas={area: AreaCount(40 - index % 5, 40) for area in areas},
            declared_limits=('limited',) * (index % 2),
            expected_failures=(),
        )
        for index in range(count)
    ]


def _matrix_shown(dom: str) -> list[str]:
    """The verdict of each matrix row that is shown."""
    rows = re.findall(r'<tr class="matrix-row" data-verdict="([^"]+)"([^>]*)>', dom)
    return [verdict for verdict, attributes in rows if 'hidden' not in attributes]


@pytest.mark.parametrize('width', [1200, 800])
def test_the_matrix_reads_well_at_fifty_rows_and_filters_by_verdict_and_area(tmp_path: Path, width: int) -> None:
    page = tmp_path / 'matrix.html'
    html = render_matrix_html(group_rows(_matrix_rows(50)), tmp_path)
    page.write_text(html.replace('</body>', OVERFLOW_PROBE + '</body>'))
    everything = _dom(page, '', f'--window-size={width},800')
    shown = _matrix_shown(everything)
    assert len(shown) == 50
    assert shown == sorted(shown, key=['certified', 'partial', 'not certified'].index)  # certified rows first
    probe = json.loads(re.search(r'data-overflow="([^"]*)"', everything).group(1).replace('&quot;', '"'))  # type: ignore[union-attr]
    scroll_width, client_width = probe['page']
    assert scroll_width <= client_width, probe  # the page never scrolls sideways...
    if width >= 1200:  # ...and at 1200 pixels nothing is cut: long subjects wrap in their cells
        assert probe['wider'] == [], probe
    else:  # narrower, the table scrolls inside its own box
        assert 'DIV.scroll' in probe['wider'] and not {'BODY.', 'H1.', 'FORM.filters', 'P.'} & set(probe['wider'])
    partial = _dom(page, '#verdict=partial&area=files')
    assert _matrix_shown(partial) == ['partial'] * 17
    cells = re.findall(r'<t[dh] class="[^"]*" data-area="([^"]+)"([^>]*)>', partial)
    assert {area for area, attributes in cells if 'hidden' not in attributes} == {'files'}
    assert len([area for area, _ in cells]) == 7 * 51  # the other areas are there, only hidden

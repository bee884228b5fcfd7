"""The report as JUnit XML: one test case per rule and anyio backend, the outcome kind and metadata as properties."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

from ..model import Report, RuleOutcome, broken_causes

__all__ = ('render_junit',)


def _key(result: RuleOutcome) -> tuple[str, str]:
    return (result.rule_id, result.anyio_backend)


def render_junit(report: Report) -> str:
    """JUnit XML where an expected failure or an advisory is never confused with a skip: `outcome` says which it is.

    An advisory (a failed rule that does not bind the subject) is a `<skipped type="advisory">`, never a failure. A
    broken rule (its failure echoes another rule's: `broken_causes`) is an `<error type="broken">` naming that rule:
    counted with the errors, never a pass, and not one more failure.
    """
    root = ElementTree.Element('testsuites', name='workspace-conformance', verdict=report.verdict)
    for suite in report.suites:
        results = suite.results
        echoes = broken_causes(results)
        element = ElementTree.SubElement(
            root,
            'testsuite',
            name=suite.subject,
            tests=str(len(results)),
            failures=str(sum(r.outcome in ('failed', 'xpassed') and _key(r) not in echoes for r in results)),
            errors=str(sum(r.outcome in ('error', 'missing') or _key(r) in echoes for r in results)),
            skipped=str(
                sum(r.outcome in ('skipped', 'xfailed', 'advisory') and _key(r) not in echoes for r in results)
            ),
            time=f'{sum(r.duration for r in results):.3f}',
        )
        properties = ElementTree.SubElement(element, 'properties')
        advised = sum(rule.status == 'advisory' for rule in suite.rules)  # skipped in JUnit's count, listed apart here
        for name, value in (
            ('verdict', suite.verdict),
            ('backend_class', suite.backend_class or ''),
            ('advisories', str(advised)),
            ('broken', str(sum(rule.status == 'broken' for rule in suite.rules))),
        ):
            ElementTree.SubElement(properties, 'property', name=name, value=value)
        for result in results:
            case = ElementTree.SubElement(
                element,
                'testcase',
                classname=f'{suite.subject}.{result.area}',
                name=f'{result.rule_id}[{result.anyio_backend}]',
                time=f'{result.duration:.3f}',
            )
            metadata = ElementTree.SubElement(case, 'properties')
            for name, value in (
                ('rule_id', result.rule_id),
                ('area', result.area),
                ('level', result.level),
                ('outcome', result.outcome),
                ('skip_kind', result.skip_kind or ''),
                ('strength', result.strength),
                ('clause', result.clause),
            ):
                ElementTree.SubElement(metadata, 'property', name=name, value=value)
            text = result.excerpt or result.reason or ''
            cause = echoes.get(_key(result))
            if cause is not None:  # one more echo of the failure of `cause`: an error naming it, not a failure
                ElementTree.SubElement(
                    case,
                    'error',
                    type='broken',
                    message=f'broken by {cause}: backend.{result.raised_by} raised here too',
                ).text = text
            elif result.outcome in ('failed', 'xpassed'):
                ElementTree.SubElement(
                    case, 'failure', message=text.splitlines()[0] if text else result.outcome
                ).text = text
            elif result.outcome in ('error', 'missing'):
                ElementTree.SubElement(case, 'error', message=result.outcome).text = text
            elif result.outcome == 'advisory':  # never a failure: a rule that does not bind the subject failed
                ElementTree.SubElement(
                    case, 'skipped', type='advisory', message=f'advisory ({result.reason or result.strength})'
                ).text = result.observed or text
            elif result.outcome in ('skipped', 'xfailed'):
                kind = 'expected failure' if result.outcome == 'xfailed' else result.skip_kind or 'skipped'
                ElementTree.SubElement(case, 'skipped', message=f'{kind}: {result.reason or ""}')
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding='unicode', xml_declaration=True) + '\n'

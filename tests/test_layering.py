"""The package's layering, read from its source with `ast`: rules stand on `authoring`, the engine below, no cycle.

Every import counts, also one deferred into a function; relative imports are resolved to absolute names. The layers,
from the bottom: `runtime` (process primitives), the engine (`engine/`), `authoring` (the public API for writing
rules), then the suites' area modules (`suite/`, `capability/`, `tools/`) with their small private helper modules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / 'src' / 'workspace_conformance'
PACKAGE = 'workspace_conformance'
AUTHORING = f'{PACKAGE}.authoring'
SUITES = (f'{PACKAGE}.suite', f'{PACKAGE}.capability', f'{PACKAGE}.tools', f'{PACKAGE}.isolation')
"""The packages of rules: each holds area modules (public, defining rules) and small private helper modules."""
LIBRARIES = (f'{PACKAGE}.strategies', f'{PACKAGE}.doubles')
"""Public modules an area may use besides `authoring`: test data and test doubles, which import no rule machinery."""
ABOVE_THE_RUNTIME = (f'{PACKAGE}.engine', *SUITES, AUTHORING)
"""What `runtime/` never imports: it holds process primitives only."""


@dataclass(frozen=True)
class Import:
    """One import of a module: the absolute name it imports, its line, and whether only a type checker runs it."""

    target: str
    line: int
    typing_only: bool


def _is_type_checking(test: ast.expr) -> bool:
    """Whether an `if` tests `TYPE_CHECKING`: what it guards only a type checker imports."""
    return (isinstance(test, ast.Name) and test.id == 'TYPE_CHECKING') or (
        isinstance(test, ast.Attribute) and test.attr == 'TYPE_CHECKING'
    )


def imports_of(source: str, module: str, *, is_package: bool, known: Iterable[str] = ()) -> list[Import]:
    """Every import in `source` (deferred ones too), with relative ones resolved against `module`.

    `from a import b` names `a.b` when `a.b` is one of the `known` modules, else `a`.
    """
    modules = set(known)
    base = module if is_package else module.rpartition('.')[0]
    found: list[Import] = []

    def visit(node: ast.AST, typing_only: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for statement in node.body:
                visit(statement, True)
            for statement in node.orelse:
                visit(statement, typing_only)
            return
        if isinstance(node, ast.Import):
            found.extend(Import(alias.name, node.lineno, typing_only) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base.split('.')
                parts = parts[: len(parts) - (node.level - 1)]
                target = '.'.join([*parts, *([node.module] if node.module else [])])
            else:
                target = node.module or ''
            for alias in node.names:
                name = f'{target}.{alias.name}'
                found.append(Import(name if name in modules else target, node.lineno, typing_only))
        for child in ast.iter_child_nodes(node):
            visit(child, typing_only)

    visit(ast.parse(source), False)
    return found


@dataclass(frozen=True)
class Module:
    """A module of the package: its name, its file, and what it imports."""

    name: str
    path: Path
    imports: tuple[Import, ...]

    @property
    def private(self) -> bool:
        """Whether the module's own name starts with `_` (a helper module)."""
        return self.name.rpartition('.')[2].startswith('_')


def read_package(root: Path, package: str) -> dict[str, Module]:
    """Every module under `root` (the directory of `package`), by absolute name, with its imports."""
    files: dict[str, tuple[Path, bool]] = {}
    for path in sorted(root.rglob('*.py')):
        parts = [package, *path.relative_to(root).with_suffix('').parts]
        is_package = parts[-1] == '__init__'
        files['.'.join(parts[:-1] if is_package else parts)] = (path, is_package)
    return {
        name: Module(name, path, tuple(imports_of(path.read_text(), name, is_package=is_package, known=files)))
        for name, (path, is_package) in files.items()
    }


def owner(target: str, modules: Mapping[str, Module]) -> str | None:
    """The package's module an import target names (`a.b.c` for `a.b.c.name`), or None outside the package."""
    while target and target not in modules:
        target = target.rpartition('.')[0]
    return target or None


def _within(name: str, prefix: str) -> bool:
    """Whether the module `name` is `prefix` or inside it."""
    return name == prefix or name.startswith(prefix + '.')


def defines_rules(module: Module) -> bool:
    """Whether the module declares rules: a method decorated with `@rule(...)`."""
    for node in ast.walk(ast.parse(module.path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                called = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(called, ast.Name) and called.id == 'rule':
                    return True
    return False


def suite_modules(modules: Mapping[str, Module]) -> list[Module]:
    """The modules of the rule packages, their `__init__` (which composes the suite class) aside."""
    return [
        module
        for name, module in modules.items()
        if any(name.startswith(suite + '.') for suite in SUITES) and name.count('.') == 2
    ]


def _private(name: str) -> bool:
    """Whether a module of the package is private: some part of its name below the package starts with `_`."""
    return any(part.startswith('_') for part in name.split('.')[1:])


def area_violations(modules: Mapping[str, Module]) -> list[str]:
    """Imports of an area or helper module of a rule package that reach past `authoring` and its own helpers."""
    found = []
    for module in suite_modules(modules):
        own = module.name.rpartition('.')[0]
        for item in module.imports:
            target = owner(item.target, modules)
            allowed = (
                target is None  # the standard library, pydantic-ai, anyio, Hypothesis, pytest, ...
                or target == AUTHORING
                or (any(_within(target, library) for library in LIBRARIES) and not _private(target))
                or (target.rpartition('.')[0] == own and _private(target))
            )
            if not allowed:
                found.append(f'{module.name}:{item.line} imports {item.target}')
    return list(dict.fromkeys(found))


def reaching(modules: Mapping[str, Module], layer: str, forbidden: Iterable[str]) -> list[str]:
    """Imports by the modules of `layer` of a module in one of the `forbidden` layers."""
    found = [
        f'{module.name}:{item.line} imports {item.target}'
        for module in modules.values()
        if _within(module.name, layer)
        for item in module.imports
        if any(_within(owner(item.target, modules) or '', above) for above in forbidden)
    ]
    return list(dict.fromkeys(found))


def import_graph(modules: Mapping[str, Module], *, typing_only: bool = False) -> dict[str, set[str]]:
    """Which of the package's modules each module imports (at run time; with `typing_only`, type checking too)."""
    graph: dict[str, set[str]] = {}
    for name, module in modules.items():
        targets = (owner(item.target, modules) for item in module.imports if typing_only or not item.typing_only)
        graph[name] = {target for target in targets if target is not None and target != name}
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The graph's cycles: each strongly connected component of more than one module, sorted (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                connect(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(found)


@pytest.fixture(scope='module')
def modules() -> dict[str, Module]:
    """The package's modules, read once for the module's tests."""
    return read_package(ROOT, PACKAGE)


def test_the_area_modules_are_found_from_the_package(modules: dict[str, Module]) -> None:
    areas = [module for module in suite_modules(modules) if not module.private]
    assert {module.name.rpartition('.')[2] for module in areas} >= {
        'commands',
        'files',
        'durable',
        'selection',
        'containment',
        'bounds',
    }
    without_rules = [module.name for module in areas if not defines_rules(module)]
    assert without_rules == [], 'a public module of a rule package declares no rule'
    helpers = [module.name for module in suite_modules(modules) if module.private and defines_rules(module)]
    assert helpers == [], 'rules belong in an area module, not a private helper'


def test_area_modules_import_only_authoring_and_their_own_helpers(modules: dict[str, Module]) -> None:
    violations = area_violations(modules)
    print('\n'.join(violations))
    assert violations == []


def test_the_libraries_areas_use_stand_below_the_rules(modules: dict[str, Module]) -> None:
    for library in LIBRARIES:
        assert reaching(modules, library, ABOVE_THE_RUNTIME) == []


def test_the_runtime_holds_process_primitives_only(modules: dict[str, Module]) -> None:
    assert reaching(modules, f'{PACKAGE}.runtime', ABOVE_THE_RUNTIME) == []


def test_the_engine_never_imports_the_rules_or_authoring(modules: dict[str, Module]) -> None:
    assert reaching(modules, f'{PACKAGE}.engine', (*SUITES, AUTHORING)) == []


def test_authoring_stands_on_the_engine_alone(modules: dict[str, Module]) -> None:
    targets = {owner(item.target, modules) for item in modules[AUTHORING].imports} - {None, f'{PACKAGE}.vocabulary'}
    assert {target for target in targets if target and not _within(target, f'{PACKAGE}.engine')} <= {
        f'{PACKAGE}._frames'
    }


def test_the_import_graph_has_no_cycle(modules: dict[str, Module]) -> None:
    found = cycles(import_graph(modules))
    for cycle in found:
        print('cycle:', ' <-> '.join(cycle))
    assert found == []


LONGEST_MODULE = 600
"""Lines a source file may hold: past it a module holds more than one thing (split it by what its parts do)."""


def test_no_source_file_is_longer_than_600_lines() -> None:
    lengths = {path.relative_to(ROOT).as_posix(): len(path.read_text().splitlines()) for path in ROOT.rglob('*.py')}
    assert {name: length for name, length in lengths.items() if length > LONGEST_MODULE} == {}


def test_the_checker_reports_an_area_importing_another_layers_private_module(tmp_path: Path) -> None:
    package = tmp_path / PACKAGE
    for name, source in {
        '__init__.py': '',
        'authoring.py': 'from .engine._rules import rule\n',
        'engine/__init__.py': '',
        'engine/_rules.py': 'def rule(): ...\n',
        'suite/__init__.py': 'from .files import FileRules\n',
        'suite/_helpers.py': 'from ..authoring import rule\n',
        'suite/files.py': (
            'from ..authoring import rule\nfrom ._helpers import rule as again\n'
            'def later():\n    from ..engine._rules import rule\n'
        ),
        'capability/__init__.py': '',
        'capability/records.py': 'from ..suite import _helpers\nimport workspace_conformance.suite.files\n',
        'runtime/__init__.py': '',
        'runtime/session.py': 'def hook():\n    from ..suite._helpers import rule\n',
    }.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(source)
    modules = read_package(package, PACKAGE)
    assert area_violations(modules) == [
        f'{PACKAGE}.capability.records:1 imports {PACKAGE}.suite._helpers',
        f'{PACKAGE}.capability.records:2 imports {PACKAGE}.suite.files',
        f'{PACKAGE}.suite.files:4 imports {PACKAGE}.engine._rules',
    ]
    assert reaching(modules, f'{PACKAGE}.runtime', ABOVE_THE_RUNTIME) == [
        f'{PACKAGE}.runtime.session:2 imports {PACKAGE}.suite._helpers'
    ]


def test_the_checker_reports_a_cycle_through_a_deferred_import() -> None:
    known = {'p', 'p.a', 'p.b', 'p.c'}
    sources = {
        'p.a': 'from . import b\n',
        'p.b': 'def later():\n    from .c import thing\n',
        'p.c': 'from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\nimport p.a\n',
    }
    modules = {
        name: Module(name, Path(name), tuple(imports_of(source, name, is_package=False, known=known)))
        for name, source in sources.items()
    }
    assert cycles(import_graph(modules)) == [['p.a', 'p.b', 'p.c']]
    only_typing = {**modules, 'p.c': Module('p.c', Path('p.c'), modules['p.c'].imports[:2])}
    assert cycles(import_graph(only_typing)) == []
    assert cycles(import_graph(only_typing, typing_only=True)) == [['p.a', 'p.b', 'p.c']]

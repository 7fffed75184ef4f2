"""The layering of ARCHITECTURE.md, read from the import statements.

Every package may import only the packages below it::

    poker  <-  dealer
    poker  <-  strategies  <-  agent
    poker, dealer, strategies  <-  analysis
    everything  <-  arena

``poker/`` (the rules, and the small pure pieces every layer needs: the
private-hand rows, means with intervals, the unit a game is reported in) imports
nobody. ``dealer/`` imports only ``poker/``, so a dealer can be deployed,
audited and profiled without the agents, solvers and analysis above it.
``strategies/`` decides how to act from the rules alone; the portfolio agent's
imaginary observations live there (:mod:`strategies.imaginary`) because an
agent uses them as it plays. ``agent/`` plays a strategy over the protocol and
needs no analysis: its human seat's running result uses :mod:`poker.stats`.
``analysis/`` turns logs (``dealer/``'s records) into numbers, with strategies'
policies for the estimators that need them. ``arena/`` puts them all together.
Why this way round and not strategies above analysis: agents must run without
the analysis package (the standalone ``agent`` program), while evaluating a
strategy needs the strategy.

Every import statement counts, those inside functions too (a lazy import is
still a dependency) and those under ``if TYPE_CHECKING:`` (never run, but a type
named from above is still the lower layer leaning on the upper one, and a type-only
loop is still two modules that cannot be read one without the other). Within every
package no module imports itself back through others: the import graph of each
package's modules has no cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALLOWED: dict[str, set[str]] = {
    "poker": set(),
    "dealer": {"poker"},
    "strategies": {"poker"},
    "agent": {"poker", "strategies"},
    "analysis": {"poker", "dealer", "strategies"},
    "arena": {"poker", "dealer", "strategies", "agent", "analysis"},
}
PROJECT = set(ALLOWED)


def _imported_packages(path: Path) -> set[str]:
    """The project packages ``path`` imports (absolute imports; relative ones stay inside)."""
    names: set[str] = set()
    for node in _imports(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names & PROJECT


def offending_imports(root: Path, package: str) -> dict[str, list[str]]:
    """Module path -> the packages it imports that ``package`` may not."""
    return {
        path.relative_to(root).as_posix(): sorted(found)
        for path in sorted((root / package).rglob("*.py"))
        if (found := _imported_packages(path) - ALLOWED[package] - {package})
    }


def test_every_package_has_its_layer() -> None:
    on_disk = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests", "benchmarks"}
    assert on_disk == PROJECT, f"packages without an ALLOWED entry (or entries without a package): {on_disk ^ PROJECT}"


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_what_it_stands_on(package: str) -> None:
    offending = offending_imports(ROOT, package)
    assert not offending, f"{package}/ may import only {sorted(ALLOWED[package])}: {offending}"


def test_imports_inside_functions_and_type_checking_ones_count(tmp_path: Path) -> None:
    package = tmp_path / "strategies"
    package.mkdir()
    (package / "lazy.py").write_text("def f():\n    from analysis.hands import Hands\n    return Hands\n")
    (package / "typing_only.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from analysis.hands import Hands\nelse:\n    import dealer\n"
    )
    (package / "plain.py").write_text("import arena.cli\nfrom poker.gamedef import Game\n")
    assert offending_imports(tmp_path, "strategies") == {
        "strategies/lazy.py": ["analysis"],
        "strategies/plain.py": ["arena"],
        "strategies/typing_only.py": ["analysis", "dealer"],
    }


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at module level, inside functions and under ``if TYPE_CHECKING:``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports (``from a import b`` counts
    as importing ``a.b`` when that is a module, else ``a``)."""
    paths = {_module_name(path, root): path for path in sorted((root / package).rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in _imports(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
                continue
            base = here.split(".")[: len(here.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                targets.add(f"{module}.{alias.name}" if f"{module}.{alias.name}" in paths else module)
        graph[name] = {target for target in targets if target in paths and target != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while (top := stack.pop()) != module:
                component.append(top)
            if component:
                cycles.append(sorted([module, *component]))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(cycles)


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_no_import_cycles_in_any_package(package: str) -> None:
    graph = import_graph(ROOT, package)
    assert len(graph) == len(list((ROOT / package).rglob("*.py")))
    assert not import_cycles(graph), f"modules of {package}/ that import each other: {import_cycles(graph)}"


def test_import_graph_reads_every_kind_of_import(tmp_path: Path) -> None:
    """Absolute, relative, ``from package import module``, lazy and type-only imports are all edges."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    from .. import c\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph == {"pkg": set(), "pkg.sub": set(), "pkg.a": {"pkg.sub.b"}, "pkg.sub.b": {"pkg.c"}, "pkg.c": {"pkg.a"}}
    assert import_cycles(graph) == [["pkg.a", "pkg.c", "pkg.sub.b"]]


def part_cycles(graph: dict[str, set[str]], package: str) -> list[list[str]]:
    """The cycles among the parts of ``package`` (each subpackage or module directly
    in it, with all it holds): ``a/x.py`` importing ``b/`` and ``b/y.py`` importing
    ``a/`` is a loop between ``a`` and ``b`` though no two modules import each other."""
    depth = package.count(".") + 1
    inside = [module for module in graph if module.startswith(package + ".")]
    parts: dict[str, set[str]] = {".".join(module.split(".")[: depth + 1]): set() for module in inside}
    for module in inside:
        part = ".".join(module.split(".")[: depth + 1])
        parts[part].update(
            ".".join(target.split(".")[: depth + 1]) for target in graph[module] if target.startswith(package + ".")
        )
        parts[part].discard(part)
    return import_cycles(parts)


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_no_cycles_between_the_parts_of_any_subpackage(package: str) -> None:
    """Issue 43: ``strategies/cfr/strategy_file.py`` reached into ``cfr/solvers/`` while the
    solvers imported it; a package's parts must stand on each other one way too."""
    graph = import_graph(ROOT, package)
    subpackages = [name for name in graph if (ROOT / name.replace(".", "/") / "__init__.py").is_file()]
    cycles = {name: found for name in sorted(subpackages) if (found := part_cycles(graph, name))}
    assert not cycles, f"parts of a package that import each other: {cycles}"


def test_part_cycles_are_found() -> None:
    graph = {"p": set(), "p.a": set(), "p.a.x": {"p.b"}, "p.b": set(), "p.b.y": {"p.a.z"}, "p.a.z": set(), "p.c": {"p.a.x"}}
    assert part_cycles(graph, "p") == [["p.a", "p.b"]]
    assert part_cycles(graph, "p.a") == []


def test_the_real_graph_is_read() -> None:
    """A check that the graph of strategies/ is the one on disk, not an empty one that has no cycle."""
    graph = import_graph(ROOT, "strategies")
    assert "strategies.cfr.tree.public" in graph and graph["strategies.simple"] == {"strategies.base"}
    assert "strategies.resolve.street_tree" in graph["strategies.resolve.resolver"]


def test_import_cycles_are_found() -> None:
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


#: Where a command line may be parsed: the front ends of arena/commands/, the dispatcher,
#: and the standalone ACPC programs (the dealer and the agent).
FRONT_ENDS = {"arena/cli.py", "arena/__main__.py", "dealer/cli.py", "agent/cli.py", "agent/__main__.py"}


def _parses_command_lines(path: Path) -> bool:
    """Whether the module imports argparse or getopt: a parser of command lines
    (a library taking an ``argparse.Namespace`` is a front end too)."""
    for node in _imports(ast.parse(path.read_text(), filename=str(path))):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        if any(name.split(".")[0] in ("argparse", "getopt") for name in names):
            return True
    return False


def test_command_lines_are_parsed_only_in_their_home() -> None:
    """Issue 20 §1: every command's front end lives in arena/commands/, so none creeps back into a library."""
    offending = sorted(
        relative
        for package in sorted(PROJECT)
        for path in sorted((ROOT / package).rglob("*.py"))
        if (relative := path.relative_to(ROOT).as_posix()) not in FRONT_ENDS
        and not relative.startswith("arena/commands/")
        and _parses_command_lines(path)
    )
    assert not offending, f"command-line parsing outside arena/commands/: {offending}"
    assert all((ROOT / path).is_file() for path in FRONT_ENDS)

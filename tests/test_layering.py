"""The layering of ARCHITECTURE.md, read from the import statements.

``poker/`` (the rules) imports nobody; ``dealer/`` imports only ``poker/``, so a
dealer can be deployed, audited and profiled without the agents, solvers and
analysis above it (match orchestration lives in ``arena/``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = {"poker", "dealer", "agent", "strategies", "analysis", "arena"}
ALLOWED = {"poker": set(), "dealer": {"poker"}}


def _imported_packages(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names & PROJECT


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_what_it_stands_on(package: str) -> None:
    offending = {
        str(path.relative_to(ROOT)): sorted(found)
        for path in sorted((ROOT / package).rglob("*.py"))
        if (found := _imported_packages(path) - ALLOWED[package] - {package})
    }
    assert not offending, f"{package}/ may import only {sorted(ALLOWED[package])}: {offending}"

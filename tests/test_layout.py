"""The package's folders are its floors: a lower floor never imports a higher one, there are no
import cycles, Rich/Typer/Streamlit live only in cli/ and app/, and no module holds two ideas
(over ~400 lines)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "contam_cli"
#: The floors, lowest first. A module may import its own floor and the ones below.
FLOORS = {
    "_version": 0,
    "errors": 0,
    "io": 1,
    "text": 2,
    "engine": 3,
    "detectors": 3,
    "stats": 4,
    "report": 4,
    "policy": 5,
    "features": 6,
    "render": 7,
    "cli": 8,
    "app": 8,
    "__main__": 9,
    "entry": 9,
    "__init__": 9,
}
UI = {"rich", "typer", "click", "streamlit"}
UI_FLOORS = {"cli", "app"}
MAX_LINES = 400


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _floor(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path, module: str) -> list[tuple[str, int]]:
    """Modules imported at any depth (TYPE_CHECKING ones too), with their line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            # NOTE: `from pkg import module` imports the module; `from pkg import name`, the
            # package (or module) that defines the name.
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.append((sub if sub in MODULES else base, node.lineno))
    return found


def _internal(name: str) -> str | None:
    """The package module `name` refers to (a module, or the module defining a name)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_from_a_higher_floor_and_ui_only_on_top(module: str) -> None:
    path = MODULES[module]
    floor = _floor(module)
    assert floor in FLOORS, f"{module}: its folder is not on a floor (add it to FLOORS)"
    for name, line in _imports(path, module):
        top = name.split(".")[0]
        if top in UI:
            assert floor in UI_FLOORS, f"{path}:{line}: {top} outside cli/ and app/"
        target = _internal(name) if top == "contam_cli" else None
        if target is None or module == "contam_cli":
            continue
        assert FLOORS[_floor(target)] <= FLOORS[floor], (
            f"{path}:{line}: {module} ({floor}) imports {target} ({_floor(target)}), a higher floor"
        )


def test_no_import_cycles() -> None:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        targets = {_internal(n) for n, _ in _imports(path, module) if n.startswith("contam_cli")}
        graph[module] = {t for t in targets if t and t not in (module, "contam_cli")}
    done: set[str] = set()

    def visit(m: str, stack: list[str]) -> None:
        for t in sorted(graph[m]):
            if t in stack:
                raise AssertionError("import cycle: " + " -> ".join([*stack[stack.index(t) :], t]))
            if t not in done:
                visit(t, [*stack, t])
        done.add(m)

    for m in sorted(graph):
        if m not in done:
            visit(m, [m])


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_holds_two_ideas(module: str) -> None:
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{MODULES[module]}: {lines} lines (split it: one idea per module)"

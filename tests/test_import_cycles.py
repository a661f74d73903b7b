"""No import circle among the project's modules, counting imports inside functions too.

A circle hidden behind a function-level import still means two modules cannot be understood
(or tested, or moved) apart. The graph comes from grimp, the library behind import-linter.
"""
from __future__ import annotations

import grimp

PACKAGES = ("core", "desktop", "models")


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: every group of two or more modules that import each other in a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def project_graph() -> dict[str, set[str]]:
    built = grimp.build_graph(*PACKAGES)
    return {module: set(built.find_modules_directly_imported_by(module)) for module in built.modules}


def test_no_import_circle():
    circles = strongly_connected(project_graph())
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(group) for group in circles)


def test_the_circle_finder_sees_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert strongly_connected(graph) == [["a", "b", "c"]]

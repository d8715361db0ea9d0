"""Import cycles inside the videomem package, from the code's own imports (grimp, which
import-linter brings): each strongly connected component of more than one module is a cycle.

    python benchmarks/import_cycles.py            # the package on sys.path (PYTHONPATH=src)

Last line: `modules=N cyclic_components=C files_in_cycles=F`.
"""

from __future__ import annotations

import grimp


def components(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def main() -> None:
    graph = grimp.build_graph("videomem")
    modules = set(graph.modules)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) & modules for m in modules}
    cycles = components(edges)
    for cycle in cycles:
        print(len(cycle), " ".join(cycle))
    print(f"modules={len(modules)} cyclic_components={len(cycles)} files_in_cycles={sum(map(len, cycles))}")


if __name__ == "__main__":
    main()

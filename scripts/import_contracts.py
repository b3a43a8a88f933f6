"""An import-linter contract for `lint-imports` (pyproject's [tool.importlinter]): no cycle of
imports between any two modules of the root packages, across apps as well as inside one.

The built-in ``acyclic_siblings`` contract looks for cycles between the children of one package;
the apps are top-level packages with no common parent, so a cycle through two apps needs this."""

from __future__ import annotations

from typing import Any

import grimp
from importlinter.application import contract_utils, output
from importlinter.application.contract_utils import AlertLevel
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Each group of modules that import each other, directly or not (Tarjan's strongly connected
    components, without recursion), sorted; modules that are in no cycle are left out."""
    modules = sorted(graph.modules)
    imported = {module: sorted(graph.find_modules_directly_imported_by(module)) for module in modules}
    index: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in modules:
        if root in index:
            continue
        work = [(root, iter(imported[root]))]
        index[root] = lowest[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, pending = work[-1]
            following = next(pending, None)
            if following is not None:
                if following not in index:
                    index[following] = lowest[following] = len(index)
                    stack.append(following)
                    on_stack.add(following)
                    work.append((following, iter(imported[following])))
                elif following in on_stack:
                    lowest[module] = min(lowest[module], index[following])
                continue
            work.pop()
            if work:
                lowest[work[-1][0]] = min(lowest[work[-1][0]], lowest[module])
            if lowest[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))
    return sorted(cycles)


class AcyclicModulesContract(Contract):
    type_name = "acyclic_modules"

    ignore_imports = fields.SetField(subfield=fields.ImportExpressionField(), required=False)

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        removal = contract_utils.remove_ignored_imports_and_report(
            graph=graph,
            ignore_imports=self.ignore_imports,  # type: ignore[arg-type]
            unmatched_alerting=AlertLevel.ERROR,
        )
        cycles = import_cycles(graph)
        return ContractCheck(
            kept=not cycles,
            warnings=list(removal.warnings),
            ignored_import_count=removal.ignored_import_count,
            metadata={"cycles": cycles},
        )

    def render_broken_contract(self, check: ContractCheck) -> None:
        cycles: list[Any] = check.metadata["cycles"]
        for group in cycles:
            output.print_error(f"These modules import each other: {', '.join(group)}")
            output.new_line()

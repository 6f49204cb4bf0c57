"""An import-linter contract type: the modules of `source_modules` import only types (classes)
and constants (UPPER_CASE names that are not functions) from `forbidden_functions_of`, never a
function or a module (docs/development.md: render reads what the statistics made, never derives)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect

from importlinter import Contract, ContractCheck, fields, output


def _allowed(module: str, name: str) -> bool:
    if importlib.util.find_spec(f"{module}.{name}") is not None if _is_package(module) else False:
        return False  # a submodule: its functions would be a step away
    value = getattr(importlib.import_module(module), name)
    if inspect.isclass(value):
        return True
    return name.isupper() and not callable(value)


def _is_package(module: str) -> bool:
    spec = importlib.util.find_spec(module)
    return spec is not None and spec.submodule_search_locations is not None


class NamesOnlyContract(Contract):
    source_modules = fields.ListField(subfield=fields.ModuleField())
    forbidden_functions_of = fields.ListField(subfield=fields.ModuleField())

    def check(self, graph, verbose: bool) -> ContractCheck:
        sources = [m.name for m in self.source_modules]  # type: ignore[attr-defined]
        guarded = tuple(m.name for m in self.forbidden_functions_of)  # type: ignore[attr-defined]
        modules = sorted({d for s in sources for d in (s, *graph.find_descendants(s))})
        found = []
        for module in modules:
            origin = importlib.util.find_spec(module).origin
            tree = ast.parse(open(origin, encoding="utf-8").read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        if (
                            alias.name.startswith(tuple(g + "." for g in guarded))
                            or alias.name in guarded
                        ):
                            found.append((module, node.lineno, alias.name))
                elif isinstance(node, ast.ImportFrom) and node.module:
                    if node.module in guarded or node.module.startswith(
                        tuple(g + "." for g in guarded)
                    ):
                        for alias in node.names:
                            if not _allowed(node.module, alias.name):
                                found.append((module, node.lineno, f"{node.module}.{alias.name}"))
        return ContractCheck(kept=not found, metadata={"found": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for module, line, name in check.metadata["found"]:
            output.print_error(f"{module} (l.{line}) imports {name}: not a type or a constant")
            output.new_line()

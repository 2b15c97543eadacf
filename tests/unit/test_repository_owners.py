"""Repositories by caller: ``GenerationRepository`` keeps only a generation's own lifecycle, and no repository
module writes a collection another owns, directly or through another repository's writing method (composing
two repositories' writes is a domain function's job, like ``videogen_common.endings``).

Which module writes what is read from the source: a write is a driver call that changes documents
(``update_one``, ``insert_many``...) on a collection the module holds (``store.<collection>``,
``store.db["<name>"]``, or an attribute or property bound to one), or a call of a method that makes such a
write on a repository of another module."""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field
from pathlib import Path

import videogen_common.repositories as repositories
from videogen_common.repositories.generations import GenerationRepository
from videogen_common.store import Store

DRIVER_WRITES = {
    "insert_one",
    "insert_many",
    "update_one",
    "update_many",
    "replace_one",
    "delete_one",
    "delete_many",
    "find_one_and_update",
    "find_one_and_replace",
    "find_one_and_delete",
    "bulk_write",
}
COLLECTIONS = {name for name, value in vars(Store).items() if isinstance(value, property)}

# Each collection and the modules that may write it. A collection several callers change is shared field by
# field: each module writes only its own fields of a generation.
OWNERS: dict[str, set[str]] = {
    "generations": {
        "generations",  # creation, the state's compare-and-set transitions, the actor's writes
        "batched_inserts",  # creation, grouped, and a batch's items (GenerationRepository.insert_batch)
        "leases",  # the lease
        "waiting",  # the place in a provider's line, and the move to another provider
        "deletions",  # deletion
        "indexes",  # data migrations
    },
    "waiting_lanes": {"waiting"},
    "account_slots": {"slots"},
    "provider_pools": {"provider_pools"},
    "provider_health": {"provider_health"},
    "budgets": {"budgets"},
    "budget_counters": {"budgets"},
    "webhooks": {"webhooks"},
    "deliveries": {"deliveries"},
    "events": {"events"},
    "api_keys": {"keys"},
    "audit_events": {"audit"},
    "uploads": {"uploads"},
    "rate_limits": {"rate_limits"},
    "orchestrators": {"instances"},
    "account_settings": {"account_settings"},
    "locks": {"locks"},
    "batches": {"batches"},
    "usage_days": {"usage"},  # the rows of settled days
    "migrations": {"indexes"},  # how far a data migration got (``fill_metadata_pairs``)
}
# Modules whose writes name no collection: the outbox settles the ``outbox`` of any source collection's
# documents (``EventTypes.sources``), and only that field.
ANY_SOURCE = {"outbox"}


def _collection(node: ast.expr, bound: dict[str, str]) -> str | None:
    """The collection ``node`` is, if the source says which."""
    if isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in bound:
            return bound[node.attr]
        if node.attr in COLLECTIONS:
            return node.attr
    if isinstance(node, ast.Name) and node.id in COLLECTIONS:
        return node.id
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value)
    return None


@dataclass
class Module:
    name: str
    tree: ast.Module
    # Attributes and properties bound to a collection; attributes bound to a repository class.
    collections: dict[str, str] = field(default_factory=dict)
    repositories: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, name: str, source: str) -> Module:
        module = cls(name, ast.parse(source))
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in (t for t in targets if isinstance(t, ast.Attribute)):
                    if (found := _collection(node.value, {})) is not None:
                        module.collections[target.attr] = found
                    if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
                        module.repositories[target.attr] = node.value.func.id
                    if isinstance(node.value, ast.Name):  # handed in: ``self._x = x`` (``x: SomeRepository``)
                        module.repositories[target.attr] = module._annotation_of(node.value.id)
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list
            ):
                for ret in (r for r in ast.walk(node) if isinstance(r, ast.Return)):
                    if ret.value is not None and (found := _collection(ret.value, {})) is not None:
                        module.collections[node.name] = found
        return module

    def _annotation_of(self, parameter: str) -> str:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.arg) and node.arg == parameter and isinstance(node.annotation, ast.Name):
                return node.annotation.id
        return ""

    def direct_writes(self, node: ast.AST) -> tuple[set[str], list[str]]:
        """The collections the code under ``node`` writes itself, and its writes that name none."""
        written: set[str] = set()
        unnamed: list[str] = []
        for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
            if isinstance(call.func, ast.Attribute) and call.func.attr in DRIVER_WRITES:
                found = _collection(call.func.value, self.collections)
                if found is None:
                    unnamed.append(ast.unparse(call.func))
                else:
                    written.add(found)
        return written, unnamed

    def repository_calls(self) -> list[tuple[str, str]]:
        """(class, method) of every call on a repository this module holds or makes."""
        calls = []
        for call in (n for n in ast.walk(self.tree) if isinstance(n, ast.Call)):
            if not isinstance(call.func, ast.Attribute):
                continue
            held = call.func.value
            if (
                isinstance(held, ast.Attribute)
                and isinstance(held.value, ast.Name)
                and held.value.id == "self"
            ):
                if held.attr in self.repositories:
                    calls.append((self.repositories[held.attr], call.func.attr))
            elif isinstance(held, ast.Call) and isinstance(held.func, ast.Name):
                calls.append((held.func.id, call.func.attr))
        return calls


def _modules() -> dict[str, Module]:
    folder = Path(inspect.getfile(repositories)).parent
    return {path.stem: Module.parse(path.stem, path.read_text()) for path in sorted(folder.glob("*.py"))}


def _writing_methods(modules: dict[str, Module]) -> dict[tuple[str, str], tuple[str, set[str]]]:
    """Each repository class's methods that write, by (class, method): the class's module and what they
    write."""
    methods: dict[tuple[str, str], tuple[str, set[str]]] = {}
    for module in modules.values():
        for cls in (n for n in module.tree.body if isinstance(n, ast.ClassDef)):
            for method in (n for n in cls.body if isinstance(n, ast.AsyncFunctionDef | ast.FunctionDef)):
                written, _ = module.direct_writes(method)
                if written:
                    methods[(cls.name, method.name)] = (module.name, written)
    return methods


def writes_by_module(modules: dict[str, Module]) -> dict[str, tuple[set[str], list[str]]]:
    """What each repository module writes, itself or through another's repository, and its writes that name
    no collection."""
    writing = _writing_methods(modules)
    found: dict[str, tuple[set[str], list[str]]] = {}
    for module in modules.values():
        written, unnamed = module.direct_writes(module.tree)
        for called in module.repository_calls():
            if called in writing and writing[called][0] != module.name:
                written |= writing[called][1]
        found[module.name] = (written, unnamed)
    return found


def test_the_generation_repository_keeps_to_a_generations_own_lifecycle() -> None:
    public = [name for name, member in vars(GenerationRepository).items() if not name.startswith("_")]
    assert all(callable(getattr(GenerationRepository, name)) for name in public)
    assert len(public) <= 15, sorted(public)
    # The api's reads, the lines and moves, and the migrations live beside it, each with its caller.
    assert not {"charged_by_day", "join_lane", "move_provider", "requeue_account_waits"} & set(public)


def trespasses(modules: dict[str, Module]) -> list[str]:
    """Each write of a module to a collection it does not own (or that names none)."""
    found = []
    for module, (written, unnamed) in writes_by_module(modules).items():
        found += [
            f"{module} writes {c}, owned by {OWNERS.get(c)}"
            for c in written
            if module not in OWNERS.get(c, ())
        ]
        if unnamed and module not in ANY_SOURCE:
            found.append(f"{module} writes collections it does not name: {unnamed}")
    return found


def test_no_repository_module_writes_a_collection_another_owns() -> None:
    modules = _modules()
    # The scan sees a module's writes, direct (waiting's lanes and generations' places in them) and through a
    # repository it is handed (the api's batched creation).
    assert writes_by_module(modules)["waiting"][0] == {"generations", "waiting_lanes"}
    assert writes_by_module(modules)["batched_inserts"][0] == {"generations"}
    assert trespasses(modules) == []


def test_a_repository_writing_through_anothers_repository_is_caught() -> None:
    # What GenerationRepository.fail did before the endings: a budget give-back inside a transition.
    source = (
        "class GenerationRepository:\n"
        "    def __init__(self, store):\n"
        "        self._generations = store.generations\n"
        "    async def fail(self, record):\n"
        "        await self._generations.update_one({}, {})\n"
        "        await BudgetCounterRepository(self._store).give_back(record.hold)\n"
    )
    modules = {**_modules(), "generations": Module.parse("generations", source)}
    assert trespasses(modules) == ["generations writes budget_counters, owned by {'budgets'}"]

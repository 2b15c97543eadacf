"""Reading the Dockerfile without a Docker engine: its stages and instructions, and what Python code an
image's entrypoint imports when it starts."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Instruction:
    keyword: str  # upper case: FROM, RUN, COPY, ENV, ...
    args: str  # continuation lines joined, as Docker hands them to the shell


@dataclass
class Stage:
    name: str
    parent: str  # a stage's name, or an image reference
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [i.args for i in self.instructions if i.keyword == keyword]


@dataclass
class Dockerfile:
    args: dict[str, str]  # ARGs before the first FROM, with their defaults
    stages: dict[str, Stage]

    def chain(self, name: str) -> list[Stage]:
        """The stage and the stages it is built FROM, nearest first."""
        stages = []
        while name in self.stages:
            stages.append(self.stages[name])
            name = self.stages[name].parent
        return stages

    def base_image(self, name: str) -> str:
        image = self.chain(name)[-1].parent
        return re.sub(r"\$\{?(\w+)\}?", lambda m: self.args.get(m.group(1), m.group(0)), image)

    def last(self, name: str, keyword: str) -> str | None:
        """The instruction's last value in the stage or what it inherits (USER, ENTRYPOINT, ...)."""
        for stage in self.chain(name):
            values = stage.all(keyword)
            if values:
                return values[-1]
        return None

    def env(self, name: str) -> dict[str, str]:
        merged: dict[str, str] = {}
        for stage in reversed(self.chain(name)):
            for args in stage.all("ENV"):
                merged.update(parse_env(args))
        return merged

    def finals(self) -> set[str]:
        """Stages no other stage builds on or copies from: the targets."""
        used = {s.parent for s in self.stages.values()}
        for stage in self.stages.values():
            for copy in stage.all("COPY"):
                source = copy_source_stage(copy)
                if source:
                    used.add(source)
        return set(self.stages) - used


def parse(path: Path) -> Dockerfile:
    text = re.sub(
        r"\\\n", "", "\n".join(line for line in path.read_text().splitlines() if not _comment(line))
    )
    args: dict[str, str] = {}
    stages: dict[str, Stage] = {}
    current: Stage | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        keyword, _, rest = line.strip().partition(" ")
        keyword, rest = keyword.upper(), rest.strip()
        if keyword == "FROM":
            image, _, name = rest.partition(" AS ")
            current = Stage(name=name.strip() or f"stage{len(stages)}", parent=image.strip())
            stages[current.name] = current
        elif current is None:
            assert keyword == "ARG", f"{keyword} before the first FROM"
            key, _, default = rest.partition("=")
            args[key] = default
        else:
            current.instructions.append(Instruction(keyword, rest))
    return Dockerfile(args=args, stages=stages)


def _comment(line: str) -> bool:
    # Comment lines, and the parser directive, are dropped before continuations are joined (as Docker does).
    return line.lstrip().startswith("#")


def parse_env(args: str) -> dict[str, str]:
    return dict(pair.split("=", 1) for pair in args.split())


def exec_form(args: str) -> list[str]:
    value: list[str] = json.loads(args)
    return value


def copy_source_stage(args: str) -> str | None:
    match = re.match(r"--from=(\S+)", args)
    return match.group(1) if match else None


# --- what an entrypoint imports -----------------------------------------------------------------------------


def module_imports(module: str) -> set[str]:
    """Modules imported when ``module`` is imported: its module-level import statements (class bodies and
    if/try blocks included, ``if TYPE_CHECKING`` blocks and function bodies not), resolved to submodules where
    ``from package import name`` names one."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin, module
    tree = ast.parse(Path(spec.origin).read_text())
    found: set[str] = set()

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0 and node.module, f"{module}: relative import"
                found.add(node.module)
                for alias in node.names:
                    candidate = f"{node.module}.{alias.name}"
                    if _is_module(candidate):
                        found.add(candidate)
            elif isinstance(node, ast.If):
                if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)
            elif isinstance(node, ast.ClassDef):
                visit(node.body)

    visit(tree.body)
    return found


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def import_closure(module: str, first_party: set[str]) -> tuple[set[str], set[str]]:
    """(first-party modules, third-party top-level packages) that importing ``module`` loads, following the
    first-party ones (and their parent packages) transitively. The standard library is left out."""
    seen: set[str] = set()
    third_party: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))  # a package's __init__ runs first
        for imported in module_imports(name):
            top = imported.split(".")[0]
            if top in first_party:
                todo.append(imported)
            elif top not in sys.stdlib_module_names and top != "__future__":
                third_party.add(top)
    return seen, third_party

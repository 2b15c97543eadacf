"""Reading a Dockerfile without a Docker engine: its stages and instructions."""

from __future__ import annotations

import re
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


def copy_source_stage(args: str) -> str | None:
    match = re.match(r"--from=(\S+)", args)
    return match.group(1) if match else None

"""docs/benchmarks.md, current first: before its first section, one table with a dated row for every bench
under bench/ (a bench never measured says so), and the modules that are not benches named beneath it; every
link into docs/benchmarks.md or docs/benchmarks-history.md, from the README, the docs and the two files
themselves, lands on a heading that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "benchmarks.md"
HISTORY = ROOT / "docs" / "benchmarks-history.md"


def tables(text: str) -> list[list[list[str]]]:
    """Each markdown table's rows (header included, the |---| line left out), each row its cells."""
    found: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            if not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line):
                current.append([cell.strip() for cell in line.strip("|").split("|")])
        elif current:
            found.append(current)
            current = []
    return found


def benches_named(rows: list[list[str]]) -> list[str]:
    return [name for row in rows for name in re.findall(r"`(bench\.\w+)`", row[0])]


def anchors(path: Path) -> set[str]:
    """The anchors a renderer gives the file's headings, as GitHub makes them: lower case, punctuation
    dropped, spaces as hyphens, a repeated one suffixed -1, -2…"""
    seen: dict[str, int] = {}
    result = set()
    in_code = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        match = None if in_code else re.match(r"#{1,6} (.+)", line)
        if match is None:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def test_the_first_screen_has_a_dated_row_for_every_bench() -> None:
    text = DOC.read_text()
    first_section = text.index("\n## ")
    today, helpers = tables(text)[:2]
    assert text.index("| bench") < first_section, "the table of today's figures comes before any section"
    assert today[0][-1] == "date"
    modules = {f"bench.{path.stem}" for path in (ROOT / "bench").glob("*.py") if path.stem != "__init__"}
    measured, not_benches = benches_named(today[1:]), benches_named(helpers[1:])
    assert set(measured) | set(not_benches) == modules
    assert not set(measured) & set(not_benches)
    for row in today[1:]:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row[-1]) or "not measured" in row[-1], row


def test_every_link_into_the_benchmark_documents_lands_on_a_heading() -> None:
    targets = {DOC: anchors(DOC), HISTORY: anchors(HISTORY)}
    checked, broken = 0, []
    for source in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for path, anchor in re.findall(r"\]\(([^)\s#]*)(?:#([^)\s]+))?\)", source.read_text()):
            target = (source.parent / path).resolve() if path else source
            if target not in targets:
                continue
            checked += 1
            if anchor and anchor not in targets[target]:
                broken.append(f"{source.name}: {path}#{anchor}")
    assert checked >= len(tables(DOC.read_text())[0]) - 1, "the table links each bench to its history"
    assert broken == []

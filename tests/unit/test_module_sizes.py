"""Modules a newcomer can read in one sitting: no api module over 500 lines (one resource, or one part of
one, per module) and the orchestrator's actor one generation's story, within 450 (docs/architecture.md,
"Changing the code")."""

from __future__ import annotations

from pathlib import Path

import videogen_api
import videogen_orchestrator.actor

API_MODULE_LINES = 500
ACTOR_LINES = 450


def lines_of(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_api_module_is_over_500_lines() -> None:
    package = Path(videogen_api.__file__).parent
    modules = sorted(package.rglob("*.py"))
    assert len(modules) > 40  # the package was found, not an empty folder
    over = {str(m.relative_to(package)): lines_of(m) for m in modules if lines_of(m) > API_MODULE_LINES}
    assert over == {}, f"split these by resource or by part: {over}"


def test_the_actor_is_one_generations_story_within_450_lines() -> None:
    actor = Path(videogen_orchestrator.actor.__file__)
    assert lines_of(actor) <= ACTOR_LINES, f"actor.py has {lines_of(actor)} lines"

"""The one table of scopes: each :write holds the :read of its resource and nothing else; a key stored without
scopes holds all; unknown names hold nothing; docs/api.md lists the table as it is."""

from __future__ import annotations

from pathlib import Path

from videogen_common.scopes import SCOPES, Scope, canonical, describe, granted

API_DOC = Path(__file__).parents[2] / "docs" / "api.md"


def test_write_holds_read_and_nothing_else() -> None:
    for scope, (_, holds) in SCOPES.items():
        if scope is Scope.BUDGETS_WRITE:  # setting budgets holds reading them, which usage:read covers
            assert holds == {Scope.USAGE_READ}
        elif scope.value.endswith(":write"):
            assert holds == {Scope(scope.value.replace(":write", ":read"))}, scope
        else:
            assert holds == set(), scope
        assert granted([scope.value]) == {scope, *holds}


def test_a_key_without_stored_scopes_holds_all_and_unknown_names_hold_nothing() -> None:
    assert granted(None) == set(Scope)
    assert granted([]) == set()
    assert granted(["generations:write", "no:such"]) == {Scope.GENERATIONS_WRITE, Scope.GENERATIONS_READ}


def test_canonical_order_is_the_tables() -> None:
    assert canonical([Scope.KEYS_WRITE, Scope.GENERATIONS_READ, Scope.KEYS_WRITE]) == [
        "generations:read",
        "keys:write",
    ]


def test_docs_api_md_lists_every_scope_with_its_description() -> None:
    text = API_DOC.read_text()
    for scope in Scope:
        assert f"| `{scope.value}` | {describe(scope)} |" in text, scope

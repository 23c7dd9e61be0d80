"""Schema statements (indexes, constraints, batched deletes) run one by one, quietly."""

from __future__ import annotations

from hopbench.graphdb.connection import GraphDB


def run_schema(db: GraphDB, statements: list[str], what: str) -> None:
    """Run statements one by one in auto-commit transactions, without a time limit, and without
    the server's notifications ("index does not exist", "label does not exist" are expected)."""
    with db.translate_errors(what), db.session(notifications_min_severity="OFF") as s:
        for text in statements:
            s.run(text).consume()  # type: ignore[arg-type]

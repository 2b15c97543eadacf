"""Typed records of the store's aggregates: each maps its documents to and from one dataclass
(``from_doc``, ``to_doc``), the one place its document's keys are spelled, beside its repository's
queries."""

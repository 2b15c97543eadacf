"""Typed records of the aggregates, each mapped to and from its stored document in one place."""

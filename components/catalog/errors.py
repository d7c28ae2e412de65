"""The one error type of the catalog."""

from __future__ import annotations


class CatalogError(ValueError):
    """A lookup or validation against the catalog failed.

    The message says what went wrong, the value given and the allowed values.
    """


def allowed(values: object) -> str:
    """Comma-separated list of allowed values for error messages."""
    return ", ".join(str(v) for v in values)  # type: ignore[attr-defined]

"""coplug.models."""

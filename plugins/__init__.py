"""coplug.plugins."""

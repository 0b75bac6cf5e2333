"""coplug.learned."""

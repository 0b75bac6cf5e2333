"""coplug.formulations."""

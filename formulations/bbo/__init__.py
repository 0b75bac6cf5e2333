"""coplug.formulations.bbo: evolved black-box-optimization benchmark programs."""

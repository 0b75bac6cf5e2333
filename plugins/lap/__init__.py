"""coplug.plugins.lap: exact linear assignment (Jonker-Volgenant) with warm starts."""

"""Output formats of ``trifecta analyze``."""

"""Per-session state, evidence and the capability graph."""

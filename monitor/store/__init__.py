"""The SQLite store of hook events and decisions (standard library only).

Placeholder: the store lands here.
"""

__all__: list[str] = []

"""Helpers several test modules share (``tests`` is on the test path: ``from support.x import y``)."""

"""The state rules of a session: which level the legs in its context give."""

from monitor.models import Leg, Level
from monitor.session import level_of_legs

P, U, X = Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT, Leg.EXTERNAL_COMMUNICATION


def test_levels_of_legs() -> None:
    assert level_of_legs(frozenset()) is Level.CLEAN
    assert level_of_legs(frozenset({X})) is Level.PARTIAL
    assert level_of_legs({P}) is Level.PARTIAL
    assert level_of_legs(frozenset({P, U})) is Level.ARMED
    assert level_of_legs([P, U, X]) is Level.ARMED

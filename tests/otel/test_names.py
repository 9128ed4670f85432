import pytest

from monitor.models import Leg
from monitor.otel import format_legs, read_legs


def test_legs_are_written_in_the_legs_order_whatever_order_they_come_in() -> None:
    assert format_legs([Leg.EXTERNAL_COMMUNICATION, "private_data"]) == "private_data,external_communication"
    assert format_legs(set(Leg)) == "private_data,untrusted_content,external_communication"
    assert format_legs([]) == ""


def test_a_legs_value_reads_back_as_the_legs_it_names() -> None:
    for legs in ([], [Leg.UNTRUSTED_CONTENT], [Leg.PRIVATE_DATA, Leg.UNTRUSTED_CONTENT], list(Leg)):
        assert read_legs(format_legs(legs)) == tuple(legs)


def test_a_legs_value_naming_no_leg_is_refused() -> None:
    with pytest.raises(ValueError, match="'exfiltration' is not a valid Leg"):
        read_legs("private_data,exfiltration")

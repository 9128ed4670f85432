"""Evidence that data flows (DESIGN §4): results parsed as the structured data they are, fingerprints of
private content, the destinations a call sends to, and the session's content index that says who chose them."""

from monitor.evidence._content import FREE_TEXT_KEYS, TextLeaf, is_free_text, iter_leaves, parse_structured
from monitor.evidence._destinations import (
    DESTINATION_KEYS,
    extract_destinations,
    find_addresses,
    is_allowlisted,
    iter_argument_texts,
    normalize_text,
    registrable_domain,
)
from monitor.evidence._fingerprints import (
    MIN_MATCH,
    SECRET_KEYS,
    WINDOW,
    FragmentIndex,
    K,
    decoded_views,
    find_secrets,
    normalize,
    squash,
    winnow,
)
from monitor.evidence._index import ContentIndex

__all__ = [
    "ContentIndex",
    "DESTINATION_KEYS",
    "FREE_TEXT_KEYS",
    "FragmentIndex",
    "K",
    "MIN_MATCH",
    "SECRET_KEYS",
    "TextLeaf",
    "WINDOW",
    "decoded_views",
    "extract_destinations",
    "find_addresses",
    "find_secrets",
    "is_allowlisted",
    "is_free_text",
    "iter_argument_texts",
    "iter_leaves",
    "normalize",
    "normalize_text",
    "parse_structured",
    "registrable_domain",
    "squash",
    "winnow",
]

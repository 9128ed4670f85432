"""Evidence that data flows (DESIGN §4): results parsed as the structured data they are, fingerprints of
private content, the destinations a call sends to, and the session's content index that says who chose them."""

from monitor.evidence._actions import ACTION_FAMILIES, ActionFamily, asks_for_action, delegates_everything
from monitor.evidence._content import FREE_TEXT_KEYS, TextLeaf, is_free_text, iter_leaves, parse_structured
from monitor.evidence._destinations import (
    DESTINATION_KEYS,
    SHELL_KEYS,
    TARGET_KEYS,
    extract_destinations,
    extract_shell_effects,
    extract_targets,
    find_addresses,
    is_allowlisted,
    is_local_path,
    is_own_store_write,
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
from monitor.evidence._index import ContentIndex, contains_token
from monitor.evidence._lookalikes import MAX_EDITS, find_lookalike, skeleton
from monitor.evidence._paraphrase import SalientIndex, SalientKind, SalientToken, extract_salient_tokens, is_common_word
from monitor.evidence._paths import is_secrets_path, is_third_party_path
from monitor.evidence._shell import ShellEffects, parse_shell_command

__all__ = [
    "ACTION_FAMILIES",
    "ActionFamily",
    "ContentIndex",
    "DESTINATION_KEYS",
    "FREE_TEXT_KEYS",
    "FragmentIndex",
    "K",
    "MAX_EDITS",
    "MIN_MATCH",
    "SECRET_KEYS",
    "SHELL_KEYS",
    "SalientIndex",
    "SalientKind",
    "SalientToken",
    "ShellEffects",
    "TARGET_KEYS",
    "TextLeaf",
    "WINDOW",
    "asks_for_action",
    "contains_token",
    "decoded_views",
    "delegates_everything",
    "extract_destinations",
    "extract_salient_tokens",
    "extract_shell_effects",
    "extract_targets",
    "find_addresses",
    "find_lookalike",
    "find_secrets",
    "is_allowlisted",
    "is_common_word",
    "is_free_text",
    "is_local_path",
    "is_own_store_write",
    "is_secrets_path",
    "is_third_party_path",
    "iter_argument_texts",
    "iter_leaves",
    "normalize",
    "normalize_text",
    "parse_shell_command",
    "parse_structured",
    "registrable_domain",
    "skeleton",
    "squash",
    "winnow",
]

"""One JSON record decoded at the boundary, bounded: repeated keys found and kept, nesting depth bounded.

Every reader of ``monitor.ingest`` decodes its records (a line, a document) with :func:`decode_json_record`,
and ``monitor.spans`` decodes span attributes that hold JSON text the same way. Problems come back as
:class:`JsonProblem` values (a JSON pointer and a message) the reader reports as input errors naming the
record. :func:`flatten_json_text` gives a value's keys and leaves as text; :data:`MAX_JSON_DEPTH` bounds the
nesting read as structure; a record of :data:`LARGE_RECORD` bytes given as a ``bytearray`` has its long strings
decoded apart (:data:`ABRIDGED` stands for what an abridged string leaves out). Standard library and
``orjson`` only.
"""

from monitor.jsonrecords._decode import (
    ABRIDGED,
    LARGE_RECORD,
    MAX_JSON_DEPTH,
    JsonProblem,
    decode_json_record,
    flatten_json_text,
)

__all__ = ["ABRIDGED", "JsonProblem", "LARGE_RECORD", "MAX_JSON_DEPTH", "decode_json_record", "flatten_json_text"]

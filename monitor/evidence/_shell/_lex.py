"""Lexing shell commands: a quote-aware pass that does what ``shlex`` cannot, then ``shlex`` word splitting.

``shlex`` splits words and operators well, but it loses what bash keeps: which operators were quoted (``'|'``
is a word), where comments start (``#`` only at the start of a word), line continuations, here-documents,
file-descriptor numbers written against a redirection (``2>``), and command or process substitutions. The pass
below walks the text once (linear time, no backtracking) and rewrites it for ``shlex``:

- a quoted or escaped part is marked, so an operator-looking word is known to be a word;
- a substitution (``$(...)``, backticks, ``<(...)``, ``>(...)``) is cut out and replaced by a marker that
  numbers it; its text is parsed later as a command of its own;
- a here-document's body is cut out and kept, in order;
- comments and line continuations are dropped, line breaks become ``;``;
- a dollar sign that bash would not expand (single quotes, ``\\$``) is marked as a literal.

The markers are control characters; input holding them is cleaned first (and the parse says so).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

QUOTED = "\x01"
SUB_OPEN = "\x02"
SUB_CLOSE = "\x03"
LITERAL_DOLLAR = "\x04"
FD_PREFIX = "\x05"
_CONTROL = re.compile(r"[\x00-\x05]")
SUBSTITUTION = re.compile("\x02(\\d+)\x03")
_OPERATORS = sorted("&>> <<< ;;& && || ;; ;& |& >> << <> >& <& &> >| ; & | ( ) < >".split(), key=len, reverse=True)
_OPERATOR_CHARS = frozenset("();<>|&")
_METACHARS = frozenset(" \t\r\n;&|()<>")
_MAX_BRACE_DEPTH = 8
# Runs of characters the scanner copies unchanged, by quote state (digits are left out: ``2>`` needs a look).
_PLAIN = {
    "": re.compile(r"[^\\'\"$`<>#\n\r()0-9;&|\x00-\x05\s]+|[ \t]+"),
    "'": re.compile(r"[^'$\x00-\x05]+"),
    '"': re.compile(r"[^\"\\$`\x00-\x05]+"),
}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_ANSI_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f"}
_ANSI_ESCAPES |= {"v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


@dataclass(frozen=True, slots=True)
class Token:
    """One word or operator of a command. A word's text has quotes removed; markers stay in it."""

    text: str
    op: bool = False
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class Substitution:
    """A command whose output bash splices in: ``command`` (``$(...)``, backticks), ``input`` (``<(...)``)
    or ``output`` (``>(...)``)."""

    text: str
    kind: str


@dataclass(frozen=True, slots=True)
class HereDoc:
    """A here-document's body; when ``expands``, bash expands variables and substitutions in it."""

    body: str
    expands: bool


@dataclass(slots=True)
class Lexed:
    """A command split into tokens, with its substitutions, here-documents and the problems met."""

    tokens: list[Token] = field(default_factory=list)
    substitutions: list[Substitution] = field(default_factory=list)
    heredocs: list[HereDoc] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def find_closing_paren(text: str, i: int) -> int | None:
    """The index of the ``)`` closing the ``(`` just before ``i``, honouring quotes and nesting; None if none."""
    stack = ["("]
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if stack[-1] == '"':
            if c == '"':
                stack.pop()
            elif c == "$" and text.startswith("(", i + 1):
                stack.append("(")
                i += 1
            elif c == "`":
                j = find_backtick(text, i + 1)
                if j is None:
                    return None
                i = j
            i += 1
            continue
        if c == "'":
            j = text.find("'", i + 1)
            if j < 0:
                return None
            i = j
        elif c == '"':
            stack.append('"')
        elif c == "`":
            j = find_backtick(text, i + 1)
            if j is None:
                return None
            i = j
        elif c == "(":
            stack.append("(")
        elif c == ")":
            stack.pop()
            if not stack:
                return i
        elif c == "#" and (i == 0 or text[i - 1] in _METACHARS):
            j = text.find("\n", i)
            if j < 0:
                return None
            i = j
        i += 1
    return None


def find_backtick(text: str, i: int) -> int | None:
    """The index of the unescaped backtick closing a substitution opened just before ``i``; None if none."""
    n = len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "`":
            return i
        i += 1
    return None


def _decode_ansi(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        if e in _ANSI_ESCAPES:
            out.append(_ANSI_ESCAPES[e])
            i += 2
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            digits = re.match(f"[0-9a-fA-F]{{1,{width}}}", body[i + 2 : i + 2 + width])
            if digits is None:
                out.append("\\" + e)
                i += 2
                continue
            out.append(chr(min(int(digits.group(), 16), 0x10FFFF)))
            i += 2 + len(digits.group())
        elif e in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1 : i + 4])
            assert digits is not None
            out.append(chr(int(digits.group(), 8)))
            i += 1 + len(digits.group())
        elif e == "c" and i + 2 < len(body):
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
        else:
            out.append("\\" + e)
            i += 2
    return "".join(out)


class _Scanner:
    """The quote-aware pass: one walk over the text that builds the text ``shlex`` will split."""

    def __init__(self, text: str, lexed: Lexed, depth: int = 0) -> None:
        self.text = text
        self.lexed = lexed
        self.depth = depth
        self.out: list[str] = []
        self.pending: list[tuple[str, bool, bool]] = []

    def _marker(self, inner: str, kind: str) -> None:
        self.out.append(f"{SUB_OPEN}{len(self.lexed.substitutions)}{SUB_CLOSE}")
        self.lexed.substitutions.append(Substitution(inner, kind))

    def _problem(self, message: str) -> None:
        if message not in self.lexed.problems:
            self.lexed.problems.append(message)

    def _dollar(self, i: int, in_quotes: bool = False) -> int:
        """Handle ``$`` or a backtick at ``i`` outside single quotes; returns the index to go on from."""
        text, n = self.text, len(self.text)
        if text[i] == "`":
            j = find_backtick(text, i + 1)
            if j is None:
                self._problem("unclosed backtick substitution")
                self._marker(text[i + 1 :], "command")
                return n
            inner = re.sub(r"\\([\\`$])", r"\1", text[i + 1 : j])
            self._marker(inner, "command")
            return j + 1
        nxt = text[i + 1] if i + 1 < n else ""
        if nxt == "(":
            if text.startswith("((", i + 1):
                k = find_closing_paren(text, i + 3)
                if k is not None and text.startswith(")", k + 1):
                    inner = text[i + 3 : k]
                    if "$(" in inner or "`" in inner:
                        self._problem("command substitution inside arithmetic")
                        self._marker(inner, "command")
                    else:
                        self.out.append("0")
                    return k + 2
            j = find_closing_paren(text, i + 2)
            if j is None:
                self._problem("unclosed command substitution")
                self._marker(text[i + 2 :], "command")
                return n
            self._marker(text[i + 2 : j], "command")
            return j + 1
        if nxt == "{":
            return self._braced(i)
        if nxt == "'" and not in_quotes:
            return self._ansi(i)
        if nxt == '"' and not in_quotes:
            return i + 1
        self.out.append("$")
        return i + 1

    def _braced(self, i: int) -> int:
        """``${...}``: a plain name stays; a complex expansion keeps its name and the substitutions inside."""
        text = self.text
        depth, j = 0, i + 1
        while j < len(text):
            if text[j] == "\\":
                j += 2
                continue
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        else:
            self._problem("unclosed ${...}")
            return len(text)
        inner = text[i + 2 : j]
        name = _NAME.match(inner)
        self.out.append("${" + (name.group() if name else "") + "}")
        if (name is None or name.end() != len(inner)) and self.depth >= _MAX_BRACE_DEPTH:
            self._problem("parameter expansions nested too deeply")
        elif name is None or name.end() != len(inner):
            nested = _Scanner(inner[name.end() :] if name else inner, self.lexed, self.depth + 1)
            nested.scan_expanding()
            self.out.extend(m.group() for m in SUBSTITUTION.finditer("".join(nested.out)))
        return j + 1

    def _ansi(self, i: int) -> int:
        text = self.text
        j = i + 2
        while j < len(text) and text[j] != "'":
            j += 2 if text[j] == "\\" else 1
        if j >= len(text):
            self._problem("unclosed $'...' quoting")
            j = len(text)
        decoded = _decode_ansi(text[i + 2 : j]).replace("$", LITERAL_DOLLAR)
        self.out.append(QUOTED + "'" + decoded.replace("'", "'\"'\"'") + "'")
        return j + 1

    def scan_expanding(self) -> None:
        """Scan text in which only ``$`` and backticks are special (a here-document body, ``${...}``)."""
        text, n, i = self.text, len(self.text), 0
        while i < n:
            c = text[i]
            if c == "\\" and i + 1 < n and text[i + 1] in "$`\\":
                self.out.append(LITERAL_DOLLAR if text[i + 1] == "$" else text[i + 1])
                i += 2
            elif c in "$`":
                i = self._dollar(i, in_quotes=True)
            else:
                self.out.append(c)
                i += 1

    def scan(self) -> str:
        """Walk the whole text; returns the rewritten text."""
        text, n, out = self.text, len(self.text), self.out
        state, i, word_start = "", 0, True
        while i < n:
            plain = _PLAIN[state].match(text, i)
            if plain is not None:
                # A run of characters with no meaning in this state: copied as they are.
                out.append(plain.group())
                i = plain.end()
                if not state:
                    word_start = plain.group().isspace()
                continue
            c = text[i]
            if state == "'":
                if c == "'":
                    state = ""
                out.append(LITERAL_DOLLAR if c == "$" else c)
                i += 1
                continue
            if state == '"':
                if c == '"':
                    state = ""
                    out.append(c)
                    i += 1
                elif c == "\\" and i + 1 < n:
                    e = text[i + 1]
                    out.append({"\n": "", "$": LITERAL_DOLLAR, "`": "`"}.get(e, c + e))
                    i += 2
                elif c in "$`":
                    i = self._dollar(i, in_quotes=True)
                else:
                    out.append(c)
                    i += 1
                continue
            i, word_start, state = self._normal(i, word_start)
        if state:
            self._problem("unclosed quotation")
            out.append(state)
        if self.pending:
            self._bodies(n)
        return "".join(out)

    def _normal(self, i: int, word_start: bool) -> tuple[int, bool, str]:
        """One step outside quotes; returns the next index, whether a word starts there, and the quote state."""
        text, n, out = self.text, len(self.text), self.out
        c = text[i]
        if c == "\\":
            if i + 1 >= n:
                return n, False, ""
            e = text[i + 1]
            if e == "\n":
                return i + 2, word_start, ""
            out.append(QUOTED + (LITERAL_DOLLAR if e == "$" else "\\" + e))
            return i + 2, False, ""
        if c in "'\"":
            out.append(QUOTED + c)
            return i + 1, False, c
        if c in "$`":
            return self._dollar(i), False, ""
        if c in "<>" and text.startswith("(", i + 1):
            j = find_closing_paren(text, i + 2)
            if j is None:
                self._problem("unclosed process substitution")
                self._marker(text[i + 2 :], "input" if c == "<" else "output")
                return n, False, ""
            self._marker(text[i + 2 : j], "input" if c == "<" else "output")
            return j + 1, False, ""
        if c == "#" and word_start:
            j = text.find("\n", i)
            return (n if j < 0 else j), True, ""
        if c == "\n" or (c == "\r" and text.startswith("\n", i + 1)):
            out.append(" ; ")
            j = i + (2 if c == "\r" else 1)
            return (self._bodies(j) if self.pending else j), True, ""
        if word_start and c.isdigit():
            j = i
            while j < n and text[j].isdigit():
                j += 1
            if j < n and text[j] in "<>" and not text.startswith("(", j + 1):
                out.append(FD_PREFIX + text[i:j])
                return j, False, ""
        if word_start and text.startswith("((", i):
            k = find_closing_paren(text, i + 2)
            if k is not None and text.startswith(")", k + 1):
                inner = text[i + 2 : k]
                if "$(" in inner or "`" in inner:
                    self._marker(inner, "command")
                    self._problem("command substitution inside arithmetic")
                else:
                    out.append("true")
                return k + 2, False, ""
        if text.startswith("<<<", i):
            out.append("<<<")
            return i + 3, True, ""
        if text.startswith("<<", i):
            return self._heredoc(i + 2), False, ""
        out.append(c)
        return i + 1, c in _METACHARS, ""

    def _heredoc(self, i: int) -> int:
        text, n = self.text, len(self.text)
        strip = text.startswith("-", i)
        i += 1 if strip else 0
        while i < n and text[i] in " \t":
            i += 1
        delimiter: list[str] = []
        quoted = False
        while i < n and text[i] not in _METACHARS:
            c = text[i]
            if c in "'\"":
                j = text.find(c, i + 1)
                j = n if j < 0 else j
                delimiter.append(text[i + 1 : j])
                quoted, i = True, j + 1
            elif c == "\\" and i + 1 < n:
                delimiter.append(text[i + 1])
                quoted, i = True, i + 2
            else:
                delimiter.append(c)
                i += 1
        if not delimiter:
            self._problem("here-document without a delimiter")
        self.out.append(f" << {QUOTED}heredoc ")
        self.pending.append(("".join(delimiter), strip, quoted))
        return i

    def _bodies(self, pos: int) -> int:
        """Cut out the bodies of the here-documents opened on the line that just ended."""
        text, n = self.text, len(self.text)
        for delimiter, strip, quoted in self.pending:
            lines: list[str] = []
            while True:
                if pos >= n:
                    if delimiter:
                        self._problem("here-document not terminated")
                    break
                nl = text.find("\n", pos)
                end = n if nl < 0 else nl
                line = text[pos:end].removesuffix("\r")
                pos = end + 1
                if (line.lstrip("\t") if strip else line) == delimiter:
                    break
                lines.append(line.lstrip("\t") if strip else line)
            body = "\n".join(lines)
            if quoted:
                body = body.replace("$", LITERAL_DOLLAR)
            else:
                nested = _Scanner(body, self.lexed)
                nested.scan_expanding()
                body = "".join(nested.out)
            self.lexed.heredocs.append(HereDoc(body, not quoted))
        self.pending = []
        return min(pos, n)


def _split_operators(run: str) -> list[str]:
    ops: list[str] = []
    i = 0
    while i < len(run):
        op = next(o for o in _OPERATORS if run.startswith(o, i))
        ops.append(op)
        i += len(op)
    return ops


def lex_command(command: str) -> Lexed:
    """Split a command into tokens, cutting out its substitutions and here-documents (see the module text)."""
    lexed = Lexed()
    if _CONTROL.search(command):
        lexed.problems.append("control characters in the command")
        command = _CONTROL.sub(" ", command)
    text = _Scanner(command, lexed).scan()
    lex = shlex.shlex(text, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.whitespace = " \t\r"
    lex.commenters = ""
    try:
        for raw in lex:
            if QUOTED not in raw and raw and set(raw) <= _OPERATOR_CHARS:
                lexed.tokens.extend(Token(op, op=True) for op in _split_operators(raw))
            else:
                lexed.tokens.append(Token(raw.replace(QUOTED, ""), quoted=QUOTED in raw))
    except ValueError as exc:
        lexed.problems.append(f"cannot split the command: {exc}")
    return lexed

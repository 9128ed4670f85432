"""The shell parser's syntax tree: lists, pipelines, simple commands with their redirections, and compound
commands (subshells, brace groups, ``if``, loops, ``for``, ``case``, functions, ``[[ ]]``).

Recursive descent over the tokens of ``_shell_lex``, bounded in nesting. When a command is not syntax the
parser understands, the caller retries in *flat* mode over :func:`flatten` tokens: grouping and keywords become
separators, so every simple command is still seen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from monitor.evidence._shell._lex import FD_PREFIX, Token

MAX_NESTING = 24
SEPARATORS = frozenset([";", "&", "&&", "||", ";;", ";&", ";;&"])
_CASE_ENDS = frozenset([";;", ";&", ";;&"])
REDIRECTS = frozenset(["<", ">", ">>", ">|", "&>", "&>>", "<>", ">&", "<&", "<<", "<<<"])
_PIPES = frozenset(["|", "|&"])
_KEYWORDS = frozenset(
    "{ } if then elif else fi while until do done for select in case esac function [[ ]] ! time coproc".split()
)


@dataclass(slots=True)
class Redirect:
    """A redirection: its operator, the file descriptor written before it, its target (a here-document's
    index for ``<<``)."""

    op: str
    fd: str | None
    target: Token | None
    heredoc: int | None = None


@dataclass(slots=True)
class Simple:
    """A simple command: its words (assignments first) and redirections."""

    words: list[Token]
    redirects: list[Redirect]


@dataclass(slots=True)
class Pipeline:
    """Commands joined by pipes."""

    units: list[Simple | Group]


@dataclass(slots=True)
class Group:
    """A compound command: its kind, body, redirections; a ``for`` loop's variable and items, a function's name."""

    kind: str
    body: list[Pipeline]
    redirects: list[Redirect] = field(default_factory=list)
    name: str = ""
    items: list[Token] | None = None


class SyntaxProblem(Exception):
    """The command is not shell syntax the parser understands."""


class Parser:
    """Recursive descent over the tokens; ``flat`` mode (after a syntax problem) never fails."""

    def __init__(self, tokens: list[Token], *, flat: bool = False) -> None:
        self.tokens = tokens
        self.pos = 0
        self.heredocs = 0
        self.flat = flat
        self.nesting = 0

    def peek(self, ahead: int = 0) -> Token | None:
        i = self.pos + ahead
        return self.tokens[i] if i < len(self.tokens) else None

    @staticmethod
    def is_word(tok: Token | None, *texts: str) -> bool:
        return tok is not None and not tok.op and not tok.quoted and tok.text in texts

    @staticmethod
    def is_op(tok: Token | None, *texts: str) -> bool:
        return tok is not None and tok.op and tok.text in texts

    def expect_word(self, text: str) -> None:
        if not self.is_word(self.peek(), text):
            raise SyntaxProblem(f"expected {text!r}")
        self.pos += 1

    def parse(self) -> list[Pipeline]:
        """The whole token list as a list of pipelines."""
        items = self.parse_list(frozenset(), frozenset())
        if self.pos < len(self.tokens):
            raise SyntaxProblem(f"unexpected {self.tokens[self.pos].text!r}")
        return items

    def parse_list(self, stops: frozenset[str], seps: frozenset[str]) -> list[Pipeline]:
        items: list[Pipeline] = []
        while (tok := self.peek()) is not None:
            if tok.text in stops and (tok.op or not tok.quoted):
                break
            if (tok.op and tok.text in SEPARATORS) or self.is_word(tok, *seps):
                self.pos += 1
                continue
            if self.flat and tok.op and tok.text not in REDIRECTS:
                self.pos += 1
                continue
            items.append(self.parse_pipeline())
        return items

    def parse_pipeline(self) -> Pipeline:
        units: list[Simple | Group] = []
        while True:
            while self.is_word(self.peek(), "!", "time", "coproc") or (units == [] and self.is_word(self.peek(), "-p")):
                self.pos += 1
            units.append(self.parse_command())
            if not self.is_op(self.peek(), *_PIPES):
                return Pipeline(units)
            self.pos += 1
            while self.is_op(self.peek(), ";"):
                self.pos += 1

    def _group(self, kind: str, stops: frozenset[str], seps: frozenset[str] = frozenset()) -> list[Pipeline]:
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise SyntaxProblem("groups nested too deeply")
        body = self.parse_list(stops, seps)
        self.nesting -= 1
        return body

    def parse_command(self) -> Simple | Group:
        tok = self.peek()
        if self.flat and (tok is None or (tok.op and tok.text not in REDIRECTS)):
            self.pos += 1
            return Simple([], [])
        if tok is None:
            raise SyntaxProblem("missing command")
        if tok.op and tok.text not in REDIRECTS:
            if tok.text != "(":
                raise SyntaxProblem(f"unexpected {tok.text!r}")
            self.pos += 1
            body = self._group("subshell", frozenset([")"]))
            if not self.is_op(self.peek(), ")"):
                raise SyntaxProblem("unclosed (")
            self.pos += 1
            return Group("subshell", body, self.parse_redirects())
        if not tok.op and not tok.quoted and not self.flat:
            compound = self._compound(tok.text)
            if compound is not None:
                compound.redirects = self.parse_redirects()
                return compound
        return self.parse_simple()

    def _compound(self, word: str) -> Group | None:
        ends = {"{": ("}", frozenset()), "if": ("fi", frozenset(["then", "elif", "else"]))}
        ends |= {"while": ("done", frozenset(["do"])), "until": ("done", frozenset(["do"]))}
        if word in ends:
            end, seps = ends[word]
            self.pos += 1
            body = self._group(word, frozenset([end]), seps)
            self.expect_word(end)
            return Group(word, body)
        if word in ("for", "select"):
            return self._for()
        if word == "case":
            return self._case()
        if word == "function" or (self.is_op(self.peek(1), "(") and self.is_op(self.peek(2), ")")):
            self.pos += 1
            name = word
            if word == "function":
                name_tok = self.peek()
                if name_tok is None or name_tok.op:
                    raise SyntaxProblem("function without a name")
                name = name_tok.text
                self.pos += 1
            if self.is_op(self.peek(), "(") and self.is_op(self.peek(1), ")"):
                self.pos += 2
            while self.is_op(self.peek(), ";"):
                self.pos += 1
            return Group("function", [Pipeline([self.parse_command()])], name=name)
        if word == "[[":
            start = self.pos
            while (tok := self.peek()) is not None and not self.is_word(tok, "]]"):
                self.pos += 1
            words = [Token(t.text, quoted=True) for t in self.tokens[start : self.pos]]
            self.pos += 1 if self.peek() is not None else 0
            return Group("test", [Pipeline([Simple(words, [])])])
        return None

    def _for(self) -> Group:
        self.pos += 1
        name_tok = self.peek()
        if name_tok is None or name_tok.op:
            raise SyntaxProblem("for without a name")
        self.pos += 1
        while self.is_op(self.peek(), ";"):
            self.pos += 1
        items: list[Token] | None = None
        if self.is_word(self.peek(), "in"):
            self.pos += 1
            items = []
            while (tok := self.peek()) is not None and not tok.op:
                items.append(tok)
                self.pos += 1
        while self.is_op(self.peek(), *SEPARATORS):
            self.pos += 1
        self.expect_word("do")
        body = self._group("for", frozenset(["done"]))
        self.expect_word("done")
        return Group("for", body, name=name_tok.text, items=items)

    def _case(self) -> Group:
        self.pos += 2
        while self.is_op(self.peek(), ";"):
            self.pos += 1
        self.expect_word("in")
        body: list[Pipeline] = []
        while True:
            while self.is_op(self.peek(), ";"):
                self.pos += 1
            tok = self.peek()
            if tok is None:
                raise SyntaxProblem("case without esac")
            if self.is_word(tok, "esac"):
                self.pos += 1
                return Group("case", body)
            while (tok := self.peek()) is not None and not self.is_op(tok, ")"):
                self.pos += 1
            self.pos += 1
            body.extend(self._group("case", _CASE_ENDS | {"esac"}))
            if self.is_op(self.peek(), *_CASE_ENDS):
                self.pos += 1

    def parse_simple(self) -> Simple:
        words: list[Token] = []
        redirects: list[Redirect] = []
        while (tok := self.peek()) is not None:
            if tok.op:
                if tok.text in REDIRECTS:
                    redirects.append(self.parse_redirect(None))
                    continue
                if tok.text == "(" and len(words) == 1 and words[0].text.endswith("="):
                    self.pos += 1
                    values = []
                    while (item := self.peek()) is not None and not self.is_op(item, ")"):
                        values.append(item.text)
                        self.pos += 1
                    self.pos += 1
                    words[0] = Token(words[0].text + " ".join(values), quoted=True)
                    continue
                break
            self.pos += 1
            if tok.text.startswith(FD_PREFIX) and self.is_op(self.peek(), *REDIRECTS):
                redirects.append(self.parse_redirect(tok.text[1:]))
                continue
            if tok.text.startswith(FD_PREFIX):
                tok = Token(tok.text.removeprefix(FD_PREFIX), quoted=tok.quoted)
            words.append(tok)
        return Simple(words, redirects)

    def parse_redirect(self, fd: str | None) -> Redirect:
        op = self.tokens[self.pos].text
        self.pos += 1
        target = self.peek()
        if target is None or target.op:
            if not self.flat:
                raise SyntaxProblem(f"{op} without a target")
            target = None
        else:
            self.pos += 1
        heredoc = None
        if op == "<<":
            heredoc = self.heredocs
            self.heredocs += 1
        return Redirect(op, fd, target, heredoc)

    def parse_redirects(self) -> list[Redirect]:
        redirects = []
        while (tok := self.peek()) is not None:
            if tok.op and tok.text in REDIRECTS:
                redirects.append(self.parse_redirect(None))
            elif tok.text.startswith(FD_PREFIX) and self.is_op(self.peek(1), *REDIRECTS):
                self.pos += 1
                redirects.append(self.parse_redirect(tok.text[1:]))
            else:
                break
        return redirects


def flatten(tokens: list[Token]) -> list[Token]:
    """Tokens for the flat fallback: grouping and keywords at a command's start become separators."""
    out: list[Token] = []
    at_start = True
    for tok in tokens:
        if tok.op and tok.text in ("(", ")"):
            out.append(Token(";", op=True))
            at_start = True
        elif at_start and not tok.op and not tok.quoted and tok.text in _KEYWORDS:
            out.append(Token(";", op=True))
        else:
            out.append(tok)
            at_start = tok.op and tok.text not in REDIRECTS
    return out

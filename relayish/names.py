"""Printable names: each object named from its hint, unique within one naming session.

The printer names variables and type variables with ``Names``; ``dims.dim_text`` names the
dimension variables of a dimension printed on its own the same way.
"""

from __future__ import annotations

import re

# Words of the text format that a type variable may not be named (variables are written ``%name``).
KEYWORDS = frozenset(
    "let in if then else fn def operator forall Tensor Shape IntType UIntType FloatType "
    "BoolType RefType Zero Grad Jvp Vmap Ref tensor true false none sq nan inf Type BaseType Dim type match Is Unpack".split()
)
# Words that cannot name a data type or a constructor: the keywords, the wildcard pattern and the
# word that makes an operator declaration a relation.
NOT_DATA_NAMES = KEYWORDS | {"_", "relation"}
_BAD_NAME_CHARS = re.compile(r"[^A-Za-z0-9_]")


class Names:
    """Unique printable names from hints, allocated in printing order."""

    def __init__(self, allow_leading_digit: bool):
        self.allow_leading_digit = allow_leading_digit
        self.by_id: dict[int, str] = {}
        self.used: set[str] = set()
        self.next_suffix: dict[str, int] = {}
        self.keep_alive: list[object] = []

    def name(self, obj: object, hint: str) -> str:
        found = self.by_id.get(id(obj))
        if found is not None:
            return found
        base = _BAD_NAME_CHARS.sub("_", hint) or "x"
        if not self.allow_leading_digit and (base[0].isdigit() or base in KEYWORDS):
            base = "t" + base if base[0].isdigit() else base + "_"
        k = self.next_suffix.get(base, 0)  # names only get used up, so resume where we stopped
        name = f"{base}_{k}" if k else base
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.next_suffix[base] = k + 1
        self.used.add(name)
        self.by_id[id(obj)] = name
        self.keep_alive.append(obj)
        return name

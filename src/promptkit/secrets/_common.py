"""What every secret rule shares: the span a rule reports and the entropy test for randomness."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """Where one credential sits in a text (`start`..`end`) and the rule that found it."""

    rule: str
    start: int
    end: int


# Characters a token body is made of: a rule refuses a prefix glued to one of these, so `risk_`
# or `desk-` in the middle of a word never starts a match.
TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

MIN_SECRET_LENGTH = 16
MIN_ENTROPY = 3.5
# Hex has at most 4 bits per character, so a random hex secret scores lower than base64.
MIN_HEX_ENTROPY = 3.0
_HEX = re.compile(r"[0-9a-fA-F\-]+")


def shannon_entropy(value: str) -> float:
    """Bits per character of `value`'s own character distribution (0.0 for "")."""
    length = len(value)
    if not length:
        return 0.0
    return -sum((count / length) * math.log2(count / length) for count in Counter(value).values())


def is_random_looking(value: str) -> bool:
    """At least 16 characters, varied like generated key material rather than words."""
    if len(value) < MIN_SECRET_LENGTH:
        return False
    threshold = MIN_HEX_ENTROPY if _HEX.fullmatch(value) else MIN_ENTROPY
    return shannon_entropy(value) >= threshold


_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
# Generated text changes case or class every two characters or so; camel-case names
# (`SomeLongFileName2Component`) run five or more characters per word.
_MIN_FRAGMENTS_PER_CHAR = 0.3


def looks_generated(value: str) -> bool:
    """Random-looking base62 key material: mixed classes, high entropy, no words in it."""
    return (
        len(value) >= MIN_SECRET_LENGTH
        and mixes_letters_and_digits(value)
        and shannon_entropy(value) >= MIN_ENTROPY
        and len(_WORDS.findall(value)) >= _MIN_FRAGMENTS_PER_CHAR * len(value)
    )


def mixes_letters_and_digits(value: str) -> bool:
    """Upper case, lower case and digits all present: how base62 key material looks."""
    return (
        any(char.isupper() for char in value)
        and any(char.islower() for char in value)
        and any(char.isdigit() for char in value)
    )

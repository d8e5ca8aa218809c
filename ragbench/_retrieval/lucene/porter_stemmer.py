"""Lucene's Porter stemmer (`org.apache.lucene.analysis.en.PorterStemmer`, Porter's Release 3 with its two bug
fixes), which Anserini's default English analyzer applies.

It departs from the 1980 paper as Porter's own reference code does ("bli" -> "ble" where the paper has
"abli" -> "able", and "logi" -> "log"), so NLTK's and Snowball's Porter stemmers give other stems for some words.
It works on UTF-16 code units (Java chars): words shorter than 3 units are left alone, only a e i o u (and y
after a consonant) are vowels, and any other character is a consonant.
"""

from __future__ import annotations

import struct

VOWELS = frozenset("aeiou")

STEP3 = {  # keyed by the penultimate letter, tried in this order
    "a": (("ational", "ate"), ("tional", "tion")),
    "c": (("enci", "ence"), ("anci", "ance")),
    "e": (("izer", "ize"),),
    "l": (("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous")),
    "o": (("ization", "ize"), ("ation", "ate"), ("ator", "ate")),
    "s": (("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous")),
    "t": (("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")),
    "g": (("logi", "log"),),
}
STEP4 = {  # keyed by the last letter
    "e": (("icate", "ic"), ("ative", ""), ("alize", "al")),
    "i": (("iciti", "ic"),),
    "l": (("ical", "ic"), ("ful", "")),
    "s": (("ness", ""),),
}
STEP5 = {  # keyed by the penultimate letter; "ion" needs s or t before it
    "a": ("al",),
    "c": ("ance", "ence"),
    "e": ("er",),
    "i": ("ic",),
    "l": ("able", "ible"),
    "n": ("ant", "ement", "ment", "ent"),
    "o": ("ion", "ou"),
    "s": ("ism",),
    "t": ("ate", "iti"),
    "u": ("ous",),
    "v": ("ive",),
    "z": ("ize",),
}


class _Word:
    """The stemmer's state: the word's units `b`, its current end `k` and the end `j` of the stem before a suffix."""

    def __init__(self, units: list[str]) -> None:
        self.b = units
        self.k = len(units) - 1
        self.j = 0

    def cons(self, i: int) -> bool:
        char = self.b[i]
        if char in VOWELS:
            return False
        if char == "y":
            return True if i == 0 else not self.cons(i - 1)
        return True

    def past(self, i: int, consonant: bool) -> int | None:
        """The position after the first consonant (`consonant`) or vowel in b[i..j]; None when there is none."""
        while i <= self.j:
            if self.cons(i) == consonant:
                return i + 1
            i += 1
        return None

    def m(self) -> int:
        """The number of vowel-consonant sequences in b[0..j]."""
        n, i = 0, self.past(0, consonant=False)
        while i is not None and (i := self.past(i, consonant=True)) is not None:
            n += 1
            i = self.past(i, consonant=False)
        return n

    def vowel_in_stem(self) -> bool:
        return any(not self.cons(i) for i in range(self.j + 1))

    def double_consonant(self, j: int) -> bool:
        return j >= 1 and self.b[j] == self.b[j - 1] and self.cons(j)

    def cvc(self, i: int) -> bool:
        return (
            i >= 2 and self.cons(i) and not self.cons(i - 1) and self.cons(i - 2) and self.b[i] not in ("w", "x", "y")
        )

    def ends(self, suffix: str) -> bool:
        start = self.k - len(suffix) + 1
        if start < 0 or "".join(self.b[start : self.k + 1]) != suffix:
            return False
        self.j = self.k - len(suffix)
        return True

    def set_to(self, replacement: str) -> None:
        del self.b[self.j + 1 :]
        self.b.extend(replacement)
        self.k = self.j + len(replacement)

    def replace_if_measured(self, replacement: str) -> None:
        if self.m() > 0:
            self.set_to(replacement)

    def step1(self) -> None:  # plurals, -ed, -ing
        if self.b[self.k] == "s":
            if self.ends("sses"):
                self.k -= 2
            elif self.ends("ies"):
                self.set_to("i")
            elif self.b[self.k - 1] != "s":
                self.k -= 1
        if self.ends("eed"):
            if self.m() > 0:
                self.k -= 1
        elif (self.ends("ed") or self.ends("ing")) and self.vowel_in_stem():
            self.k = self.j
            if self.ends("at"):
                self.set_to("ate")
            elif self.ends("bl"):
                self.set_to("ble")
            elif self.ends("iz"):
                self.set_to("ize")
            elif self.double_consonant(self.k):
                if self.b[self.k] not in ("l", "s", "z"):
                    self.k -= 1
            elif self.m() == 1 and self.cvc(self.k):
                self.set_to("e")

    def step2(self) -> None:  # y -> i after a vowel in the stem
        if self.ends("y") and self.vowel_in_stem():
            self.b[self.k] = "i"

    def step3(self) -> None:  # double suffixes
        if self.k == 0:
            return
        for suffix, replacement in STEP3.get(self.b[self.k - 1], ()):
            if self.ends(suffix):
                self.replace_if_measured(replacement)
                return

    def step4(self) -> None:  # -ic-, -full, -ness ...
        for suffix, replacement in STEP4.get(self.b[self.k], ()):
            if self.ends(suffix):
                self.replace_if_measured(replacement)
                return

    def step5(self) -> None:  # -ant, -ence ... in <c>vcvc<v>
        if self.k == 0:
            return
        penultimate = self.b[self.k - 1]
        for suffix in STEP5.get(penultimate, ()):
            if self.ends(suffix):
                if suffix == "ion" and not (self.j >= 0 and self.b[self.j] in ("s", "t")):
                    continue
                if self.m() > 1:
                    self.k = self.j
                return

    def step6(self) -> None:  # a final -e, a final -ll
        self.j = self.k
        if self.b[self.k] == "e":
            measure = self.m()
            if measure > 1 or measure == 1 and not self.cvc(self.k - 1):
                self.k -= 1
        if self.b[self.k] == "l" and self.double_consonant(self.k) and self.m() > 1:
            self.k -= 1


def utf16_units(word: str) -> list[str]:
    """The word's UTF-16 code units, each as a one-character string (a surrogate for each half of a pair)."""
    if word.isascii() or all(ord(char) <= 0xFFFF for char in word):
        return list(word)
    data = word.encode("utf-16-le", "surrogatepass")
    return [chr(unit) for unit in struct.unpack(f"<{len(data) // 2}H", data)]


def from_units(units: list[str]) -> str:
    text = "".join(units)
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def porter_stem(word: str) -> str:
    """`word` (lower-cased) as Lucene's PorterStemFilter leaves it (uncached: `analyzer.term` caches a token's
    term)."""
    units = utf16_units(word)
    if len(units) < 3:
        return word
    state = _Word(units)
    state.step1()
    state.step2()
    state.step3()
    state.step4()
    state.step5()
    state.step6()
    return from_units(state.b[: state.k + 1])

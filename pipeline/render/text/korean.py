"""Korean particles chosen by the sound they follow (docs/languages.md). A Korean text of the
catalog writes a particle after a value as both its forms, `{name}은(는)`, `{n}이(가)`,
`{x}을(를)`, `{x}과(와)`, `{x}(으)로`, since the value is not known until the text is filled;
`resolve` then keeps the form the value's last sound takes: after a final consonant 은, 이,
을, 과, 으로 (으로 not after ㄹ); after a vowel 는, 가, 를, 와, 로.

The last sound is read from the value's last letter or digit: a Hangul syllable's own final
consonant; a digit as Korean reads the number (2 이, 512 오백십이, 10 십, 100 백); a Latin
word as it is said in Korean (dot_product 프로덕트: a vowel; residual 레지듀얼: ㄹ; an
acronym or a single letter by its letters' names: HBM 엠, B 비)."""

from __future__ import annotations

import re

# (after a final consonant, after a vowel), and each written with both forms
PAIRS = {"은(는)": ("은", "는"), "이(가)": ("이", "가"), "을(를)": ("을", "를"),
         "과(와)": ("과", "와"), "(으)로": ("으로", "로")}  # fmt: skip
_WRITTEN = re.compile("|".join(re.escape(p) for p in PAIRS))
_HANGUL_FIRST, _HANGUL_LAST = 0xAC00, 0xD7A3
_RIEUL = 8  # the index of ㄹ among a syllable's final consonants
# a digit's Korean reading ends in: a final consonant (True), ㄹ ("l") or a vowel (False)
_DIGITS = {"0": True, "1": "l", "2": False, "3": True, "4": False, "5": False, "6": True,
           "7": "l", "8": "l", "9": False}  # fmt: skip
# a letter's Korean name ends in (A 에이, L 엘, M 엠, N 엔, R 알, ...)
_LETTERS = {c: False for c in "ABCDEFGHIJKOPQSTUVWXYZ"} | {"L": "l", "M": True, "N": True,
                                                          "R": "l"}  # fmt: skip
_VOWELS = set("aeiou")
_TAGS = re.compile(r"(?:<[^<>]*>|&[a-z]+;|&#\d+;|[\s\])}'\"`*,.:;!?-])+$")  # trailing markup


def final_sound(text: str) -> bool | str | None:
    """How `text` ends when read in Korean: True after a final consonant, "l" after ㄹ,
    False after a vowel, None when it cannot be told (no letter or digit at its end)."""
    text = _TAGS.sub("", text)
    if not text:
        return None
    last = text[-1]
    if last == "%":  # 퍼센트
        return False
    if _HANGUL_FIRST <= ord(last) <= _HANGUL_LAST:
        final = (ord(last) - _HANGUL_FIRST) % 28
        return "l" if final == _RIEUL else bool(final)
    if last.isdigit():
        number = re.search(r"\d+$", text).group()
        if number.strip("0") and number.endswith("0"):  # 10 십, 100 백, 1000 천, 10000 만
            return True
        return _DIGITS.get(last)
    word = re.search(r"[A-Za-z]+$", text)
    if word is None:
        return None
    return _latin(word.group())


def _latin(word: str) -> bool | str:
    """A Latin word's last sound as Korean says it."""
    if len(word) == 1 or word.isupper():  # a letter or an acronym: the letters' names
        return _LETTERS[word[-1].upper()]
    lower = word.lower()
    if lower.endswith("l"):  # all 올, residual 레지듀얼
        return "l"
    if lower.endswith(("m", "n", "ng", "ck")):  # stream 스트림, run 런, ring 링, block 블록
        return True
    if lower.endswith("p") and lower[-2:-1] in _VOWELS:  # step 스텝, up 업, sweep 스윕
        return True
    if lower.endswith(("t", "k")) and lower[-2:-1] in _VOWELS:
        # after one short vowel (chat 챗, resnet 레스넷, out 아웃, book 북) a final
        # consonant; after a long one (heat 히트, speak 스피크) or a cluster (product 프로덕트) 트
        before = lower[-3:-2]
        return before not in _VOWELS or lower[-3:-1] in ("ou", "oo")
    return False  # dot_product 프로덕트, decode 디코드, attention_softmax 소프트맥스: a vowel


def particle(value: str, pair: str) -> str:
    """The form of `pair` (e.g. "은(는)") that follows `value`; both forms when unknown."""
    after_consonant, after_vowel = PAIRS[pair]
    sound = final_sound(value)
    if sound is None:
        return pair
    if pair == "(으)로":
        return after_consonant if sound is True else after_vowel
    return after_consonant if sound else after_vowel


def resolve(text: str) -> str:
    """`text` with every particle written with both forms chosen by what comes before it."""
    if "(" not in text:
        return text
    parts = []
    end = 0
    for match in _WRITTEN.finditer(text):
        parts += [text[end : match.start()], particle(text[: match.start()], match.group())]
        end = match.end()
    return "".join(parts) + text[end:]

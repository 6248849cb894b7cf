"""Small text statistics helpers (bench corpus module; contains one planted bug)."""

import re

_WORD = re.compile(r"[A-Za-z']+")


def words(text):
    """Split text into lower-case words.

    >>> words("Hello, World")
    ['hello', 'world']
    """
    return [w.lower() for w in _WORD.findall(text)]


def word_count(text):
    """Number of words in text.

    >>> word_count("a b c")
    3
    """
    return len(words(text))


def longest_word(text):
    """The longest word (the first one on ties); None for text without words.

    >>> longest_word("hi yo")
    'hi'
    """
    best = None
    for word in words(text):
        if best is None or len(word) >= len(best):
            best = word
    return best


def frequencies(text):
    """Map each word to how often it occurs."""
    counts = {}
    for word in words(text):
        counts[word] = counts.get(word, 0) + 1
    return counts


def most_common(text, n=1):
    """The n most common words, most frequent first, ties by first appearance."""
    counts = frequencies(text)
    order = {w: i for i, w in reversed(list(enumerate(words(text))))}
    ranked = sorted(counts, key=lambda w: (-counts[w], order[w]))
    return ranked[:n]


def capitalize_sentences(text):
    """Upper-case the first letter of every sentence (after '.', '!' or '?')."""
    out, start = [], True
    for ch in text:
        if start and ch.isalpha():
            out.append(ch.upper())
            start = False
        else:
            out.append(ch)
        if ch in ".!?":
            start = True
    return "".join(out)

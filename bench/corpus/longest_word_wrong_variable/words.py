"""Small word statistics."""


def longest_word(text):
    best = ""
    for word in text.split():
        if len(word) > len(best):
            best = text
    return best

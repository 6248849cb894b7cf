"""The one-line mutants: single small edits of a suspicious line, in the order of their bug classes' frequency."""

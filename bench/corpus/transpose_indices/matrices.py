"""Matrix helpers on lists of rows."""


def transpose(matrix):
    rows, cols = len(matrix), len(matrix[0])
    result = [[None] * rows for _ in range(cols)]
    for i in range(rows):
        for j in range(cols):
            result[i][j] = matrix[j][i]
    return result

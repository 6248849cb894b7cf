from stacking import Stack


def test_lifo():
    s = Stack()
    for x in (1, 2, 3):
        s.push(x)
    assert s.peek() == 3
    assert s.pop() == 3
    assert s.pop() == 2

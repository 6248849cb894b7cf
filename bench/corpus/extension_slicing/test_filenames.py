from filenames import extension


def test_extension():
    assert extension("report.pdf") == "pdf"
    assert extension("archive.tar.gz") == "gz"


def test_no_extension():
    assert extension("README") == ""
    assert extension(".bashrc") == ""

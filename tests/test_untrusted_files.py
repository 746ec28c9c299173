"""The runner reads files a case could have replaced: never follows a link, never blocks on a FIFO, reads a bounded
amount. Real files, links and FIFOs."""

import os

import pytest
from reprokit.run.untrusted_files import UntrustedFile, read_untrusted


def test_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "stdout.txt")
    with pytest.raises(UntrustedFile, match="not a regular file"):
        read_untrusted(tmp_path / "stdout.txt", 100)


def test_a_link_to_elsewhere_is_refused(tmp_path):
    (tmp_path / "probe-0.json").symlink_to("/etc/passwd")
    with pytest.raises(UntrustedFile):
        read_untrusted(tmp_path / "probe-0.json", 100)


def test_reads_are_bounded(tmp_path):
    (tmp_path / "big").write_bytes(b"a" * 10_000 + b"END")
    assert read_untrusted(tmp_path / "big", 100) == (b"a" * 100, 10_003)
    assert read_untrusted(tmp_path / "big", 5, tail=True) == (b"aaEND", 10_003)

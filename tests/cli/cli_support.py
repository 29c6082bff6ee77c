"""What the command-line tests share: where the etc binary is, and a test case
with its own temporary folder."""
import os
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ETC = os.environ.get("ETC_BIN", os.path.join(HERE, "..", "..", "build", "tools", "etc"))


class TempDirCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

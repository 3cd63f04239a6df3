"""Run by wheel_install.sh with the Python of a fresh virtual environment that has only the
wheel installed: the package imports from there, says the version CMakeLists.txt gives,
finds its transports' plugins inside itself, and two processes sum over UCX."""

import os
import pathlib
import subprocess
import sys

import numpy as np

import zipfcoll

CHILD = """
import sys
import numpy as np
import zipfcoll
comm = zipfcoll.Comm.from_unique_id(2, bytes.fromhex(sys.argv[1]), 1, timeout_ms=30000)
print(comm.allreduce(np.full(3, 2.0, np.float32)).out.tolist())
comm.destroy()
"""


def main():
    venv, version = sys.argv[1], sys.argv[2]
    package = pathlib.Path(zipfcoll.__file__).resolve().parent
    assert str(package).startswith(str(pathlib.Path(venv).resolve())), package
    assert zipfcoll.__version__ == version, (zipfcoll.__version__, version)
    found = zipfcoll.transports()
    print(f"zipfcoll {zipfcoll.__version__} from {package}; transports {found}")
    assert "ucx" in found, found
    for name in found:
        assert (package / f"libzipfcoll-{name}.so").exists(), name
    uid = zipfcoll.get_unique_id()
    child = subprocess.Popen([sys.executable, "-c", CHILD, uid.hex()], stdout=subprocess.PIPE,
                             text=True)
    comm = zipfcoll.Comm.from_unique_id(2, uid, 0, timeout_ms=30000)
    out = comm.allreduce(np.full(3, 1.0, np.float32)).out.tolist()
    comm.destroy()
    theirs = child.communicate(timeout=60)[0].strip()
    assert child.returncode == 0 and out == [3.0] * 3 and theirs == str(out), (out, theirs)
    print(f"2 ranks from the wheel: {out} on both")


if __name__ == "__main__":
    main()

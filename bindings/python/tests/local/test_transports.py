"""What this installation can run: zipfcoll.query_transport and zipfcoll.transports, against
the plugins beside the library, and with ZIPFCOLL_PLUGIN_PATH pointing elsewhere (a fresh
interpreter, since a plugin that loaded stays loaded)."""

import os
import pathlib
import subprocess
import sys

import pytest

import zipfcoll

NAMES = ("mpi", "nccl", "ucx")


def library_folder():
    # The extension finds libzipfcoll through its RPATH: the build's lib folder, or the
    # package folder in a wheel.
    maps = pathlib.Path("/proc/self/maps").read_text().splitlines()
    for line in maps:
        path = line.split()[-1]
        if "/libzipfcoll.so" in path:
            return pathlib.Path(path).parent
    pytest.skip("libzipfcoll is not mapped under a recognisable name")


def test_every_plugin_beside_the_library_is_reported():
    folder = library_folder()
    found = zipfcoll.transports()
    for name in NAMES:
        if (folder / f"libzipfcoll-{name}.so").exists():
            assert found[name][0] == "host", found
            assert set(found[name]) <= {"host", "device"}
            assert zipfcoll.query_transport(name) == found[name]
        else:
            assert name not in found
            with pytest.raises(zipfcoll.UnsupportedError):
                zipfcoll.query_transport(name)
    if "nccl" in found:
        assert found["nccl"] == ("host", "device")


def test_auto_and_unknown_names_are_refused():
    with pytest.raises(zipfcoll.InvalidArgumentError, match="transport 0 is not"):
        zipfcoll.query_transport("auto")
    with pytest.raises(zipfcoll.InvalidArgumentError):
        zipfcoll.query_transport("gloo")


def test_a_missing_plugin_is_named(tmp_path):
    script = ("import zipfcoll\n"
              "try:\n"
              "    zipfcoll.query_transport('ucx')\n"
              "except zipfcoll.UnsupportedError as e:\n"
              "    print(e)\n"
              "print(zipfcoll.transports())\n")
    env = dict(os.environ, ZIPFCOLL_PLUGIN_PATH=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert f"libzipfcoll-ucx.so is not in {tmp_path}" in out, out
    assert out.strip().endswith("{}"), out

"""The stream rules of zipfcoll.DeviceArray, without a GPU: a view whose data a call is still
writing on a stream (a plan made with overflow_on_device=True) is handed by __dlpack__ only to
a consumer on that stream or to stream=-1, and __cuda_array_interface__ names the stream; a
complete view goes to any stream. Checked on an empty array with no memory behind it."""

import pytest

from zipfcoll import _zipfcoll

LEGACY_DEFAULT, PER_THREAD_DEFAULT, SOME_STREAM = 1, 2, 0x7F00_1234_5670


def test_a_complete_view_goes_to_any_stream():
    view = _zipfcoll._device_array_for_tests(0)
    assert view.stream is None
    for stream in (None, -1, LEGACY_DEFAULT, PER_THREAD_DEFAULT, SOME_STREAM):
        assert type(view.__dlpack__(stream=stream)).__name__ == "PyCapsule"
    assert "stream" not in view.__cuda_array_interface__
    assert view.__dlpack_device__() == (2, 0)  # kDLCUDA, device 0


@pytest.mark.parametrize("pending", [LEGACY_DEFAULT, PER_THREAD_DEFAULT, SOME_STREAM])
def test_a_view_still_being_written_goes_only_to_its_stream(pending):
    view = _zipfcoll._device_array_for_tests(pending)
    assert view.stream == pending
    assert view.__cuda_array_interface__["stream"] == pending
    for ok in (pending, -1):
        assert type(view.__dlpack__(stream=ok)).__name__ == "PyCapsule"
    # None is the legacy default stream.
    if pending == LEGACY_DEFAULT:
        assert type(view.__dlpack__()).__name__ == "PyCapsule"
    others = {None, LEGACY_DEFAULT, PER_THREAD_DEFAULT, SOME_STREAM, SOME_STREAM + 8}
    others.discard(pending)
    if pending == LEGACY_DEFAULT:
        others.discard(None)
    for other in others:
        with pytest.raises(BufferError, match=f"stream {pending} "):
            view.__dlpack__(stream=other)


def test_a_stream_that_is_not_an_int_is_a_type_error():
    for pending in (0, SOME_STREAM):
        with pytest.raises(TypeError, match="stream must be None or an int"):
            _zipfcoll._device_array_for_tests(pending).__dlpack__(stream="s")

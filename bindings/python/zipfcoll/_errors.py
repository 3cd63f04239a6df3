"""One exception class per zfcResult_t code, all subclasses of zipfcoll.Error.

Where a Python built-in means the same thing, the class derives from it as well, so that
``except MemoryError`` or ``except TimeoutError`` (the built-in) also catch zipfcoll's.
"""

import builtins


class Error(Exception):
    """A zipfcoll call failed. ``code`` is the zfcResult_t; the message is the library's,
    naming the bad value and the rank that had it."""

    code = -1
    result = "error"  # the library's fixed text for the code (zfcGetErrorString)

    def __init__(self, message: str = ""):
        super().__init__(message)
        self.message = message


class InvalidArgumentError(Error, ValueError):
    """A bad pointer, size, index or value was passed (zfcInvalidArgument)."""
    code, result = 1, "invalid argument"


class InvalidUsageError(Error):
    """A call made in the wrong state, e.g. on a destroyed communicator (zfcInvalidUsage)."""
    code, result = 2, "invalid usage"


class MismatchError(Error):
    """Ranks passed arguments that must agree but do not (zfcMismatch)."""
    code, result = 3, "arguments differ across ranks"


class OutOfMemoryError(Error, MemoryError):
    """A host allocation failed (zfcOutOfMemory)."""
    code, result = 4, "out of memory"


class SystemCallError(Error, OSError):
    """An operating-system call failed, e.g. a port already in use (zfcSystemError)."""
    code, result = 5, "system error"


class TransportError(Error):
    """The transport (MPI, UCX, NCCL) reported a failure (zfcTransportError)."""
    code, result = 6, "transport error"


class RemoteError(Error):
    """Another rank failed in a way this rank cannot name (zfcRemoteError)."""
    code, result = 7, "remote rank error"


class TimeoutError(Error, builtins.TimeoutError):  # noqa: A001 - zipfcoll.TimeoutError
    """A peer did not answer within the communicator's timeout_ms (zfcTimeout)."""
    code, result = 8, "timeout"


class UnsupportedError(Error):
    """Not available in this build or for these arguments (zfcUnsupported)."""
    code, result = 9, "unsupported"


class InternalError(Error):
    """A bug in zipfcoll: please report it with the message (zfcInternalError)."""
    code, result = 10, "internal error"


class InProgressError(Error):
    """Reserved for non-blocking operations (zfcInProgress)."""
    code, result = 11, "operation in progress"


_BY_CODE = {cls.code: cls for cls in (
    InvalidArgumentError, InvalidUsageError, MismatchError, OutOfMemoryError,
    SystemCallError, TransportError, RemoteError, TimeoutError, UnsupportedError,
    InternalError, InProgressError)}


def error_class(code: int) -> type:
    """The Error subclass raised for a zfcResult_t code (Error itself for an unknown one)."""
    return _BY_CODE.get(code, Error)

"""The inputs of the identity tests, from the formulas c_reference.cpp uses."""

import numpy as np

VOCAB = 1000
DIM = 5
DENSE = 1001


def token_count(rank: int) -> int:
    return 257 + 31 * rank


def indices(rank: int) -> np.ndarray:
    i = np.arange(token_count(rank), dtype=np.int64)
    return (((i * i + 3 * rank * i + 7 * rank) % 911) % (40 + i)).astype(np.int32)


def rows(rank: int, count: int) -> np.ndarray:
    i = np.arange(count, dtype=np.int64)[:, None]
    j = np.arange(DIM, dtype=np.int64)[None, :]
    return (((i * 31 + j * 17 + rank * 7) % 61 - 30).astype(np.float32) / np.float32(8))


def dense_values(rank: int) -> np.ndarray:
    n = np.arange(DENSE, dtype=np.int64)
    return ((n * 13 + rank * 5) % 37 - 18).astype(np.float32) / np.float32(4)

"""Sums run in blocked token order (zipfcoll.h, "Token order"): a position's rows in input
order, the first SUM_BLOCK_ROWS row by row, each later block of SUM_BLOCK_ROWS summed from
+0 on its own, the later blocks' sums added in block order. No communicator is needed."""

import numpy as np

import zipfcoll


def blocked_reference(rows, positions, num_unique):
    """The order written out one float32 addition at a time."""
    block = zipfcoll.SUM_BLOCK_ROWS
    out = np.zeros((num_unique, rows.shape[1]), dtype=np.float32)
    for p in range(num_unique):
        mine = rows[positions == p]
        first = np.zeros(rows.shape[1], dtype=np.float32)
        for r in mine[:block]:
            first = first + r
        for b in range(block, len(mine), block):
            part = np.zeros(rows.shape[1], dtype=np.float32)
            for r in mine[b:b + block]:
                part = part + r
            first = first + part
        out[p] = first
    return out


def test_the_block_length_is_the_headers():
    assert zipfcoll.SUM_BLOCK_ROWS == 1024


def test_long_runs_are_summed_in_blocks():
    rng = np.random.default_rng(4)
    n, dim, num_unique = 2900, 5, 6
    # Position 2 gets about 2270 rows (three blocks); the others fewer than one block.
    positions = np.where(rng.random(n) < 0.74, 2, rng.integers(0, num_unique, n)).astype(np.int32)
    assert (positions == 2).sum() > 2 * zipfcoll.SUM_BLOCK_ROWS
    rows = (rng.standard_normal((n, dim)) * 1e4).astype(np.float32)
    got = zipfcoll.scatter_to_dense(rows, positions, num_unique)
    want = blocked_reference(rows, positions, num_unique)
    assert got.tobytes() == want.tobytes()
    # The case tells the orders apart: the plain running sum differs somewhere.
    plain = np.zeros_like(want)
    for i in range(n):
        plain[positions[i]] = plain[positions[i]] + rows[i]
    assert plain.tobytes() != want.tobytes()

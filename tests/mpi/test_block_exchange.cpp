// The transport calls whose receive sizes only the senders know (Transport::allgather_blocks
// and alltoallv_blocks), on the communicator's own transport (MPI, or UCX in the _ucx runs):
// uneven and empty blocks, blocks large enough for the transports' rendezvous protocols,
// ranks that disagree on every size, and the ledger's bytes and rounds.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/mpi_world.hpp"
#include "core/comm.hpp"

namespace zfc {
namespace test {
namespace {

// The byte at offset i of what rank `from` sends rank `to` (to = -1: its gathered block).
char pattern(int from, int to, size_t i) {
  return static_cast<char>((from * 131 + (to + 1) * 17 + static_cast<int>(i % 251)) & 0xff);
}

// Rank r's block in a gather: some ranks send nothing, one sends far more than the others.
size_t block_bytes(int r, int round, size_t large) {
  if ((r + round) % 3 == 1) return 0;
  return r == round % 4 ? large : static_cast<size_t>(7 * r + round + 1);
}

// What rank i sends rank j in an exchange.
size_t pair_bytes(int i, int j, int round, size_t large) {
  if ((i + 2 * j + round) % 4 == 0) return 0;
  return (i + j) % 5 == round % 5 ? large : static_cast<size_t>(3 * i + 5 * j + 1);
}

class BlockExchangeTest : public WorldTest {
 protected:
  Transport& transport() { return *comm_->transport; }
};

TEST_F(BlockExchangeTest, AllgatherBlocksOfUnevenAndEmptySizes) {
  Transport& t = transport();
  std::vector<char> out;
  for (int round = 0; round < 6; ++round) {
    const size_t large = round % 2 == 0 ? 40 : 300000;  // eager and rendezvous sizes
    std::vector<char> mine(block_bytes(rank_, round, large));
    for (size_t i = 0; i < mine.size(); ++i) mine[i] = pattern(rank_, -1, i);
    std::vector<size_t> bytes(static_cast<size_t>(size_), 99), displs(bytes.size(), 99);
    t.ledger().start(size_);
    size_t placed = 0;
    ASSERT_TRUE(t.allgather_blocks(mine.data(), mine.size(), bytes.data(), displs.data(),
                                   [&](size_t total) {
                                     placed = total;
                                     out.assign(total, '\0');
                                     return out.data();
                                   })
                    .ok());
    size_t total = 0;
    for (int r = 0; r < size_; ++r) {
      const size_t n = block_bytes(r, round, large);
      ASSERT_EQ(bytes[static_cast<size_t>(r)], n) << "round " << round << " rank " << r;
      ASSERT_EQ(displs[static_cast<size_t>(r)], total);
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(out[total + i], pattern(r, -1, i)) << "block " << r << " byte " << i;
      }
      total += n;
    }
    EXPECT_EQ(placed, total);
    // The ledger: every rank received every block but its own, in one round on MPI and UCX.
    for (int r = 0; r < size_; ++r) {
      EXPECT_EQ(t.ledger().by_rank[static_cast<size_t>(r)],
                total - block_bytes(r, round, large));
    }
    EXPECT_EQ(t.ledger().rounds, 1u);
  }
}

TEST_F(BlockExchangeTest, AlltoallvBlocksOfUnevenAndEmptySizes) {
  Transport& t = transport();
  const size_t n = static_cast<size_t>(size_);
  std::vector<char> in;
  for (int round = 0; round < 6; ++round) {
    const size_t large = round % 2 == 0 ? 24 : 200000;
    std::vector<size_t> send_bytes(n), send_displs(n), recv_bytes(n, 99), recv_displs(n, 99);
    size_t total = 0;
    for (int j = 0; j < size_; ++j) {
      send_bytes[static_cast<size_t>(j)] = pair_bytes(rank_, j, round, large);
      send_displs[static_cast<size_t>(j)] = total;
      total += send_bytes[static_cast<size_t>(j)];
    }
    std::vector<char> send(total);
    for (int j = 0; j < size_; ++j) {
      const size_t at = send_displs[static_cast<size_t>(j)];
      for (size_t i = 0; i < send_bytes[static_cast<size_t>(j)]; ++i) {
        send[at + i] = pattern(rank_, j, i);
      }
    }
    t.ledger().start(size_);
    ASSERT_TRUE(t.alltoallv_blocks(send.data(), send_bytes.data(), send_displs.data(),
                                   recv_bytes.data(), recv_displs.data(), [&](size_t bytes) {
                                     in.assign(bytes, '\0');
                                     return in.data();
                                   })
                    .ok());
    size_t at = 0, from_peers = 0;
    for (int i = 0; i < size_; ++i) {
      const size_t got = pair_bytes(i, rank_, round, large);
      ASSERT_EQ(recv_bytes[static_cast<size_t>(i)], got) << "round " << round << " from " << i;
      ASSERT_EQ(recv_displs[static_cast<size_t>(i)], at);
      for (size_t b = 0; b < got; ++b) {
        ASSERT_EQ(in[at + b], pattern(i, rank_, b)) << "from " << i << " byte " << b;
      }
      at += got;
      if (i != rank_) from_peers += got;
    }
    EXPECT_EQ(in.size(), at);
    // This rank's share only; every pair exchanged one message, in one round.
    EXPECT_EQ(t.ledger().by_rank[static_cast<size_t>(rank_)], from_peers);
    EXPECT_EQ(t.ledger().rounds, 1u);
  }
}

// An operation whose first blocks differ in size on every rank (the keys riding with the
// headers) next to one with none: the calls still pair up, and the communicator agrees.
TEST_F(BlockExchangeTest, RidingKeysThenBareHeadersAgree) {
  std::vector<int32_t> idx;
  for (int i = 0; i <= rank_ * 40; ++i) idx.push_back((i * 7 + rank_) % 1000);
  std::vector<int32_t> unique(1000);
  size_t num_unique = 0;
  for (int call = 0; call < 3; ++call) {
    ASSERT_EQ(zfcUniqueMerge(comm_, idx.data(), zfcInt32, idx.size(), 1000, unique.data(),
                             unique.size(), &num_unique, nullptr, nullptr),
              zfcSuccess)
        << zfcGetLastError(comm_);
    EXPECT_TRUE(same_on_all_ranks(num_unique));
    float v = 1.0f, sum = 0.0f;
    ASSERT_EQ(zfcAllReduce(comm_, &v, &sum, 1, zfcFloat32, nullptr, nullptr, nullptr),
              zfcSuccess);
    EXPECT_EQ(sum, static_cast<float>(size_));
  }
}

}  // namespace
}  // namespace test
}  // namespace zfc

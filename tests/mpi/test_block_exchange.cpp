// The transport calls whose receive sizes only the senders know (Transport::allgather_blocks
// and alltoallv_blocks), on the communicator's own transport (MPI, or UCX in the _ucx runs):
// uneven and empty blocks, blocks large enough for the transports' rendezvous protocols,
// ranks that disagree on every size, and the ledger's bytes and rounds; the alltoallvs both
// direct and forwarded (Route::kForwarded), with the bytes each rank's network carries.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/forwarded_traffic.hpp"
#include "common/mpi_world.hpp"
#include "core/comm.hpp"
#include "transport/forwarded_exchange.hpp"

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

// What rank `from` sends in an exchange's round: sizes, packed displacements and the bytes.
struct ExchangeSend {
  std::vector<size_t> bytes, displs;
  std::vector<char> data;
};

ExchangeSend exchange_send(int from, int size, int round, size_t large) {
  ExchangeSend e;
  size_t total = 0;
  for (int j = 0; j < size; ++j) {
    e.bytes.push_back(pair_bytes(from, j, round, large));
    e.displs.push_back(total);
    total += e.bytes.back();
  }
  e.data.resize(total);
  for (int j = 0; j < size; ++j) {
    for (size_t i = 0; i < e.bytes[static_cast<size_t>(j)]; ++i) {
      e.data[e.displs[static_cast<size_t>(j)] + i] = pattern(from, j, i);
    }
  }
  return e;
}

// Every rank's blocks of a round, from rank s to rank t.
std::vector<std::vector<uint64_t>> round_blocks(int size, int round, size_t large) {
  std::vector<std::vector<uint64_t>> b(static_cast<size_t>(size));
  for (int s = 0; s < size; ++s) {
    for (int t = 0; t < size; ++t) {
      b[static_cast<size_t>(s)].push_back(pair_bytes(s, t, round, large));
    }
  }
  return b;
}

// Checks what arrived from every rank in a round.
void expect_received(const std::vector<char>& in, const size_t* recv_bytes,
                     const size_t* recv_displs, int me, int size, int round, size_t large) {
  size_t at = 0;
  for (int i = 0; i < size; ++i) {
    const size_t got = pair_bytes(i, me, round, large);
    ASSERT_EQ(recv_bytes[i], got) << "round " << round << " from " << i;
    ASSERT_EQ(recv_displs[i], at);
    for (size_t b = 0; b < got; ++b) {
      ASSERT_EQ(in[at + b], pattern(i, me, b)) << "from " << i << " byte " << b;
    }
    at += got;
  }
  EXPECT_EQ(in.size(), at);
}

// Both routes: the same blocks arrive; the ledger holds this rank's share (each block once,
// at its destination) in one round; the traffic counters hold what the network carried:
// each block once directly, at every relay when forwarded (common/forwarded_traffic.hpp).
class RoutedBlockExchangeTest : public BlockExchangeTest,
                                public ::testing::WithParamInterface<Route> {};

TEST_P(RoutedBlockExchangeTest, AlltoallvBlocksOfUnevenAndEmptySizes) {
  Transport& t = transport();
  const Route route = GetParam();
  const size_t n = static_cast<size_t>(size_);
  std::vector<char> in;
  for (int round = 0; round < 6; ++round) {
    const size_t large = round % 2 == 0 ? 24 : 200000;
    const ExchangeSend send = exchange_send(rank_, size_, round, large);
    std::vector<size_t> recv_bytes(n, 99), recv_displs(n, 99);
    t.ledger().start(size_);
    const TrafficCounters before = t.traffic();
    ASSERT_TRUE(t.alltoallv_blocks(send.data.data(), send.bytes.data(), send.displs.data(),
                                   recv_bytes.data(), recv_displs.data(), [&](size_t bytes) {
                                     in.assign(bytes, '\0');
                                     return in.data();
                                   }, route)
                    .ok());
    expect_received(in, recv_bytes.data(), recv_displs.data(), rank_, size_, round, large);
    const std::vector<std::vector<uint64_t>> blocks = round_blocks(size_, round, large);
    EXPECT_EQ(t.ledger().by_rank[static_cast<size_t>(rank_)],
              direct_traffic(blocks)[static_cast<size_t>(rank_)].received);
    EXPECT_EQ(t.ledger().rounds, 1u);
    const std::vector<WireBytes> moved =
        route == Route::kForwarded ? forwarded_traffic(blocks) : direct_traffic(blocks);
    const WireBytes wire = moved[static_cast<size_t>(rank_)];
    EXPECT_EQ(t.traffic().bytes_sent - before.bytes_sent, wire.sent) << "round " << round;
    EXPECT_EQ(t.traffic().bytes_received - before.bytes_received, wire.received)
        << "round " << round;
  }
}

// The alltoallv whose sizes both ends know, forwarded or not: the same bytes in the caller's
// buffer, and the ledger's entries for the other ranks as the caller gives them.
TEST_P(RoutedBlockExchangeTest, AlltoallvOfKnownSizes) {
  Transport& t = transport();
  const Route route = GetParam();
  const size_t n = static_cast<size_t>(size_);
  for (int round = 0; round < 4; ++round) {
    const size_t large = round % 2 == 0 ? 24 : 200000;
    const ExchangeSend send = exchange_send(rank_, size_, round, large);
    const std::vector<std::vector<uint64_t>> blocks = round_blocks(size_, round, large);
    const std::vector<WireBytes> delivered = direct_traffic(blocks);
    std::vector<size_t> recv_bytes(n), recv_displs(n);
    std::vector<uint64_t> received(n);
    size_t total = 0;
    for (size_t j = 0; j < n; ++j) {
      recv_bytes[j] = blocks[j][static_cast<size_t>(rank_)];
      recv_displs[j] = total;
      total += recv_bytes[j];
      received[j] = delivered[j].received;
    }
    std::vector<char> in(total, '\0');
    t.ledger().start(size_);
    ASSERT_TRUE(t.alltoallv(send.data.data(), send.bytes.data(), send.displs.data(), in.data(),
                            recv_bytes.data(), recv_displs.data(), received.data(), route)
                    .ok());
    expect_received(in, recv_bytes.data(), recv_displs.data(), rank_, size_, round, large);
    for (size_t r = 0; r < n; ++r) EXPECT_EQ(t.ledger().by_rank[r], delivered[r].received);
    EXPECT_EQ(t.ledger().rounds, 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(BothRoutes, RoutedBlockExchangeTest,
                         ::testing::Values(Route::kDirect, Route::kForwarded),
                         [](const ::testing::TestParamInfo<Route>& p) {
                           return std::string(p.param == Route::kDirect ? "direct" : "forwarded");
                         });

// A forwarded step whose message does not frame its blocks is refused, not read past.
TEST(ForwardedExchangeFraming, AMessageThatDoesNotFrameItsBlocksIsRefused) {
  const int n = 4;
  std::vector<size_t> send_bytes(n, 3), displs = {0, 3, 6, 9}, recv_bytes(n), recv_displs(n);
  const std::vector<char> send(12, 'x');
  ForwardBuffers buffers;
  std::vector<Transport::Hop> hops;
  std::vector<char> out;
  // Rank 0 of 4 runs the exchange, and every message it receives is `message`: a count, then
  // (slot, bytes) entries, then `body` bytes.
  auto receiving = [&](std::vector<uint64_t> list, size_t body) {
    const Status s = forwarded_alltoallv_blocks(
        n, 0, send.data(), send_bytes.data(), displs.data(), recv_bytes.data(),
        recv_displs.data(),
        [&](size_t total) {
          out.resize(total);
          return out.data();
        },
        buffers, &hops,
        [&](int, int, uint32_t, const std::vector<char>&, std::vector<char>* take) {
          const char* head = reinterpret_cast<const char*>(list.data());
          take->assign(head, head + list.size() * sizeof(uint64_t));
          take->insert(take->end(), body, 'a');
          return Status::Ok();
        });
    return s.code();
  };
  EXPECT_EQ(receiving({0}, 0), zfcSuccess);               // nothing sent this rank: fine
  EXPECT_EQ(receiving({1, 1, 5}, 2), zfcTransportError);  // a block of 5 bytes carrying 2
  EXPECT_EQ(receiving({1, 2, 1}, 1), zfcTransportError);  // slot 2 at the step of distance 1
  EXPECT_EQ(receiving({1, 1}, 0), zfcTransportError);     // too short for its one entry
  EXPECT_EQ(receiving({2, 1, 1, 1, 1}, 2), zfcTransportError);  // slot 1 twice
  EXPECT_EQ(receiving({}, 0), zfcTransportError);         // not even a count
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

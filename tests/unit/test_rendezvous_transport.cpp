// The transport over the rendezvous's star, which carries a communicator's start-up (and
// NCCL's, without UCX): every collective the algorithms use, run by threads as ranks.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "bootstrap/rendezvous_transport.hpp"
#include "bootstrap/tcp_rendezvous.hpp"

namespace zfc {
namespace {

constexpr int kRanks = 3;

// Runs body(transport) on kRanks threads that met through one rendezvous. Rank 0 meets on a
// socket already listening, so no other program can take its port in between.
template <typename Body>
void on_ranks(const Body& body) {
  int listen_fd = -1, port = 0;
  ASSERT_TRUE(listen_on(0, &listen_fd, &port).ok());
  std::vector<std::thread> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.emplace_back([&, r] {
      std::unique_ptr<Rendezvous> meeting;
      const Status met =
          r == 0 ? Rendezvous::create_with_listener(listen_fd, "127.0.0.1", port, r, kRanks,
                                                    20000, &meeting)
                 : Rendezvous::create("127.0.0.1", port, r, kRanks, 20000, &meeting);
      ASSERT_TRUE(met.ok()) << met.message();
      std::unique_ptr<Transport> t = make_rendezvous_transport(std::move(meeting));
      ASSERT_EQ(t->rank(), r);
      ASSERT_EQ(t->size(), kRanks);
      body(*t);
    });
  }
  for (std::thread& t : ranks) t.join();
}

TEST(RendezvousTransport, GathersInRankOrder) {
  on_ranks([](Transport& t) {
    const int me = t.rank();
    std::vector<int> all(kRanks, -1);
    ASSERT_TRUE(t.allgather(&me, sizeof me, all.data()).ok());
    EXPECT_EQ(all, (std::vector<int>{0, 1, 2}));
    // Rank r gives r + 1 bytes of value r, in place.
    std::string v(6, '?');
    const size_t bytes[kRanks] = {1, 2, 3}, displs[kRanks] = {0, 1, 3};
    v.replace(displs[me], bytes[me], bytes[me], char('a' + me));
    ASSERT_TRUE(t.allgatherv(&v[displs[me]], &v[0], bytes, displs).ok());
    EXPECT_EQ(v, "abbccc");
    std::vector<size_t> got(kRanks), at(kRanks);
    std::string blocks;
    const std::string mine(static_cast<size_t>(me), char('x' + me));
    ASSERT_TRUE(t.allgather_blocks(mine.data(), mine.size(), got.data(), at.data(),
                                   [&](size_t total) {
                                     blocks.resize(total);
                                     return &blocks[0];
                                   }).ok());
    EXPECT_EQ(blocks, "yzz");
    EXPECT_EQ(at, (std::vector<size_t>{0, 0, 1}));
    EXPECT_TRUE(t.barrier().ok());
  });
}

TEST(RendezvousTransport, ExchangesPairwise) {
  on_ranks([](Transport& t) {
    const int me = t.rank();
    // Rank i sends j + 1 bytes of value 10 * i + j to rank j.
    std::vector<char> send;
    std::vector<size_t> send_bytes(kRanks), send_displs(kRanks);
    for (int j = 0; j < kRanks; ++j) {
      send_displs[j] = send.size();
      send_bytes[j] = static_cast<size_t>(j + 1);
      send.insert(send.end(), send_bytes[j], char(10 * me + j));
    }
    std::vector<size_t> recv_bytes(kRanks, static_cast<size_t>(me + 1)), recv_displs(kRanks);
    for (int i = 0; i < kRanks; ++i) recv_displs[i] = static_cast<size_t>(i * (me + 1));
    std::vector<char> recv(static_cast<size_t>(kRanks * (me + 1)), -1);
    ASSERT_TRUE(t.alltoallv(send.data(), send_bytes.data(), send_displs.data(), recv.data(),
                            recv_bytes.data(), recv_displs.data()).ok());
    for (int i = 0; i < kRanks; ++i) {
      for (int b = 0; b <= me; ++b) EXPECT_EQ(recv[recv_displs[i] + b], char(10 * i + me));
    }
    std::vector<size_t> got(kRanks), at(kRanks);
    std::vector<char> blocks;
    ASSERT_TRUE(t.alltoallv_blocks(send.data(), send_bytes.data(), send_displs.data(),
                                   got.data(), at.data(), [&](size_t total) {
                                     blocks.resize(total);
                                     return blocks.data();
                                   }).ok());
    EXPECT_EQ(got, recv_bytes);
    EXPECT_EQ(blocks, recv);
  });
}

TEST(RendezvousTransport, CannotBeSplit) {
  on_ranks([](Transport& t) {
    std::unique_ptr<Transport> part;
    EXPECT_EQ(t.split(0, 0, &part).code(), zfcInternalError);
  });
}

}  // namespace
}  // namespace zfc

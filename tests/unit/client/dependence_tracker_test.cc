#include "dependence_tracker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>
#include <vector>

namespace nk::client {
namespace {

using K = DependenceKind;
using Edge = std::tuple<uint64_t, uint64_t, uint64_t>;  // from, to, address

std::vector<Edge> declare(DependenceTracker& t, uint64_t task, std::vector<Dependence> deps) {
  std::vector<DependenceEdge> edges;
  t.declare(task, deps, edges);
  std::vector<Edge> out;
  for (const auto& e : edges) out.emplace_back(e.from, e.to, e.address);
  std::sort(out.begin(), out.end());
  return out;
}

constexpr uint64_t x = 0x1000, y = 0x2000;

TEST(DependenceTracker, ReadAfterWrite) {
  DependenceTracker t;
  EXPECT_TRUE(declare(t, 1, {{x, K::kOut}}).empty());
  EXPECT_EQ(declare(t, 2, {{x, K::kIn}}), (std::vector<Edge>{{1, 2, x}}));
  EXPECT_EQ(declare(t, 3, {{x, K::kIn}}), (std::vector<Edge>{{1, 3, x}}));
}

TEST(DependenceTracker, WriteAfterReadsWaitsForEveryReaderNotTheWriter) {
  DependenceTracker t;
  declare(t, 1, {{x, K::kOut}});
  declare(t, 2, {{x, K::kIn}});
  declare(t, 3, {{x, K::kIn}});
  EXPECT_EQ(declare(t, 4, {{x, K::kInout}}), (std::vector<Edge>{{2, 4, x}, {3, 4, x}}));
  // The readers are gone with the write: the next reader waits for 4 only.
  EXPECT_EQ(declare(t, 5, {{x, K::kIn}}), (std::vector<Edge>{{4, 5, x}}));
}

TEST(DependenceTracker, WriteAfterWrite) {
  DependenceTracker t;
  declare(t, 1, {{x, K::kOut}});
  EXPECT_EQ(declare(t, 2, {{x, K::kOut}}), (std::vector<Edge>{{1, 2, x}}));
  EXPECT_EQ(declare(t, 3, {{x, K::kInout}}), (std::vector<Edge>{{2, 3, x}}));
}

TEST(DependenceTracker, ReadersOfNothingAndIndependentAddresses) {
  DependenceTracker t;
  EXPECT_TRUE(declare(t, 1, {{x, K::kIn}}).empty());  // nobody wrote x yet
  declare(t, 2, {{y, K::kOut}});
  // 3 writes x after reader 1 and reads y after writer 2.
  EXPECT_EQ(declare(t, 3, {{x, K::kOut}, {y, K::kIn}}), (std::vector<Edge>{{1, 3, x}, {2, 3, y}}));
  EXPECT_EQ(t.addresses(), 2u);
}

TEST(DependenceTracker, OneAddressTwiceInOneTask) {
  DependenceTracker t;
  declare(t, 1, {{x, K::kOut}});
  // in and out on x: one edge from 1, labelled as the write; no self-edge.
  std::vector<DependenceEdge> edges;
  std::vector<Dependence> deps = {{x, K::kIn}, {x, K::kOut}};
  t.declare(2, deps, edges);
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges[0].from, 1u);
  EXPECT_EQ(edges[0].kind, K::kOut);
  // 2 is now the writer, not a reader of its own write.
  EXPECT_EQ(declare(t, 3, {{x, K::kOut}}), (std::vector<Edge>{{2, 3, x}}));
}

// Temanejo's Figure 2 shape: a chain per subtree, two subtrees independent.
TEST(DependenceTracker, TwoIndependentChains) {
  DependenceTracker t;
  std::vector<Edge> all;
  for (uint64_t i = 0; i < 10; ++i)
    for (uint64_t chain : {0, 1}) {
      uint64_t task = 1 + 2 * i + chain, a = chain ? y : x;
      auto e = declare(t, task, {{a, K::kInout}});
      all.insert(all.end(), e.begin(), e.end());
    }
  ASSERT_EQ(all.size(), 18u);
  for (const auto& [from, to, address] : all) {
    EXPECT_EQ(to - from, 2u);
    EXPECT_EQ(address, (from % 2) ? x : y);
  }
}

// out and inout are both writers: the same edges.
TEST(DependenceTracker, OutAfterReadsLikeInout) {
  DependenceTracker t;
  declare(t, 1, {{x, K::kInout}});
  declare(t, 2, {{x, K::kIn}});
  declare(t, 3, {{x, K::kIn}});
  EXPECT_EQ(declare(t, 4, {{x, K::kOut}}), (std::vector<Edge>{{2, 4, x}, {3, 4, x}}));
}

// mutexinoutset tasks of one set are not ordered among themselves: each
// waits for the group before the set; an in after the set waits for all.
TEST(DependenceTracker, MutexinoutsetSetWaitsForTheGroupBeforeIt) {
  DependenceTracker t;
  declare(t, 1, {{x, K::kOut}});
  EXPECT_EQ(declare(t, 2, {{x, K::kMutexinoutset}}), (std::vector<Edge>{{1, 2, x}}));
  EXPECT_EQ(declare(t, 3, {{x, K::kMutexinoutset}}), (std::vector<Edge>{{1, 3, x}}));
  EXPECT_EQ(declare(t, 4, {{x, K::kIn}}), (std::vector<Edge>{{2, 4, x}, {3, 4, x}}));
  EXPECT_EQ(declare(t, 5, {{x, K::kIn}}), (std::vector<Edge>{{2, 5, x}, {3, 5, x}}));
  // A new mutexinoutset set after the readers: after both readers only.
  EXPECT_EQ(declare(t, 6, {{x, K::kMutexinoutset}}), (std::vector<Edge>{{4, 6, x}, {5, 6, x}}));
  EXPECT_EQ(declare(t, 7, {{x, K::kMutexinoutset}}), (std::vector<Edge>{{4, 7, x}, {5, 7, x}}));
  EXPECT_EQ(declare(t, 8, {{x, K::kInout}}), (std::vector<Edge>{{6, 8, x}, {7, 8, x}}));
}

TEST(DependenceTracker, InoutsetSetLikewiseAndApartFromMutexinoutset) {
  DependenceTracker t;
  declare(t, 1, {{x, K::kIn}});
  declare(t, 2, {{x, K::kIn}});
  EXPECT_EQ(declare(t, 3, {{x, K::kInoutset}}), (std::vector<Edge>{{1, 3, x}, {2, 3, x}}));
  EXPECT_EQ(declare(t, 4, {{x, K::kInoutset}}), (std::vector<Edge>{{1, 4, x}, {2, 4, x}}));
  // A mutexinoutset task is not of the inoutset set: after all of it.
  EXPECT_EQ(declare(t, 5, {{x, K::kMutexinoutset}}), (std::vector<Edge>{{3, 5, x}, {4, 5, x}}));
  EXPECT_EQ(declare(t, 6, {{x, K::kMutexinoutset}}), (std::vector<Edge>{{3, 6, x}, {4, 6, x}}));
  EXPECT_EQ(declare(t, 7, {{x, K::kInoutset}}), (std::vector<Edge>{{5, 7, x}, {6, 7, x}}));
  EXPECT_EQ(declare(t, 8, {{x, K::kIn}}), (std::vector<Edge>{{7, 8, x}}));
}

// A set first on an address waits for nothing, and its members not for
// each other.
TEST(DependenceTracker, SetsOfNothing) {
  DependenceTracker t;
  EXPECT_TRUE(declare(t, 1, {{x, K::kInoutset}}).empty());
  EXPECT_TRUE(declare(t, 2, {{x, K::kInoutset}}).empty());
  EXPECT_TRUE(declare(t, 3, {{y, K::kMutexinoutset}}).empty());
  EXPECT_TRUE(declare(t, 4, {{y, K::kMutexinoutset}}).empty());
  EXPECT_EQ(declare(t, 5, {{x, K::kOut}, {y, K::kIn}}), (std::vector<Edge>{{1, 5, x}, {2, 5, x}, {3, 5, y}, {4, 5, y}}));
}

// Two different non-writing kinds on one address are a write (libomp's
// rule), labelled inout; the same kind twice is that kind once.
TEST(DependenceTracker, OneAddressTwiceWithSetKinds) {
  DependenceTracker t;
  declare(t, 1, {{x, K::kIn}});
  std::vector<DependenceEdge> edges;
  std::vector<Dependence> twice = {{x, K::kMutexinoutset}, {x, K::kIn}};
  t.declare(2, twice, edges);
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges[0].kind, K::kInout);
  edges.clear();
  std::vector<Dependence> same = {{x, K::kInoutset}, {x, K::kInoutset}};
  t.declare(3, same, edges);
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges[0].from, 2u);
  EXPECT_EQ(edges[0].kind, K::kInoutset);
  EXPECT_EQ(declare(t, 4, {{x, K::kInoutset}}), (std::vector<Edge>{{2, 4, x}}));  // joins 3's set
}

// Many entries (an iterator): merged per address all the same.
TEST(DependenceTracker, ManyEntriesMergePerAddress) {
  DependenceTracker t;
  std::vector<Dependence> writes;
  for (uint64_t i = 0; i < 100; ++i) writes.push_back({0x10000 + i * 8, K::kOut});
  declare(t, 1, writes);
  std::vector<Dependence> reads;
  for (int round = 0; round < 2; ++round)
    for (uint64_t i = 0; i < 100; ++i) reads.push_back({0x10000 + i * 8, K::kIn});
  EXPECT_EQ(declare(t, 2, reads).size(), 100u);
  EXPECT_EQ(t.addresses(), 100u);
}

// More addresses than the tracker remembers at hand, several sharing each
// place, taken in an order that keeps evicting them: every task still waits
// for the last writer of its own address, and of no other.
TEST(DependenceTracker, ManyInterleavedChainsKeepTheirOwnWriters) {
  DependenceTracker t;
  constexpr uint64_t kChains = 97;  // prime: the rounds visit the addresses in shifting orders
  std::vector<uint64_t> last_writer(kChains, 0);
  size_t edges = 0;
  for (uint64_t task = 1; task <= 20 * kChains; ++task) {
    const uint64_t chain = (task * 31) % kChains;
    const uint64_t address = 0x40000 + chain * 24;
    const auto e = declare(t, task, {{address, K::kInout}});
    if (last_writer[chain] == 0) {
      EXPECT_TRUE(e.empty()) << "task " << task;
    } else {
      EXPECT_EQ(e, (std::vector<Edge>{{last_writer[chain], task, address}})) << "task " << task;
    }
    edges += e.size();
    last_writer[chain] = task;
  }
  EXPECT_EQ(edges, 19 * kChains);
  EXPECT_EQ(t.addresses(), kChains);
}

}  // namespace
}  // namespace nk::client

#include "faults/fault_tree.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace nk {
namespace {

std::vector<std::string> names(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back("n" + std::to_string(i));
  return out;
}

std::vector<size_t> range(size_t from, size_t to) {  // [from, to)
  std::vector<size_t> out;
  for (size_t i = from; i < to; ++i) out.push_back(i);
  return out;
}

constexpr size_t kNone = FaultTree::kNone;

// The job's shape the localiser tests use: 13 nodes, fan-out 3, three levels.
TEST(FaultTree, ThirteenNodesFanOutThreeByHand) {
  FaultTree tree(names(13), 3);
  EXPECT_EQ(tree.size(), 13u);
  EXPECT_EQ(tree.fanOut(), 3u);
  EXPECT_EQ(tree.root(), 0u);
  EXPECT_EQ(tree.name(7), "n7");
  EXPECT_EQ(tree.indexOf("n12"), std::optional<size_t>(12));
  EXPECT_EQ(tree.indexOf("n13"), std::nullopt);
  EXPECT_EQ(tree.indexOf(""), std::nullopt);
  EXPECT_TRUE(tree.contains("n0"));
  EXPECT_FALSE(tree.contains("N0"));

  EXPECT_EQ(tree.parent(0), kNone);
  EXPECT_EQ(tree.parent(1), 0u);
  EXPECT_EQ(tree.parent(3), 0u);
  EXPECT_EQ(tree.parent(4), 1u);
  EXPECT_EQ(tree.parent(6), 1u);
  EXPECT_EQ(tree.parent(7), 2u);
  EXPECT_EQ(tree.parent(12), 3u);
  EXPECT_EQ(tree.parent(13), kNone);  // outside the tree

  EXPECT_EQ(tree.children(0), (std::vector<size_t>{1, 2, 3}));
  EXPECT_EQ(tree.children(1), (std::vector<size_t>{4, 5, 6}));
  EXPECT_EQ(tree.children(2), (std::vector<size_t>{7, 8, 9}));
  EXPECT_EQ(tree.children(3), (std::vector<size_t>{10, 11, 12}));
  EXPECT_TRUE(tree.children(4).empty());
  EXPECT_TRUE(tree.children(12).empty());
  EXPECT_TRUE(tree.children(13).empty());
  EXPECT_TRUE(tree.children(static_cast<size_t>(-2)).empty());

  EXPECT_TRUE(tree.ancestors(0).empty());
  EXPECT_EQ(tree.ancestors(2), (std::vector<size_t>{0}));
  EXPECT_EQ(tree.ancestors(8), (std::vector<size_t>{2, 0}));
  EXPECT_EQ(tree.localisers(8), (std::vector<size_t>{2, 0}));
  EXPECT_EQ(tree.localisers(1), (std::vector<size_t>{0}));
  EXPECT_EQ(tree.localisers(0), range(1, 13));
  EXPECT_TRUE(tree.localisers(13).empty());
  EXPECT_EQ(tree.reporters(), range(0, 13));

  EXPECT_EQ(tree.depth(0), 0u);
  EXPECT_EQ(tree.depth(3), 1u);
  EXPECT_EQ(tree.depth(4), 2u);
  EXPECT_EQ(tree.depth(12), 2u);
  EXPECT_EQ(tree.height(), 2u);

  EXPECT_TRUE(tree.inSubtree(5, 1));
  EXPECT_TRUE(tree.inSubtree(5, 0));
  EXPECT_TRUE(tree.inSubtree(5, 5));
  EXPECT_FALSE(tree.inSubtree(5, 2));
  EXPECT_FALSE(tree.inSubtree(1, 5));
  EXPECT_FALSE(tree.inSubtree(0, 1));
  EXPECT_FALSE(tree.inSubtree(13, 0));  // outside the tree: in nobody's subtree
}

TEST(FaultTree, FanOutZeroCountsAsOne) {
  FaultTree tree(names(4), 0);
  EXPECT_EQ(tree.fanOut(), 1u);
  EXPECT_EQ(tree.children(0), (std::vector<size_t>{1}));
  EXPECT_EQ(tree.ancestors(3), (std::vector<size_t>{2, 1, 0}));
  EXPECT_EQ(tree.height(), 3u);
}

TEST(FaultTree, SingleNode) {
  FaultTree tree(names(1), 3);
  EXPECT_EQ(tree.parent(0), kNone);
  EXPECT_TRUE(tree.children(0).empty());
  EXPECT_TRUE(tree.ancestors(0).empty());
  EXPECT_TRUE(tree.localisers(0).empty());
  EXPECT_EQ(tree.reporters(), (std::vector<size_t>{0}));
  EXPECT_EQ(tree.height(), 0u);
  EXPECT_TRUE(tree.inSubtree(0, 0));
}

TEST(FaultTree, LastParentOfALargeTreeHasAPartialFamily) {
  FaultTree four(names(10000), 4);
  EXPECT_EQ(four.parent(9999), 2499u);
  EXPECT_EQ(four.children(2499), (std::vector<size_t>{9997, 9998, 9999}));
  EXPECT_TRUE(four.children(2500).empty());
  EXPECT_EQ(four.ancestors(9999), (std::vector<size_t>{2499, 624, 155, 38, 9, 2, 0}));

  FaultTree two(names(10000), 2);
  EXPECT_EQ(two.children(4999), (std::vector<size_t>{9999}));
  EXPECT_TRUE(two.children(5000).empty());
}

// Every property against a reference computed independently, for fan-outs
// 1, 2, 4 and sizes 1, 2, 13, 10000.
class FaultTreeShape : public ::testing::TestWithParam<std::tuple<size_t, size_t>> {};

size_t expectedHeight(size_t fan_out, size_t size) {
  // Worked out by hand: levels of a k-ary tree laid out in order.
  if (size == 1) return 0;
  if (size == 2) return 1;
  if (fan_out == 1) return size - 1;
  if (fan_out == 2) return size == 13 ? 3 : 13;  // 8191 <= 9999 < 16383
  return size == 13 ? 2 : 7;                      // fan-out 4: 5461 <= 9999 < 21845
}

TEST_P(FaultTreeShape, MatchesReference) {
  const auto [k, n] = GetParam();
  FaultTree tree(names(n), k);
  ASSERT_EQ(tree.size(), n);
  EXPECT_EQ(tree.fanOut(), k);

  std::vector<size_t> ref_parent(n, kNone), ref_depth(n, 0);
  for (size_t i = 1; i < n; ++i) {
    ref_parent[i] = (i - 1) / k;
    ref_depth[i] = ref_depth[ref_parent[i]] + 1;
  }
  size_t max_depth = 0;
  for (size_t d : ref_depth) max_depth = std::max(max_depth, d);
  EXPECT_EQ(tree.height(), expectedHeight(k, n));
  EXPECT_EQ(tree.height(), max_depth);

  // Cheap properties for every node.
  size_t child_total = 0;
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(tree.indexOf("n" + std::to_string(i)), std::optional<size_t>(i));
    ASSERT_EQ(tree.parent(i), ref_parent[i]) << i;
    std::vector<size_t> children = tree.children(i);
    std::vector<size_t> ref_children;
    for (size_t c = k * i + 1; c <= k * i + k && c < n; ++c) ref_children.push_back(c);
    ASSERT_EQ(children, ref_children) << i;
    for (size_t c : children) ASSERT_EQ(tree.parent(c), i);
    child_total += children.size();
  }
  EXPECT_EQ(child_total, n - 1);  // every node but the root is someone's child, once

  // Ancestor chains are long for fan-out 1: all nodes of small trees, a
  // sample of the large one (always its first and last few).
  std::vector<size_t> sample;
  for (size_t i = 0; i < n; ++i)
    if (n <= 100 || i < 20 || i + 20 >= n || i % 97 == 0) sample.push_back(i);
  for (size_t i : sample) {
    std::vector<size_t> ref_anc;
    for (size_t p = ref_parent[i]; p != kNone; p = ref_parent[p]) ref_anc.push_back(p);
    ASSERT_EQ(tree.ancestors(i), ref_anc) << i;
    ASSERT_EQ(tree.depth(i), ref_depth[i]) << i;
    if (i == 0) {
      ASSERT_EQ(tree.localisers(i), range(1, n));
    } else {
      ASSERT_EQ(tree.localisers(i), ref_anc) << i;
      ASSERT_EQ(tree.ancestors(i).back(), 0u);
    }

    std::vector<size_t> ancestors_to_try = {0, i, ref_parent[i] == kNone ? 0 : ref_parent[i]};
    if (n <= 100) ancestors_to_try = range(0, n);
    for (size_t a : ancestors_to_try) {
      bool ref_in = false;
      for (size_t j = i; j != kNone; j = ref_parent[j])
        if (j == a) ref_in = true;
      ASSERT_EQ(tree.inSubtree(i, a), ref_in) << i << " under " << a;
    }
  }
  EXPECT_EQ(tree.reporters(), range(0, n));
  EXPECT_EQ(tree.parent(n), kNone);
  EXPECT_TRUE(tree.children(n).empty());
  EXPECT_TRUE(tree.localisers(n).empty());
  if (n > 1) {
    EXPECT_FALSE(tree.inSubtree(0, n - 1));
    EXPECT_TRUE(tree.inSubtree(n - 1, 0));
  }
}

INSTANTIATE_TEST_SUITE_P(FanOutsAndSizes, FaultTreeShape,
                         ::testing::Combine(::testing::Values<size_t>(1, 2, 4),
                                            ::testing::Values<size_t>(1, 2, 13, 10000)),
                         [](const auto& info) {
                           return "fan" + std::to_string(std::get<0>(info.param)) + "_size" +
                                  std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace nk

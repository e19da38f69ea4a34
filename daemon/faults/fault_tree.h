#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nk {

// A job's fault localisation tree (MPFL's FLT): its nodes in order (the
// node of rank 0 first, then by each node's lowest rank), laid out as a
// k-ary tree in that order: node i's children are k*i+1 .. k*i+k. A node's
// parent is its fault localisation node (FLN); its substitutes (SFLN) are
// its further ancestors, nearest first, the root last. The root, which has
// no ancestor, has its first child as its substitute. The shape never
// changes while the job runs; who is alive is the callers' business.
class FaultTree {
 public:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  // `nodes` must be distinct and non-empty; `fan_out` at least 1.
  FaultTree(std::vector<std::string> nodes, size_t fan_out);

  size_t size() const { return nodes_.size(); }
  size_t fanOut() const { return fan_out_; }
  const std::vector<std::string>& nodes() const { return nodes_; }
  const std::string& name(size_t index) const { return nodes_.at(index); }
  std::optional<size_t> indexOf(std::string_view node) const;
  bool contains(std::string_view node) const { return indexOf(node).has_value(); }

  size_t root() const { return 0; }
  // kNone for the root.
  size_t parent(size_t index) const;
  std::vector<size_t> children(size_t index) const;
  // Parent first, root last; empty for the root.
  std::vector<size_t> ancestors(size_t index) const;
  // Where symptoms about `index` go, in the order TFD tries them: its FLN,
  // then its SFLNs (for the root: its first child, then the next nodes).
  std::vector<size_t> localisers(size_t index) const;
  // Who reports when the root cannot: the root, then its first child, ...
  std::vector<size_t> reporters() const;
  // Edges from the root; the root has depth 0.
  size_t depth(size_t index) const;
  size_t height() const;
  // True when `index` lies in the subtree below `ancestor` (or is it).
  bool inSubtree(size_t index, size_t ancestor) const;

 private:
  std::vector<std::string> nodes_;
  size_t fan_out_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace nk

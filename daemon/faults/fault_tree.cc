#include "faults/fault_tree.h"

#include <algorithm>
#include <stdexcept>

namespace nk {

FaultTree::FaultTree(std::vector<std::string> nodes, size_t fan_out)
    : nodes_(std::move(nodes)), fan_out_(std::max<size_t>(1, fan_out)) {
  index_.reserve(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) index_.emplace(nodes_[i], i);
}

std::optional<size_t> FaultTree::indexOf(std::string_view node) const {
  auto it = index_.find(std::string(node));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

size_t FaultTree::parent(size_t index) const {
  if (index == 0 || index >= nodes_.size()) return kNone;
  return (index - 1) / fan_out_;
}

std::vector<size_t> FaultTree::children(size_t index) const {
  std::vector<size_t> out;
  if (index >= nodes_.size()) return out;
  // Computed in a wider range first: fan_out * index may not fit otherwise.
  const unsigned __int128 first = static_cast<unsigned __int128>(fan_out_) * index + 1;
  for (unsigned __int128 c = first; c < first + fan_out_ && c < nodes_.size(); ++c) out.push_back(static_cast<size_t>(c));
  return out;
}

std::vector<size_t> FaultTree::ancestors(size_t index) const {
  std::vector<size_t> out;
  for (size_t p = parent(index); p != kNone; p = parent(p)) out.push_back(p);
  return out;
}

std::vector<size_t> FaultTree::localisers(size_t index) const {
  if (index >= nodes_.size()) return {};
  if (index != 0) return ancestors(index);
  // The root has no ancestor: the nodes that would report in its place.
  std::vector<size_t> out;
  for (size_t i = 1; i < nodes_.size(); ++i) out.push_back(i);
  return out;
}

std::vector<size_t> FaultTree::reporters() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < nodes_.size(); ++i) out.push_back(i);
  return out;
}

size_t FaultTree::depth(size_t index) const { return ancestors(index).size(); }

size_t FaultTree::height() const { return nodes_.empty() ? 0 : depth(nodes_.size() - 1); }

bool FaultTree::inSubtree(size_t index, size_t ancestor) const {
  for (size_t i = index; i != kNone; i = parent(i))
    if (i == ancestor) return true;
  return false;
}

}  // namespace nk

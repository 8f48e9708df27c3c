#include "metrics/node_set.h"

#include <cstdint>
#include <utility>

namespace ms::metrics {
namespace {

constexpr size_t kAmbiguous = SIZE_MAX;

void AddUnique(absl::flat_hash_map<std::string, size_t>& index,
               absl::string_view key, size_t i) {
  if (key.empty()) return;
  auto [it, inserted] = index.try_emplace(key, i);
  if (!inserted && it->second != i) it->second = kAmbiguous;
}

const std::string* Lookup(const absl::flat_hash_map<std::string, size_t>& index,
                          const std::vector<NodeAddresses>& nodes,
                          absl::string_view key) {
  auto it = index.find(key);
  if (it == index.end() || it->second == kAmbiguous) return nullptr;
  return &nodes[it->second].name;
}

}  // namespace

NodeSet::NodeSet(std::vector<NodeAddresses> nodes) {
  nodes_.reserve(nodes.size());
  for (NodeAddresses& node : nodes) {
    if (node.name.empty() || by_name_.contains(node.name)) continue;
    by_name_.emplace(node.name, nodes_.size());
    nodes_.push_back(std::move(node));
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (const std::string& address : nodes_[i].addresses) {
      AddUnique(by_address_, address, i);
    }
    AddUnique(by_short_name_, ShortName(nodes_[i].name), i);
  }
}

const std::string* NodeSet::FindByName(absl::string_view name) const {
  return Lookup(by_name_, nodes_, name);
}

const NodeAddresses* NodeSet::Find(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &nodes_[it->second];
}

const std::string* NodeSet::FindByAddress(absl::string_view address) const {
  return Lookup(by_address_, nodes_, address);
}

const std::string* NodeSet::FindByShortName(absl::string_view short_name) const {
  return Lookup(by_short_name_, nodes_, short_name);
}

absl::string_view ShortName(absl::string_view name) {
  size_t dot = name.find('.');
  return dot == absl::string_view::npos ? name : name.substr(0, dot);
}

absl::string_view StripPort(absl::string_view address) {
  if (!address.empty() && address.front() == '[') {
    size_t close = address.find(']');
    if (close != absl::string_view::npos) return address.substr(1, close - 1);
    return address;
  }
  size_t colon = address.find(':');
  if (colon == absl::string_view::npos) return address;
  // More than one colon: a bare IPv6 address, no port.
  if (address.find(':', colon + 1) != absl::string_view::npos) return address;
  return address.substr(0, colon);
}

}  // namespace ms::metrics

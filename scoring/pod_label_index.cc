#include "scoring/pod_label_index.h"

#include <algorithm>

namespace ms {
namespace {

const PodLabelIndex::Entries& NoEntries() {
  static const auto* const kNone = new PodLabelIndex::Entries();
  return *kNone;
}

bool Holds(const std::vector<std::shared_ptr<const PodInfo>>& pods,
           const PodInfo* pod) {
  return std::any_of(pods.begin(), pods.end(),
                     [&](const auto& p) { return p.get() == pod; });
}

}  // namespace

void PodLabelIndex::Build(const std::vector<NodeInfo>& nodes) {
  by_label_.clear();
  by_owner_.clear();
  with_affinity_.clear();
  with_required_anti_affinity_.clear();
  indexed_.assign(nodes.size(), {});
  for (size_t i = 0; i < nodes.size(); ++i) Update(i, nodes[i]);
}

void PodLabelIndex::Update(size_t i, const NodeInfo& node) {
  if (indexed_.size() <= i) indexed_.resize(i + 1);
  std::vector<std::shared_ptr<const PodInfo>>& was = indexed_[i];
  const uint32_t at = static_cast<uint32_t>(i);
  for (const auto& pod : was) {
    if (!Holds(node.pods, pod.get())) Remove(at, pod);
  }
  for (const auto& pod : node.pods) {
    if (!Holds(was, pod.get())) Add(at, pod);
  }
  was = node.pods;
}

void PodLabelIndex::Add(uint32_t node,
                        const std::shared_ptr<const PodInfo>& pod) {
  for (const auto& [key, value] : pod->labels) {
    by_label_[{key, value}].insert({node, pod.get()});
  }
  if (!pod->owner_uid.empty()) {
    by_owner_[pod->owner_uid].insert({node, pod.get()});
  }
  if (pod->has_affinity()) with_affinity_.insert({node, pod.get()});
  if (pod->has_required_anti_affinity()) {
    with_required_anti_affinity_.insert({node, pod.get()});
  }
}

void PodLabelIndex::Remove(uint32_t node,
                           const std::shared_ptr<const PodInfo>& pod) {
  for (const auto& [key, value] : pod->labels) {
    auto it = by_label_.find(std::make_pair(key, value));
    if (it == by_label_.end()) continue;
    it->second.erase({node, pod.get()});
    if (it->second.empty()) by_label_.erase(it);
  }
  if (auto it = by_owner_.find(pod->owner_uid); it != by_owner_.end()) {
    it->second.erase({node, pod.get()});
    if (it->second.empty()) by_owner_.erase(it);
  }
  with_affinity_.erase({node, pod.get()});
  with_required_anti_affinity_.erase({node, pod.get()});
}

const PodLabelIndex::Entries* PodLabelIndex::With(
    const std::string& key, const std::string& value) const {
  auto it = by_label_.find(std::make_pair(key, value));
  return it == by_label_.end() ? nullptr : &it->second;
}

const PodLabelIndex::Entries* PodLabelIndex::WithOwner(
    const std::string& owner_uid) const {
  auto it = by_owner_.find(owner_uid);
  return it == by_owner_.end() ? nullptr : &it->second;
}

const PodLabelIndex::Entries* PodLabelIndex::Candidates(
    const LabelSelector& selector) const {
  const Entries* best = nullptr;
  auto consider = [&](const std::string& key, const std::string& value) {
    const Entries* e = With(key, value);
    if (e == nullptr) e = &NoEntries();
    if (best == nullptr || e->size() < best->size()) best = e;
  };
  for (const auto& [key, value] : selector.match_labels) consider(key, value);
  for (const LabelRequirement& r : selector.match_expressions) {
    if (r.op == LabelOperator::kIn && r.values.size() == 1) {
      consider(r.key, r.values[0]);
    }
  }
  return best;
}

}  // namespace ms

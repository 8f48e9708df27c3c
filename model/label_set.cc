#include "model/label_set.h"

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/synchronization/mutex.h"

namespace ms {
namespace {

// Maps compared and hashed by what they hold.
struct ByContent {
  using is_transparent = void;
  size_t operator()(const Labels* labels) const {
    return absl::HashOf(*labels);
  }
  bool operator()(const Labels* a, const Labels* b) const { return *a == *b; }
};

// The live maps, each keyed by itself. A map leaves the table when its
// last holder drops it (Release), before it is freed.
struct Table {
  absl::Mutex mu;
  absl::flat_hash_map<const Labels*, std::weak_ptr<const Labels>, ByContent,
                      ByContent>
      live ABSL_GUARDED_BY(mu);
};

Table& TheTable() {
  static Table* table = new Table;  // never destroyed: sets may outlive main
  return *table;
}

struct Release {
  void operator()(const Labels* labels) const {
    Table& table = TheTable();
    {
      absl::MutexLock lock(&table.mu);
      auto it = table.live.find(labels);
      // An equal map made after this one's last holder let go may have
      // taken its place: that entry stays.
      if (it != table.live.end() && it->first == labels) table.live.erase(it);
    }
    delete labels;
  }
};

const std::shared_ptr<const Labels>& NoLabels() {
  static const auto* none = new std::shared_ptr<const Labels>(
      std::make_shared<const Labels>());
  return *none;
}

}  // namespace

LabelSet::LabelSet() : labels_(NoLabels()) {}

LabelSet::LabelSet(const Labels& labels) {
  if (labels.empty()) {
    labels_ = NoLabels();
    return;
  }
  Table& table = TheTable();
  absl::MutexLock lock(&table.mu);
  auto it = table.live.find(&labels);
  if (it != table.live.end()) {
    labels_ = it->second.lock();
    if (labels_ != nullptr) return;
    table.live.erase(it);  // its last holder is releasing it
  }
  labels_ = std::shared_ptr<const Labels>(new Labels(labels), Release());
  table.live.emplace(labels_.get(), labels_);
}

size_t LiveLabelSets() {
  Table& table = TheTable();
  absl::MutexLock lock(&table.mu);
  return table.live.size();
}

}  // namespace ms

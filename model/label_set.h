// LabelSet: a pod's labels, held once for every pod that carries the same.
//
// The pods of one workload carry the same labels, so the accounting entries
// of 20,000 pods (model/node_info.h) share a few hundred maps instead of
// holding 20,000 copies. A LabelSet is an immutable label map, interned: two
// sets built from equal maps while either is alive point to the same map,
// which is freed with its last holder. Reads are a std::map's.
//
// Thread-safe: sets may be built, copied and dropped on any thread (the
// table of live maps has a lock of its own, taken by nothing else).
#ifndef METRICS_SCHEDULER_MODEL_LABEL_SET_H_
#define METRICS_SCHEDULER_MODEL_LABEL_SET_H_

#include <cstddef>
#include <memory>
#include <string>

#include "model/pod_affinity.h"

namespace ms {

class LabelSet {
 public:
  // No labels.
  LabelSet();
  // The shared copy of `labels` (made now if none is alive).
  LabelSet(const Labels& labels);  // NOLINT(runtime/explicit): a value

  const Labels& get() const { return *labels_; }
  operator const Labels&() const { return *labels_; }  // NOLINT

  Labels::const_iterator begin() const { return labels_->begin(); }
  Labels::const_iterator end() const { return labels_->end(); }
  Labels::const_iterator find(const std::string& key) const {
    return labels_->find(key);
  }
  bool empty() const { return labels_->empty(); }
  size_t size() const { return labels_->size(); }

  // Whether two sets hold the same map (for tests: interning works).
  bool SharesWith(const LabelSet& other) const {
    return labels_ == other.labels_;
  }

  friend bool operator==(const LabelSet& a, const LabelSet& b) {
    return a.labels_ == b.labels_ || *a.labels_ == *b.labels_;
  }
  friend bool operator==(const LabelSet& a, const Labels& b) {
    return *a.labels_ == b;
  }

 private:
  std::shared_ptr<const Labels> labels_;  // never null
};

// How many distinct label maps are alive (for tests and metrics).
size_t LiveLabelSets();

}  // namespace ms

#endif  // METRICS_SCHEDULER_MODEL_LABEL_SET_H_

#include "scoring/plugins/taint_toleration.h"

namespace ms {

bool ToleratesTaint(const Toleration& t, const Taint& taint) {
  if (t.effect.has_value() && *t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  switch (t.op) {
    case TolerationOperator::kEqual:
      return t.value == taint.value;
    case TolerationOperator::kExists:
      return true;
  }
  return false;
}

bool ToleratesTaint(const std::vector<Toleration>& tolerations,
                    const Taint& taint) {
  for (const Toleration& t : tolerations) {
    if (ToleratesTaint(t, taint)) return true;
  }
  return false;
}

bool IsHardTaint(const Taint& t) {
  return t.effect == TaintEffect::kNoSchedule ||
         t.effect == TaintEffect::kNoExecute;
}

const Taint* FirstUntoleratedTaint(const std::vector<Toleration>& tolerations,
                                   const std::vector<Taint>& taints) {
  for (const Taint& taint : taints) {
    if (IsHardTaint(taint) && !ToleratesTaint(tolerations, taint)) {
      return &taint;
    }
  }
  return nullptr;
}

int64_t TaintTolerationScore(const std::vector<Toleration>& tolerations,
                             const std::vector<Taint>& taints) {
  int64_t count = 0;
  for (const Taint& taint : taints) {
    if (taint.effect == TaintEffect::kPreferNoSchedule &&
        !ToleratesTaint(tolerations, taint)) {
      ++count;
    }
  }
  return count;
}

}  // namespace ms

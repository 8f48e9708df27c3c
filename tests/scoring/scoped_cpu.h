// The scoped CPU filter the threshold tests share (filter_bounds_test,
// decide_thresholds_test): default max 0.85; production pods (priority
// >= 1000) 0.7 anywhere; the batch pool 0.95 for anyone; batch pods on the
// batch or spot pool 0.98; node annotations read.
#ifndef METRICS_SCHEDULER_TESTS_SCORING_SCOPED_CPU_H_
#define METRICS_SCHEDULER_TESTS_SCORING_SCOPED_CPU_H_

#include "model/threshold_scope.h"
#include "scoring/scoring_config.h"
#include "tests/testing/builders.h"

namespace ms::testing {

inline MetricTerm ScopedCpu() {
  MetricTerm cpu = Term("cpu");
  cpu.filter_max = 0.85;
  cpu.filter_scopes = {
      {.pods = PodClass{.min_priority = 1000}, .bounds = {.max = 0.7}},
      {.nodes = LabelSelector{.match_labels = {{"pool", "batch"}}},
       .bounds = {.max = 0.95}},
      {.nodes = LabelSelector{.match_expressions = {{
                                  .key = "pool",
                                  .op = LabelOperator::kIn,
                                  .values = {"batch", "spot"},
                              }}},
       .pods = PodClass{.labels =
                            LabelSelector{.match_labels = {{"tier", "batch"}}}},
       .bounds = {.max = 0.98}},
  };
  cpu.filter_annotations = true;
  return cpu;
}

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_SCORING_SCOPED_CPU_H_

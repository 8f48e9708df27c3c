// `preset` and `risk` on a metric (config/presets.h), expanded before the
// metric is read. Private to config/: Loader::LoadMetric calls it; the
// definition is in load_preset.cc.
//
// The expansion rewrites the metric's mapping in the document itself, so
// that whatever reads it afterwards, including the checks that look a
// metric up again (duplicate names, profiles fetching one name
// differently), sees the keys the metric stands for:
//
//   - preset: adds `name`, `query`, `join` (when the preset has one) and
//     `normalization`, each only when the user did not write it (a null
//     counts as not written);
//   - risk: replaces `query` with its mean plus k standard deviations over
//     the window (presets.h, RiskQuery).
//
// The values it adds are placed, for error messages, where the `preset`
// value is (the wrapped query where the query is): an error in one names
// the file, line and column of the key that brought it.
#ifndef METRICS_SCHEDULER_CONFIG_PRESET_EXPANSION_H_
#define METRICS_SCHEDULER_CONFIG_PRESET_EXPANSION_H_

#include <string>

#include "absl/status/status.h"
#include "config/yaml_reader.h"

namespace ms {

enum class BackendType;  // config/config.h

// Expands `metric` (the mapping of metrics[i] at `path`) in place. OK with
// nothing changed when it is not a mapping or has neither key; the
// loader's InvalidArgument "<file>:<line>:<col>: <path>: ..." for a preset
// or risk that is unknown, malformed or does not fit `backend`.
absl::Status ExpandMetricShorthands(const YamlReader& reader,
                                    const YNode& metric,
                                    const std::string& path,
                                    BackendType backend);

}  // namespace ms

#endif  // METRICS_SCHEDULER_CONFIG_PRESET_EXPANSION_H_

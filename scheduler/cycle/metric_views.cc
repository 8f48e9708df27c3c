#include "scheduler/cycle/metric_views.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "scoring/unseen_load.h"

namespace ms {
namespace {

// The index of the metric term named `name` in `config`; -1 when none
// (an empty name).
int IndexOf(const ScoringConfig& config, const std::string& name) {
  if (name.empty()) return -1;
  for (size_t c = 0; c < config.metrics.size(); ++c) {
    if (config.metrics[c].name == name) return static_cast<int>(c);
  }
  return -1;
}

}  // namespace

bool MetricViews::Counts(const View& view, const Placement& p,
                         const NodeLayout& layout) {
  auto it = layout.index->find(p.node);
  if (it == layout.index->end()) return false;
  return absl::ToUnixMillis(p.time) > view.sampled_ms[it->second];
}

const MetricViews::View& MetricViews::Get(
    const ScoringConfig& config,
    const std::shared_ptr<const MetricsSnapshot>& metrics, absl::Time now,
    const NodeLayout& layout) {
  View* view = nullptr;
  for (const std::unique_ptr<View>& v : views_) {
    if (v->config == &config) view = v.get();
  }
  if (view == nullptr) {
    view = views_.emplace_back(std::make_unique<View>()).get();
    view->config = &config;
    view->herd_window = absl::Milliseconds(config.herd_window_ms);
    view->counted_from = placements_dropped_;
    for (const MetricTerm& term : config.metrics) {
      view->estimates = view->estimates || term.estimate.enabled();
      view->scoped_filters = view->scoped_filters || term.has_scoped_filter();
      const int of =
          term.estimate.basis == UnseenLoadEstimate::Basis::kQueueing
              ? IndexOf(config, term.estimate.utilisation)
              : -1;
      view->utilisation_of.push_back(of);
      view->unloaded_of.push_back(IndexOf(config, term.unloaded.utilisation));
    }
  }
  DropOldStarts(now);
  if (view->layout_version != layout.version || view->metrics != metrics ||
      (view->reads_attributes &&
       view->attributes_version != layout.attributes_version) ||
      (view->estimates && view->starts_version != starts_version_)) {
    Align(*view, metrics, now, layout);
  }
  if (view->scoped_filters &&
      (view->bounds_layout_version != layout.version ||
       view->bounds_attributes_version != layout.attributes_version)) {
    MatchBounds(*view, layout);
  }
  Expire(*view, now, layout);
  return *view;
}

void MetricViews::MatchBounds(View& view, const NodeLayout& layout) {
  view.bounds_layout_version = layout.version;
  view.bounds_attributes_version = layout.attributes_version;
  MatchNodeBounds(view.config->metrics, *layout.nodes, &view.node_bounds);
}

void MetricViews::Align(View& view,
                        const std::shared_ptr<const MetricsSnapshot>& metrics,
                        absl::Time now, const NodeLayout& layout) {
  const std::vector<NodeInfo>& nodes = *layout.nodes;
  const bool new_metrics = view.metrics != metrics;
  view.layout_version = layout.version;
  view.attributes_version = layout.attributes_version;
  view.metrics = metrics;
  view.reads_attributes = false;
  view.columns.clear();
  view.sampled_ms.assign(nodes.size(), 0);
  for (const MetricTerm& term : view.config->metrics) {
    if (!term.origin.is_query()) {
      view.columns.push_back(NodeAttributeColumn(term.origin, nodes));
      view.reads_attributes = true;
      continue;
    }
    const MetricValues* values =
        metrics != nullptr ? metrics->Find(term.name) : nullptr;
    if (values == nullptr) {
      view.columns.emplace_back();  // no values: not aligned, no data
      continue;
    }
    // Herd counts start again when a node's metrics are sampled anew;
    // node attributes do not move with placements.
    const MetricColumn& column =
        view.columns.emplace_back(AlignMetric(*values, *layout.names));
    for (size_t i = 0; i < nodes.size(); ++i) {
      view.sampled_ms[i] = std::max(view.sampled_ms[i], column.time_ms[i]);
    }
  }
  Unload(view);
  view.unseen.assign(view.columns.size(), {});
  view.starts_version = starts_version_;
  if (view.estimates) {
    if (new_metrics) MeasureAllSiblings(view, now, layout);
    for (size_t m = 0; m < view.columns.size(); ++m) {
      if (view.config->metrics[m].estimate.enabled() &&
          view.columns[m].values.size() == nodes.size()) {
        view.unseen[m].assign(nodes.size(), 0);
      }
    }
    for (const Start& start : starts_) Estimate(view, start, layout, nullptr);
  }
  view.metric_table.Build(view.columns, nodes.size());
  Recount(view, layout);
}

void MetricViews::Unload(View& view) {
  for (size_t m = 0; m < view.columns.size(); ++m) {
    const int c = view.unloaded_of[m];
    if (c < 0) continue;
    MetricColumn& column = view.columns[m];
    const MetricColumn& load = view.columns[c];
    const double full = view.config->metrics[m].unloaded.full;
    const int64_t max_staleness_ms = view.config->metrics[c].max_staleness_ms;
    for (size_t i = 0; i < column.values.size(); ++i) {
      const bool usable =
          i < load.values.size() && load.time_ms[i] != 0 &&
          (load.time_ms[i] == kAlwaysFresh ||
           load.time_ms[i] >= column.time_ms[i] - max_staleness_ms);
      column.values[i] =
          usable ? Unloaded(column.values[i], load.values[i], full) : NAN;
    }
  }
}

void MetricViews::MeasureAllSiblings(View& view, absl::Time now,
                                     const NodeLayout& layout) {
  view.siblings.assign(view.columns.size(), {});
  if (!layout.find_pod || view.metrics == nullptr) return;
  for (size_t m = 0; m < view.columns.size(); ++m) {
    const MetricTerm& term = view.config->metrics[m];
    const MetricValues* values = view.metrics->Find(term.name);
    if (term.estimate.siblings_query.empty() || values == nullptr ||
        values->by_pod == nullptr) {
      continue;
    }
    view.siblings[m] =
        MeasureSiblings(term.estimate, *values->by_pod, layout.find_pod,
                        absl::ToUnixMillis(now), term.max_staleness_ms);
  }
}

void MetricViews::Estimate(View& view, const Start& start,
                           const NodeLayout& layout, MetricTable* table) {
  if (start.pod == nullptr) return;
  auto it = layout.index->find(start.node);
  if (it == layout.index->end()) return;
  const size_t i = it->second;
  for (size_t m = 0; m < view.unseen.size(); ++m) {
    if (view.unseen[m].empty()) continue;
    MetricColumn& column = view.columns[m];
    const MetricTerm& term = view.config->metrics[m];
    if (view.utilisation_of[m] >= 0 || column.time_ms[i] == 0 ||
        !std::isfinite(column.values[i])) {
      continue;
    }
    const double d = UnseenLoad(
        term, *start.pod, (*layout.nodes)[i].node,
        view.siblings.empty() ? nullptr : &view.siblings[m], column.time_ms[i],
        start.start_ms, column.values[i] - view.unseen[m][i],
        term.estimate.fade == UnseenLoadEstimate::Fade::kMeasured
            ? OwnSample(view.metrics.get(), term, start.key, column.time_ms[i])
            : std::nullopt);
    column.values[i] += d;
    view.unseen[m][i] += d;
    if (table != nullptr && d != 0) table->Add(m, i, d);
  }
  Requeue(view, i, table);
}

void MetricViews::Requeue(View& view, size_t i, MetricTable* table) {
  for (size_t q = 0; q < view.unseen.size(); ++q) {
    const int c = view.utilisation_of[q];
    if (c < 0 || view.unseen[q].empty() || view.unseen[c].empty()) continue;
    MetricColumn& column = view.columns[q];
    const MetricColumn& load = view.columns[c];
    if (column.time_ms[i] == 0 || !std::isfinite(column.values[i]) ||
        load.time_ms[i] == 0 || !std::isfinite(load.values[i])) {
      continue;
    }
    const double sampled = column.values[i] - view.unseen[q][i];
    const double full = view.config->metrics[q].estimate.full;
    const double du = view.unseen[c][i];
    const double d =
        sampled * QueueingGrowth((load.values[i] - du) / full, du / full) -
        column.values[i];
    column.values[i] += d;
    view.unseen[q][i] += d;
    if (table != nullptr && d != 0) table->Add(q, i, d);
  }
}

void MetricViews::AddStart(Start start, const NodeLayout& layout) {
  Stopped(start.key);  // a namesake's, or its own earlier record
  const uint64_t previous = starts_version_++;
  start_of_[start.key] = starts_dropped_ + starts_.size();
  const Start& s = starts_.emplace_back(std::move(start));
  for (const std::unique_ptr<View>& v : views_) {
    if (!v->estimates || v->layout_version != layout.version ||
        v->starts_version != previous) {
      continue;  // aligns afresh when next asked
    }
    Estimate(*v, s, layout, &v->metric_table);
    v->starts_version = starts_version_;
  }
}

void MetricViews::Stopped(const std::string& key) {
  auto it = start_of_.find(key);
  if (it == start_of_.end()) return;
  starts_[it->second - starts_dropped_].pod = nullptr;
  start_of_.erase(it);
  ++starts_version_;
}

void MetricViews::DropOldStarts(absl::Time now) {
  while (!starts_.empty() &&
         starts_.front().kept_since <= now - longest_estimate_window_) {
    const Start& front = starts_.front();
    auto it = start_of_.find(front.key);
    if (it != start_of_.end() && it->second == starts_dropped_) {
      start_of_.erase(it);
    }
    starts_.pop_front();
    ++starts_dropped_;
  }
}

void MetricViews::Started(const std::string& node, absl::Time now,
                          const NodeLayout& layout, const std::string& key,
                          int64_t start_ms,
                          std::shared_ptr<const PodInfo> pod) {
  if (absl::FromUnixMillis(start_ms) <= now - longest_estimate_window_) {
    Stopped(key);
    return;
  }
  AddStart({.kept_since = now,
            .start_ms = start_ms,
            .node = node,
            .key = key,
            .pod = std::move(pod)},
           layout);
}

void MetricViews::Recount(View& view, const NodeLayout& layout) {
  view.counted_from = std::max(view.counted_from, placements_dropped_);
  view.recent.assign(layout.nodes->size(), 0);
  for (size_t k = view.counted_from - placements_dropped_;
       k < placements_.size(); ++k) {
    const Placement& p = placements_[k];
    if (Counts(view, p, layout)) ++view.recent[layout.index->at(p.node)];
  }
}

void MetricViews::Expire(View& view, absl::Time now, const NodeLayout& layout) {
  // Placements were dropped (past the longest window) before this view
  // expired them, while it was not asked: count what is left afresh.
  if (view.counted_from < placements_dropped_) Recount(view, layout);
  const uint64_t end = placements_dropped_ + placements_.size();
  while (view.counted_from < end) {
    const Placement& p = placements_[view.counted_from - placements_dropped_];
    if (p.time > now - view.herd_window) break;
    if (Counts(view, p, layout)) --view.recent[layout.index->at(p.node)];
    ++view.counted_from;
  }
  while (!placements_.empty() &&
         placements_.front().time <= now - longest_herd_window_) {
    placements_.pop_front();
    ++placements_dropped_;
  }
}

void MetricViews::Place(size_t node_index, absl::Time now,
                        const NodeLayout& layout, const std::string& key,
                        std::shared_ptr<const PodInfo> pod) {
  if (longest_estimate_window_ > absl::ZeroDuration()) {
    AddStart({.kept_since = now,
              .start_ms = absl::ToUnixMillis(now),
              .node = (*layout.names)[node_index],
              .key = key,
              .pod = std::move(pod)},
             layout);
  }
  placements_.push_back({now, (*layout.names)[node_index]});
  for (const std::unique_ptr<View>& v : views_) {
    if (v->layout_version == layout.version &&
        Counts(*v, placements_.back(), layout)) {
      ++v->recent[node_index];
    }
  }
}

int MetricViews::Recent(const std::string& node, const ScoringConfig& config,
                        const NodeLayout& layout) const {
  auto it = layout.index->find(node);
  if (it == layout.index->end()) return 0;
  for (const std::unique_ptr<View>& v : views_) {
    if (v->config == &config && v->layout_version == layout.version) {
      return v->recent[it->second];
    }
  }
  return 0;
}

}  // namespace ms

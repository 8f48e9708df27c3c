#include "bench/quality/report.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/quality/number_text.h"
#include "common/json.h"

namespace ms::quality {
namespace {

constexpr char kKube[] = "kube-scheduler";
constexpr char kClairvoyant[] = "clairvoyant";

double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

template <typename F>
double MedianField(const std::vector<Figures>& runs, F field) {
  std::vector<double> v;
  for (const Figures& f : runs) v.push_back(field(f));
  return MedianOf(v);
}

const PolicyResult* Find(const TraceResult& t, const std::string& policy) {
  for (const PolicyResult& p : t.policies) {
    if (p.policy == policy) return &p;
  }
  return nullptr;
}

// "1.23x", or "-" when there is nothing to compare with.
std::string RatioText(double a, const PolicyResult* base,
                      double (*field)(const Figures&)) {
  if (base == nullptr) return "-";
  double r = Ratio(a, field(Median(base->runs)));
  return std::isnan(r) ? "inf" : absl::StrFormat("%.2fx", r);
}

double MeanLatency(const Figures& f) { return f.mean_latency_s; }
double HotSeconds(const Figures& f) { return f.hot_node_seconds; }

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string FiguresJson(const Figures& f) {
  return absl::StrCat(
      R"({"mean_latency_s":)", NumberText(f.mean_latency_s),
      R"(,"p99_latency_s":)", NumberText(f.p99_latency_s),
      R"(,"own_mean_latency_s":)", NumberText(f.own_mean_latency_s),
      R"(,"hot_node_seconds":)", NumberText(f.hot_node_seconds),
      R"(,"hot_nodes":)", f.hot_nodes, R"(,"utilisation_cv":)",
      NumberText(f.utilisation_cv), R"(,"placements":)", f.placements,
      R"(,"placements_on_hot":)", f.placements_on_hot, R"(,"pending":)",
      f.pending, R"(,"evictions":)", f.evictions, "}");
}

// A line chart of `lines` (each a list of (x, y)) in an SVG of w x h.
struct Line {
  std::string label;
  std::vector<std::pair<double, double>> points;
  std::string colour;
};

std::string Chart(const std::vector<Line>& lines, double x_max, double y_max,
                  const std::string& x_label, const std::string& y_label,
                  double y_mark = std::numeric_limits<double>::quiet_NaN(),
                  bool log_x = false, double x_min = 0) {
  constexpr int kW = 420, kH = 230, kLeft = 50, kBottom = 30, kTop = 20,
                kRight = 10;
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  auto sx = [&](double x) {
    if (log_x) {
      x = std::max(x, x_min);
      return kLeft + pw * std::log(x / x_min) / std::log(x_max / x_min);
    }
    return kLeft + pw * x / x_max;
  };
  auto sy = [&](double y) {
    return kTop + ph * (1 - std::min(y, y_max) / y_max);
  };
  std::string svg = absl::StrFormat(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-size="10">)"
      R"(<rect x="%d" y="%d" width="%g" height="%g" fill="none" stroke="#999"/>)",
      kW, kH, kLeft, kTop, pw, ph);
  absl::StrAppend(&svg,
                  absl::StrFormat(R"(<text x="%g" y="%d">%s</text>)",
                                  kLeft + pw / 2 - 30, kH - 5, Escape(x_label)),
                  absl::StrFormat(R"(<text x="2" y="%d">%s</text>)", kTop - 8,
                                  Escape(y_label)),
                  absl::StrFormat(R"(<text x="%d" y="%g">%g</text>)",
                                  kLeft - 30, sy(y_max) + 10, y_max),
                  absl::StrFormat(R"(<text x="%g" y="%d">%g</text>)",
                                  sx(x_max) - 20, kH - 18, x_max));
  if (!std::isnan(y_mark)) {
    absl::StrAppend(
        &svg,
        absl::StrFormat(
            R"(<line x1="%d" x2="%g" y1="%g" y2="%g" stroke="#c00" stroke-dasharray="4"/>)",
            kLeft, kLeft + pw, sy(y_mark), sy(y_mark)));
  }
  int legend = 0;
  for (const Line& line : lines) {
    std::string points;
    for (const auto& [x, y] : line.points) {
      absl::StrAppend(&points, absl::StrFormat("%.1f,%.1f ", sx(x), sy(y)));
    }
    absl::StrAppend(
        &svg,
        absl::StrFormat(R"(<polyline fill="none" stroke="%s" points="%s"/>)",
                        line.colour, points));
    if (!line.label.empty()) {
      absl::StrAppend(
          &svg, absl::StrFormat(R"(<text x="%g" y="%d" fill="%s">%s</text>)",
                                kLeft + 5, kTop + 12 + 11 * legend++,
                                line.colour, Escape(line.label)));
    }
  }
  return svg + "</svg>";
}

constexpr const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                    "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

}  // namespace

Figures Median(const std::vector<Figures>& runs) {
  Figures m;
  m.mean_latency_s =
      MedianField(runs, [](const Figures& f) { return f.mean_latency_s; });
  m.p99_latency_s =
      MedianField(runs, [](const Figures& f) { return f.p99_latency_s; });
  m.own_mean_latency_s =
      MedianField(runs, [](const Figures& f) { return f.own_mean_latency_s; });
  m.hot_node_seconds =
      MedianField(runs, [](const Figures& f) { return f.hot_node_seconds; });
  m.hot_nodes = static_cast<int>(
      MedianField(runs, [](const Figures& f) { return f.hot_nodes; }));
  m.utilisation_cv =
      MedianField(runs, [](const Figures& f) { return f.utilisation_cv; });
  m.placements = static_cast<int>(
      MedianField(runs, [](const Figures& f) { return f.placements; }));
  m.placements_on_hot = static_cast<int>(
      MedianField(runs, [](const Figures& f) { return f.placements_on_hot; }));
  m.pending = static_cast<int>(
      MedianField(runs, [](const Figures& f) { return f.pending; }));
  m.evictions = static_cast<int>(
      MedianField(runs, [](const Figures& f) { return f.evictions; }));
  return m;
}

double Ratio(double a, double b) {
  if (b == 0) return a == 0 ? 1 : std::numeric_limits<double>::quiet_NaN();
  return a / b;
}

std::string RenderTable(const std::vector<TraceResult>& results) {
  std::string out;
  for (const TraceResult& t : results) {
    const PolicyResult* clairvoyant = Find(t, kClairvoyant);
    const PolicyResult* kube = Find(t, kKube);
    absl::StrAppend(&out, "\ntrace ", t.trace, " (medians of ",
                    t.policies.empty() ? 0 : t.policies[0].runs.size(),
                    " runs; hot: utilisation > ", t.hot_threshold, ")\n");
    absl::StrAppend(
        &out, absl::StrFormat("%-31s %9s %9s %8s %6s %9s %7s %6s %9s %9s %9s\n",
                              "policy", "mean ms", "p99 ms", "hot n.s", "cv",
                              "hot plc.", "pending", "evict", "mean/clv",
                              "mean/kube", "hot/kube"));
    for (const PolicyResult& p : t.policies) {
      Figures m = Median(p.runs);
      absl::StrAppend(
          &out, absl::StrFormat(
                    "%-31s %9.1f %9.1f %8.0f %6.2f %4d/%-4d %7d %6d %9s %9s "
                    "%9s\n",
                    p.policy, m.mean_latency_s * 1000, m.p99_latency_s * 1000,
                    m.hot_node_seconds, m.utilisation_cv, m.placements_on_hot,
                    m.placements, m.pending, m.evictions,
                    RatioText(m.mean_latency_s, clairvoyant, MeanLatency),
                    RatioText(m.mean_latency_s, kube, MeanLatency),
                    RatioText(m.hot_node_seconds, kube, HotSeconds)));
    }
  }
  return out;
}

std::string RenderJson(const std::vector<TraceResult>& results,
                       const std::string& meta) {
  std::string out =
      absl::StrCat("{", meta, meta.empty() ? "" : ",", R"("traces":[)");
  for (size_t i = 0; i < results.size(); ++i) {
    const TraceResult& t = results[i];
    absl::StrAppend(&out, i ? "," : "", R"({"trace":)", JsonQuote(t.trace),
                    R"(,"hot_threshold":)", NumberText(t.hot_threshold),
                    R"(,"policies":[)");
    for (size_t j = 0; j < t.policies.size(); ++j) {
      const PolicyResult& p = t.policies[j];
      absl::StrAppend(&out, j ? "," : "", R"({"policy":)", JsonQuote(p.policy),
                      R"(,"median":)", FiguresJson(Median(p.runs)),
                      R"(,"runs":[)");
      for (size_t r = 0; r < p.runs.size(); ++r) {
        absl::StrAppend(&out, r ? "," : "", FiguresJson(p.runs[r]));
      }
      out += "]}";
    }
    out += "]}";
  }
  return out + "]}\n";
}

std::string RenderHtml(const std::vector<TraceResult>& results,
                       const std::string& title, const std::string& summary) {
  std::string out =
      absl::StrCat("<!doctype html><html><head><meta charset=\"utf-8\"><title>",
                   Escape(title),
                   "</title><style>body{font-family:sans-serif;margin:2em}"
                   "pre{background:#f6f6f6;padding:1em}svg{margin:4px}"
                   "</style></head><body><h1>",
                   Escape(title), "</h1>");
  if (!summary.empty()) absl::StrAppend(&out, "<pre>", Escape(summary), "</pre>");
  for (const TraceResult& t : results) {
    absl::StrAppend(&out, "<h2>Trace ", Escape(t.trace), "</h2><pre>",
                    Escape(RenderTable({t})), "</pre>");
    // Node utilisation over time, one chart per policy (last run).
    absl::StrAppend(&out,
                    "<h3>Node utilisation over time (last run; dashed: "
                    "hot threshold)</h3><div>");
    for (const PolicyResult& p : t.policies) {
      std::vector<Line> lines;
      double x_max = 1;
      for (size_t n = 0; n < p.series.by_node.size(); ++n) {
        Line line{.colour = kColours[n % std::size(kColours)]};
        const std::vector<double>& s = p.series.by_node[n];
        for (size_t k = 0; k < s.size(); ++k) {
          const double x = static_cast<double>(k) * p.series.sample_every_s;
          line.points.emplace_back(x, s[k]);
          x_max = std::max(x_max, x);
        }
        lines.push_back(std::move(line));
      }
      absl::StrAppend(
          &out, "<figure style=\"display:inline-block\">",
          Chart(lines, x_max, 1.5, "seconds", "utilisation", t.hot_threshold),
          "<figcaption>", Escape(p.policy), "</figcaption></figure>");
    }
    // Experienced latency CDFs, one line per policy.
    std::vector<Line> cdfs;
    for (size_t i = 0; i < t.policies.size(); ++i) {
      std::vector<std::pair<double, double>> s = t.policies[i].latency_samples;
      std::sort(s.begin(), s.end());
      double total = 0;
      for (const auto& [v, w] : s) total += w;
      Line line{.label = t.policies[i].policy,
                .colour = kColours[i % std::size(kColours)]};
      // At most about 200 points: one each time the share grows by 0.5 %.
      double seen = 0, drawn = -1;
      for (size_t k = 0; k < s.size(); ++k) {
        seen += s[k].second;
        const double share = total > 0 ? seen / total : 0;
        if (share - drawn >= 0.005 || k + 1 == s.size()) {
          line.points.emplace_back(s[k].first * 1000, share);
          drawn = share;
        }
      }
      cdfs.push_back(std::move(line));
    }
    absl::StrAppend(&out,
                    "<h3>Experienced latency (share of pod-seconds at or "
                    "below, last run)</h3>",
                    Chart(cdfs, 5000, 1, "ms (log)", "share",
                          std::numeric_limits<double>::quiet_NaN(),
                          /*log_x=*/true, /*x_min=*/10));
    // Mean latency against clairvoyant, as bars.
    const PolicyResult* clairvoyant = Find(t, kClairvoyant);
    if (clairvoyant != nullptr) {
      const double base = Median(clairvoyant->runs).mean_latency_s;
      absl::StrAppend(&out,
                      "<h3>Mean experienced latency / clairvoyant</h3><svg "
                      "xmlns=\"http://www.w3.org/2000/svg\" width=\"580\" "
                      "height=\"",
                      20 * t.policies.size() + 10, "\" font-size=\"11\">");
      for (size_t i = 0; i < t.policies.size(); ++i) {
        const double r = Ratio(Median(t.policies[i].runs).mean_latency_s, base);
        const double w = std::isnan(r) ? 300 : std::min(300.0, 100 * r);
        absl::StrAppend(
            &out,
            absl::StrFormat(
                R"(<text x="0" y="%d">%s</text><rect x="200" y="%d" width="%g" height="14" fill="%s"/><text x="%g" y="%d">%.2fx</text>)",
                20 * i + 15, Escape(t.policies[i].policy), 20 * i + 4, w,
                kColours[i % std::size(kColours)], 205 + w, 20 * i + 15, r));
      }
      out += "</svg>";
    }
  }
  return out + "</body></html>\n";
}

}  // namespace ms::quality

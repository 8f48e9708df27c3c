#include "bench/quality/trace.h"

#include <cmath>
#include <map>
#include <random>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/quality/number_text.h"
#include "common/json.h"
#include "simdjson.h"

namespace ms::quality {
namespace {

// simdjson's text as Abseil's (Debian's Abseil has its own string_view).
absl::string_view View(std::string_view s) { return {s.data(), s.size()}; }

// The fields of one kind of line: each a double or a string member.
template <typename T>
struct Fields {
  std::map<std::string, double T::*, std::less<>> numbers;
  std::map<std::string, std::string T::*, std::less<>> strings;
};

const Fields<Trace>& TraceFields() {
  static const auto* f =
      new Fields<Trace>{.numbers = {{"duration_s", &Trace::duration_s}},
                        .strings = {{"name", &Trace::name}}};
  return *f;
}

const Fields<NodeSpec>& NodeFields() {
  static const auto* f = new Fields<NodeSpec>{
      .numbers = {{"cores", &NodeSpec::cores},
                  {"memory_gib", &NodeSpec::memory_gib},
                  {"speed", &NodeSpec::speed},
                  {"background_cores", &NodeSpec::background_cores},
                  {"burst_cores", &NodeSpec::burst_cores},
                  {"burst_period_s", &NodeSpec::burst_period_s},
                  {"burst_duty", &NodeSpec::burst_duty},
                  {"degrade_at_s", &NodeSpec::degrade_at_s},
                  {"degrade_factor", &NodeSpec::degrade_factor}},
      .strings = {{"name", &NodeSpec::name}}};
  return *f;
}

const Fields<PodSpec>& PodFields() {
  static const auto* f = new Fields<PodSpec>{
      .numbers = {{"arrival_s", &PodSpec::arrival_s},
                  {"cpu_request", &PodSpec::cpu_request},
                  {"memory_request_gib", &PodSpec::memory_request_gib},
                  {"usage", &PodSpec::usage},
                  {"warmup_s", &PodSpec::warmup_s},
                  {"duration_s", &PodSpec::duration_s},
                  {"io", &PodSpec::io},
                  {"shift_at_s", &PodSpec::shift_at_s},
                  {"shift_factor", &PodSpec::shift_factor}},
      .strings = {{"name", &PodSpec::name},
                  {"scheduler", &PodSpec::scheduler},
                  {"owner", &PodSpec::owner}}};
  return *f;
}

// Reads the fields of `object` (but "kind") into `out`.
template <typename T>
absl::Status ReadFields(simdjson::dom::object object, const Fields<T>& fields,
                        T& out) {
  for (auto [key, value] : object) {
    if (key == "kind") continue;
    if (auto it = fields.numbers.find(key); it != fields.numbers.end()) {
      double number;
      if (value.get(number) != simdjson::SUCCESS) {
        // Integers are numbers too.
        int64_t integer;
        if (value.get(integer) != simdjson::SUCCESS) {
          return absl::InvalidArgumentError(
              absl::StrCat("field ", View(key), ": not a number"));
        }
        number = static_cast<double>(integer);
      }
      if (std::isnan(number) || number < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("field ", View(key), ": must be a number >= 0"));
      }
      out.*(it->second) = number;
      continue;
    }
    if (auto it = fields.strings.find(key); it != fields.strings.end()) {
      std::string_view text;
      if (value.get(text) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError(
            absl::StrCat("field ", View(key), ": not a string"));
      }
      out.*(it->second) = std::string(text);
      continue;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("unknown field ", View(key)));
  }
  return absl::OkStatus();
}

// The meaning of each line's object, checked.
absl::Status ReadLine(simdjson::dom::object object, bool first, Trace& trace) {
  std::string_view kind;
  if (object["kind"].get(kind) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("no \"kind\" string");
  }
  if (kind == "trace") {
    if (!first) {
      return absl::InvalidArgumentError("\"trace\" must be the first line");
    }
    return ReadFields(object, TraceFields(), trace);
  }
  if (kind == "node") {
    NodeSpec node;
    absl::Status s = ReadFields(object, NodeFields(), node);
    if (!s.ok()) return s;
    if (node.name.empty())
      return absl::InvalidArgumentError("node without name");
    if (node.cores <= 0 || node.speed <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("node ", node.name, ": cores and speed must be > 0"));
    }
    trace.nodes.push_back(std::move(node));
    return absl::OkStatus();
  }
  if (kind == "pod") {
    PodSpec pod;
    absl::Status s = ReadFields(object, PodFields(), pod);
    if (!s.ok()) return s;
    if (pod.name.empty()) return absl::InvalidArgumentError("pod without name");
    if (!trace.pods.empty() && pod.arrival_s < trace.pods.back().arrival_s) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pod ", pod.name, ": arrival_s before the line above's"));
    }
    trace.pods.push_back(std::move(pod));
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown kind ", View(kind)));
}

}  // namespace

absl::StatusOr<Trace> ParseTrace(absl::string_view text,
                                 absl::string_view source) {
  Trace trace;
  simdjson::dom::parser parser;
  int number = 0;
  bool first = true;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    simdjson::dom::object object;
    absl::Status s;
    if (parser.parse(line.data(), line.size()).get(object) !=
        simdjson::SUCCESS) {
      s = absl::InvalidArgumentError("not a JSON object");
    } else {
      s = ReadLine(object, first, trace);
    }
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", number, ": ", s.message()));
    }
    first = false;
  }
  if (trace.nodes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": no node"));
  }
  return trace;
}

namespace {

template <typename T>
void AppendFields(std::string& out, const char* kind, const T& value,
                  const Fields<T>& fields) {
  static const T defaults{};
  absl::StrAppend(&out, "{\"kind\":\"", kind, "\"");
  for (const auto& [key, member] : fields.strings) {
    if (value.*member == defaults.*member) continue;
    absl::StrAppend(&out, ",\"", key, "\":");
    AppendJsonQuoted(out, value.*member);
  }
  for (const auto& [key, member] : fields.numbers) {
    // Infinite numbers (never) are the defaults JSON cannot write.
    if (value.*member == defaults.*member || std::isinf(value.*member)) {
      continue;
    }
    absl::StrAppend(&out, ",\"", key, "\":", NumberText(value.*member));
  }
  out += "}\n";
}

}  // namespace

std::string WriteTrace(const Trace& trace) {
  std::string out;
  AppendFields(out, "trace", trace, TraceFields());
  for (const NodeSpec& node : trace.nodes) {
    AppendFields(out, "node", node, NodeFields());
  }
  for (const PodSpec& pod : trace.pods) {
    AppendFields(out, "pod", pod, PodFields());
  }
  return out;
}

}  // namespace ms::quality

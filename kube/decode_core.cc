#include "kube/decode_core.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "model/quantity.h"

namespace ms::kube {
namespace {

// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// `n` digits of `text` from `pos` as a number; -1 if one is not a digit.
int Digits(absl::string_view text, size_t pos, size_t n) {
  int value = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

}  // namespace

absl::StatusOr<int64_t> ParseTimestampMs(absl::string_view text) {
  // The apiserver's own form, UTC with or without a fraction:
  // 2006-01-02T15:04:05Z or 2006-01-02T15:04:05.000000Z, read by hand
  // (cctz's general parser was about 2 % of the scheduler's CPU per pod);
  // anything else goes to the general parser.
  if (text.size() >= 20 && text.back() == 'Z' && text[4] == '-' &&
      text[7] == '-' && text[10] == 'T' && text[13] == ':' && text[16] == ':' &&
      (text.size() == 20 || text[19] == '.')) {
    int year = Digits(text, 0, 4), month = Digits(text, 5, 2),
        day = Digits(text, 8, 2), hour = Digits(text, 11, 2),
        minute = Digits(text, 14, 2), second = Digits(text, 17, 2);
    size_t fraction = text.size() == 20 ? 0 : text.size() - 21;
    int millis = 0;
    if (fraction > 0 && fraction <= 9) {
      int digits = Digits(text, 20, fraction);
      int scale = 1;
      for (size_t i = fraction; i < 9; ++i) scale *= 10;
      millis = digits < 0 ? -1 : digits * scale / 1000000;
    }
    static constexpr int kMonthDays[] = {31, 28, 31, 30, 31, 30,
                                         31, 31, 30, 31, 30, 31};
    bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    int month_days = month >= 1 && month <= 12
                         ? kMonthDays[month - 1] + (month == 2 && leap)
                         : 0;
    if (year >= 0 && day >= 1 && day <= month_days && hour >= 0 && hour <= 23 &&
        minute >= 0 && minute <= 59 && second >= 0 && second <= 59 &&
        fraction <= 9 && millis >= 0) {
      int64_t days = DaysFromCivil(year, month, day);
      return ((days * 24 + hour) * 60 + minute) * 60000 + second * 1000 +
             millis;
    }
  }
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, text, &t, &err)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad timestamp \"", text, "\""));
  }
  return absl::ToUnixMillis(t);
}

absl::StatusCode CodeForApiserverStatus(
    long http_status,  // NOLINT(runtime/int)
    absl::string_view reason) {
  switch (http_status) {
    case 400:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      // Creating what exists, versus a write that lost a race (a stale
      // resourceVersion, a pod already bound).
      return reason == "AlreadyExists" ? absl::StatusCode::kAlreadyExists
                                       : absl::StatusCode::kAborted;
    case 410:
      return absl::StatusCode::kOutOfRange;  // resourceVersion expired
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    default:
      break;
  }
  if (http_status >= 500) return absl::StatusCode::kUnavailable;
  return absl::StatusCode::kUnknown;
}

absl::Status DecodeErrorStatus(long http_status,  // NOLINT(runtime/int)
                               absl::string_view body) {
  std::string reason;
  std::string message;
  simdjson::padded_string padded(body.data(), body.size());
  try {
    simdjson::ondemand::document doc =
        decode_internal::Parser().iterate(padded);
    for (simdjson::ondemand::field f : doc.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "reason") reason = decode_internal::String(f.value());
      if (key == "message") message = decode_internal::String(f.value());
    }
  } catch (const simdjson::simdjson_error&) {
    message = std::string(body.substr(0, 512));
  }
  return decode_internal::ErrorStatus(http_status, reason, std::move(message));
}

namespace decode_internal {
namespace {

SelectorOperator Operator(std::string_view s) {
  if (s == "In") return SelectorOperator::kIn;
  if (s == "NotIn") return SelectorOperator::kNotIn;
  if (s == "Exists") return SelectorOperator::kExists;
  if (s == "DoesNotExist") return SelectorOperator::kDoesNotExist;
  if (s == "Gt") return SelectorOperator::kGt;
  if (s == "Lt") return SelectorOperator::kLt;
  throw DecodeError{
      absl::StrCat("unknown node selector operator \"", AbslView(s), "\"")};
}

std::vector<NodeSelectorRequirement> Requirements(od::value v) {
  std::vector<NodeSelectorRequirement> out;
  if (IsNull(v)) return out;
  for (od::value item : v.get_array()) {
    NodeSelectorRequirement req;
    for (od::field f : item.get_object()) {
      std::string_view key = f.unescaped_key();
      if (key == "key") {
        req.key = String(f.value());
      } else if (key == "operator") {
        req.op = Operator(f.value());
      } else if (key == "values") {
        req.values = StringList(f.value());
      }
    }
    out.push_back(std::move(req));
  }
  return out;
}

LabelOperator LabelOp(std::string_view s) {
  if (s == "In") return LabelOperator::kIn;
  if (s == "NotIn") return LabelOperator::kNotIn;
  if (s == "Exists") return LabelOperator::kExists;
  if (s == "DoesNotExist") return LabelOperator::kDoesNotExist;
  throw DecodeError{
      absl::StrCat("unknown label selector operator \"", AbslView(s), "\"")};
}

}  // namespace

std::map<std::string, std::string> StringMap(od::value v) {
  std::map<std::string, std::string> out;
  if (IsNull(v)) return out;
  for (od::field f : v.get_object()) {
    std::string key(std::string_view(f.unescaped_key()));
    out.emplace(std::move(key), String(f.value()));
  }
  return out;
}

std::vector<std::string> StringList(od::value v) {
  std::vector<std::string> out;
  if (IsNull(v)) return out;
  for (od::value item : v.get_array()) out.push_back(String(item));
  return out;
}

int64_t TimeMs(od::value v) {
  if (IsNull(v)) return 0;
  std::string_view text = v;
  absl::StatusOr<int64_t> ms = ParseTimestampMs(AbslView(text));
  if (!ms.ok()) throw DecodeError{std::string(ms.status().message())};
  return *ms;
}

absl::StatusOr<int64_t> SaturatedQuantity(od::value v, bool milli) {
  std::string_view text = v;
  absl::string_view q = AbslView(text);
  absl::StatusOr<int64_t> parsed =
      milli ? ParseQuantityMilli(q) : ParseQuantityValue(q);
  if (absl::IsOutOfRange(parsed.status())) {
    return absl::StartsWith(q, "-") ? -kMaxQuantity : kMaxQuantity;
  }
  if (!parsed.ok()) return parsed.status();
  return std::clamp(*parsed, -kMaxQuantity, kMaxQuantity);
}

Resources ResourceList(od::value v, RequestNames* names) {
  Resources r;
  if (IsNull(v)) return r;
  for (od::field f : v.get_object()) {
    std::string_view name = f.unescaped_key();
    if (names != nullptr) {
      names->cpu |= name == kResourceCpu;
      names->memory |= name == kResourceMemory;
    }
    absl::StatusOr<int64_t> parsed =
        SaturatedQuantity(f.value(), name == kResourceCpu);
    if (!parsed.ok()) {
      throw DecodeError{absl::StrCat("resource ", AbslView(name), ": ",
                                     parsed.status().message())};
    }
    if (name == kResourceCpu) {
      r.milli_cpu = *parsed;
    } else if (name == kResourceMemory) {
      r.memory = *parsed;
    } else if (name == kResourceEphemeralStorage) {
      r.ephemeral_storage = *parsed;
    } else if (name == kResourcePods) {
      r.pods = *parsed;
    } else {
      r.SetScalar(std::string(name), *parsed);
    }
  }
  return r;
}

TaintEffect Effect(std::string_view s) {
  if (s == "NoSchedule") return TaintEffect::kNoSchedule;
  if (s == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (s == "NoExecute") return TaintEffect::kNoExecute;
  throw DecodeError{absl::StrCat("unknown taint effect \"", AbslView(s), "\"")};
}

NodeSelectorTerm Term(od::value v) {
  NodeSelectorTerm term;
  if (IsNull(v)) return term;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "matchExpressions") {
      term.match_expressions = Requirements(f.value());
    } else if (key == "matchFields") {
      term.match_fields = Requirements(f.value());
    }
  }
  return term;
}

std::vector<NodeSelectorTerm> NodeSelectorTerms(od::value v) {
  std::vector<NodeSelectorTerm> terms;
  for (od::field f : v.get_object()) {
    if (std::string_view(f.unescaped_key()) != "nodeSelectorTerms") continue;
    for (od::value item : f.value().get_array()) {
      terms.push_back(Term(item));
    }
  }
  return terms;
}

std::optional<LabelSelector> Selector(od::value v) {
  if (IsNull(v)) return std::nullopt;
  LabelSelector out;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    if (key == "matchLabels") {
      out.match_labels = StringMap(f.value());
    } else if (key == "matchExpressions") {
      od::value list = f.value();
      if (IsNull(list)) continue;
      for (od::value item : list.get_array()) {
        LabelRequirement r;
        for (od::field rf : item.get_object()) {
          std::string_view rkey = rf.unescaped_key();
          if (rkey == "key") {
            r.key = String(rf.value());
          } else if (rkey == "operator") {
            r.op = LabelOp(rf.value());
          } else if (rkey == "values") {
            r.values = StringList(rf.value());
          }
        }
        const bool needs_values =
            r.op == LabelOperator::kIn || r.op == LabelOperator::kNotIn;
        if (needs_values == r.values.empty()) {
          throw DecodeError{absl::StrCat(
              "label selector requirement on \"", r.key, "\": ",
              needs_values ? "In and NotIn need values"
                           : "Exists and DoesNotExist take no values")};
        }
        out.match_expressions.push_back(std::move(r));
      }
    }
  }
  return out;
}

std::optional<ControllerRef> Controller(od::value v) {
  if (IsNull(v)) return std::nullopt;
  for (od::value item : v.get_array()) {
    ControllerRef ref;
    bool controller = false;
    for (od::field f : item.get_object()) {
      std::string_view key = f.unescaped_key();
      od::value value = f.value();
      if (key == "apiVersion") {
        ref.api_version = String(value);
      } else if (key == "kind") {
        ref.kind = String(value);
      } else if (key == "name") {
        ref.name = String(value);
      } else if (key == "uid") {
        ref.uid = String(value);
      } else if (key == "controller") {
        controller = !IsNull(value) && bool(value);
      }
    }
    if (controller) return ref;
  }
  return std::nullopt;
}

absl::Status ErrorStatus(long http_status,  // NOLINT(runtime/int)
                         const std::string& reason, std::string message) {
  if (message.empty()) message = absl::StrCat("HTTP ", http_status);
  std::string text =
      reason.empty()
          ? absl::StrCat("HTTP ", http_status, ": ", message)
          : absl::StrCat("HTTP ", http_status, " ", reason, ": ", message);
  return absl::Status(CodeForApiserverStatus(http_status, reason), text);
}

od::parser& Parser() {
  thread_local od::parser parser;
  return parser;
}

od::parser& ItemParser() {
  thread_local od::parser parser;
  return parser;
}

void ReleaseLargeParsers() {
  constexpr size_t kKeep = size_t{1} << 20;
  if (Parser().capacity() > kKeep) Parser() = od::parser();
  if (ItemParser().capacity() > kKeep) ItemParser() = od::parser();
}

RejectedObject IdentityFrom(od::value v, const char* resource) {
  RejectedObject r;
  r.resource = resource;
  od::object object;
  if (v.get_object().get(object) != simdjson::SUCCESS) return r;
  for (od::field f : object) {
    if (std::string_view(f.unescaped_key()) != "metadata") continue;
    od::object metadata;
    if (f.value().get_object().get(metadata) != simdjson::SUCCESS) continue;
    for (od::field mf : metadata) {
      std::string_view key = mf.unescaped_key();
      std::string_view text;
      if (mf.value().get_string().get(text) != simdjson::SUCCESS) continue;
      if (key == "name") r.name = std::string(text);
      if (key == "namespace") r.namespace_ = std::string(text);
      if (key == "uid") r.uid = std::string(text);
      if (key == "resourceVersion") r.resource_version = std::string(text);
    }
  }
  return r;
}

WatchEventType EventType(std::string_view type) {
  if (type == "ADDED") return WatchEventType::kAdded;
  if (type == "MODIFIED") return WatchEventType::kModified;
  if (type == "DELETED") return WatchEventType::kDeleted;
  if (type == "BOOKMARK") return WatchEventType::kBookmark;
  if (type == "ERROR") return WatchEventType::kError;
  throw DecodeError{
      absl::StrCat("unknown event type \"", AbslView(type), "\"")};
}

}  // namespace decode_internal
}  // namespace ms::kube

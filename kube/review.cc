#include "kube/review.h"

#include <simdjson.h>

#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/json.h"

namespace ms::kube {
namespace {

namespace od = simdjson::ondemand;

std::string String(od::value v) { return std::string(std::string_view(v)); }

std::vector<std::string> StringList(od::value v) {
  std::vector<std::string> out;
  if (v.is_null()) return out;
  for (od::value item : v.get_array()) out.push_back(String(item));
  return out;
}

std::string QuotedList(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  quoted.reserve(items.size());
  for (const std::string& s : items) quoted.push_back(JsonQuote(s));
  return absl::StrCat("[", absl::StrJoin(quoted, ","), "]");
}

UserInfo UserFrom(od::value v) {
  UserInfo user;
  if (v.is_null()) return user;
  for (od::field f : v.get_object()) {
    std::string_view key = f.unescaped_key();
    od::value value = f.value();
    if (value.is_null()) continue;
    if (key == "username") {
      user.username = String(value);
    } else if (key == "uid") {
      user.uid = String(value);
    } else if (key == "groups") {
      user.groups = StringList(value);
    } else if (key == "extra") {
      for (od::field e : value.get_object()) {
        std::string name(std::string_view(e.unescaped_key()));
        user.extra[name] = StringList(e.value());
      }
    }
  }
  return user;
}

// Calls `on_status` with the object's `status`, if any, and turns a
// decoding failure into InvalidArgument naming `kind`.
template <typename T, typename Fn>
absl::StatusOr<T> DecodeStatus(absl::string_view json, const char* kind,
                               Fn on_status) {
  simdjson::padded_string padded(json.data(), json.size());
  od::parser parser;
  try {
    od::document doc = parser.iterate(padded);
    T out;
    for (od::field f : doc.get_object()) {
      if (std::string_view(f.unescaped_key()) != "status") continue;
      od::value status = f.value();
      if (status.is_null()) continue;
      for (od::field sf : status.get_object()) {
        std::string_view key = sf.unescaped_key();
        od::value value = sf.value();
        if (!value.is_null()) on_status(key, value, out);
      }
    }
    return out;
  } catch (const simdjson::simdjson_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("decoding ", kind, ": ", e.what()));
  }
}

}  // namespace

std::string TokenReviewBody(absl::string_view token) {
  return absl::StrCat(
      R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview",)",
      R"("spec":{"token":)", JsonQuote(token), "}}");
}

std::string SubjectAccessReviewBody(const NonResourceAccess& access) {
  std::vector<std::string> extra;
  for (const auto& [name, values] : access.user.extra) {
    extra.push_back(absl::StrCat(JsonQuote(name), ":", QuotedList(values)));
  }
  return absl::StrCat(
      R"({"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview",)",
      R"("spec":{"nonResourceAttributes":{"path":)", JsonQuote(access.path),
      R"(,"verb":)", JsonQuote(access.verb), R"(},"user":)",
      JsonQuote(access.user.username), R"(,"uid":)",
      JsonQuote(access.user.uid), R"(,"groups":)",
      QuotedList(access.user.groups), R"(,"extra":{)",
      absl::StrJoin(extra, ","), "}}}");
}

absl::StatusOr<TokenReview> DecodeTokenReview(absl::string_view json) {
  return DecodeStatus<TokenReview>(
      json, "TokenReview",
      [](std::string_view key, od::value value, TokenReview& out) {
        if (key == "authenticated") {
          out.authenticated = bool(value);
        } else if (key == "user") {
          out.user = UserFrom(value);
        } else if (key == "error") {
          out.error = String(value);
        }
      });
}

absl::StatusOr<AccessReview> DecodeAccessReview(absl::string_view json) {
  return DecodeStatus<AccessReview>(
      json, "SubjectAccessReview",
      [](std::string_view key, od::value value, AccessReview& out) {
        if (key == "allowed") {
          out.allowed = bool(value);
        } else if (key == "denied") {
          out.denied = bool(value);
        } else if (key == "reason") {
          out.reason = String(value);
        } else if (key == "evaluationError") {
          out.evaluation_error = String(value);
        }
      });
}

}  // namespace ms::kube

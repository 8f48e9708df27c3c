#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "config/config.h"
#include "config/loader.h"
#include "config/validation.h"

namespace ms {

absl::Status Loader::LoadBackend(const YNode& node, const std::string& path,
                                 BackendConfig* out) {
  RETURN_IF_ERROR(
      CheckMap(node, path,
               {"type", "url", "timeout", "tokenFile", "caFile", "certFile",
                "keyFile", "insecureSkipVerify", "maxResponseBytes", "headers",
                "proxyURL", "basicAuth", "sysdig"}));
  RETURN_IF_ERROR(
      GetEnum<BackendType>(node, path, "type",
                           {{"prometheus", BackendType::kPrometheus},
                            {"sysdig", BackendType::kSysdig},
                            {"metricsServer", BackendType::kMetricsServer}},
                           &out->type));
  if (out->type == BackendType::kMetricsServer) {
    // The list goes through the apiserver connection: its address and
    // credentials are the scheduler's own.
    for (const char* key :
         {"url", "tokenFile", "caFile", "certFile", "keyFile",
          "insecureSkipVerify", "headers", "proxyURL", "basicAuth", "sysdig"}) {
      if (YNode k = Find(node, key); k.IsDefined()) {
        return Error(k, Child(path, key),
                     "not used by type metricsServer, which reads through "
                     "the scheduler's own apiserver connection");
      }
    }
  }
  YNode url_node;
  RETURN_IF_ERROR(GetString(node, path, "url", &out->url, &url_node));
  if (url_node.IsDefined() && !out->url.empty() &&
      !(absl::StartsWith(out->url, "http://") ||
        absl::StartsWith(out->url, "https://"))) {
    return Error(url_node, Child(path, "url"),
                 absl::StrCat("must start with http:// or https://, got ",
                              Quote(out->url)));
  }
  if (absl::StrContains(UrlAuthority(out->url), '@')) {
    // Not quoted back: it holds a password.
    return Error(url_node, Child(path, "url"),
                 "must not hold credentials (user:password@): put the user "
                 "in backend.basicAuth.username and the password in the "
                 "file backend.basicAuth.passwordFile names");
  }
  RETURN_IF_ERROR(GetPositiveDuration(node, path, "timeout", &out->timeout));
  YNode token_node;
  RETURN_IF_ERROR(
      GetString(node, path, "tokenFile", &out->token_file, &token_node));
  RETURN_IF_ERROR(CheckFile(token_node, Child(path, "tokenFile"),
                            out->token_file, /*secret=*/true));
  YNode ca_node;
  RETURN_IF_ERROR(GetString(node, path, "caFile", &out->ca_file, &ca_node));
  RETURN_IF_ERROR(CheckFile(ca_node, Child(path, "caFile"), out->ca_file,
                            /*secret=*/false));
  YNode cert_node, key_node;
  RETURN_IF_ERROR(
      GetString(node, path, "certFile", &out->cert_file, &cert_node));
  RETURN_IF_ERROR(CheckFile(cert_node, Child(path, "certFile"), out->cert_file,
                            /*secret=*/true));
  RETURN_IF_ERROR(GetString(node, path, "keyFile", &out->key_file, &key_node));
  RETURN_IF_ERROR(CheckFile(key_node, Child(path, "keyFile"), out->key_file,
                            /*secret=*/true));
  if (out->cert_file.empty() != out->key_file.empty()) {
    return out->cert_file.empty() ? Error(key_node, Child(path, "certFile"),
                                          "required when keyFile is set")
                                  : Error(cert_node, Child(path, "keyFile"),
                                          "required when certFile is set");
  }
  RETURN_IF_ERROR(
      GetBool(node, path, "insecureSkipVerify", &out->insecure_skip_verify));
  RETURN_IF_ERROR(
      GetByteSize(node, path, "maxResponseBytes", &out->max_response_bytes));
  if (YNode n = Find(node, "headers"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadHeaders(n, Child(path, "headers"), &out->headers));
  }
  YNode proxy_node;
  RETURN_IF_ERROR(
      GetString(node, path, "proxyURL", &out->proxy_url, &proxy_node));
  if (!out->proxy_url.empty() &&
      !(absl::StartsWith(out->proxy_url, "http://") ||
        absl::StartsWith(out->proxy_url, "https://") ||
        absl::StartsWith(out->proxy_url, "socks5://"))) {
    return Error(proxy_node, Child(path, "proxyURL"),
                 absl::StrCat("must start with http://, https:// or "
                              "socks5://, got ",
                              Quote(out->proxy_url)));
  }

  if (YNode n = Find(node, "basicAuth"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadBasicAuth(n, Child(path, "basicAuth"), out));
  }
  if (YNode n = Find(node, "sysdig"); n.IsDefined()) {
    RETURN_IF_ERROR(LoadSysdig(n, Child(path, "sysdig"), out));
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadBasicAuth(const YNode& node, const std::string& p,
                                   BackendConfig* out) {
  if (out->type != BackendType::kPrometheus) {
    return Error(node, p, "only valid with type prometheus");
  }
  RETURN_IF_ERROR(CheckMap(node, p, {"username", "passwordFile"}));
  RETURN_IF_ERROR(GetString(node, p, "username", &out->basic_auth.username));
  YNode password_node;
  RETURN_IF_ERROR(GetString(node, p, "passwordFile",
                            &out->basic_auth.password_file, &password_node));
  RETURN_IF_ERROR(CheckFile(password_node, Child(p, "passwordFile"),
                            out->basic_auth.password_file,
                            /*secret=*/true));
  if (!out->basic_auth.username.empty() &&
      out->basic_auth.password_file.empty()) {
    return Error(node, Child(p, "passwordFile"),
                 "required when username is set");
  }
  if (out->basic_auth.username.empty() &&
      !out->basic_auth.password_file.empty()) {
    return Error(node, Child(p, "username"),
                 "required when passwordFile is set");
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadSysdig(const YNode& node, const std::string& p,
                                BackendConfig* out) {
  if (out->type != BackendType::kSysdig) {
    return Error(node, p, "only valid with type sysdig");
  }
  RETURN_IF_ERROR(CheckMap(node, p, {"last", "sampling", "dataSourceType"}));
  for (const auto& [key, field] :
       {std::pair<const char*, absl::Duration*>{"last", &out->sysdig.last},
        {"sampling", &out->sysdig.sampling}}) {
    YNode v;
    RETURN_IF_ERROR(GetPositiveDuration(node, p, key, field, &v));
    if (v.IsDefined() &&
        *field != absl::Seconds(absl::ToInt64Seconds(*field))) {
      return Error(v, Child(p, key), "must be a whole number of seconds");
    }
  }
  YNode v;
  RETURN_IF_ERROR(
      GetString(node, p, "dataSourceType", &out->sysdig.data_source_type, &v));
  if (v.IsDefined() && out->sysdig.data_source_type.empty()) {
    return Error(v, Child(p, "dataSourceType"), "must not be empty");
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadHeaders(const YNode& node, const std::string& path,
                                 std::vector<HeaderConfig>* out) {
  if (!node.IsMap()) return Error(node, path, "must be a mapping");
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YNode key = it->first;
    const YNode value = it->second;
    if (!key.IsScalar()) return Error(key, path, "keys must be strings");
    HeaderConfig header{.name = key.Scalar()};
    const std::string p = Child(path, header.name);
    if (!IsHeaderName(header.name)) {
      return Error(key, p, "must be an HTTP header name");
    }
    for (const char* reserved :
         {"Authorization", "Content-Type", "Content-Length", "Host"}) {
      if (absl::EqualsIgnoreCase(header.name, reserved)) {
        return Error(key, p,
                     absl::StrCat(reserved, " is set by the scheduler",
                                  std::string_view(reserved) == "Authorization"
                                      ? " (use tokenFile or basicAuth)"
                                      : ""));
      }
    }
    for (const HeaderConfig& h : *out) {
      if (absl::EqualsIgnoreCase(h.name, header.name)) {
        return Error(key, p, "duplicate header (names ignore case)");
      }
    }
    if (value.IsMap()) {
      RETURN_IF_ERROR(CheckMap(value, p, {"valueFile"}));
      YNode file;
      RETURN_IF_ERROR(
          GetString(value, p, "valueFile", &header.value_file, &file));
      if (header.value_file.empty()) {
        return Error(file.IsDefined() ? file : value, Child(p, "valueFile"),
                     "required");
      }
      RETURN_IF_ERROR(CheckFile(file, Child(p, "valueFile"), header.value_file,
                                /*secret=*/true));
    } else {
      RETURN_IF_ERROR(Scalar(value, p, &header.value));
      if (header.value.empty()) {
        return Error(value, p, "must not be empty");
      }
    }
    if (absl::StrContains(header.value, '\r') ||
        absl::StrContains(header.value, '\n')) {
      return Error(value, p, "must not hold a line break");
    }
    out->push_back(std::move(header));
  }
  return absl::OkStatus();
}

absl::Status Loader::LoadCache(const YNode& node, const std::string& path,
                               CacheConfig* out) {
  RETURN_IF_ERROR(
      CheckMap(node, path, {"ttl", "maxStaleness", "refreshTimeout"}));
  RETURN_IF_ERROR(GetPositiveDuration(node, path, "ttl", &out->ttl));
  YNode v;
  RETURN_IF_ERROR(
      GetPositiveDuration(node, path, "maxStaleness", &out->max_staleness, &v));
  if (out->max_staleness < out->ttl) {
    return Error(v.IsDefined() ? v : node, Child(path, "maxStaleness"),
                 absl::StrCat("must be >= cache.ttl (",
                              absl::FormatDuration(out->ttl), ")"));
  }
  RETURN_IF_ERROR(
      GetPositiveDuration(node, path, "refreshTimeout", &out->refresh_timeout));
  return absl::OkStatus();
}

}  // namespace ms

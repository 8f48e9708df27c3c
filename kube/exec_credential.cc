#include "kube/exec_credential.h"

#include <simdjson.h>

#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/json.h"
#include "common/subprocess.h"
#include "glog/logging.h"

namespace ms::kube {
namespace {

constexpr char kExecInfoEnv[] = "KUBERNETES_EXEC_INFO";

absl::Status Invalid(absl::string_view why) {
  return absl::InvalidArgumentError(why);
}

// A string member of `object`: "" when absent or null; false when it is
// there but not a string.
bool OptionalString(simdjson::dom::object object, std::string_view key,
                    std::string* out) {
  simdjson::dom::element value;
  if (object.at_key(key).get(value) != simdjson::SUCCESS || value.is_null()) {
    out->clear();
    return true;
  }
  std::string_view s;
  if (value.get_string().get(s) != simdjson::SUCCESS) return false;
  out->assign(s.data(), s.size());
  return true;
}

// `environ` with `overrides` set over it (a name set twice: the last wins,
// as Go's os/exec does for kubectl).
std::vector<std::string> PluginEnvironment(
    const std::vector<std::pair<std::string, std::string>>& overrides,
    const std::string& exec_info) {
  std::vector<std::pair<std::string, std::string>> all = overrides;
  all.emplace_back(kExecInfoEnv, exec_info);
  std::vector<std::string> env;
  for (std::string& entry : Environ()) {
    absl::string_view name = entry;
    name = name.substr(0, name.find('='));
    bool overridden = false;
    for (const auto& [n, v] : all) overridden = overridden || n == name;
    if (!overridden) env.push_back(std::move(entry));
  }
  for (const auto& [name, value] : all) {
    env.push_back(absl::StrCat(name, "=", value));
  }
  return env;
}

// The end of a failed run's stderr, for its error message.
std::string StderrTail(const ProcessResult& r) {
  absl::string_view text = absl::StripAsciiWhitespace(r.stderr_text);
  if (text.empty()) return " (nothing on stderr)";
  return absl::StrCat(": ", r.stderr_truncated ? "..." : "", text);
}

}  // namespace

absl::StatusOr<ExecCredential> DecodeExecCredential(
    absl::string_view json, absl::string_view api_version) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (simdjson::error_code e = parser.parse(json.data(), json.size()).get(doc);
      e != simdjson::SUCCESS) {
    return Invalid(absl::StrCat("stdout is not JSON (",
                                simdjson::error_message(e), ")"));
  }
  simdjson::dom::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) {
    return Invalid("stdout is not a JSON object");
  }
  std::string got_version, kind;
  if (!OptionalString(root, "apiVersion", &got_version) ||
      !OptionalString(root, "kind", &kind)) {
    return Invalid("apiVersion and kind must be strings");
  }
  if (got_version != api_version) {
    return Invalid(absl::StrCat("it printed apiVersion \"", got_version,
                                "\"; the kubeconfig expects \"", api_version,
                                "\""));
  }
  if (kind != "ExecCredential") {
    return Invalid(
        absl::StrCat("it printed kind \"", kind, "\", not ExecCredential"));
  }
  simdjson::dom::object status;
  if (root.at_key("status").get_object().get(status) != simdjson::SUCCESS) {
    return Invalid("its ExecCredential has no status");
  }
  ExecCredential credential;
  std::string expiry;
  if (!OptionalString(status, "token", &credential.token) ||
      !OptionalString(status, "clientCertificateData",
                      &credential.client_cert_pem) ||
      !OptionalString(status, "clientKeyData", &credential.client_key_pem) ||
      !OptionalString(status, "expirationTimestamp", &expiry)) {
    return Invalid(
        "status.token, clientCertificateData, clientKeyData and "
        "expirationTimestamp must be strings");
  }
  if (credential.client_cert_pem.empty() !=
      credential.client_key_pem.empty()) {
    return Invalid(
        "status has one of clientCertificateData and clientKeyData "
        "without the other");
  }
  if (credential.token.empty() && credential.client_cert_pem.empty()) {
    return Invalid(
        "status has neither a token nor clientCertificateData and "
        "clientKeyData");
  }
  if (!expiry.empty()) {
    std::string error;
    if (!absl::ParseTime(absl::RFC3339_full, expiry, &credential.expiry,
                         &error)) {
      return Invalid(absl::StrCat("status.expirationTimestamp \"", expiry,
                                  "\" is not an RFC 3339 time"));
    }
  }
  return credential;
}

std::string ExecInfo(const ExecConfig& config) {
  std::string spec;
  if (config.provide_cluster_info) {
    absl::StrAppend(&spec, "\"cluster\":{\"server\":",
                    JsonQuote(config.cluster_server));
    if (config.cluster_insecure_skip_verify) {
      absl::StrAppend(&spec, ",\"insecure-skip-tls-verify\":true");
    }
    if (!config.cluster_ca_pem.empty()) {
      absl::StrAppend(&spec, ",\"certificate-authority-data\":",
                      JsonQuote(absl::Base64Escape(config.cluster_ca_pem)));
    }
    absl::StrAppend(&spec, "},");
  }
  return absl::StrCat("{\"kind\":\"ExecCredential\",\"apiVersion\":",
                      JsonQuote(config.api_version), ",\"spec\":{", spec,
                      "\"interactive\":false}}");
}

ExecCredentialPlugin::ExecCredentialPlugin(ExecConfig config,
                                           const Clock& clock)
    : config_(std::move(config)), clock_(clock) {}

absl::StatusOr<std::shared_ptr<const ExecCredential>>
ExecCredentialPlugin::Get() {
  absl::MutexLock run(&run_mu_);
  if (std::shared_ptr<const ExecCredential> c = Current()) return c;
  {
    absl::MutexLock lock(&mu_);
    ++runs_;
  }
  absl::StatusOr<ExecCredential> fresh = Run();
  if (!fresh.ok()) return fresh.status();
  if (fresh->expiry == absl::InfiniteFuture()) {
    LOG(INFO) << "exec plugin " << config_.command
              << ": new credential, without expiry";
  } else {
    LOG(INFO) << "exec plugin " << config_.command
              << ": new credential, expires "
              << absl::FormatTime(absl::RFC3339_sec, fresh->expiry,
                                  absl::UTCTimeZone());
  }
  auto credential = std::make_shared<const ExecCredential>(*std::move(fresh));
  absl::MutexLock lock(&mu_);
  cached_ = credential;
  return credential;
}

std::shared_ptr<const ExecCredential> ExecCredentialPlugin::Current() const {
  absl::MutexLock lock(&mu_);
  if (cached_ != nullptr && clock_.Now() < cached_->expiry) return cached_;
  return nullptr;
}

void ExecCredentialPlugin::Reject(
    const std::shared_ptr<const ExecCredential>& rejected) {
  absl::MutexLock lock(&mu_);
  if (cached_ == rejected) cached_ = nullptr;
}

int ExecCredentialPlugin::runs() const {
  absl::MutexLock lock(&mu_);
  return runs_;
}

absl::StatusOr<ExecCredential> ExecCredentialPlugin::Run() const {
  const std::string name = absl::StrCat("exec plugin ", config_.command);
  std::vector<std::string> argv = {config_.command};
  argv.insert(argv.end(), config_.args.begin(), config_.args.end());
  absl::StatusOr<ProcessResult> result =
      RunProcess(argv, PluginEnvironment(config_.env, ExecInfo(config_)),
                 {.timeout = config_.timeout});
  if (!result.ok()) {
    const absl::Status& s = result.status();
    switch (s.code()) {
      case absl::StatusCode::kNotFound:
      case absl::StatusCode::kPermissionDenied: {
        std::string msg =
            s.code() == absl::StatusCode::kNotFound
                ? absl::StrCat(name, ": not found",
                               absl::StrContains(config_.command, '/')
                                   ? ""
                                   : " on $PATH")
                : absl::StrCat(name, ": cannot be executed (",
                               absl::StripPrefix(s.message(),
                                                 config_.command + ": "),
                               ")");
        if (!config_.install_hint.empty()) {
          absl::StrAppend(&msg, ": ",
                          absl::StripAsciiWhitespace(config_.install_hint));
        }
        return absl::FailedPreconditionError(msg);
      }
      case absl::StatusCode::kDeadlineExceeded:
        return absl::DeadlineExceededError(
            absl::StrCat(name, ": did not finish within ",
                         absl::FormatDuration(config_.timeout)));
      case absl::StatusCode::kResourceExhausted:
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": ", s.message()));
      default:
        return absl::Status(s.code(), absl::StrCat(name, ": ", s.message()));
    }
  }
  if (!result->Exited(0)) {
    return absl::UnavailableError(absl::StrCat(
        name, ": failed with ", result->Describe(), StderrTail(*result)));
  }
  absl::StatusOr<ExecCredential> credential =
      DecodeExecCredential(result->stdout_text, config_.api_version);
  if (!credential.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", credential.status().message()));
  }
  return credential;
}

}  // namespace ms::kube

#include "kube/cluster_config.h"

#include <cstdlib>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "common/yaml.h"
#include "glog/logging.h"
#include "yaml-cpp/yaml.h"

namespace ms::kube {
namespace {

constexpr char kServiceAccountDir[] =
    "/var/run/secrets/kubernetes.io/serviceaccount";

// Finds the entry called `name` in a kubeconfig list (clusters, users,
// contexts) and returns its `inner` map.
absl::StatusOr<YAML::Node> Named(const YAML::Node& root, const char* list,
                                 const char* inner, const std::string& name,
                                 const std::string& path) {
  const YAML::Node items = root[list];
  if (items && items.IsSequence()) {
    for (const YAML::Node& item : items) {
      if (item["name"] && item["name"].as<std::string>() == name) {
        return item[inner] ? item[inner] : YAML::Node(YAML::NodeType::Map);
      }
    }
  }
  return absl::NotFoundError(
      absl::StrCat(path, ": ", list, " has no entry named \"", name, "\""));
}

std::string Str(const YAML::Node& map, const char* key) {
  const YAML::Node v = map[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

// A kubeconfig's relative paths are relative to the kubeconfig itself.
std::string Resolve(const std::string& kubeconfig, const std::string& file) {
  if (file.empty() || file[0] == '/') return file;
  size_t slash = kubeconfig.rfind('/');
  if (slash == std::string::npos) return file;
  return kubeconfig.substr(0, slash + 1) + file;
}

absl::StatusOr<std::string> Base64Field(const YAML::Node& map, const char* key,
                                        const std::string& path) {
  std::string encoded = Str(map, key);
  if (encoded.empty()) return std::string();
  std::string decoded;
  if (!absl::Base64Unescape(encoded, &decoded)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", key, " is not valid base64"));
  }
  return decoded;
}

absl::StatusOr<ClusterConfig> FromKubeconfig(const YAML::Node& root,
                                             const std::string& path,
                                             std::string context_name) {
  if (context_name.empty()) context_name = Str(root, "current-context");
  if (context_name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no current-context and none given"));
  }
  ASSIGN_OR_RETURN(YAML::Node context,
                   Named(root, "contexts", "context", context_name, path));
  ASSIGN_OR_RETURN(YAML::Node cluster,
                   Named(root, "clusters", "cluster", Str(context, "cluster"),
                         path));
  ASSIGN_OR_RETURN(YAML::Node user,
                   Named(root, "users", "user", Str(context, "user"), path));

  ClusterConfig config;
  config.server = std::string(absl::StripSuffix(Str(cluster, "server"), "/"));
  if (config.server.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cluster \"", Str(context, "cluster"),
                     "\" has no server"));
  }
  ASSIGN_OR_RETURN(config.tls.ca_pem,
                   Base64Field(cluster, "certificate-authority-data", path));
  config.tls.ca_file = Resolve(path, Str(cluster, "certificate-authority"));
  config.tls.insecure_skip_verify =
      Str(cluster, "insecure-skip-tls-verify") == "true";

  ASSIGN_OR_RETURN(config.tls.client_cert_pem,
                   Base64Field(user, "client-certificate-data", path));
  config.tls.client_cert_file =
      Resolve(path, Str(user, "client-certificate"));
  ASSIGN_OR_RETURN(config.tls.client_key_pem,
                   Base64Field(user, "client-key-data", path));
  config.tls.client_key_file = Resolve(path, Str(user, "client-key"));
  config.token = Str(user, "token");
  std::string token_file = Resolve(path, Str(user, "tokenFile"));
  if (!token_file.empty()) {
    ASSIGN_OR_RETURN(std::unique_ptr<TokenFile> file,
                     TokenFile::Open(token_file));
    config.token_file = std::move(file);
  }
  return config;
}

// Where a URL's requests go: scheme, host and port.
struct Origin {
  std::string scheme;  // "http" or "https"
  std::string host;    // lowercase; an IPv6 address without brackets
  int port = 0;        // the scheme's default when the URL has none

  bool operator==(const Origin&) const = default;
};

absl::StatusOr<Origin> OriginOf(absl::string_view url) {
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("server \"", url, "\": ", why));
  };
  Origin origin;
  size_t sep = url.find("://");
  if (sep == absl::string_view::npos) return invalid("expected http:// or https://");
  origin.scheme = absl::AsciiStrToLower(url.substr(0, sep));
  if (origin.scheme == "https") {
    origin.port = 443;
  } else if (origin.scheme == "http") {
    origin.port = 80;
  } else {
    return invalid("expected http:// or https://");
  }
  absl::string_view authority = url.substr(sep + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (absl::StrContains(authority, "@")) {
    return invalid("credentials in the URL are not supported");
  }
  absl::string_view host = authority;
  std::optional<absl::string_view> port;
  if (absl::StartsWith(authority, "[")) {
    size_t close = authority.find(']');
    if (close == absl::string_view::npos) return invalid("unclosed [");
    host = authority.substr(1, close - 1);
    absl::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return invalid("junk after ]");
      port = rest.substr(1);
    }
  } else if (size_t colon = authority.rfind(':');
             colon != absl::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return invalid("no host");
  origin.host = absl::AsciiStrToLower(host);
  if (port.has_value() &&
      (port->empty() ||
       port->find_first_not_of("0123456789") != absl::string_view::npos ||
       !absl::SimpleAtoi(*port, &origin.port) || origin.port < 1 ||
       origin.port > 65535)) {
    return invalid("bad port");
  }
  return origin;
}

}  // namespace

std::string ClusterConfig::BearerToken() const {
  return token_file ? token_file->Get() : token;
}

absl::StatusOr<ClusterConfig> LoadKubeconfig(const std::string& path,
                                             const std::string& context) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  try {
    YAML::Node root = LoadYaml(text);
    if (!root.IsMap()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": not a kubeconfig (expected a mapping)"));
    }
    return FromKubeconfig(root, path, context);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  }
}

absl::StatusOr<ClusterConfig> InClusterConfig(const std::string& root) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == '\0' || *port == '\0') {
    return absl::FailedPreconditionError(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and "
        "KUBERNETES_SERVICE_PORT are not set");
  }
  std::string dir = root + kServiceAccountDir;
  ClusterConfig config;
  // An IPv6 service address needs brackets in a URL.
  std::string h = absl::StrContains(host, ":") ? absl::StrCat("[", host, "]")
                                               : std::string(host);
  config.server = absl::StrCat("https://", h, ":", port);
  config.tls.ca_file = dir + "/ca.crt";
  ASSIGN_OR_RETURN(std::unique_ptr<TokenFile> file,
                   TokenFile::Open(dir + "/token"));
  config.token_file = std::move(file);
  return config;
}

absl::StatusOr<ClusterConfig> PlainUrl(const std::string& url) {
  if (!absl::StartsWith(url, "http://") && !absl::StartsWith(url, "https://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--master \"", url, "\": expected http:// or https://"));
  }
  ClusterConfig config;
  config.server = std::string(absl::StripSuffix(url, "/"));
  return config;
}

absl::StatusOr<ClusterConfig> OverrideServer(ClusterConfig config,
                                             absl::string_view url,
                                             bool keep_credentials) {
  ASSIGN_OR_RETURN(Origin to, OriginOf(url));
  absl::StatusOr<Origin> from = OriginOf(config.server);
  if (keep_credentials || (from.ok() && *from == to)) {
    config.server = std::string(absl::StripSuffix(url, "/"));
    return config;
  }
  LOG(WARNING) << "server " << url << " is not the kubeconfig's server "
               << config.server
               << ": connecting without the kubeconfig's credentials and CA";
  return PlainUrl(std::string(url));
}

}  // namespace ms::kube

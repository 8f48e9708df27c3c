#include "kube/cluster_config.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "common/yaml.h"
#include "glog/logging.h"
#include "yaml-cpp/yaml.h"

namespace ms::kube {
namespace {

constexpr char kServiceAccountDir[] =
    "/var/run/secrets/kubernetes.io/serviceaccount";

// An entry of a kubeconfig list (its inner map: the `cluster`, `user` or
// `context`) and the file that defined it.
struct Entry {
  YAML::Node value;
  std::string file;
};

// One or more kubeconfig files merged as kubectl merges them.
struct Merged {
  std::string where;  // for messages: the file, or the files joined by ':'
  std::string current_context;
  std::map<std::string, Entry> clusters, users, contexts;
};

std::string Str(const YAML::Node& map, const char* key) {
  const YAML::Node v = map[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

// Adds a file's entries to `merged`; the names it already has win.
void MergeFile(const YAML::Node& root, const std::string& file,
               Merged& merged) {
  if (merged.current_context.empty()) {
    merged.current_context = Str(root, "current-context");
  }
  struct List {
    const char* list;
    const char* inner;
    std::map<std::string, Entry>* into;
  };
  for (const List& l : {List{"clusters", "cluster", &merged.clusters},
                        List{"users", "user", &merged.users},
                        List{"contexts", "context", &merged.contexts}}) {
    const YAML::Node items = root[l.list];
    if (!items || !items.IsSequence()) continue;
    for (const YAML::Node& item : items) {
      if (!item.IsMap()) continue;
      std::string name = Str(item, "name");
      if (name.empty()) continue;
      YAML::Node inner =
          item[l.inner] ? item[l.inner] : YAML::Node(YAML::NodeType::Map);
      l.into->emplace(name, Entry{inner, file});
    }
  }
}

// The entry called `name` in `entries`, merged.`list`.
absl::StatusOr<Entry> Named(const Merged& merged, const char* list,
                            const std::map<std::string, Entry>& entries,
                            const std::string& name) {
  auto it = entries.find(name);
  if (it != entries.end()) return it->second;
  return absl::NotFoundError(absl::StrCat(
      merged.where, ": ", list, " has no entry named \"", name, "\""));
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

// A user's `exec` section (client-go's ExecConfig), checked as kubectl
// checks it. `cluster` is the config built so far, for provideClusterInfo.
absl::StatusOr<ExecConfig> ExecFromKubeconfig(const YAML::Node& exec,
                                              const Entry& user,
                                              const std::string& user_name,
                                              const ClusterConfig& cluster) {
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(user.file, ": user \"", user_name, "\": exec.", why));
  };
  if (!exec.IsMap()) {
    return absl::InvalidArgumentError(absl::StrCat(
        user.file, ": user \"", user_name, "\": exec must be a mapping"));
  }
  ExecConfig config;
  config.api_version = Str(exec, "apiVersion");
  const bool v1 = config.api_version == kExecApiV1;
  if (config.api_version.empty()) return invalid("apiVersion is missing");
  if (!v1 && config.api_version != kExecApiV1Beta1) {
    return invalid(absl::StrCat("apiVersion \"", config.api_version,
                                "\" is not ", kExecApiV1, " or ",
                                kExecApiV1Beta1));
  }
  std::string command = Str(exec, "command");
  if (command.empty()) return invalid("command is missing");
  // A bare name is looked up in $PATH; a path is the kubeconfig's.
  config.command = absl::StrContains(command, '/')
                       ? Resolve(user.file, command)
                       : command;
  if (const YAML::Node args = exec["args"]; args && !args.IsNull()) {
    if (!args.IsSequence()) return invalid("args must be a list");
    for (const YAML::Node& arg : args) {
      if (!arg.IsScalar()) return invalid("args must be strings");
      config.args.push_back(arg.as<std::string>());
    }
  }
  if (const YAML::Node env = exec["env"]; env && !env.IsNull()) {
    if (!env.IsSequence()) return invalid("env must be a list");
    for (size_t i = 0; i < env.size(); ++i) {
      std::string name = env[i].IsMap() ? Str(env[i], "name") : "";
      if (name.empty() || absl::StrContains(name, '=')) {
        return invalid(absl::StrCat("env[", i, "].name is missing or has '='"));
      }
      config.env.emplace_back(name, Str(env[i], "value"));
    }
  }
  config.install_hint = Str(exec, "installHint");
  // kubectl: v1 must say whether the plugin may use the terminal; v1beta1
  // defaults to IfAvailable. No terminal is ever available here.
  std::string mode = Str(exec, "interactiveMode");
  if (mode.empty() && v1) {
    return invalid(absl::StrCat("interactiveMode is missing (", kExecApiV1,
                                " needs Never or IfAvailable)"));
  }
  if (mode == "Always") {
    return invalid(
        "interactiveMode Always needs a terminal, and the plugin never has "
        "one here; use Never or IfAvailable");
  }
  if (!mode.empty() && mode != "Never" && mode != "IfAvailable") {
    return invalid(absl::StrCat("interactiveMode \"", mode,
                                "\" is not Never, IfAvailable or Always"));
  }
  config.provide_cluster_info = Str(exec, "provideClusterInfo") == "true";
  if (config.provide_cluster_info) {
    config.cluster_server = cluster.server;
    config.cluster_insecure_skip_verify = cluster.tls.insecure_skip_verify;
    config.cluster_ca_pem = cluster.tls.ca_pem;
    if (config.cluster_ca_pem.empty() && !cluster.tls.ca_file.empty()) {
      ASSIGN_OR_RETURN(config.cluster_ca_pem, ReadFile(cluster.tls.ca_file));
    }
  }
  return config;
}

absl::StatusOr<ClusterConfig> FromKubeconfig(const Merged& merged,
                                             std::string context_name) {
  if (context_name.empty()) context_name = merged.current_context;
  if (context_name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(merged.where, ": no current-context and none given"));
  }
  ASSIGN_OR_RETURN(
      Entry context,
      Named(merged, "contexts", merged.contexts, context_name));
  const std::string cluster_name = Str(context.value, "cluster");
  const std::string user_name = Str(context.value, "user");
  ASSIGN_OR_RETURN(Entry cluster,
                   Named(merged, "clusters", merged.clusters, cluster_name));
  ASSIGN_OR_RETURN(Entry user,
                   Named(merged, "users", merged.users, user_name));

  ClusterConfig config;
  config.server =
      std::string(absl::StripSuffix(Str(cluster.value, "server"), "/"));
  if (config.server.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        cluster.file, ": cluster \"", cluster_name, "\" has no server"));
  }
  ASSIGN_OR_RETURN(config.tls.ca_pem,
                   Base64Field(cluster.value, "certificate-authority-data",
                               cluster.file));
  config.tls.ca_file =
      Resolve(cluster.file, Str(cluster.value, "certificate-authority"));
  config.tls.insecure_skip_verify =
      Str(cluster.value, "insecure-skip-tls-verify") == "true";

  ASSIGN_OR_RETURN(
      config.tls.client_cert_pem,
      Base64Field(user.value, "client-certificate-data", user.file));
  config.tls.client_cert_file =
      Resolve(user.file, Str(user.value, "client-certificate"));
  ASSIGN_OR_RETURN(config.tls.client_key_pem,
                   Base64Field(user.value, "client-key-data", user.file));
  config.tls.client_key_file =
      Resolve(user.file, Str(user.value, "client-key"));
  config.token = Str(user.value, "token");
  std::string token_file = Resolve(user.file, Str(user.value, "tokenFile"));
  if (!token_file.empty()) {
    ASSIGN_OR_RETURN(std::unique_ptr<TokenFile> file,
                     TokenFile::Open(token_file));
    config.token_file = std::move(file);
  }
  if (const YAML::Node exec = user.value["exec"]; exec && !exec.IsNull()) {
    ASSIGN_OR_RETURN(ExecConfig exec_config,
                     ExecFromKubeconfig(exec, user, user_name, config));
    if (config.token.empty() && config.token_file == nullptr) {
      config.exec =
          std::make_shared<ExecCredentialPlugin>(std::move(exec_config));
    } else {
      LOG(WARNING) << user.file << ": user \"" << user_name
                   << "\" has a token and an exec plugin: sending the "
                      "token, as kubectl does; the plugin is not run";
    }
  }
  return config;
}

// Parses one kubeconfig file into `merged`. `*exists` (if given) tells
// whether the file was there, whatever the result.
absl::Status ParseInto(const std::string& path, Merged& merged,
                       bool* exists = nullptr) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (exists != nullptr) {
    *exists = text.ok() || text.status().code() != absl::StatusCode::kNotFound;
  }
  if (!text.ok()) return text.status();
  try {
    YAML::Node root = LoadYaml(*text);
    if (root.IsNull()) return absl::OkStatus();  // an empty file: no entries
    if (!root.IsMap()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": not a kubeconfig (expected a mapping)"));
    }
    MergeFile(root, path, merged);
    return absl::OkStatus();
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  }
}

absl::StatusOr<ClusterConfig> Build(const Merged& merged,
                                    const std::string& context) {
  try {
    return FromKubeconfig(merged, context);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(merged.where, ": ", e.msg));
  }
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
  Merged merged;
  merged.where = path;
  RETURN_IF_ERROR(ParseInto(path, merged));
  return Build(merged, context);
}

absl::StatusOr<ClusterConfig> LoadKubeconfigFiles(
    const std::vector<std::string>& paths, const std::string& context) {
  Merged merged;
  merged.where = absl::StrJoin(paths, ":");
  bool any = false;
  for (const std::string& path : paths) {
    bool exists = false;
    absl::Status parsed = ParseInto(path, merged, &exists);
    if (!exists) continue;  // kubectl skips missing files
    RETURN_IF_ERROR(parsed);
    any = true;
  }
  if (!any) {
    return absl::NotFoundError(
        absl::StrCat(merged.where, ": none of these kubeconfigs exists"));
  }
  return Build(merged, context);
}

std::vector<std::string> SplitKubeconfigList(absl::string_view list) {
  std::vector<std::string> paths;
  for (absl::string_view item : absl::StrSplit(list, ':', absl::SkipEmpty())) {
    if (std::find(paths.begin(), paths.end(), item) == paths.end()) {
      paths.emplace_back(item);
    }
  }
  return paths;
}

absl::StatusOr<ClusterConfig> ResolveClusterConfig(
    const ConfigSources& sources) {
  absl::StatusOr<ClusterConfig> config = absl::UnknownError("unset");
  bool from_kubeconfig = false;
  std::string ignored_env;  // $KUBECONFIG, when none of its files exists
  if (!sources.kubeconfig.empty()) {
    config = LoadKubeconfig(sources.kubeconfig, sources.context);
    from_kubeconfig = true;
  } else if (std::vector<std::string> files =
                 SplitKubeconfigList(sources.kubeconfig_env);
             !files.empty()) {
    bool any = std::any_of(files.begin(), files.end(), [](const auto& f) {
      return access(f.c_str(), F_OK) == 0;
    });
    if (any) {
      config = LoadKubeconfigFiles(files, sources.context);
      from_kubeconfig = true;
    } else {
      ignored_env = absl::StrJoin(files, ":");
      LOG(WARNING) << "$KUBECONFIG names no file that exists (" << ignored_env
                   << "): ignored";
    }
  }
  if (from_kubeconfig) {
    if (config.ok() && !sources.master.empty()) {
      config = OverrideServer(*std::move(config), sources.master,
                              sources.master_keeps_credentials);
    }
    return config;
  }
  std::string note =
      ignored_env.empty()
          ? ""
          : absl::StrCat(" ($KUBECONFIG names no file that exists: ",
                         ignored_env, ")");
  if (!sources.context.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--context ", sources.context,
                     ": no kubeconfig to take it from; give --kubeconfig or "
                     "$KUBECONFIG",
                     note));
  }
  if (!sources.master.empty()) return PlainUrl(sources.master);
  config = InClusterConfig(sources.in_cluster_root);
  if (!config.ok() && !note.empty()) {
    return absl::Status(config.status().code(),
                        absl::StrCat(config.status().message(), note));
  }
  return config;
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

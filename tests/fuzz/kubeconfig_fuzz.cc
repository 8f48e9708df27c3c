// Fuzzes the kubeconfig loader (kube/cluster_config.h). LoadKubeconfig
// reads a file, so each input is written to one first (under $TMPDIR).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kube/cluster_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
           "/kubeconfig_fuzz_" + std::to_string(getpid()) + ".yaml";
  }();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  absl::StatusOr<ms::kube::ClusterConfig> config =
      ms::kube::LoadKubeconfig(path);
  if (config.ok()) (void)config->BearerToken();
  (void)ms::kube::LoadKubeconfig(path, "other");
  return 0;
}

// Fuzzes DecodeExecCredential (kube/exec_credential.h): what a kubeconfig's
// exec credential plugin prints on stdout, a program outside our control.
// Each input is decoded as both apiVersions a kubeconfig may expect.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "kube/exec_credential.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view out(reinterpret_cast<const char*>(data), size);
  size_t total = 0;
  for (const char* api : {ms::kube::kExecApiV1, ms::kube::kExecApiV1Beta1}) {
    auto credential = ms::kube::DecodeExecCredential(out, api);
    if (credential.ok()) {
      total += credential->token.size() + credential->client_cert_pem.size() +
               credential->client_key_pem.size();
    }
  }
  return total == 0xFFFFFFFF ? 1 : 0;
}

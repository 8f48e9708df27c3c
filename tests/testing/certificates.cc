#include "tests/testing/certificates.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/token_file.h"

namespace ms::testing {

absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir) {
  // P-256 keys: fast to make. Each certificate lives a day.
  const std::string script = absl::StrCat(R"(set -e
cd ')", dir, R"('
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
ca() {
  key "$1.key"
  openssl req -x509 -new -key "$1.key" -subj "/CN=$1" -days 1 -out "$1.crt"
}
leaf() {  # name, CA, extensions
  key "$1.key"
  openssl req -new -key "$1.key" -subj "/CN=$1" -out "$1.csr"
  printf '%s\n' "$3" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" \
    -CAcreateserial -days 1 -extfile "$1.ext" -out "$1.crt"
}
ca ca
ca other-ca
leaf server ca 'subjectAltName=IP:127.0.0.1
extendedKeyUsage=serverAuth'
leaf client ca 'extendedKeyUsage=clientAuth'
leaf stranger other-ca 'extendedKeyUsage=clientAuth'
)");
  const std::string log = dir + "/openssl.log";
  const std::string script_path = dir + "/make-certificates.sh";
  {
    FILE* f = std::fopen(script_path.c_str(), "w");
    if (f == nullptr) return absl::InternalError("cannot write " + script_path);
    std::fputs(script.c_str(), f);
    std::fclose(f);
  }
  const std::string command =
      absl::StrCat("bash '", script_path, "' >'", log, "' 2>&1");
  if (std::system(command.c_str()) != 0) {
    absl::StatusOr<std::string> out = ReadFile(log);
    return absl::InternalError(absl::StrCat(
        "making test certificates failed: ", out.ok() ? *out : ""));
  }
  auto path = [&](const char* name) { return absl::StrCat(dir, "/", name); };
  return TestCertificates{.ca = path("ca.crt"),
                          .server_cert = path("server.crt"),
                          .server_key = path("server.key"),
                          .client_cert = path("client.crt"),
                          .client_key = path("client.key"),
                          .stranger_cert = path("stranger.crt"),
                          .stranger_key = path("stranger.key")};
}

}  // namespace ms::testing

// Test certificates, made with the openssl command in a directory of the
// test's: a CA, a server certificate for 127.0.0.1 signed by it, and a
// client certificate signed by it, for servers that require TLS client
// authentication. Also a client certificate from another CA, which such a
// server refuses.
//
//   ASSERT_OK_AND_ASSIGN(TestCertificates certs, MakeTestCertificates(dir));
//   ... serve with certs.server_cert / server_key, trust certs.ca ...
#ifndef METRICS_SCHEDULER_TESTS_TESTING_CERTIFICATES_H_
#define METRICS_SCHEDULER_TESTS_TESTING_CERTIFICATES_H_

#include <string>

#include "absl/status/statusor.h"

namespace ms::testing {

// Paths of PEM files.
struct TestCertificates {
  std::string ca;  // the CA's certificate
  std::string server_cert, server_key;
  std::string client_cert, client_key;
  // Signed by a CA the server does not trust.
  std::string stranger_cert, stranger_key;
};

// Makes them in `dir` (which must exist). InternalError with openssl's
// output when a command fails.
absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir);

}  // namespace ms::testing

#endif  // METRICS_SCHEDULER_TESTS_TESTING_CERTIFICATES_H_

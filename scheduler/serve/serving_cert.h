// The certificate of the secure port (scheduler/serve/status_server.h): the
// files of --tls-cert-file and --tls-private-key-file, or, when none are
// given, a self-signed one made in memory at start, as kube components do.
//
// Both are read or made once, at start. Pure functions over OpenSSL;
// thread-safe. No OpenSSL type crosses this header.
#ifndef METRICS_SCHEDULER_SCHEDULER_SERVE_SERVING_CERT_H_
#define METRICS_SCHEDULER_SCHEDULER_SERVE_SERVING_CERT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ms {

struct ServingCertificate {
  std::string cert_pem;  // the leaf first, then any intermediates
  std::string key_pem;
};

// Reads a PEM certificate (chain) and its private key. InvalidArgument
// naming the file when one cannot be read or parsed, or when the key is not
// the certificate's.
absl::StatusOr<ServingCertificate> LoadServingCertificate(
    const std::string& cert_file, const std::string& key_file);

// A self-signed certificate with an EC P-256 key, valid from an hour before
// `now` for a year, for serverAuth, its subject alternative names `hosts`
// (IP addresses become IP SANs, the rest DNS names) and its common name
// the first of them. Internal when OpenSSL fails.
absl::StatusOr<ServingCertificate> SelfSignedCertificate(
    const std::vector<std::string>& hosts, absl::Time now);

// Checks that `cert` parses and its key matches; InvalidArgument otherwise.
absl::Status ValidateServingCertificate(const ServingCertificate& cert);

// OpenSSL's queued errors, as one line (and the queue emptied).
std::string OpenSslErrors();

}  // namespace ms

#endif  // METRICS_SCHEDULER_SCHEDULER_SERVE_SERVING_CERT_H_

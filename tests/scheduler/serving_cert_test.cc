// The secure port's certificate (scheduler/serve/serving_cert.h): the
// self-signed one names the hosts asked for and is valid now; files are
// read and checked.
#include "scheduler/serve/serving_cert.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace ms {
namespace {

X509* ParseCert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

TEST(ServingCertTest, SelfSignedNamesItsHostsAndIsValidNow) {
  const absl::Time now = absl::Now();
  absl::StatusOr<ServingCertificate> cert =
      SelfSignedCertificate({"localhost", "127.0.0.1", "node-1.example"}, now);
  ASSERT_TRUE(cert.ok()) << cert.status();
  EXPECT_TRUE(ValidateServingCertificate(*cert).ok());
  X509* x509 = ParseCert(cert->cert_pem);
  ASSERT_NE(x509, nullptr);
  EXPECT_EQ(X509_check_host(x509, "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(x509, "node-1.example", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(x509, "127.0.0.1", 0), 1);
  EXPECT_NE(X509_check_host(x509, "other.example", 0, 0, nullptr), 1);
  EXPECT_NE(X509_check_ip_asc(x509, "10.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_purpose(x509, X509_PURPOSE_SSL_SERVER, 0), 1);
  const time_t t = absl::ToTimeT(now);
  EXPECT_LT(X509_cmp_time(X509_get0_notBefore(x509), const_cast<time_t*>(&t)),
            0);
  EXPECT_GT(X509_cmp_time(X509_get0_notAfter(x509), const_cast<time_t*>(&t)),
            0);
  X509_free(x509);
}

TEST(ServingCertTest, EachSelfSignedHasItsOwnKey) {
  absl::StatusOr<ServingCertificate> a =
      SelfSignedCertificate({"localhost"}, absl::Now());
  absl::StatusOr<ServingCertificate> b =
      SelfSignedCertificate({"localhost"}, absl::Now());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->key_pem, b->key_pem);
  ServingCertificate mixed{.cert_pem = a->cert_pem, .key_pem = b->key_pem};
  absl::Status status = ValidateServingCertificate(mixed);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "the private key is not the certificate's");
}

TEST(ServingCertTest, LoadsFilesAndNamesTheBadOne) {
  absl::StatusOr<ServingCertificate> made =
      SelfSignedCertificate({"localhost"}, absl::Now());
  ASSERT_TRUE(made.ok());
  const std::string dir = ::testing::TempDir();
  const std::string cert = absl::StrCat(dir, "/serving-", getpid(), ".crt");
  const std::string key = absl::StrCat(dir, "/serving-", getpid(), ".key");
  std::ofstream(cert) << made->cert_pem;
  std::ofstream(key) << made->key_pem;

  absl::StatusOr<ServingCertificate> loaded =
      LoadServingCertificate(cert, key);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->cert_pem, made->cert_pem);

  absl::StatusOr<ServingCertificate> missing =
      LoadServingCertificate(cert, key + ".missing");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("--tls-private-key-file"),
            std::string::npos)
      << missing.status();

  // A key given as the certificate: no certificate in it.
  absl::StatusOr<ServingCertificate> swapped =
      LoadServingCertificate(key, key);
  EXPECT_EQ(swapped.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(swapped.status().message().find("no PEM certificate"),
            std::string::npos)
      << swapped.status();
}

}  // namespace
}  // namespace ms

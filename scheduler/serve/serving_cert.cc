#include "scheduler/serve/serving_cert.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/token_file.h"

namespace ms {
namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;


Bio MemoryBio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);  // NOLINT(runtime/int)
  return std::string(data, size);
}

bool IsIpAddress(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 ||
         inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

bool AddExtension(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

}  // namespace

absl::Status ValidateServingCertificate(const ServingCertificate& cert) {
  ERR_clear_error();
  Bio cert_bio = MemoryBio(cert.cert_pem);
  Cert leaf(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  if (leaf == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("no PEM certificate: ", OpenSslErrors()));
  }
  Bio key_bio = MemoryBio(cert.key_pem);
  Key key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("no PEM private key: ", OpenSslErrors()));
  }
  if (X509_check_private_key(leaf.get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        "the private key is not the certificate's");
  }
  return absl::OkStatus();
}

absl::StatusOr<ServingCertificate> LoadServingCertificate(
    const std::string& cert_file, const std::string& key_file) {
  ServingCertificate out;
  absl::StatusOr<std::string> cert = ReadFile(cert_file);
  if (!cert.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls-cert-file ", cert_file, ": ", cert.status().message()));
  }
  absl::StatusOr<std::string> key = ReadFile(key_file);
  if (!key.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls-private-key-file ", key_file, ": ", key.status().message()));
  }
  out.cert_pem = *std::move(cert);
  out.key_pem = *std::move(key);
  absl::Status valid = ValidateServingCertificate(out);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls-cert-file ", cert_file, ", --tls-private-key-file ", key_file,
        ": ", valid.message()));
  }
  return out;
}

absl::StatusOr<ServingCertificate> SelfSignedCertificate(
    const std::vector<std::string>& hosts, absl::Time now) {
  ERR_clear_error();
  auto fail = [](absl::string_view what) {
    return absl::InternalError(
        absl::StrCat("making a self-signed certificate: ", what, ": ",
                     OpenSslErrors()));
  };
  Key key(EVP_EC_gen("P-256"));
  if (key == nullptr) return fail("EC key");
  Cert cert(X509_new());
  if (cert == nullptr) return fail("X509_new");
  X509_set_version(cert.get(), 2);  // v3
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof(serial)) != 1) return fail("serial");
  serial[0] &= 0x7f;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  if (bn == nullptr ||
      BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get())) == nullptr) {
    BN_free(bn);
    return fail("serial");
  }
  BN_free(bn);
  const time_t start = absl::ToTimeT(now - absl::Hours(1));
  const time_t end = absl::ToTimeT(now + absl::Hours(24 * 365));
  if (ASN1_TIME_set(X509_getm_notBefore(cert.get()), start) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(cert.get()), end) == nullptr) {
    return fail("validity");
  }
  const std::string cn =
      absl::StrCat(hosts.empty() ? "localhost" : hosts.front(), "@",
                   absl::ToUnixSeconds(now));
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(
          name, "CN", MBSTRING_UTF8,
          reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0) != 1 ||
      X509_set_issuer_name(cert.get(), name) != 1) {
    return fail("name");
  }
  std::vector<std::string> sans;
  for (const std::string& host : hosts) {
    sans.push_back(absl::StrCat(IsIpAddress(host) ? "IP:" : "DNS:", host));
  }
  if (X509_set_pubkey(cert.get(), key.get()) != 1 ||
      !AddExtension(cert.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !AddExtension(cert.get(), NID_key_usage,
                    "critical,digitalSignature") ||
      !AddExtension(cert.get(), NID_ext_key_usage, "serverAuth") ||
      (!sans.empty() &&
       !AddExtension(cert.get(), NID_subject_alt_name,
                     absl::StrJoin(sans, ",")))) {
    return fail("extensions");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return fail("sign");
  Bio cert_out(BIO_new(BIO_s_mem()));
  Bio key_out(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509(cert_out.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_out.get(), key.get(), nullptr, nullptr, 0,
                               nullptr, nullptr) != 1) {
    return fail("PEM");
  }
  return ServingCertificate{.cert_pem = BioText(cert_out.get()),
                            .key_pem = BioText(key_out.get())};
}

std::string OpenSslErrors() {
  std::string out;
  for (unsigned long e; (e = ERR_get_error()) != 0;) {  // NOLINT(runtime/int)
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    absl::StrAppend(&out, out.empty() ? "" : "; ", buf);
  }
  return out.empty() ? "unknown error" : out;
}

}  // namespace ms

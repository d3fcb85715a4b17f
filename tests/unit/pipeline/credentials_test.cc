// A data dir's credentials: the root CA is a CA certificate as kubeadm
// makes one, made once, and a file that holds none is refused.
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "log_fixture.h"
#include "pipeline/credentials.h"

namespace podflow::pipeline {
namespace {

TEST_CASE("The data dir's root CA: CN kubernetes, CA:TRUE, signs certificates, made once") {
  testing::TempDir dir;
  const std::string data = dir.path() + "/data";
  REQUIRE(EnsureCredentials(data).ok());
  Result<std::string> pem = ReadRootCa(data);
  REQUIRE(pem.ok());
  CHECK(pem->starts_with("-----BEGIN CERTIFICATE-----\n"));
  BIO* bio = BIO_new_mem_buf(pem->data(), static_cast<int>(pem->size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  REQUIRE(cert != nullptr);
  char cn[64] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
  CHECK(std::string(cn) == "kubernetes");
  CHECK(X509_check_ca(cert) == 1);  // CA:TRUE with keyCertSign
  CHECK(X509_check_issued(cert, cert) == X509_V_OK);  // self-signed
  EVP_PKEY* key = X509_get0_pubkey(cert);
  CHECK(X509_verify(cert, key) == 1);
  // Valid now and for years.
  CHECK(X509_cmp_current_time(X509_get0_notBefore(cert)) <= 0);
  CHECK(X509_cmp_time(X509_get0_notAfter(cert), nullptr) > 0);
  X509_free(cert);
  // Its key is the owner's only.
  struct stat st {};
  REQUIRE(stat((data + "/pki/ca.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 077) == 0);

  // A second start keeps it.
  REQUIRE(EnsureCredentials(data).ok());
  CHECK(*ReadRootCa(data) == *pem);

  std::ofstream(data + "/pki/ca.crt") << "not a certificate\n";
  Result<std::string> bad = ReadRootCa(data);
  CHECK(bad.status().code() == Code::kInvalid);
  CHECK(bad.status().message() == data + "/pki/ca.crt holds no PEM certificate");
  CHECK(ReadRootCa(dir.path() + "/none").status().code() == Code::kNotFound);
}

}  // namespace
}  // namespace podflow::pipeline

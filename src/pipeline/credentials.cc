#include "pipeline/credentials.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <fstream>
#include <sstream>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "pipeline/config.h"
#include "pipeline/stage_names.h"

namespace podflow::pipeline {
namespace {

namespace fs = std::filesystem;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// A file's permission bits as chmod takes them: "0644".
std::string ModeText(const struct stat& st) {
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return mode;
}

std::string PkiDir(const std::string& data_dir) { return data_dir + "/pki"; }
std::string IdentitiesDir(const std::string& data_dir) { return PkiDir(data_dir) + "/identities"; }
std::string TokenFile(const std::string& data_dir) { return data_dir + "/admin.token"; }

// A directory only the owner may enter (made if missing, tightened if ours).
Status PrivateDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IOError("cannot create " + dir + ": " + ec.message());
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) return Status::IOError(Errno("cannot stat " + dir));
  if ((st.st_mode & 077) == 0) return Status::Ok();
  if (st.st_uid != geteuid()) {
    return Status::Invalid(dir + " belongs to another user and others may enter it");
  }
  if (chmod(dir.c_str(), 0700) != 0) return Status::IOError(Errno("cannot chmod 0700 " + dir));
  return Status::Ok();
}

// Writes `text` to `path` (mode `mode`) through a temporary file renamed
// into place: a reader sees the whole file or none.
Status WriteAtomically(const std::string& path, const std::string& text, mode_t mode) {
  const std::string tmp = path + ".tmp-" + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Status::IOError(Errno("cannot create " + tmp));
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd) == 0;
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    Status failed = Status::IOError(Errno("cannot write " + path));
    unlink(tmp.c_str());
    return failed;
  }
  return Status::Ok();
}

// Makes `<base>.key` and `<base>.pub` unless both exist.
Status EnsureKeyPair(const std::string& base) {
  if (fs::exists(base + ".key") && fs::exists(base + ".pub")) return Status::Ok();
  Result<bus::CurveKeys> keys = bus::GenerateCurveKeys();
  if (!keys.ok()) return keys.status();
  PODFLOW_RETURN_IF_ERROR(WriteAtomically(base + ".pub", keys->public_key + "\n", 0644));
  return WriteAtomically(base + ".key", keys->secret_key + "\n", 0600);
}

Status EnsureToken(const std::string& path) {
  if (fs::exists(path)) return Status::Ok();
  unsigned char bytes[32];
  if (getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    return Status::IOError(Errno("cannot read random bytes for " + path));
  }
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return WriteAtomically(path, token + "\n", 0600);
}

// OpenSSL's objects, freed with their owners.
template <typename T, void (*Free)(T*)>
struct OpenSslDeleter {
  void operator()(T* p) const { Free(p); }
};
template <typename T, void (*Free)(T*)>
using OpenSslPtr = std::unique_ptr<T, OpenSslDeleter<T, Free>>;
using KeyPtr = OpenSslPtr<EVP_PKEY, EVP_PKEY_free>;
using CertPtr = OpenSslPtr<X509, X509_free>;
using BioPtr = OpenSslPtr<BIO, BIO_free_all>;
using BigNumPtr = OpenSslPtr<BIGNUM, BN_free>;

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return size > 0 ? std::string(data, static_cast<size_t>(size)) : std::string();
}

// Adds one X.509v3 extension, written as openssl.cnf writes it.
bool AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool added = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return added;
}

// Makes pki/ca.crt and ca.key unless both exist: a self-signed CA
// certificate as kubeadm's (an RSA 2048 key, CN "kubernetes", CA:TRUE, key
// usages digitalSignature, keyEncipherment and keyCertSign, ten years).
Status EnsureRootCa(const std::string& pki) {
  const std::string cert_path = pki + "/ca.crt";
  const std::string key_path = pki + "/ca.key";
  if (fs::exists(cert_path) && fs::exists(key_path)) return Status::Ok();
  auto failed = [&](const char* step) { return Status::Internal(std::string("making the root CA: ") + step + " failed"); };
  KeyPtr key(EVP_RSA_gen(2048));
  if (!key) return failed("RSA key generation");
  CertPtr cert(X509_new());
  BigNumPtr serial(BN_new());
  if (!cert || !serial || X509_set_version(cert.get(), X509_VERSION_3) != 1 ||
      BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr) {
    return failed("serial number");
  }
  constexpr long kTenYears = 10L * 365 * 24 * 3600;
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), kTenYears) == nullptr ||
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("kubernetes"), -1,
                                 -1, 0) != 1 ||
      X509_set_issuer_name(cert.get(), name) != 1 || X509_set_pubkey(cert.get(), key.get()) != 1) {
    return failed("certificate fields");
  }
  if (!AddExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment,keyCertSign") ||
      !AddExtension(cert.get(), NID_subject_key_identifier, "hash")) {
    return failed("certificate extensions");
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return failed("signing");
  BioPtr cert_pem(BIO_new(BIO_s_mem()));
  BioPtr key_pem(BIO_new(BIO_s_mem()));
  if (!cert_pem || !key_pem || PEM_write_bio_X509(cert_pem.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_pem.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return failed("PEM encoding");
  }
  // The key first: a certificate present means its key is too.
  PODFLOW_RETURN_IF_ERROR(WriteAtomically(key_path, BioText(key_pem.get()), 0600));
  return WriteAtomically(cert_path, BioText(cert_pem.get()), 0644);
}

// The one line of a credentials file. A secret (`secret`) must be readable
// by its owner only.
Result<std::string> ReadLine(const std::string& path, bool secret) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::NotFound(path + " does not exist");
    return Status::IOError(Errno("cannot stat " + path));
  }
  if (secret && (st.st_mode & 077) != 0) {
    return Status::Invalid("permissions " + ModeText(st) + " for " + path +
                           " are too open: a secret must be readable by its owner only (chmod 600)");
  }
  std::ifstream in(path);
  if (!in) return Status::IOError("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  std::string line = text.str();
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

Result<std::string> ReadKey(const std::string& path, bool secret) {
  Result<std::string> key = ReadLine(path, secret);
  if (!key.ok()) return key;
  PODFLOW_RETURN_IF_ERROR(bus::CheckCurveKey(*key, path));
  return key;
}

Result<bus::CurveKeys> ReadKeyPair(const std::string& base) {
  Result<std::string> public_key = ReadKey(base + ".pub", false);
  if (!public_key.ok()) return public_key.status();
  Result<std::string> secret_key = ReadKey(base + ".key", true);
  if (!secret_key.ok()) return secret_key.status();
  return bus::CurveKeys{*public_key, *secret_key};
}

// Holds the credentials' flock for its lifetime: exclusive to make them,
// shared to read them (so no reader sees a pair half written). No lock
// file yet: nothing to wait for.
class CredentialsLock {
 public:
  CredentialsLock(const std::string& data_dir, bool exclusive) {
    const std::string path = data_dir + "/pki.lock";
    fd_ = open(path.c_str(), O_RDWR | O_CLOEXEC | (exclusive ? O_CREAT : 0), 0600);
    if (fd_ < 0) {
      if (exclusive) status_ = Status::IOError(Errno("cannot open " + path));
      return;
    }
    if (flock(fd_, exclusive ? LOCK_EX : LOCK_SH) != 0) status_ = Status::IOError(Errno("cannot lock " + path));
  }
  ~CredentialsLock() {
    if (fd_ >= 0) close(fd_);  // releases the flock
  }
  CredentialsLock(const CredentialsLock&) = delete;
  CredentialsLock& operator=(const CredentialsLock&) = delete;
  const Status& status() const { return status_; }

 private:
  int fd_ = -1;
  Status status_;
};

}  // namespace

std::string RunDir(const std::string& data_dir) { return data_dir + "/run"; }

Status CheckIpcDirs(const ClusterConfig& config) {
  for (const auto& [channel, unused] : config.pipeline.channels) {
    const std::string endpoint = config.Endpoint(channel);
    if (!endpoint.starts_with("ipc:///")) continue;
    const std::string dir = fs::path(endpoint.substr(6)).parent_path().string();
    if (dir == RunDir(config.data_dir)) continue;  // made private with the credentials
    struct stat st {};
    if (stat(dir.c_str(), &st) != 0) continue;  // binding reports it
    if ((st.st_mode & 077) != 0 || st.st_uid != geteuid()) {
      return Status::Invalid("channels." + channel + ": " + endpoint + " is in " + dir +
                             ", which others may enter (mode " + ModeText(st) +
                             "); put it in a directory only its owner may enter (chmod 700)");
    }
  }
  return Status::Ok();
}

Status EnsureCredentials(const std::string& data_dir) {
  std::error_code ec;
  fs::create_directories(data_dir, ec);
  if (ec) return Status::IOError("cannot create " + data_dir + ": " + ec.message());
  CredentialsLock lock(data_dir, /*exclusive=*/true);
  PODFLOW_RETURN_IF_ERROR(lock.status());
  PODFLOW_RETURN_IF_ERROR(PrivateDir(PkiDir(data_dir)));
  PODFLOW_RETURN_IF_ERROR(PrivateDir(IdentitiesDir(data_dir)));
  PODFLOW_RETURN_IF_ERROR(PrivateDir(RunDir(data_dir)));
  PODFLOW_RETURN_IF_ERROR(EnsureKeyPair(PkiDir(data_dir) + "/server"));
  for (std::string_view stage : kStageNames) {
    PODFLOW_RETURN_IF_ERROR(EnsureKeyPair(IdentitiesDir(data_dir) + "/" + std::string(stage)));
  }
  for (std::string_view controller : kControllerIdentities) {
    PODFLOW_RETURN_IF_ERROR(EnsureKeyPair(IdentitiesDir(data_dir) + "/" + std::string(controller)));
  }
  PODFLOW_RETURN_IF_ERROR(EnsureKeyPair(IdentitiesDir(data_dir) + "/" + std::string(kAdminIdentity)));
  PODFLOW_RETURN_IF_ERROR(EnsureRootCa(PkiDir(data_dir)));
  return EnsureToken(TokenFile(data_dir));
}

Result<std::string> ReadRootCa(const std::string& data_dir) {
  CredentialsLock lock(data_dir, /*exclusive=*/false);
  PODFLOW_RETURN_IF_ERROR(lock.status());
  const std::string path = PkiDir(data_dir) + "/ca.crt";
  std::ifstream in(path);
  if (!in) {
    if (!fs::exists(path)) return Status::NotFound(path + " does not exist: start the pipeline once (podflow run)");
    return Status::IOError("cannot read " + path);
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string pem = text.str();
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  CertPtr cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!cert) return Status::Invalid(path + " holds no PEM certificate");
  return pem;
}

Result<bus::Security> LoadSecurity(const std::string& data_dir, const std::vector<std::string>& identities,
                                   bool serve) {
  CredentialsLock lock(data_dir, /*exclusive=*/false);
  PODFLOW_RETURN_IF_ERROR(lock.status());
  const std::string pki = PkiDir(data_dir);
  if (!fs::exists(pki + "/server.pub")) {
    return Status::NotFound("no credentials in " + pki + ": start the pipeline once (podflow run) to make them");
  }
  bus::Security security;
  Result<std::string> server_public = ReadKey(pki + "/server.pub", false);
  if (!server_public.ok()) return server_public.status();
  security.server.public_key = *server_public;
  if (serve) {
    Result<std::string> server_secret = ReadKey(pki + "/server.key", true);
    if (!server_secret.ok()) return server_secret.status();
    security.server.secret_key = *server_secret;
    std::error_code ec;
    for (const fs::directory_entry& entry : fs::directory_iterator(IdentitiesDir(data_dir), ec)) {
      if (entry.path().extension() != ".pub") continue;
      Result<std::string> key = ReadKey(entry.path().string(), false);
      if (!key.ok()) return key.status();
      security.peers[*key] = entry.path().stem().string();
    }
    if (ec) return Status::IOError("cannot list " + IdentitiesDir(data_dir) + ": " + ec.message());
  }
  for (const std::string& name : identities) {
    Result<bus::CurveKeys> keys = ReadKeyPair(IdentitiesDir(data_dir) + "/" + name);
    if (!keys.ok()) return keys.status();
    security.identities[name] = std::move(*keys);
    if (security.default_identity.empty()) security.default_identity = name;
  }
  return security;
}

Status SecureTool(bus::Context& context, const std::string& data_dir) {
  Result<bus::Security> security = LoadSecurity(data_dir, {std::string(kAdminIdentity)}, /*serve=*/false);
  if (!security.ok()) return security.status();
  return context.Secure(std::move(*security));
}

Result<std::string> ReadAdminToken(const std::string& data_dir) {
  CredentialsLock lock(data_dir, /*exclusive=*/false);
  PODFLOW_RETURN_IF_ERROR(lock.status());
  Result<std::string> token = ReadLine(TokenFile(data_dir), true);
  if (!token.ok()) return token;
  if (token->empty()) return Status::Invalid(TokenFile(data_dir) + " is empty");
  return token;
}

}  // namespace podflow::pipeline

// ConfigMap and Secret: keys, base64 values, sizes and the Secret types'
// required keys, with kube-apiserver's messages; a Secret's stringData
// folded into data.
#include <algorithm>
#include <optional>
#include <set>

#include "base/base64.h"
#include "stages/admission/defaults.h"
#include "stages/admission/kind_rules.h"
#include "stages/admission/names.h"

namespace podflow::admission {
namespace {

// ConfigMaps and Secrets may hold at most 1 MiB of data.
constexpr int64_t kMaxDataBytes = 1024 * 1024;

const api::StringEntryT* FindEntry(const std::vector<std::unique_ptr<api::StringEntryT>>& entries,
                                   std::string_view key) {
  for (const auto& e : entries) {
    if (e->key == key) return e.get();
  }
  return nullptr;
}

// Keys of a data map, and its size (decoded, for base64 values) added to
// `bytes`. Values that are not base64 were refused before (DecodeError).
void ValidateData(Causes& out, const std::string& path, const std::vector<std::unique_ptr<api::StringEntryT>>& data,
                  bool base64, int64_t& bytes) {
  for (const auto& e : data) {
    AddInvalid(out, path + "[" + e->key + "]", e->key, IsConfigMapKey(e->key));
    Result<std::string> decoded = base64 ? Base64Decode(e->value) : Result<std::string>(e->value);
    if (decoded.ok()) bytes += static_cast<int64_t>(decoded->size());
  }
}

std::optional<std::string> FirstBadBase64(const std::vector<std::unique_ptr<api::StringEntryT>>& data) {
  for (const auto& e : data) {
    Result<std::string> decoded = Base64Decode(e->value);
    if (!decoded.ok()) return decoded.status().message();
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> DecodeError(const api::SecretT& secret) { return FirstBadBase64(secret.data); }
std::optional<std::string> DecodeError(const api::ConfigMapT& cm) { return FirstBadBase64(cm.binary_data); }

void DefaultKind(api::SecretT& secret) {
  if (secret.type.empty()) secret.type = "Opaque";
  // stringData is write-only: each key replaces data's, base64-encoded.
  for (const auto& e : secret.string_data) SetEntry(secret.data, e->key, Base64Encode(e->value));
  secret.string_data.clear();
}

void ValidateKind(const api::ConfigMapT& cm, Causes& out) {
  int64_t bytes = 0;
  ValidateData(out, "data", cm.data, false, bytes);
  ValidateData(out, "binaryData", cm.binary_data, true, bytes);
  for (const auto& e : cm.binary_data) {
    if (FindEntry(cm.data, e->key) != nullptr) {
      out.push_back(FieldError::Invalid("data[" + e->key + "]", e->key, "duplicate of key present in binaryData"));
    }
  }
  if (bytes > kMaxDataBytes) out.push_back(FieldError::TooLong("[]", kMaxDataBytes));
}

void ValidateKind(const api::SecretT& secret, Causes& out) {
  int64_t bytes = 0;
  ValidateData(out, "data", secret.data, true, bytes);
  if (bytes > kMaxDataBytes) out.push_back(FieldError::TooLong("data", kMaxDataBytes));
  const std::string& type = secret.type;
  auto require = [&](std::string_view key) {
    if (FindEntry(secret.data, key) == nullptr) out.push_back(FieldError::Required("data[" + std::string(key) + "]"));
  };
  if (type == "kubernetes.io/service-account-token") {
    bool named = false;
    if (secret.metadata) {
      for (const auto& a : secret.metadata->annotations) named = named || a->key == "kubernetes.io/service-account.name";
    }
    if (!named) out.push_back(FieldError::Required("metadata.annotations[kubernetes.io/service-account.name]"));
  } else if (type == "kubernetes.io/dockercfg") {
    require(".dockercfg");
  } else if (type == "kubernetes.io/dockerconfigjson") {
    require(".dockerconfigjson");
  } else if (type == "kubernetes.io/basic-auth") {
    if (FindEntry(secret.data, "username") == nullptr && FindEntry(secret.data, "password") == nullptr) {
      require("username");
      require("password");
    }
  } else if (type == "kubernetes.io/ssh-auth") {
    const api::StringEntryT* key = FindEntry(secret.data, "ssh-privatekey");
    if (key == nullptr || key->value.empty()) out.push_back(FieldError::Required("data[ssh-privatekey]"));
  } else if (type == "kubernetes.io/tls") {
    require("tls.crt");
    require("tls.key");
  }
}

// ---- Updates ----

namespace {

constexpr std::string_view kImmutableSet = "field is immutable when `immutable` is set";

bool SameEntries(const std::vector<std::unique_ptr<api::StringEntryT>>& a,
                 const std::vector<std::unique_ptr<api::StringEntryT>>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const auto& x, const auto& y) { return x->key == y->key && x->value == y->value; });
}

// An immutable ConfigMap or Secret keeps its data and its flag.
void KeepImmutable(std::optional<bool> was, std::optional<bool> now, bool same_data, bool same_binary, Causes& out) {
  if (!was.value_or(false)) return;
  if (!now.value_or(false)) out.push_back(FieldError::Forbidden("immutable", kImmutableSet));
  if (!same_data) out.push_back(FieldError::Forbidden("data", kImmutableSet));
  if (!same_binary) out.push_back(FieldError::Forbidden("binaryData", kImmutableSet));
}

}  // namespace

void ValidateUpdate(const api::ConfigMapT& old, const api::ConfigMapT& cm, Causes& out) {
  KeepImmutable(old.immutable, cm.immutable, SameEntries(old.data, cm.data), SameEntries(old.binary_data, cm.binary_data),
                out);
}

void ValidateUpdate(const api::SecretT& old, const api::SecretT& secret, Causes& out) {
  if (old.type != secret.type) out.push_back(FieldError::Invalid("type", secret.type, "field is immutable"));
  KeepImmutable(old.immutable, secret.immutable, SameEntries(old.data, secret.data), true, out);
}

}  // namespace podflow::admission

// The manifest codec: Kubernetes YAML and JSON <-> the FlatBuffers object
// model in schemas/. It is driven by the schema itself (reflection over the
// embedded binary schema), so every field the schema declares is decoded,
// checked, stored and printed with no per-field code.
//
// Thread safety: all functions are safe to call concurrently.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/field_error.h"
#include "model/value.h"

namespace podflow::model {

// One kind the object model knows.
struct KindInfo {
  std::string_view api_version;  // "v1", "scheduling.k8s.io/v1"
  std::string_view kind;         // "Pod"
  std::string_view resource;     // "pods": the plural, as in kubectl and the log's keys
  std::string_view table;        // "podflow.api.Pod": the root table in the schema
  bool namespaced;
};

// Every kind, in a fixed order.
std::span<const KindInfo> Kinds();
// The kind with this apiVersion and kind, or nullptr.
const KindInfo* FindKind(std::string_view api_version, std::string_view kind);
// The kind a kubectl resource argument names: the plural, the singular, the
// kind or a short name ("pods", "pod", "Pod", "po"), optionally qualified by
// its API group ("deployments.apps"); nullptr when none.
const KindInfo* FindResource(std::string_view name);
// The API group of a kind: "" for core/v1, "apps" for apps/v1.
std::string_view ApiGroup(const KindInfo& kind);

// A decoded object: a finished FlatBuffer of kind->table.
struct Object {
  const KindInfo* kind = nullptr;
  std::string name;
  std::string namespace_;  // empty for cluster-scoped kinds and when unset
  std::string bytes;       // the FlatBuffer; verified
};

// One document of a manifest stream: the object, or why it was rejected.
struct Decoded {
  Status status;                   // OK, or Invalid with InvalidMessage(...)
  std::vector<FieldError> causes;  // when Invalid: every cause found
  Object object;                   // object.kind and name are set as far as known
};

// Decodes a YAML or JSON stream: several YAML documents, flow style, and
// `kind: List` (its items become documents). Fails as a whole only when the
// text is not YAML; each document is then accepted or rejected on its own.
Result<std::vector<Decoded>> DecodeManifests(std::string_view text);

// Decodes one document given as a Value (e.g. an item of a List).
Decoded DecodeValue(const Value& document);

// Checks that `bytes` is a well-formed FlatBuffer of `kind` (the Verifier).
Status VerifyObject(const KindInfo& kind, std::string_view bytes);

// The object as Kubernetes prints it: apiVersion, kind, metadata, spec,
// status, in schema order, zero values omitted as omitempty does.
// REQUIRES: bytes verified for `kind`.
Value ToValue(const KindInfo& kind, std::string_view bytes);
std::string ToYaml(const KindInfo& kind, std::string_view bytes);
std::string ToJson(const KindInfo& kind, std::string_view bytes, int indent = 2);

}  // namespace podflow::model

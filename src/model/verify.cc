// VerifyObject with the verifiers flatc generates for each kind's root table:
// the same checks as verifying through the reflection schema, several times
// faster, and every stage verifies every object it reads.
#include <string>

#include <flatbuffers/flatbuffers.h>

#include "api_generated.h"
#include "model/codec.h"

namespace podflow::model {
namespace {

template <typename T>
bool VerifyAs(const uint8_t* data, size_t size) {
  flatbuffers::Verifier verifier(data, size);
  return verifier.VerifyBuffer<T>(nullptr);
}

using VerifyFn = bool (*)(const uint8_t*, size_t);

VerifyFn VerifierFor(std::string_view kind) {
  static const std::pair<std::string_view, VerifyFn> kVerifiers[] = {
      {"Pod", &VerifyAs<api::Pod>},
      {"Node", &VerifyAs<api::Node>},
      {"Namespace", &VerifyAs<api::Namespace>},
      {"Service", &VerifyAs<api::Service>},
      {"Endpoints", &VerifyAs<api::Endpoints>},
      {"Event", &VerifyAs<api::Event>},
      {"PersistentVolume", &VerifyAs<api::PersistentVolume>},
      {"PersistentVolumeClaim", &VerifyAs<api::PersistentVolumeClaim>},
      {"LimitRange", &VerifyAs<api::LimitRange>},
      {"ResourceQuota", &VerifyAs<api::ResourceQuota>},
      {"PriorityClass", &VerifyAs<api::PriorityClass>},
  };
  for (const auto& [name, fn] : kVerifiers) {
    if (name == kind) return fn;
  }
  return nullptr;
}

}  // namespace

Status VerifyObject(const KindInfo& kind, std::string_view bytes) {
  VerifyFn verify = VerifierFor(kind.kind);
  if (verify == nullptr) return Status::Internal("no verifier for kind " + std::string(kind.kind));
  if (!verify(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())) {
    return Status::Corruption(std::string(kind.kind) + " object failed FlatBuffers verification (" +
                              std::to_string(bytes.size()) + " bytes)");
  }
  return Status::Ok();
}

}  // namespace podflow::model

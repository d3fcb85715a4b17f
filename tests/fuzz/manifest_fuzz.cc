// libFuzzer target: a manifest as a user submits it. Decoded as admission
// does (YAML or JSON stream, bounded), and every object that decodes is
// verified and printed back as YAML and JSON, as `podflow get -o` does.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace podflow;
  auto documents = model::DecodeManifests(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!documents.ok()) return 0;
  for (const model::Decoded& d : *documents) {
    if (!d.status.ok()) continue;
    if (!model::VerifyObject(*d.object.kind, d.object.bytes).ok()) std::abort();  // the decoder's own output
    (void)model::ToYaml(*d.object.kind, d.object.bytes);
    (void)model::ToJson(*d.object.kind, d.object.bytes);
  }
  return 0;
}

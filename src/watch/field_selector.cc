#include "watch/field_selector.h"

#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "api_generated.h"

namespace podflow {
namespace {

namespace api = podflow::api;

std::string_view Str(const flatbuffers::String* s) {
  return s ? s->string_view() : std::string_view();
}

std::string_view EnumText(const char* name) { return name ? std::string_view(name) : ""; }

// The value of one supported field of a pod; fields Kubernetes leaves unset
// read as "".
using FieldGetter = std::string_view (*)(const api::Pod&);

struct SupportedField {
  std::string_view label;
  FieldGetter get;
};

const SupportedField kFields[] = {
    {"metadata.name", [](const api::Pod& p) { return p.metadata() ? Str(p.metadata()->name()) : ""; }},
    {"metadata.namespace",
     [](const api::Pod& p) { return p.metadata() ? Str(p.metadata()->namespace_()) : ""; }},
    {"spec.nodeName", [](const api::Pod& p) { return p.spec() ? Str(p.spec()->node_name()) : ""; }},
    {"spec.schedulerName",
     [](const api::Pod& p) { return p.spec() ? Str(p.spec()->scheduler_name()) : ""; }},
    {"spec.restartPolicy",
     [](const api::Pod& p) {
       if (!p.spec() || p.spec()->restart_policy() == api::RestartPolicy::Unset) return std::string_view();
       return EnumText(api::EnumNameRestartPolicy(p.spec()->restart_policy()));
     }},
    {"status.phase",
     [](const api::Pod& p) {
       if (!p.status() || p.status()->phase() == api::PodPhase::Unset) return std::string_view();
       return EnumText(api::EnumNamePodPhase(p.status()->phase()));
     }},
    {"status.podIP", [](const api::Pod& p) { return p.status() ? Str(p.status()->pod_ip()) : ""; }},
};

struct Requirement {
  FieldGetter get;
  bool equal;
  std::string value;
};

const api::Pod* VerifiedPod(const std::string& bytes) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (!verifier.VerifyBuffer<api::Pod>(nullptr)) return nullptr;
  return flatbuffers::GetRoot<api::Pod>(bytes.data());
}

}  // namespace

Result<WatchFilter> PodFieldSelector(std::string_view selector) {
  std::vector<Requirement> requirements;
  size_t pos = 0;
  while (pos <= selector.size()) {
    size_t comma = selector.find(',', pos);
    std::string_view term = selector.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? selector.size() + 1 : comma + 1;
    if (term.empty()) {
      if (selector.empty()) break;
      return Status::Invalid("invalid field selector \"" + std::string(selector) + "\": empty requirement");
    }
    bool equal = true;
    size_t op = term.find("!=");
    size_t op_len = 2;
    if (op != std::string_view::npos) {
      equal = false;
    } else if ((op = term.find("==")) == std::string_view::npos) {
      op = term.find('=');
      op_len = 1;
    }
    if (op == std::string_view::npos || op == 0) {
      return Status::Invalid("invalid field selector requirement \"" + std::string(term) +
                             "\": expected field=value, field==value or field!=value");
    }
    std::string_view label = term.substr(0, op);
    const SupportedField* field = nullptr;
    for (const SupportedField& f : kFields) {
      if (f.label == label) field = &f;
    }
    if (field == nullptr) {
      return Status::Invalid("field label not supported: " + std::string(label));
    }
    requirements.push_back({field->get, equal, std::string(term.substr(op + op_len))});
  }
  return WatchFilter([requirements = std::move(requirements)](const KeyValue& kv) {
    const api::Pod* pod = VerifiedPod(kv.value);
    if (pod == nullptr) return false;
    for (const Requirement& r : requirements) {
      if ((r.get(*pod) == r.value) != r.equal) return false;
    }
    return true;
  });
}

WatchFilter PodNodeNameFilter(std::string node_name) {
  return [node_name = std::move(node_name)](const KeyValue& kv) {
    const api::Pod* pod = VerifiedPod(kv.value);
    return pod != nullptr && pod->spec() != nullptr && Str(pod->spec()->node_name()) == node_name;
  };
}

}  // namespace podflow

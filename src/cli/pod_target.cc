#include "cli/pod_target.h"

#include <cstdio>

#include "model/objects.h"
#include "model/pod_phase.h"

namespace podflow::cli {

std::string PodName(const std::string& target) {
  std::string name = target;
  for (const char* prefix : {"pod/", "pods/", "po/"}) {
    if (name.starts_with(prefix)) name = name.substr(std::string_view(prefix).size());
  }
  return name.find('/') == std::string::npos ? name : "";
}

Result<std::optional<KeyValue>> GetPod(ApiSession& api, const std::string& ns, const std::string& name,
                                       model::ApiStatusInfo* refused) {
  ApiCall get;
  get.verb = "get";
  get.resource = "pods";
  get.namespace_ = ns;
  get.name = name;
  Result<ApiResponse> reply = api.Call(get);
  if (!reply.ok()) return reply.status();
  if (!reply->status.success() || reply->objects.empty() ||
      !model::VerifyObject(model::Kind("Pod"), reply->objects[0].value).ok()) {
    *refused = reply->status;
    return std::optional<KeyValue>();
  }
  return std::optional<KeyValue>(std::move(reply->objects[0]));
}

std::optional<KeyValue> ReadPod(ApiSession& api, const std::string& ns, const std::string& name) {
  model::ApiStatusInfo refused;
  Result<std::optional<KeyValue>> pod = GetPod(api, ns, name, &refused);
  if (!pod.ok()) {
    std::fprintf(stderr, "error: %s\n", pod.status().message().c_str());
    return std::nullopt;
  }
  if (!pod->has_value()) std::fprintf(stderr, "%s\n", model::KubectlMessage(refused).c_str());
  return std::move(*pod);
}

namespace {

std::optional<std::string> Annotation(const api::Pod& pod, std::string_view key) {
  if (pod.metadata() == nullptr || pod.metadata()->annotations() == nullptr) return std::nullopt;
  for (const api::StringEntry* e : *pod.metadata()->annotations()) {
    if (e->key() && e->key()->string_view() == key) return e->value() ? e->value()->str() : "";
  }
  return std::nullopt;
}

}  // namespace

std::string DefaultContainer(const api::Pod& pod) {
  const api::PodSpec* spec = pod.spec();
  if (spec == nullptr || spec->containers() == nullptr || spec->containers()->size() == 0) return "";
  if (auto named = Annotation(pod, "kubectl.kubernetes.io/default-container"); named && !named->empty()) {
    if (model::HasContainer(*spec, *named)) return *named;
    std::fprintf(stderr, "Default container name \"%s\" not found in pod %s\n", named->c_str(),
                 pod.metadata() && pod.metadata()->name() ? pod.metadata()->name()->c_str() : "");
  }
  const std::string first = spec->containers()->Get(0)->name() ? spec->containers()->Get(0)->name()->str() : "";
  const size_t inits = spec->init_containers() ? spec->init_containers()->size() : 0;
  if (spec->containers()->size() > 1 || inits > 0) {
    std::string all;
    auto add = [&all](const flatbuffers::String* name, const char* suffix) {
      if (!all.empty()) all += ", ";
      all += (name ? name->str() : "") + suffix;
    };
    for (const api::Container* c : *spec->containers()) add(c->name(), "");
    if (spec->init_containers()) {
      for (const api::Container* c : *spec->init_containers()) add(c->name(), " (init)");
    }
    std::fprintf(stderr, "Defaulted container \"%s\" out of: %s\n", first.c_str(), all.c_str());
  }
  return first;
}

}  // namespace podflow::cli

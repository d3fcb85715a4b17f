#include "scheduler/framework/service_info.h"

#include <algorithm>

namespace podflow::scheduler {

ServiceInfo ServiceInfoFromService(const api::Service& service) {
  ServiceInfo info;
  if (const api::ObjectMeta* m = service.metadata(); m != nullptr) {
    if (m->namespace_() != nullptr) info.namespace_ = m->namespace_()->str();
    if (m->name() != nullptr) info.name = m->name()->str();
  }
  if (service.spec() != nullptr) info.selector = LabelsFromEntries(service.spec()->selector());
  return info;
}

bool SelectsPod(const ServiceInfo& service, const Labels& pod_labels) {
  if (service.selector.empty()) return false;
  return std::all_of(service.selector.begin(), service.selector.end(), [&](const auto& kv) {
    const std::string* value = FindLabel(pod_labels, kv.first);
    return value != nullptr && *value == kv.second;
  });
}

}  // namespace podflow::scheduler

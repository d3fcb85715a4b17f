// Validating admission: Kubernetes' field checks (pkg/apis/core/validation)
// with its messages, every cause collected in the order Kubernetes finds
// them. Runs on defaulted objects. Internal to admission.
#pragma once

#include <vector>

#include "api_generated.h"
#include "model/codec.h"
#include "stages/admission/admission.h"

namespace podflow::admission {

// metadata: name (by the kind's rule: DNS-1035 label for services, DNS-1123
// label for namespaces, DNS-1123 subdomain otherwise), namespace, label and
// annotation keys and label values.
std::vector<FieldError> ValidateMeta(const model::KindInfo& kind, const api::ObjectMetaT& meta);

// spec of a pod: containers and init containers (names, images, ports,
// resources), nodeName, hostname, subdomain.
std::vector<FieldError> ValidatePodSpec(const api::PodSpecT& spec);

// spec of a service: ports, selector, clusterIP syntax, externalName.
std::vector<FieldError> ValidateServiceSpec(const api::ServiceSpecT& spec);

}  // namespace podflow::admission

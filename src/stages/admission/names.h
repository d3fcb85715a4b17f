// Kubernetes' syntax checks for names, ports and labels
// (k8s.io/apimachinery/pkg/util/validation), with their exact messages.
// Each returns every message that applies; empty means valid.
// Internal to admission.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace podflow::admission {

std::vector<std::string> IsDns1123Subdomain(std::string_view value);
std::vector<std::string> IsDns1123Label(std::string_view value);
std::vector<std::string> IsDns1035Label(std::string_view value);
// IANA_SVC_NAME: a container port name.
std::vector<std::string> IsValidPortName(std::string_view value);
// A label or annotation key: [prefix/]name.
std::vector<std::string> IsQualifiedName(std::string_view value);
std::vector<std::string> IsValidLabelValue(std::string_view value);
// A ConfigMap or Secret key (and the key an env var takes from one).
std::vector<std::string> IsConfigMapKey(std::string_view value);
// An environment variable name (or an envFrom prefix) as kube-apiserver
// takes it since names were relaxed (v1.32): printable ASCII but '='.
std::vector<std::string> IsRelaxedEnvVarName(std::string_view value);
// IPv4 dotted quad.
bool IsIpv4(std::string_view value);

// "must be between 1 and 65535, inclusive".
std::string InclusiveRangeError(int64_t lo, int64_t hi);

}  // namespace podflow::admission

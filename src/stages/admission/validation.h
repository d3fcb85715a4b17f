// Validating admission: Kubernetes' field checks (pkg/apis/core/validation)
// with its messages, every cause collected in the order Kubernetes finds
// them. Runs on defaulted objects. Internal to admission.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api_generated.h"
#include "model/codec.h"
#include "stages/admission/admission.h"

namespace podflow::admission {

using Causes = std::vector<FieldError>;

// metadata: name (by the kind's rule: DNS-1035 label for services, DNS-1123
// label for namespaces, DNS-1123 subdomain otherwise), namespace, label and
// annotation keys and label values.
Causes ValidateMeta(const model::KindInfo& kind, const api::ObjectMetaT& meta);

// A pod spec at `path` ("spec", or "spec.template.spec" in a workload):
// containers and init containers (names, images, ports, resources),
// nodeName, hostname, subdomain.
// `claim_volumes`: the volumes a StatefulSet's volumeClaimTemplates add,
// which its template's mounts may name.
Causes ValidatePodSpec(const api::PodSpecT& spec, std::string_view path = "spec",
                       const std::set<std::string>& claim_volumes = {});

// spec of a service: ports, selector, clusterIP syntax, externalName.
Causes ValidateServiceSpec(const api::ServiceSpecT& spec);

// ---- Pieces the per-kind rules share ----

// The messages of the name rule `kind` has: a DNS-1035 label (Service), a
// DNS-1123 label (Namespace, StatefulSet), a path segment (RBAC kinds), a
// DNS-1123 subdomain otherwise (CronJob: at most 52 characters).
std::vector<std::string> NameErrors(const model::KindInfo& kind, std::string_view name);
// ValidatePathSegmentName: not "." or "..", no '/' or '%'.
std::vector<std::string> PathSegmentNameErrors(std::string_view name);

// "path[i]".
std::string Index(std::string_view path, size_t i);
// One Invalid cause per message.
void AddInvalid(Causes& out, const std::string& field, std::string_view value,
                const std::vector<std::string>& messages);
// Label keys (qualified names) and values.
void ValidateLabels(Causes& out, const std::string& field,
                    const std::vector<std::unique_ptr<api::StringEntryT>>& labels);
// metav1 LabelSelector validation: matchLabels, and each expression's
// operator, key and values.
void ValidateLabelSelector(Causes& out, const std::string& path, const api::LabelSelectorT& selector);
// A count or a percentage (maxUnavailable, maxSurge, minAvailable): a
// non-negative number, or "N%" (at most 100% when `at_most_100`). Whether
// the value is zero, for the rules that forbid two zeros.
bool ValidateIntOrPercent(Causes& out, const std::string& field, const api::IntOrStringT* value, bool at_most_100);
// Go's %#v of an IntOrString, as validation messages print one:
// `intstr.IntOrString{Type:0, IntVal:0, StrVal:""}`.
std::string GoIntOrString(const api::IntOrStringT& v);
// `items` joined by `sep`, as messages list them.
template <typename Items>
std::string Join(const Items& items, std::string_view sep) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : std::string(sep)) + i;
  return out;
}

// Go's %#v of a []string, as messages print a value list: []string{"a", "b"}.
std::string GoStrings(const std::vector<std::string>& values);
// "must be greater than or equal to 0".
void ValidateNonnegative(Causes& out, const std::string& field, int64_t value);

}  // namespace podflow::admission

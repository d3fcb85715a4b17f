// Field validation of pods, services and object metadata.
#include "stages/admission/validation.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "model/objects.h"
#include "model/quantity.h"
#include "stages/admission/kind_rules.h"
#include "stages/admission/names.h"

namespace podflow::admission {
namespace {

using Causes = std::vector<FieldError>;

// A port number field: 1..65535.
void ValidatePortNumber(Causes& out, const std::string& field, int64_t port) {
  if (port < 1 || port > 65535)
    out.push_back(FieldError::InvalidInt(field, port, InclusiveRangeError(1, 65535)));
}

void ValidatePorts(Causes& out, const std::string& path,
                   const std::vector<std::unique_ptr<api::ContainerPortT>>& ports) {
  std::set<std::string> names;
  for (size_t i = 0; i < ports.size(); ++i) {
    const api::ContainerPortT& p = *ports[i];
    std::string at = Index(path, i);
    if (!p.name.empty()) {
      std::vector<std::string> errs = IsValidPortName(p.name);
      if (!errs.empty()) {
        AddInvalid(out, at + ".name", p.name, errs);
      } else if (!names.insert(p.name).second) {
        out.push_back(FieldError::Duplicate(at + ".name", p.name));
      }
    }
    ValidatePortNumber(out, at + ".containerPort", p.container_port);
    if (p.host_port != 0) ValidatePortNumber(out, at + ".hostPort", p.host_port);
    if (!p.host_ip.empty() && !IsIpv4(p.host_ip)) {
      out.push_back(FieldError::Invalid(at + ".hostIP", p.host_ip, "must be a valid IP address"));
    }
  }
}

const api::QuantityEntryT* Find(const std::vector<std::unique_ptr<api::QuantityEntryT>>& list,
                                const std::string& key) {
  for (const auto& e : list) {
    if (e->key == key) return e.get();
  }
  return nullptr;
}

// A resource Kubernetes defines itself: a bare name, or one under a
// kubernetes.io domain.
bool NativeResource(std::string_view name) {
  return name.find('/') == std::string_view::npos || name.find("kubernetes.io/") != std::string_view::npos;
}

// An extended resource (`example.com/dongle`): not native, and a valid
// name once quota prefixes it with `requests.`.
bool ExtendedResource(std::string_view name) {
  return !NativeResource(name) && !name.starts_with("requests.") &&
         IsQualifiedName("requests." + std::string(name)).empty();
}

// A resource a container may ask for, as validateContainerResourceName
// words it.
void ValidateContainerResourceName(Causes& out, const std::string& at, const std::string& name) {
  // validateResourceName: a qualified name, and a bare one a standard name
  // of any kind (quota's too) — then a container's own rule.
  std::vector<std::string> errs = IsQualifiedName(name);
  AddInvalid(out, at, name, errs);
  if (name.find('/') == std::string::npos) {
    static const std::set<std::string_view> kStandard = {
        "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
        "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "services", "replicationcontrollers",
        "resourcequotas", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
        "services.nodeports", "services.loadbalancers"};
    const bool hugepages = name.starts_with("hugepages-");
    if (errs.empty() && !hugepages && !name.starts_with("requests.hugepages-") && !kStandard.contains(name)) {
      out.push_back(FieldError::Invalid(at, name, "must be a standard resource type or fully qualified"));
    }
    if (!hugepages && name != "cpu" && name != "memory" && name != "ephemeral-storage") {
      out.push_back(FieldError::Invalid(at, name, "must be a standard resource for containers"));
    }
  } else if (!NativeResource(name) && !ExtendedResource(name)) {
    out.push_back(FieldError::Invalid(at, name, "doesn't follow extended resource name standard"));
  }
}

// A container's requests and limits, as ValidateResourceRequirements has
// them: known names, amounts not negative (whole ones for extended
// resources), requests within limits; resources that cannot be
// overcommitted (extended ones, hugepages) need a limit equal to the request.
void ValidateResources(Causes& out, const std::string& path, const api::ResourceRequirementsT& r) {
  auto amount = [&](const std::string& at, const api::QuantityEntryT& e) {
    ValidateContainerResourceName(out, at, e.key);
    Result<model::Quantity> q = model::Quantity::Parse(e.value);
    if (!q.ok()) return;  // the codec refused it already
    if (*q < model::Quantity()) out.push_back(FieldError::Invalid(at, e.value, "must be greater than or equal to 0"));
    if (ExtendedResource(e.key) && q->MilliValue() % 1000 != 0) {
      out.push_back(FieldError::Invalid(at, e.value, "must be an integer"));
    }
  };
  for (const auto& e : r.limits) amount(path + ".limits[" + e->key + "]", *e);
  for (const auto& e : r.requests) {
    amount(path + ".requests[" + e->key + "]", *e);
    const bool overcommit = NativeResource(e->key) && !e->key.starts_with("hugepages-");
    const api::QuantityEntryT* limit = Find(r.limits, e->key);
    if (limit == nullptr) {
      if (!overcommit) out.push_back(FieldError::Required(path + ".limits", "Limit must be set for non overcommitable resources"));
      continue;
    }
    Result<model::Quantity> req = model::Quantity::Parse(e->value);
    Result<model::Quantity> lim = model::Quantity::Parse(limit->value);
    if (!req.ok() || !lim.ok()) continue;
    if (!overcommit && *req != *lim) {
      out.push_back(FieldError::Invalid(path + ".requests", e->value,
                                        "must be equal to " + e->key + " limit of " + limit->value));
    } else if (*req > *lim) {
      out.push_back(FieldError::Invalid(path + ".requests", e->value,
                                        "must be less than or equal to " + e->key + " limit of " + limit->value));
    }
  }
}

// The name of an object a container reads from: required, a DNS subdomain.
void ValidateSourceName(Causes& out, const std::string& at, const std::string& name) {
  if (name.empty()) {
    out.push_back(FieldError::Required(at));
  } else {
    AddInvalid(out, at, name, IsDns1123Subdomain(name));
  }
}

// A key selector of a ConfigMap or Secret (validateConfigMapKeySelector).
template <typename Selector>
void ValidateKeySelector(Causes& out, const std::string& path, const Selector& s) {
  AddInvalid(out, path + ".name", s.name, IsDns1123Subdomain(s.name));
  if (s.key.empty()) {
    out.push_back(FieldError::Required(path + ".key"));
  } else {
    AddInvalid(out, path + ".key", s.key, IsConfigMapKey(s.key));
  }
}

// The downward API's fields an env var may read (validEnvDownwardAPIFieldPathExpressions).
const std::vector<std::string>& EnvFieldPaths() {
  static const std::vector<std::string> kPaths = {
      "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
      "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"};
  return kPaths;
}

// An env var's downward API field: one the API can convert
// (ConvertDownwardAPIFieldLabel), and one an env var may read — a label or
// annotation only by its key (`metadata.labels['app']`).
void ValidateEnvFieldRef(Causes& out, const std::string& path, const api::ObjectFieldSelectorT& ref) {
  const std::string& field = ref.field_path;
  const std::string at = path + ".fieldPath";
  if (field.empty()) {
    out.push_back(FieldError::Required(at));
    return;
  }
  auto unconvertible = [&](const std::string& why) {
    out.push_back(FieldError::Invalid(at, field, "error converting fieldPath: " + why));
  };
  if (!ref.api_version.empty() && ref.api_version != "v1") return unconvertible("unsupported pod version: " + ref.api_version);
  const size_t open = field.find("['");
  if (open != std::string::npos && field.ends_with("']")) {
    const std::string base = field.substr(0, open);
    if (base != "metadata.labels" && base != "metadata.annotations") {
      return unconvertible("field label does not support subscript: " + field);
    }
    return;
  }
  // spec.host is the old name of spec.nodeName.
  const std::string converted = field == "spec.host" ? "spec.nodeName" : field;
  static const std::set<std::string_view> kConvertible = {
      "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid",
      "spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName", "status.phase",
      "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"};
  if (!kConvertible.contains(converted)) return unconvertible("field label not supported: " + field);
  if (std::find(EnvFieldPaths().begin(), EnvFieldPaths().end(), converted) == EnvFieldPaths().end()) {
    out.push_back(FieldError::NotSupported(at, converted, EnvFieldPaths()));
  }
}

// The divisors kube-apiserver takes for a resourceFieldRef, as the
// quantity's canonical form: whole units of the resource's kind.
void ValidateDivisor(Causes& out, const std::string& at, const std::string& resource, const std::string& divisor) {
  if (divisor.empty()) return;
  Result<model::Quantity> q = model::Quantity::Parse(divisor);
  if (!q.ok() || q->IsZero()) return;  // a malformed quantity is refused where quantities are checked
  static const std::set<std::string> kCpu = {"1m", "1"};
  static const std::set<std::string> kBytes = {"1",  "1k",  "1M",  "1G",  "1T",  "1P", "1E",
                                               "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"};
  const std::string canonical = q->ToString();
  if (resource == "limits.cpu" || resource == "requests.cpu") {
    if (!kCpu.contains(canonical)) {
      out.push_back(FieldError::Invalid(at, resource, "only divisor's values 1m and 1 are supported with the cpu resource"));
    }
  } else if (resource == "limits.memory" || resource == "requests.memory") {
    if (!kBytes.contains(canonical)) {
      out.push_back(FieldError::Invalid(at, resource,
                                        "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei "
                                        "are supported with the memory resource"));
    }
  } else if (resource == "limits.ephemeral-storage" || resource == "requests.ephemeral-storage") {
    if (!kBytes.contains(canonical)) {
      out.push_back(FieldError::Invalid(at, resource,
                                        "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei "
                                        "are supported with the local ephemeral storage resource"));
    }
  }
}

void ValidateEnv(Causes& out, const std::string& path, const std::vector<std::unique_ptr<api::EnvVarT>>& env) {
  for (size_t i = 0; i < env.size(); ++i) {
    const api::EnvVarT& e = *env[i];
    const std::string at = Index(path, i);
    if (e.name.empty()) {
      out.push_back(FieldError::Required(at + ".name"));
    } else {
      AddInvalid(out, at + ".name", e.name, IsRelaxedEnvVarName(e.name));
    }
    if (!e.value_from) continue;
    const api::EnvVarSourceT& from = *e.value_from;
    const std::string from_at = at + ".valueFrom";
    int sources = 0;
    if (from.field_ref) {
      ++sources;
      ValidateEnvFieldRef(out, from_at + ".fieldRef", *from.field_ref);
    }
    if (from.resource_field_ref) {
      ++sources;
      static const std::vector<std::string> kResources = {
          "limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage",
          "requests.memory"};
      const std::string& resource = from.resource_field_ref->resource;
      const bool hugepages = resource.starts_with("limits.hugepages-") || resource.starts_with("requests.hugepages-");
      if (resource.empty()) {
        out.push_back(FieldError::Required(from_at + ".resourceFieldRef.resource"));
      } else if (!hugepages && std::find(kResources.begin(), kResources.end(), resource) == kResources.end()) {
        out.push_back(FieldError::NotSupported(from_at + ".resourceFieldRef.resource", resource, kResources));
      }
      ValidateDivisor(out, from_at + ".resourceFieldRef.divisor", resource, from.resource_field_ref->divisor);
    }
    if (from.config_map_key_ref) {
      ++sources;
      ValidateKeySelector(out, from_at + ".configMapKeyRef", *from.config_map_key_ref);
    }
    if (from.secret_key_ref) {
      ++sources;
      ValidateKeySelector(out, from_at + ".secretKeyRef", *from.secret_key_ref);
    }
    if (sources == 0) {
      out.push_back(FieldError::Invalid(
          from_at, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"));
    } else if (!e.value.empty()) {
      out.push_back(FieldError::Invalid(from_at, "", "may not be specified when `value` is not empty"));
    } else if (sources > 1) {
      out.push_back(FieldError::Invalid(from_at, "", "may not have more than one field specified at a time"));
    }
  }
}

void ValidateEnvFrom(Causes& out, const std::string& path,
                     const std::vector<std::unique_ptr<api::EnvFromSourceT>>& env_from) {
  for (size_t i = 0; i < env_from.size(); ++i) {
    const api::EnvFromSourceT& e = *env_from[i];
    const std::string at = Index(path, i);
    if (!e.prefix.empty()) AddInvalid(out, at + ".prefix", e.prefix, IsRelaxedEnvVarName(e.prefix));
    int sources = 0;
    if (e.config_map_ref) {
      ++sources;
      ValidateSourceName(out, at + ".configMapRef.name", e.config_map_ref->name);
    }
    if (e.secret_ref) {
      ++sources;
      ValidateSourceName(out, at + ".secretRef.name", e.secret_ref->name);
    }
    if (sources == 0) {
      out.push_back(FieldError::Invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"));
    } else if (sources > 1) {
      out.push_back(FieldError::Invalid(path, "", "may not have more than one field specified at a time"));
    }
  }
}

// Containers of one list; `names` holds every container name seen so far in
// the pod (a name may appear once across containers and init containers).
// Each mount names a volume of the pod, at a path of its own.
void ValidateVolumeMounts(Causes& out, const std::string& path,
                          const std::vector<std::unique_ptr<api::VolumeMountT>>& mounts,
                          const std::set<std::string>& volumes) {
  std::set<std::string> paths;
  for (size_t i = 0; i < mounts.size(); ++i) {
    const api::VolumeMountT& m = *mounts[i];
    const std::string at = Index(path, i);
    if (m.name.empty()) out.push_back(FieldError::Required(at + ".name"));
    if (!volumes.contains(m.name)) out.push_back(FieldError::NotFound(at + ".name", m.name));
    if (m.mount_path.empty()) out.push_back(FieldError::Required(at + ".mountPath"));
    if (!paths.insert(m.mount_path).second) {
      out.push_back(FieldError::Invalid(at + ".mountPath", m.mount_path, "must be unique"));
    }
  }
}

// A port a probe or hook names: a number 1-65535, or a port name.
void ValidatePortNumOrName(Causes& out, const std::string& at, const api::IntOrStringT* port) {
  if (port == nullptr) return;
  if (port->type == api::IntOrStringType::String) {
    AddInvalid(out, at, port->str_val, IsValidPortName(port->str_val));
  } else {
    ValidatePortNumber(out, at, port->int_val);
  }
}

enum class ProbeKind { kLiveness, kReadiness, kStartup };

// A probe has exactly one handler (the second one set is refused), a port
// that can be one, and no negative numbers; liveness and startup probes
// succeed at once (successThreshold 1), and only readiness probes may not
// set their own grace period.
void ValidateProbe(Causes& out, const std::string& path, const api::ProbeT* probe, ProbeKind kind) {
  if (probe == nullptr) return;
  int handlers = 0;
  for (auto [name, set] : {std::pair{"exec", probe->exec != nullptr}, std::pair{"httpGet", probe->http_get != nullptr},
                           std::pair{"tcpSocket", probe->tcp_socket != nullptr},
                           std::pair{"grpc", probe->grpc != nullptr}}) {
    if (!set) continue;
    if (handlers > 0) {
      out.push_back(FieldError::Forbidden(path + "." + name, "may not specify more than 1 handler type"));
    } else {
      ++handlers;
    }
  }
  if (handlers == 0) out.push_back(FieldError::Required(path, "must specify a handler type"));
  if (probe->http_get) ValidatePortNumOrName(out, path + ".httpGet.port", probe->http_get->port.get());
  if (probe->tcp_socket) ValidatePortNumOrName(out, path + ".tcpSocket.port", probe->tcp_socket->port.get());
  if (probe->grpc) ValidatePortNumber(out, path + ".grpc.port", probe->grpc->port);
  for (auto [name, value] : {std::pair{".initialDelaySeconds", probe->initial_delay_seconds},
                             std::pair{".timeoutSeconds", probe->timeout_seconds},
                             std::pair{".periodSeconds", probe->period_seconds},
                             std::pair{".successThreshold", probe->success_threshold},
                             std::pair{".failureThreshold", probe->failure_threshold}}) {
    ValidateNonnegative(out, path + name, value);
  }
  if (probe->termination_grace_period_seconds && *probe->termination_grace_period_seconds <= 0) {
    out.push_back(FieldError::InvalidInt(path + ".terminationGracePeriodSeconds",
                                         *probe->termination_grace_period_seconds, "must be greater than 0"));
  }
  if (kind != ProbeKind::kReadiness && probe->success_threshold != 1) {
    out.push_back(FieldError::InvalidInt(path + ".successThreshold", probe->success_threshold, "must be 1"));
  }
  if (kind == ProbeKind::kReadiness && probe->termination_grace_period_seconds) {
    out.push_back(FieldError::InvalidInt(path + ".terminationGracePeriodSeconds",
                                         *probe->termination_grace_period_seconds,
                                         "must not be set for readinessProbes"));
  }
}

void ValidateContainers(Causes& out, const std::string& path,
                        const std::vector<std::unique_ptr<api::ContainerT>>& containers,
                        std::set<std::string>& names, const std::set<std::string>& volumes) {
  for (size_t i = 0; i < containers.size(); ++i) {
    const api::ContainerT& c = *containers[i];
    std::string at = Index(path, i);
    if (c.name.empty()) {
      out.push_back(FieldError::Required(at + ".name"));
    } else {
      std::vector<std::string> errs = IsDns1123Label(c.name);
      if (!errs.empty()) {
        AddInvalid(out, at + ".name", c.name, errs);
      } else if (!names.insert(c.name).second) {
        out.push_back(FieldError::Duplicate(at + ".name", c.name));
      }
    }
    if (c.image.empty()) {
      out.push_back(FieldError::Required(at + ".image"));
    } else if (std::isspace(static_cast<unsigned char>(c.image.front())) ||
               std::isspace(static_cast<unsigned char>(c.image.back()))) {
      out.push_back(
          FieldError::Invalid(at + ".image", c.image, "must not have leading or trailing whitespace"));
    }
    ValidatePorts(out, at + ".ports", c.ports);
    ValidateEnv(out, at + ".env", c.env);
    ValidateEnvFrom(out, at + ".envFrom", c.env_from);
    ValidateVolumeMounts(out, at + ".volumeMounts", c.volume_mounts, volumes);
    if (c.resources) ValidateResources(out, at + ".resources", *c.resources);
    ValidateProbe(out, at + ".livenessProbe", c.liveness_probe.get(), ProbeKind::kLiveness);
    ValidateProbe(out, at + ".readinessProbe", c.readiness_probe.get(), ProbeKind::kReadiness);
    ValidateProbe(out, at + ".startupProbe", c.startup_probe.get(), ProbeKind::kStartup);
  }
}

// The values of a label or node selector requirement at `at`: In and
// NotIn take some (`takes_values`), Exists and DoesNotExist none.
void ValidateSetValues(Causes& out, const std::string& at, bool takes_values, size_t count) {
  if (takes_values && count == 0) {
    out.push_back(FieldError::Required(at + ".values", "must be specified when `operator` is 'In' or 'NotIn'"));
  } else if (!takes_values && count > 0) {
    out.push_back(
        FieldError::Forbidden(at + ".values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  }
}

// A node selector requirement's values, as its operator wants them.
void ValidateNodeSelectorTerm(Causes& out, const std::string& path, const api::NodeSelectorTermT& term) {
  for (auto [name, list] : {std::pair{".matchExpressions", &term.match_expressions},
                            std::pair{".matchFields", &term.match_fields}}) {
    for (size_t i = 0; i < list->size(); ++i) {
      const api::NodeSelectorRequirementT& r = *(*list)[i];
      const std::string at = Index(path + name, i);
      switch (r.operator_) {
        case api::NodeSelectorOperator::In:
        case api::NodeSelectorOperator::NotIn:
          ValidateSetValues(out, at, true, r.values.size());
          break;
        case api::NodeSelectorOperator::Exists:
        case api::NodeSelectorOperator::DoesNotExist:
          ValidateSetValues(out, at, false, r.values.size());
          break;
        case api::NodeSelectorOperator::Gt:
        case api::NodeSelectorOperator::Lt:
          if (r.values.size() != 1) {
            out.push_back(FieldError::Required(at + ".values",
                                               "must be specified single value when `operator` is 'Lt' or 'Gt'"));
          }
          break;
        default:
          out.push_back(FieldError::NotSupported(at + ".operator", "", {"DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"}));
      }
      if (name == std::string_view(".matchExpressions")) AddInvalid(out, at + ".key", r.key, IsQualifiedName(r.key));
    }
  }
}

void ValidateAffinity(Causes& out, const std::string& path, const api::AffinityT* affinity) {
  if (affinity == nullptr || affinity->node_affinity == nullptr) return;
  const api::NodeAffinityT& node = *affinity->node_affinity;
  const std::string at = path + ".nodeAffinity";
  if (const auto& required = node.required_during_scheduling_ignored_during_execution) {
    const std::string terms = at + ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
    if (required->node_selector_terms.empty()) out.push_back(FieldError::Required(terms, "must have at least one node selector term"));
    for (size_t i = 0; i < required->node_selector_terms.size(); ++i) {
      ValidateNodeSelectorTerm(out, Index(terms, i), *required->node_selector_terms[i]);
    }
  }
  const auto& preferred = node.preferred_during_scheduling_ignored_during_execution;
  for (size_t i = 0; i < preferred.size(); ++i) {
    const std::string term = Index(at + ".preferredDuringSchedulingIgnoredDuringExecution", i);
    if (preferred[i]->weight < 1 || preferred[i]->weight > 100) {
      out.push_back(FieldError::InvalidInt(term + ".weight", preferred[i]->weight, "must be in the range 1-100"));
    }
    if (preferred[i]->preference) ValidateNodeSelectorTerm(out, term + ".preference", *preferred[i]->preference);
  }
}

// Go's %#v of a toleration, as the Exists-with-a-value message prints it.
std::string GoToleration(const api::TolerationT& t) {
  const std::string op =
      t.operator_ == api::TolerationOperator::Unset ? "" : api::EnumNameTolerationOperator(t.operator_);
  const std::string effect = t.effect == api::TaintEffect::Unset ? "" : api::EnumNameTaintEffect(t.effect);
  return "core.Toleration{Key:" + GoQuote(t.key) + ", Operator:" + GoQuote(op) + ", Value:" + GoQuote(t.value) +
         ", Effect:" + GoQuote(effect) + ", TolerationSeconds:" +
         (t.toleration_seconds ? "&" + std::to_string(*t.toleration_seconds) : std::string("(*int64)(nil)")) + "}";
}

void ValidateTolerations(Causes& out, const std::string& path,
                         const std::vector<std::unique_ptr<api::TolerationT>>& tolerations) {
  for (size_t i = 0; i < tolerations.size(); ++i) {
    const api::TolerationT& t = *tolerations[i];
    const std::string at = Index(path, i);
    if (!t.key.empty()) AddInvalid(out, at + ".key", t.key, IsQualifiedName(t.key));
    const std::string op = t.operator_ == api::TolerationOperator::Unset ? "" : api::EnumNameTolerationOperator(t.operator_);
    if (t.key.empty() && t.operator_ != api::TolerationOperator::Exists) {
      out.push_back(FieldError::Invalid(at + ".operator", op,
                                        "operator must be Exists when `key` is empty, which means \"match all values "
                                        "and all keys\""));
    }
    if (t.toleration_seconds && t.effect != api::TaintEffect::NoExecute) {
      out.push_back(FieldError::Invalid(
          at + ".effect", t.effect == api::TaintEffect::Unset ? "" : api::EnumNameTaintEffect(t.effect),
          "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (t.operator_ == api::TolerationOperator::Exists) {
      if (!t.value.empty()) {
        out.push_back(FieldError::InvalidRendered(at + ".operator", GoToleration(t),
                                                  "value must be empty when `operator` is 'Exists'"));
      }
    } else if (std::vector<std::string> errs = IsValidLabelValue(t.value); !errs.empty()) {
      std::string joined;
      for (const std::string& e : errs) joined += (joined.empty() ? "" : ";") + e;
      out.push_back(FieldError::Invalid(at + ".operator", t.value, joined));
    }
  }
}

}  // namespace

std::vector<std::string> PathSegmentNameErrors(std::string_view name) {
  if (name == ".") return {"may not be '.'"};
  if (name == "..") return {"may not be '..'"};
  std::vector<std::string> out;
  if (name.find('/') != std::string_view::npos) out.push_back("may not contain '/'");
  if (name.find('%') != std::string_view::npos) out.push_back("may not contain '%'");
  return out;
}

std::vector<std::string> NameErrors(const model::KindInfo& kind, std::string_view name) {
  const std::string_view k = kind.kind;
  if (k == "Service") return IsDns1035Label(name);
  if (k == "Namespace" || k == "StatefulSet") return IsDns1123Label(name);
  if (model::ApiGroup(kind) == "rbac.authorization.k8s.io") return PathSegmentNameErrors(name);
  std::vector<std::string> out = IsDns1123Subdomain(name);
  // A CronJob's name leaves room for the suffix of the Jobs it makes.
  if (k == "CronJob" && name.size() > 52) out.push_back("must be no more than 52 characters");
  return out;
}

std::string Index(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

void AddInvalid(Causes& out, const std::string& field, std::string_view value,
                const std::vector<std::string>& messages) {
  for (const std::string& m : messages) out.push_back(FieldError::Invalid(field, value, m));
}

void ValidateLabels(Causes& out, const std::string& field,
                    const std::vector<std::unique_ptr<api::StringEntryT>>& labels) {
  for (const auto& e : labels) {
    AddInvalid(out, field, e->key, IsQualifiedName(e->key));
    AddInvalid(out, field, e->value, IsValidLabelValue(e->value));
  }
}

Causes ValidateMeta(const model::KindInfo& kind, const api::ObjectMetaT& meta) {
  Causes out;
  if (meta.name.empty()) {
    out.push_back(FieldError::Required("metadata.name", "name or generateName is required"));
  } else {
    AddInvalid(out, "metadata.name", meta.name, NameErrors(kind, meta.name));
  }
  if (kind.namespaced && !meta.namespace_.empty()) {
    AddInvalid(out, "metadata.namespace", meta.namespace_, IsDns1123Label(meta.namespace_));
  }
  ValidateLabels(out, "metadata.labels", meta.labels);
  size_t annotation_bytes = 0;
  for (const auto& e : meta.annotations) {
    std::string lower = e->key;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    AddInvalid(out, "metadata.annotations", e->key, IsQualifiedName(lower));
    annotation_bytes += e->key.size() + e->value.size();
  }
  // Keys and values together, as kube-apiserver counts them.
  constexpr size_t kTotalAnnotationBytes = 256 * 1024;
  if (annotation_bytes > kTotalAnnotationBytes) {
    out.push_back(FieldError::TooLong("metadata.annotations", kTotalAnnotationBytes));
  }
  // Owner references name their owner fully; one at most is its controller.
  std::string controller;
  for (const auto& ref : meta.owner_references) {
    const std::string at = "metadata.ownerReferences";
    const size_t slash = ref->api_version.rfind('/');
    const std::string version = slash == std::string::npos ? ref->api_version : ref->api_version.substr(slash + 1);
    if (version.empty()) out.push_back(FieldError::Invalid(at + ".apiVersion", ref->api_version, "version must not be empty"));
    if (ref->kind.empty()) out.push_back(FieldError::Invalid(at + ".kind", ref->kind, "kind must not be empty"));
    if (ref->name.empty()) out.push_back(FieldError::Invalid(at + ".name", ref->name, "name must not be empty"));
    if (ref->uid.empty()) out.push_back(FieldError::Invalid(at + ".uid", ref->uid, "uid must not be empty"));
    if (!ref->controller.value_or(false)) continue;
    const std::string named = ref->kind + "/" + ref->name;
    if (controller.empty()) {
      controller = named;
    } else {
      out.push_back(FieldError::InvalidRendered(
          at, "[]v1.OwnerReference{...}",
          "Only one reference can have Controller set to true. Found \"true\" in references for " + controller +
              " and " + named));
    }
  }
  // Finalizers are qualified names; the garbage collector's two ask for
  // opposite things and may not both be set.
  bool orphan = false, foreground = false;
  std::string listed;
  for (const std::string& f : meta.finalizers) {
    AddInvalid(out, "metadata.finalizers", f, IsQualifiedName(f));
    orphan |= f == model::kOrphanFinalizer;
    foreground |= f == model::kForegroundFinalizer;
    listed += (listed.empty() ? "" : ", ") + GoQuote(f);
  }
  if (orphan && foreground) {
    out.push_back(FieldError::InvalidRendered("metadata.finalizers", "[]string{" + listed + "}",
                                              "finalizer orphan and foregroundDeletion cannot be both set"));
  }
  return out;
}

Causes ValidatePodSpec(const api::PodSpecT& spec, std::string_view path, const std::set<std::string>& claim_volumes) {
  Causes out;
  const std::string at(path);
  std::set<std::string> names;
  std::set<std::string> volumes = claim_volumes;
  for (const auto& v : spec.volumes) volumes.insert(v->name);
  if (spec.containers.empty()) out.push_back(FieldError::Required(at + ".containers"));
  ValidateContainers(out, at + ".containers", spec.containers, names, volumes);
  ValidateContainers(out, at + ".initContainers", spec.init_containers, names, volumes);
  if (!spec.node_name.empty()) {
    AddInvalid(out, at + ".nodeName", spec.node_name, IsDns1123Subdomain(spec.node_name));
  }
  if (!spec.hostname.empty())
    AddInvalid(out, at + ".hostname", spec.hostname, IsDns1123Label(spec.hostname));
  if (!spec.subdomain.empty()) {
    AddInvalid(out, at + ".subdomain", spec.subdomain, IsDns1123Label(spec.subdomain));
  }
  ValidateLabels(out, at + ".nodeSelector", spec.node_selector);
  ValidateAffinity(out, at + ".affinity", spec.affinity.get());
  ValidateTolerations(out, at + ".tolerations", spec.tolerations);
  std::set<std::string> gates;
  for (size_t i = 0; i < spec.scheduling_gates.size(); ++i) {
    const std::string& gate = spec.scheduling_gates[i]->name;
    AddInvalid(out, Index(at + ".schedulingGates", i), gate, IsQualifiedName(gate));
    if (!gates.insert(gate).second) out.push_back(FieldError::Duplicate(Index(at + ".schedulingGates", i), gate));
  }
  return out;
}

void ValidateLabelSelector(Causes& out, const std::string& path, const api::LabelSelectorT& selector) {
  ValidateLabels(out, path + ".matchLabels", selector.match_labels);
  for (size_t i = 0; i < selector.match_expressions.size(); ++i) {
    const api::LabelSelectorRequirementT& r = *selector.match_expressions[i];
    const std::string at = Index(path + ".matchExpressions", i);
    switch (r.operator_) {
      case api::LabelSelectorOperator::In:
      case api::LabelSelectorOperator::NotIn:
        ValidateSetValues(out, at, true, r.values.size());
        break;
      case api::LabelSelectorOperator::Exists:
      case api::LabelSelectorOperator::DoesNotExist:
        ValidateSetValues(out, at, false, r.values.size());
        break;
      case api::LabelSelectorOperator::Unset:
        out.push_back(FieldError::Invalid(at + ".operator", "", "not a valid selector operator"));
        break;
    }
    AddInvalid(out, at + ".key", r.key, IsQualifiedName(r.key));
    for (size_t j = 0; j < r.values.size(); ++j) {
      AddInvalid(out, Index(at + ".values", j), r.values[j], IsValidLabelValue(r.values[j]));
    }
  }
}

// The percentage a "25%" string holds, or nullopt when it is not one.
namespace {

std::optional<int64_t> PercentValue(std::string_view s) {
  if (s.size() < 2 || s.back() != '%') return std::nullopt;
  int64_t n = 0;
  for (char c : s.substr(0, s.size() - 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    n = std::min<int64_t>(n * 10 + (c - '0'), 1'000'000);
  }
  return n;
}

}  // namespace

bool ValidateIntOrPercent(Causes& out, const std::string& field, const api::IntOrStringT* v, bool at_most_100) {
  if (v == nullptr) return false;
  if (v->type == api::IntOrStringType::Int) {
    ValidateNonnegative(out, field, v->int_val);
    return v->int_val == 0;
  }
  std::optional<int64_t> pct = PercentValue(v->str_val);
  if (!pct) {
    out.push_back(FieldError::InvalidRendered(field, GoIntOrString(*v),
                                              "a valid percent string must be a numeric string followed by an ending "
                                              "'%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"));
    return true;  // Kubernetes reads what is not a percentage as 0
  }
  if (at_most_100 && *pct > 100) {
    out.push_back(FieldError::InvalidRendered(field, GoIntOrString(*v), "must not be greater than 100%"));
  }
  return *pct == 0;
}

std::string GoStrings(const std::vector<std::string>& values) {
  std::string out = "[]string{";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + GoQuote(values[i]);
  return out + "}";
}

std::string GoIntOrString(const api::IntOrStringT& v) {
  const bool is_int = v.type == api::IntOrStringType::Int;
  return "intstr.IntOrString{Type:" + std::string(is_int ? "0" : "1") +
         ", IntVal:" + std::to_string(is_int ? v.int_val : 0) + ", StrVal:" + model::GoQuote(is_int ? "" : v.str_val) +
         "}";
}

void ValidateNonnegative(Causes& out, const std::string& field, int64_t value) {
  if (value < 0) out.push_back(FieldError::InvalidInt(field, value, "must be greater than or equal to 0"));
}

Causes ValidateServiceSpec(const api::ServiceSpecT& spec) {
  Causes out;
  bool headless = spec.cluster_ip == "None";
  bool external_name = spec.type == api::ServiceType::ExternalName;
  if (spec.ports.empty() && !headless && !external_name)
    out.push_back(FieldError::Required("spec.ports"));
  if (external_name && spec.external_name.empty())
    out.push_back(FieldError::Required("spec.externalName"));
  std::set<std::string> names;
  std::set<std::pair<api::Protocol, int32_t>> node_ports;
  bool require_name = spec.ports.size() > 1;
  for (size_t i = 0; i < spec.ports.size(); ++i) {
    const api::ServicePortT& p = *spec.ports[i];
    std::string at = Index("spec.ports", i);
    if (p.name.empty()) {
      if (require_name) out.push_back(FieldError::Required(at + ".name"));
    } else {
      std::vector<std::string> errs = IsDns1123Label(p.name);
      if (!errs.empty()) {
        AddInvalid(out, at + ".name", p.name, errs);
      } else if (!names.insert(p.name).second) {
        out.push_back(FieldError::Duplicate(at + ".name", p.name));
      }
    }
    ValidatePortNumber(out, at + ".port", p.port);
    if (p.target_port) {
      if (p.target_port->type == api::IntOrStringType::Int) {
        ValidatePortNumber(out, at + ".targetPort", p.target_port->int_val);
      } else {
        AddInvalid(out, at + ".targetPort", p.target_port->str_val,
                   IsValidPortName(p.target_port->str_val));
      }
    }
    // The range is the allocator's (the server's --service-node-port-range).
    if (p.node_port != 0) {
      if (spec.type == api::ServiceType::ClusterIP) {
        out.push_back(
            FieldError::Forbidden(at + ".nodePort", "may not be used when `type` is 'ClusterIP'"));
      } else if (!node_ports.emplace(p.protocol, p.node_port).second) {
        out.push_back(FieldError::DuplicateInt(at + ".nodePort", p.node_port));
      }
    }
  }
  if (spec.health_check_node_port != 0 && !NeedsHealthCheck(spec)) {
    out.push_back(FieldError::InvalidInt("spec.healthCheckNodePort", spec.health_check_node_port,
                                         "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` "
                                         "is 'Local'"));
  }
  ValidateLabels(out, "spec.selector", spec.selector);
  if (!spec.cluster_ip.empty() && !headless && !IsIpv4(spec.cluster_ip)) {
    out.push_back(FieldError::Invalid("spec.clusterIPs[0]", spec.cluster_ip,
                                 "must be a valid IP address, (e.g. 10.9.8.7)"));
  }
  return out;
}

}  // namespace podflow::admission

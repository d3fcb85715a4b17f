// `describe pod`: kubectl's describePod.
#include <algorithm>
#include <map>
#include <set>

#include "cli/describe.h"
#include "cli/describe_util.h"
#include "model/objects.h"
#include "model/quantity.h"

namespace podflow::cli {
namespace {

using Containers = std::vector<std::unique_ptr<api::ContainerT>>;
using Statuses = std::vector<std::unique_ptr<api::ContainerStatusT>>;

std::string BoolText(bool b) { return b ? "true" : "false"; }

// qos.GetPodQOS, over cpu and memory.
std::string ComputeQos(const api::PodSpecT& spec) {
  std::map<std::string, model::Quantity> requests, limits;
  bool guaranteed = true;
  auto add = [](std::map<std::string, model::Quantity>& into, const std::string& name,
                const model::Quantity& q) {
    auto it = into.find(name);
    if (it == into.end()) {
      into[name] = q;
    } else {
      into[name] = model::Quantity::FromMilli(it->second.MilliValue() + q.MilliValue());
    }
  };
  auto visit = [&](const Containers& containers) {
    for (const auto& c : containers) {
      std::set<std::string> limits_found;
      if (c->resources) {
        for (const auto& e : c->resources->requests) {
          if (e->key != "cpu" && e->key != "memory") continue;
          auto q = model::Quantity::Parse(e->value);
          if (q.ok() && !q->IsZero()) add(requests, e->key, *q);
        }
        for (const auto& e : c->resources->limits) {
          if (e->key != "cpu" && e->key != "memory") continue;
          auto q = model::Quantity::Parse(e->value);
          if (q.ok() && !q->IsZero()) {
            limits_found.insert(e->key);
            add(limits, e->key, *q);
          }
        }
      }
      if (limits_found.size() != 2) guaranteed = false;
    }
  };
  visit(spec.init_containers);
  visit(spec.containers);
  if (requests.empty() && limits.empty()) return "BestEffort";
  if (guaranteed) {
    for (const auto& [name, q] : requests) {
      auto it = limits.find(name);
      if (it == limits.end() || !(it->second == q)) guaranteed = false;
    }
  }
  return guaranteed && limits.size() == 2 ? "Guaranteed" : "Burstable";
}

// Values of env vars taken from the pod's fields (kubectl's EnvValueRetriever);
// a pod template has none.
std::string FieldValue(const api::PodT* pod_ptr, const std::string& path) {
  if (pod_ptr == nullptr) return "";
  const api::PodT& pod = *pod_ptr;
  const api::ObjectMetaT* m = pod.metadata.get();
  if (path == "metadata.name") return m ? m->name : "";
  if (path == "metadata.namespace") return m ? m->namespace_ : "";
  if (path == "metadata.uid") return m ? m->uid : "";
  if (path == "spec.nodeName") return pod.spec ? pod.spec->node_name : "";
  if (path == "spec.serviceAccountName") return pod.spec ? pod.spec->service_account_name : "";
  if (path == "status.hostIP") return pod.status ? pod.status->host_ip : "";
  if (path == "status.podIP") return pod.status ? pod.status->pod_ip : "";
  return "";
}

std::string ProbeText(const api::ProbeT& p) {
  auto or_default = [](int v, int d) { return v == 0 ? d : v; };  // the API's defaults
  std::string attrs = "delay=" + std::to_string(p.initial_delay_seconds) +
                      "s timeout=" + std::to_string(or_default(p.timeout_seconds, 1)) +
                      "s period=" + std::to_string(or_default(p.period_seconds, 10)) +
                      "s #success=" + std::to_string(or_default(p.success_threshold, 1)) +
                      " #failure=" + std::to_string(or_default(p.failure_threshold, 3));
  if (p.exec) return "exec [" + Join(p.exec->command, " ") + "] " + attrs;
  if (p.http_get) {
    std::string scheme = p.http_get->scheme == api::URIScheme::HTTPS ? "https" : "http";
    std::string port = IntOrStringText(p.http_get->port.get());
    std::string host = port.empty() ? p.http_get->host : JoinHostPort(p.http_get->host, port);
    return "http-get " + scheme + "://" + host + p.http_get->path + " " + attrs;
  }
  if (p.tcp_socket) {
    return "tcp-socket " + p.tcp_socket->host + ":" + IntOrStringText(p.tcp_socket->port.get()) +
           " " + attrs;
  }
  if (p.grpc) {
    return "grpc <pod>:" + std::to_string(p.grpc->port) + " " + p.grpc->service + " " + attrs;
  }
  return "unknown " + attrs;
}

void DescribeState(DescribeWriter& w, const std::string& name, const api::ContainerStateT* s) {
  if (s && s->running) {
    w.Write(2, name + ":\tRunning\n");
    w.Write(3, "Started:\t" + FormatRfc1123Z(s->running->started_at) + "\n");
  } else if (s && s->waiting) {
    w.Write(2, name + ":\tWaiting\n");
    if (!s->waiting->reason.empty()) w.Write(3, "Reason:\t" + s->waiting->reason + "\n");
  } else if (s && s->terminated) {
    const api::ContainerStateTerminatedT& t = *s->terminated;
    w.Write(2, name + ":\tTerminated\n");
    if (!t.reason.empty()) w.Write(3, "Reason:\t" + t.reason + "\n");
    if (!t.message.empty()) w.Write(3, "Message:\t" + t.message + "\n");
    w.Write(3, "Exit Code:\t" + std::to_string(t.exit_code) + "\n");
    if (t.signal > 0) w.Write(3, "Signal:\t" + std::to_string(t.signal) + "\n");
    w.Write(3, "Started:\t" + FormatRfc1123Z(t.started_at) + "\n");
    w.Write(3, "Finished:\t" + FormatRfc1123Z(t.finished_at) + "\n");
  } else {
    w.Write(2, name + ":\tWaiting\n");
  }
}

}  // namespace

void DescribeContainers(DescribeWriter& w, const api::PodT* pod, std::string_view space, const std::string& label,
                        const Containers& containers, const Statuses& statuses) {
  w.Write(0, std::string(space) + label + ":" + (containers.empty() ? " <none>" : "") + "\n");
  const std::string name_indent = space.empty() ? "" : " ";
  for (const auto& c : containers) {
    const api::ContainerStatusT* status = nullptr;
    for (const auto& s : statuses) {
      if (s->name == c->name) status = s.get();
    }
    w.Write(1, name_indent + c->name + ":\n");
    if (status) w.Write(2, "Container ID:\t" + status->container_id + "\n");
    w.Write(2, "Image:\t" + c->image + "\n");
    if (status) w.Write(2, "Image ID:\t" + status->image_id + "\n");
    std::vector<std::string> ports, host_ports;
    for (const auto& p : c->ports) {
      ports.push_back(std::to_string(p->container_port) + "/" + ProtocolName(p->protocol));
      host_ports.push_back(std::to_string(p->host_port) + "/" + ProtocolName(p->protocol));
    }
    std::string port = Join(ports, ", "), host_port = Join(host_ports, ", ");
    if (port.find(',') != std::string::npos) {
      w.Write(2, "Ports:\t" + port + "\n");
    } else {
      w.Write(2, "Port:\t" + (port.empty() ? "<none>" : port) + "\n");
    }
    if (host_port.find(',') != std::string::npos) {
      w.Write(2, "Host Ports:\t" + host_port + "\n");
    } else {
      w.Write(2, "Host Port:\t" + (host_port.empty() ? "<none>" : host_port) + "\n");
    }
    if (!c->restart_policy.empty()) w.Write(2, "Restart Policy:\t" + c->restart_policy + "\n");
    for (const auto* list : {&c->command, &c->args}) {
      if (list->empty()) continue;
      w.Write(2, list == &c->command ? "Command:\n" : "Args:\n");
      for (const std::string& arg : *list) {
        size_t start = 0;
        while (true) {
          size_t nl = arg.find('\n', start);
          w.Write(3, arg.substr(start, nl == std::string::npos ? std::string::npos : nl - start) + "\n");
          if (nl == std::string::npos) break;
          start = nl + 1;
        }
      }
    }
    if (status) {
      DescribeState(w, "State", status->state.get());
      if (status->last_state && status->last_state->terminated) {
        DescribeState(w, "Last State", status->last_state.get());
      }
      w.Write(2, std::string("Ready:\t") + (status->ready ? "True" : "False") + "\n");
      w.Write(2, "Restart Count:\t" + std::to_string(status->restart_count) + "\n");
    }
    if (c->resources) {
      if (!c->resources->limits.empty()) w.Write(2, "Limits:\n");
      for (const auto& e : c->resources->limits) w.Write(3, e->key + ":\t" + e->value + "\n");
      if (!c->resources->requests.empty()) w.Write(2, "Requests:\n");
      for (const auto& e : c->resources->requests) w.Write(3, e->key + ":\t" + e->value + "\n");
    }
    if (c->liveness_probe) w.Write(2, "Liveness:\t" + ProbeText(*c->liveness_probe) + "\n");
    if (c->readiness_probe) w.Write(2, "Readiness:\t" + ProbeText(*c->readiness_probe) + "\n");
    if (c->startup_probe) w.Write(2, "Startup:\t" + ProbeText(*c->startup_probe) + "\n");
    if (!c->env_from.empty()) {
      w.Write(2, "Environment Variables from:\n");
      for (const auto& e : c->env_from) {
        std::string from, name;
        bool optional = false;
        if (e->config_map_ref) {
          from = "ConfigMap", name = e->config_map_ref->name;
          optional = e->config_map_ref->optional.value_or(false);
        } else if (e->secret_ref) {
          from = "Secret", name = e->secret_ref->name;
          optional = e->secret_ref->optional.value_or(false);
        }
        if (!e->prefix.empty()) from += " with prefix '" + e->prefix + "'";
        w.Write(3, name + "\t" + from + "\tOptional: " + BoolText(optional) + "\n");
      }
    }
    w.Write(2, std::string("Environment:") + (c->env.empty() ? "\t<none>" : "") + "\n");
    for (const auto& e : c->env) {
      const api::EnvVarSourceT* from = e->value_from.get();
      if (from == nullptr) {
        size_t start = 0;
        bool first = true;
        while (true) {
          size_t nl = e->value.find('\n', start);
          std::string line = e->value.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
          w.Write(3, (first ? e->name + ":\t" : std::string("\t")) + line + "\n");
          first = false;
          if (nl == std::string::npos) break;
          start = nl + 1;
        }
      } else if (from->field_ref) {
        w.Write(3, e->name + ":\t" + FieldValue(pod, from->field_ref->field_path) + " (" +
                       from->field_ref->api_version + ":" + from->field_ref->field_path + ")\n");
      } else if (from->resource_field_ref) {
        w.Write(3, e->name + ":\t (" + from->resource_field_ref->resource + ")\n");
      } else if (from->secret_key_ref) {
        w.Write(3, e->name + ":\t<set to the key '" + from->secret_key_ref->key + "' in secret '" +
                       from->secret_key_ref->name + "'>\tOptional: " +
                       BoolText(from->secret_key_ref->optional.value_or(false)) + "\n");
      } else if (from->config_map_key_ref) {
        w.Write(3, e->name + ":\t<set to the key '" + from->config_map_key_ref->key +
                       "' of config map '" + from->config_map_key_ref->name + "'>\tOptional: " +
                       BoolText(from->config_map_key_ref->optional.value_or(false)) + "\n");
      }
    }
    w.Write(2, std::string("Mounts:") + (c->volume_mounts.empty() ? "\t<none>" : "") + "\n");
    std::vector<const api::VolumeMountT*> mounts;
    for (const auto& m : c->volume_mounts) mounts.push_back(m.get());
    std::stable_sort(mounts.begin(), mounts.end(),
                     [](auto* a, auto* b) { return a->mount_path < b->mount_path; });
    for (const api::VolumeMountT* m : mounts) {
      std::string flags = m->read_only ? "ro" : "rw";
      if (!m->sub_path.empty()) flags += ",path=\"" + m->sub_path + "\"";
      w.Write(3, m->mount_path + " from " + m->name + " (" + flags + ")\n");
    }
    if (!c->volume_devices.empty()) {
      w.Write(2, "Devices:\n");
      for (const auto& d : c->volume_devices) w.Write(3, d->device_path + " from " + d->name + "\n");
    }
  }
}

namespace {

std::string OptionalText(const flatbuffers::Optional<bool>& b) {
  return b.has_value() ? BoolText(*b) : "<nil>";
}

}  // namespace

void DescribeVolumes(DescribeWriter& w, const std::vector<std::unique_ptr<api::VolumeT>>& volumes,
                     std::string_view space) {
  if (volumes.empty()) {
    w.Write(0, std::string(space) + "Volumes:\t<none>\n");
    return;
  }
  w.Write(0, std::string(space) + "Volumes:\n");
  const std::string name_indent = space.empty() ? "" : " ";
  for (const auto& v : volumes) {
    w.Write(1, name_indent + v->name + ":\n");
    if (v->host_path) {
      w.Write(2, "Type:\tHostPath (bare host directory volume)\n");
      w.Write(2, "Path:\t" + v->host_path->path + "\n");
      w.Write(2, "HostPathType:\t" + (v->host_path->type.empty() ? std::string("<none>") : v->host_path->type) + "\n");
    } else if (v->empty_dir) {
      w.Write(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n");
      w.Write(2, "Medium:\t" + v->empty_dir->medium + "\n");
      std::string size = v->empty_dir->size_limit;
      w.Write(2, "SizeLimit:\t" + (size.empty() || size == "0" ? std::string("<unset>") : size) + "\n");
    } else if (v->secret) {
      w.Write(2, "Type:\tSecret (a volume populated by a Secret)\n");
      w.Write(2, "SecretName:\t" + v->secret->secret_name + "\n");
      w.Write(2, "Optional:\t" + BoolText(v->secret->optional.value_or(false)) + "\n");
    } else if (v->config_map) {
      w.Write(2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n");
      w.Write(2, "Name:\t" + v->config_map->name + "\n");
      w.Write(2, "Optional:\t" + BoolText(v->config_map->optional.value_or(false)) + "\n");
    } else if (v->persistent_volume_claim) {
      w.Write(2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n");
      w.Write(2, "ClaimName:\t" + v->persistent_volume_claim->claim_name + "\n");
      w.Write(2, "ReadOnly:\t" + BoolText(v->persistent_volume_claim->read_only) + "\n");
    } else if (v->projected) {
      w.Write(2, "Type:\tProjected (a volume that contains injected data from multiple sources)\n");
      for (const auto& s : v->projected->sources) {
        if (s->secret) {
          w.Write(2, "SecretName:\t" + s->secret->name + "\n");
          w.Write(2, "SecretOptionalName:\t" + OptionalText(s->secret->optional) + "\n");
        } else if (s->downward_api) {
          w.Write(2, "DownwardAPI:\ttrue\n");
        } else if (s->config_map) {
          w.Write(2, "ConfigMapName:\t" + s->config_map->name + "\n");
          w.Write(2, "ConfigMapOptional:\t" + OptionalText(s->config_map->optional) + "\n");
        } else if (s->service_account_token) {
          w.Write(2, "TokenExpirationSeconds:\t" +
                         std::to_string(s->service_account_token->expiration_seconds.value_or(3600)) + "\n");
        }
      }
    } else {
      w.Write(1, "<unknown>\n");
    }
  }
}

void DescribeTopologySpread(DescribeWriter& w, const std::vector<std::unique_ptr<api::TopologySpreadConstraintT>>& list,
                            std::string_view space) {
  if (list.empty()) return;
  std::vector<const api::TopologySpreadConstraintT*> tscs;
  for (const auto& t : list) tscs.push_back(t.get());
  std::stable_sort(tscs.begin(), tscs.end(), [](auto* a, auto* b) { return a->topology_key < b->topology_key; });
  w.Write(0, std::string(space) + "Topology Spread Constraints:\t");
  for (size_t i = 0; i < tscs.size(); ++i) {
    if (i != 0) w.Write(0, std::string(space) + "\t");
    std::string line = tscs[i]->topology_key + ":" + api::EnumNameUnsatisfiableConstraintAction(tscs[i]->when_unsatisfiable) +
                       " when max skew " + std::to_string(tscs[i]->max_skew) + " is exceeded";
    if (tscs[i]->label_selector) line += " for selector " + FormatLabelSelector(tscs[i]->label_selector.get());
    w.Write(0, line + "\n");
  }
}

std::string DescribePod(std::string_view pod_bytes, std::span<const std::string> events,
                        TimePoint now, const PodDescribeExtras& extras) {
  std::unique_ptr<api::PodT> pod = model::Unpack<api::Pod>(pod_bytes);
  if (!pod->metadata) pod->metadata = std::make_unique<api::ObjectMetaT>();
  if (!pod->spec) pod->spec = std::make_unique<api::PodSpecT>();
  if (!pod->status) pod->status = std::make_unique<api::PodStatusT>();
  const api::ObjectMetaT& meta = *pod->metadata;
  const api::PodSpecT& spec = *pod->spec;
  const api::PodStatusT& status = *pod->status;

  DescribeWriter w;
  w.Write(0, "Name:\t" + meta.name + "\n");
  w.Write(0, "Namespace:\t" + (meta.namespace_.empty() ? std::string("default") : meta.namespace_) + "\n");
  if (spec.priority.has_value()) w.Write(0, "Priority:\t" + std::to_string(*spec.priority) + "\n");
  if (!spec.priority_class_name.empty()) {
    w.Write(0, "Priority Class Name:\t" + spec.priority_class_name + "\n");
  }
  if (!spec.runtime_class_name.empty()) w.Write(0, "Runtime Class Name:\t" + spec.runtime_class_name + "\n");
  if (!spec.service_account_name.empty()) {
    w.Write(0, "Service Account:\t" + spec.service_account_name + "\n");
  }
  w.Write(0, "Node:\t" + (spec.node_name.empty() ? std::string("<none>") : spec.node_name + "/" + status.host_ip) + "\n");
  if (!status.start_time.empty()) w.Write(0, "Start Time:\t" + FormatRfc1123Z(status.start_time) + "\n");
  PrintLabelsMultiline(w, "Labels", meta.labels);
  PrintAnnotationsMultiline(w, "Annotations", meta.annotations);
  const bool terminal = status.phase == api::PodPhase::Succeeded || status.phase == api::PodPhase::Failed;
  const std::string phase = status.phase == api::PodPhase::Unset ? "" : api::EnumNamePodPhase(status.phase);
  if (!meta.deletion_timestamp.empty() && !terminal) {
    auto at = ParseRfc3339(meta.deletion_timestamp);
    w.Write(0, "Status:\tTerminating (lasts " + (at ? HumanDuration(*at - now) : "<unknown>") + ")\n");
    w.Write(0, "Termination Grace Period:\t" +
                   std::to_string(meta.deletion_grace_period_seconds.value_or(0)) + "s\n");
  } else {
    w.Write(0, "Status:\t" + phase + "\n");
  }
  if (!status.reason.empty()) w.Write(0, "Reason:\t" + status.reason + "\n");
  if (!status.message.empty()) w.Write(0, "Message:\t" + status.message + "\n");
  if (spec.security_context && spec.security_context->seccomp_profile) {
    const auto& sp = *spec.security_context->seccomp_profile;
    w.Write(0, "SeccompProfile:\t" + sp.type + "\n");
    if (sp.type == "Localhost") w.Write(0, "LocalhostProfile:\t" + sp.localhost_profile + "\n");
  }
  w.Write(0, "IP:\t" + status.pod_ip + "\n");
  if (status.pod_ips.empty()) {
    w.Write(0, "IPs:\t<none>\n");
  } else {
    w.Write(0, "IPs:\n");
    for (const auto& ip : status.pod_ips) w.Write(1, "IP:\t" + ip->ip + "\n");
  }
  for (const auto& owner : meta.owner_references) {
    if (owner->controller.value_or(false)) {
      w.Write(0, "Controlled By:\t" + owner->kind + "/" + owner->name + "\n");
    }
  }
  if (!status.nominated_node_name.empty()) {
    w.Write(0, "NominatedNodeName:\t" + status.nominated_node_name + "\n");
  }
  if (!spec.init_containers.empty()) {
    DescribeContainers(w, pod.get(), "", "Init Containers", spec.init_containers, status.init_container_statuses);
  }
  DescribeContainers(w, pod.get(), "", "Containers", spec.containers, status.container_statuses);
  if (!spec.readiness_gates.empty()) {
    w.Write(0, "Readiness Gates:\n  Type\tStatus\n");
    for (const auto& g : spec.readiness_gates) {
      std::string s = "<none>";
      for (const auto& c : status.conditions) {
        if (c->type == g->condition_type) {
          s = ConditionStatusName(c->status);
          break;
        }
      }
      w.Write(1, g->condition_type + " \t" + s + " \n");
    }
  }
  if (!status.conditions.empty()) {
    w.Write(0, "Conditions:\n  Type\tStatus\n");
    for (const auto& c : status.conditions) {
      w.Write(1, c->type + " \t" + ConditionStatusName(c->status) + " \n");
    }
  }
  DescribeVolumes(w, spec.volumes, "");
  w.Write(0, "QoS Class:\t" +
                 (status.qos_class != api::PodQOSClass::Unset ? std::string(api::EnumNamePodQOSClass(status.qos_class))
                                                              : ComputeQos(spec)) + "\n");
  PrintLabelsMultiline(w, "Node-Selectors", spec.node_selector);
  PrintTolerationsMultiline(w, "Tolerations", spec.tolerations);
  DescribeTopologySpread(w, spec.topology_spread_constraints, "");
  // Hook: sections other stages explain (issue 4: the scheduler's reasons).
  if (!extras.scheduling.empty()) {
    w.Flush();
    w.Write(0, extras.scheduling);
  }
  DescribeEvents(w, EventsFor(events, "Pod", meta.namespace_.empty() ? "default" : meta.namespace_,
                              meta.name, meta.uid),
                 now);
  return w.String();
}

}  // namespace podflow::cli

// BuildTable and the printers of nodes, services, endpoints and events
// (kubectl's pkg/printers/internalversion); pods are in printers_pod.cc,
// the other kinds in printers_kinds.cc.
#include "cli/printers.h"

#include <algorithm>
#include <set>

#include "cli/print_util.h"
#include "cli/printers_internal.h"
#include "cli/tabwriter.h"
#include "model/objects.h"

namespace podflow::cli {
namespace {

const api::ObjectMetaT& Meta(const std::unique_ptr<api::ObjectMetaT>& meta) {
  static const api::ObjectMetaT kNoMeta;
  return meta ? *meta : kNoMeta;
}

std::string OrNone(const std::string& s) { return s.empty() ? "<none>" : s; }
std::string OrUnknown(const std::string& s) { return s.empty() ? "<unknown>" : s; }

std::vector<std::string> NodeRow(const api::NodeT& node, const PrintOptions& options,
                                 TimePoint now) {
  const api::ObjectMetaT& meta = Meta(node.metadata);
  std::vector<std::string> status;
  if (node.status) {
    for (const auto& c : node.status->conditions) {
      if (c->type != "Ready") continue;
      status = {c->status == api::ConditionStatus::True ? "Ready" : "NotReady"};
    }
  }
  if (status.empty()) status.push_back("Unknown");
  if (node.spec && node.spec->unschedulable) status.push_back("SchedulingDisabled");
  std::string roles = Join(NodeRoles(node), ",");
  const api::NodeSystemInfoT* info = node.status ? node.status->node_info.get() : nullptr;
  std::vector<std::string> row = {meta.name, Join(status, ","), OrNone(roles),
                                  TimestampSince(meta.creation_timestamp, now),
                                  info ? info->kubelet_version : ""};
  if (options.wide) {
    std::string internal_ip, external_ip;
    if (node.status) {
      for (const auto& a : node.status->addresses) {
        if (a->type == "InternalIP" && internal_ip.empty()) internal_ip = a->address;
        if (a->type == "ExternalIP" && external_ip.empty()) external_ip = a->address;
      }
    }
    row.push_back(OrNone(internal_ip));
    row.push_back(OrNone(external_ip));
    row.push_back(OrUnknown(info ? info->os_image : ""));
    row.push_back(OrUnknown(info ? info->kernel_version : ""));
    row.push_back(OrUnknown(info ? info->container_runtime_version : ""));
  }
  return row;
}

// kubectl's loadBalancerStatusStringer: ingress IPs (or hostnames), sorted,
// cut to 16 characters unless wide.
std::string LoadBalancerIngress(const api::ServiceT& svc, bool wide) {
  std::set<std::string> result;
  if (svc.status && svc.status->load_balancer) {
    for (const auto& ing : svc.status->load_balancer->ingress) {
      if (!ing->ip.empty()) {
        result.insert(ing->ip);
      } else if (!ing->hostname.empty()) {
        result.insert(ing->hostname);
      }
    }
  }
  std::string r = Join({result.begin(), result.end()}, ",");
  constexpr size_t kLoadBalancerWidth = 16;
  if (!wide && r.size() > kLoadBalancerWidth) r = r.substr(0, kLoadBalancerWidth - 3) + "...";
  return r;
}

std::string ServiceExternalIp(const api::ServiceT& svc, bool wide) {
  const api::ServiceSpecT& spec = *svc.spec;
  switch (spec.type) {
    case api::ServiceType::Unset:  // the API defaults the type to ClusterIP
    case api::ServiceType::ClusterIP:
    case api::ServiceType::NodePort:
      return spec.external_ips.empty() ? "<none>" : Join(spec.external_ips, ",");
    case api::ServiceType::LoadBalancer: {
      std::string lb = LoadBalancerIngress(svc, wide);
      if (!spec.external_ips.empty()) {
        std::vector<std::string> all;
        if (!lb.empty()) all.push_back(lb);
        all.insert(all.end(), spec.external_ips.begin(), spec.external_ips.end());
        return Join(all, ",");
      }
      return lb.empty() ? "<pending>" : lb;
    }
    case api::ServiceType::ExternalName:
      return spec.external_name;
  }
  return "<unknown>";
}

std::vector<std::string> ServiceRow(const api::ServiceT& svc, const PrintOptions& options,
                                    TimePoint now) {
  const api::ObjectMetaT& meta = Meta(svc.metadata);
  static const api::ServiceSpecT kNoSpec;
  const api::ServiceSpecT& spec = svc.spec ? *svc.spec : kNoSpec;
  std::string type = spec.type == api::ServiceType::Unset ? "ClusterIP"
                                                          : api::EnumNameServiceType(spec.type);
  // The API fills clusterIPs from clusterIP; older objects may only have the latter.
  std::string cluster_ip = !spec.cluster_ips.empty() ? spec.cluster_ips[0] : spec.cluster_ip;
  std::vector<std::string> ports;
  for (const auto& p : spec.ports) {
    std::string s = std::to_string(p->port);
    if (p->node_port > 0) s += ":" + std::to_string(p->node_port);
    ports.push_back(s + "/" + ProtocolName(p->protocol));
  }
  std::string external = svc.spec ? ServiceExternalIp(svc, options.wide) : "<none>";
  std::vector<std::string> row = {meta.name, type, OrNone(cluster_ip), external,
                                  OrNone(Join(ports, ",")),
                                  TimestampSince(meta.creation_timestamp, now)};
  if (options.wide) row.push_back(FormatLabels(spec.selector));
  return row;
}

std::vector<std::string> EndpointsRow(const api::EndpointsT& ep, TimePoint now) {
  const api::ObjectMetaT& meta = Meta(ep.metadata);
  return {meta.name, FormatEndpoints(ep, nullptr), TimestampSince(meta.creation_timestamp, now)};
}

std::vector<std::string> EventRow(const api::EventT& e, const PrintOptions& options,
                                  TimePoint now) {
  std::string first = e.first_timestamp.empty() ? TimestampSince(e.event_time, now)
                                                : TimestampSince(e.first_timestamp, now);
  std::string last = e.last_timestamp.empty() ? first : TimestampSince(e.last_timestamp, now);
  int count = e.count;
  if (e.series) {
    last = TimestampSince(e.series->last_observed_time, now);
    count = e.series->count;
  } else if (count == 0) {
    count = 1;  // singleton events of the events.k8s.io API carry no count
  }
  const api::ObjectReferenceT* obj = e.involved_object.get();
  std::string kind = obj ? Lower(obj->kind) : "";
  std::string target = obj && !obj->name.empty() ? kind + "/" + obj->name : kind;
  std::string message = e.message;
  while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back()))) {
    message.pop_back();
  }
  message.erase(0, message.find_first_not_of(" \t\r\n"));
  if (!options.wide) return {last, e.type, e.reason, target, message};
  std::string component = e.source && !e.source->component.empty() ? e.source->component
                                                                   : e.reporting_component;
  std::string host = e.source && !e.source->host.empty() ? e.source->host : e.reporting_instance;
  std::string source = host.empty() ? component : component + ", " + host;
  return {last,   e.type, e.reason, target, obj ? obj->field_path : "", source, message, first,
          std::to_string(count), Meta(e.metadata).name};
}

// Kinds without a printer: NAME and AGE, read through the generic Value form.
std::vector<std::string> GenericRow(const model::KindInfo& kind, std::string_view bytes,
                                    TimePoint now) {
  model::Value v = model::ToValue(kind, bytes);
  std::string name, created;
  if (const model::Value* meta = v.Find("metadata")) {
    if (const model::Value* n = meta->Find("name")) name = n->string_value();
    if (const model::Value* c = meta->Find("creationTimestamp")) created = c->string_value();
  }
  return {name, TimestampSince(created, now)};
}

std::string NamespaceOf(const model::KindInfo& kind, std::string_view bytes) {
  model::Value v = model::ToValue(kind, bytes);
  if (const model::Value* meta = v.Find("metadata")) {
    if (const model::Value* ns = meta->Find("namespace")) return ns->string_value();
  }
  return "";
}

}  // namespace

Table BuildTable(const model::KindInfo& kind, std::span<const std::string> objects,
                 const PrintOptions& options, TimePoint now) {
  Table table;
  const std::string_view k = kind.kind;
  std::vector<std::string_view> ordered(objects.begin(), objects.end());
  const KindPrinter* printer = FindKindPrinter(k);
  if (printer != nullptr) {
    table.header = printer->header;
    if (options.wide) table.header.insert(table.header.end(), printer->wide.begin(), printer->wide.end());
  } else if (k == "Pod") {
    table.header = {"NAME", "READY", "STATUS", "RESTARTS", "AGE"};
    if (options.wide) {
      for (const char* h : {"IP", "NODE", "NOMINATED NODE", "READINESS GATES"}) {
        table.header.push_back(h);
      }
    }
  } else if (k == "Node") {
    table.header = {"NAME", "STATUS", "ROLES", "AGE", "VERSION"};
    if (options.wide) {
      for (const char* h :
           {"INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"}) {
        table.header.push_back(h);
      }
    }
  } else if (k == "Service") {
    table.header = {"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"};
    if (options.wide) table.header.push_back("SELECTOR");
  } else if (k == "Endpoints") {
    table.header = {"NAME", "ENDPOINTS", "AGE"};
  } else if (k == "Event") {
    if (options.wide) {
      table.header = {"LAST SEEN", "TYPE",    "REASON",     "OBJECT", "SUBOBJECT",
                      "SOURCE",    "MESSAGE", "FIRST SEEN", "COUNT",  "NAME"};
    } else {
      table.header = {"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"};
    }
    // In the server's order, as kubectl get lists them: by name, and an
    // event's name is its object's name and the hex of when it was made.
  } else {
    table.header = {"NAME", "AGE"};
  }

  for (std::string_view bytes : ordered) {
    std::vector<std::string> row;
    if (printer != nullptr) {
      row = printer->row(bytes, options.wide, now);
    } else if (k == "Pod") {
      row = PodRow(*model::Unpack<api::Pod>(bytes), options, now);
    } else if (k == "Node") {
      row = NodeRow(*model::Unpack<api::Node>(bytes), options, now);
    } else if (k == "Service") {
      row = ServiceRow(*model::Unpack<api::Service>(bytes), options, now);
    } else if (k == "Endpoints") {
      row = EndpointsRow(*model::Unpack<api::Endpoints>(bytes), now);
    } else if (k == "Event") {
      row = EventRow(*model::Unpack<api::Event>(bytes), options, now);
    } else {
      row = GenericRow(kind, bytes, now);
    }
    if (options.all_namespaces && kind.namespaced) {
      row.insert(row.begin(), NamespaceOf(kind, bytes));
    }
    table.rows.push_back(std::move(row));
  }
  if (options.all_namespaces && kind.namespaced) table.header.insert(table.header.begin(), "NAMESPACE");
  return table;
}

void WriteTable(TabWriter& w, const Table& table, bool with_header) {
  auto write_row = [&w](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) line += '\t';
      // kubectl cuts a cell at its first line break.
      size_t cut = cells[i].find_first_of("\n\r\f");
      line += cut == std::string::npos ? cells[i] : cells[i].substr(0, cut) + "...";
    }
    line += '\n';
    w.Write(line);
  };
  if (with_header) write_row(table.header);
  for (const auto& row : table.rows) write_row(row);
}

std::string RenderTable(const Table& table) {
  TabWriter w(/*min_width=*/6, /*padding=*/3);
  WriteTable(w, table, true);
  return w.String();
}

std::string NoResourcesMessage(const model::KindInfo& kind, std::string_view namespace_,
                               bool all_namespaces) {
  if (all_namespaces || !kind.namespaced) return "No resources found";
  return "No resources found in " + std::string(namespace_) + " namespace.";
}

}  // namespace podflow::cli

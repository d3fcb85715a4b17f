#include "scheduler/framework/pod_info.h"

#include "model/pod_phase.h"

namespace podflow::scheduler {
namespace {

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

// One container's requests, parsed once, with whether cpu / memory were named.
struct ContainerRequests {
  Resources requests;
  bool has_cpu = false;
  bool has_memory = false;
  bool sidecar = false;  // an init container with restartPolicy Always
};

using Containers = flatbuffers::Vector<flatbuffers::Offset<api::Container>>;

Status ParseContainers(const Containers* containers, bool init, std::string_view field,
                       std::vector<ContainerRequests>& out) {
  if (containers == nullptr) return Status::Ok();
  for (flatbuffers::uoffset_t i = 0; i < containers->size(); ++i) {
    const api::Container* c = containers->Get(i);
    ContainerRequests r;
    const auto* list = c->resources() != nullptr ? c->resources()->requests() : nullptr;
    auto parsed = ResourcesFromList(list, &r.has_cpu, &r.has_memory);
    if (!parsed.ok()) {
      return Status::Invalid("spec." + std::string(field) + "[" + std::to_string(i) +
                             "].resources.requests: " + parsed.status().message());
    }
    r.requests = std::move(parsed).value();
    r.sidecar = init && model::IsRestartableInitContainer(*c);
    out.push_back(std::move(r));
  }
  return Status::Ok();
}

Resources Effective(const ContainerRequests& c, bool non_zero) {
  Resources r = c.requests;
  if (non_zero) {
    // Kubernetes' NonMissingContainerRequests: only a missing request gets
    // the default; an explicit 0 stays 0.
    if (!c.has_cpu) r.milli_cpu += kDefaultMilliCpuRequest;
    if (!c.has_memory) r.memory += kDefaultMemoryRequest;
  }
  return r;
}

// resourcehelper.AggregateContainerRequests.
Resources Aggregate(const std::vector<ContainerRequests>& containers,
                    const std::vector<ContainerRequests>& init_containers, bool non_zero) {
  Resources reqs;
  for (const auto& c : containers) reqs.Add(Effective(c, non_zero));
  Resources sidecars;  // restartable init containers started so far
  Resources init_max;
  for (const auto& c : init_containers) {
    Resources use = Effective(c, non_zero);
    if (c.sidecar) {
      reqs.Add(use);
      sidecars.Add(use);
      use = sidecars;
    } else {
      use.Add(sidecars);
    }
    init_max.SetMax(use);
  }
  reqs.SetMax(init_max);
  return reqs;
}

NodeSelectorRequirement Requirement(const api::NodeSelectorRequirement* r) {
  NodeSelectorRequirement out;
  out.key = Str(r->key());
  out.op = r->operator_();
  if (r->values() != nullptr) {
    out.values.reserve(r->values()->size());
    for (const flatbuffers::String* v : *r->values()) out.values.push_back(v->str());
  }
  return out;
}

using Requirements = flatbuffers::Vector<flatbuffers::Offset<api::NodeSelectorRequirement>>;

std::vector<NodeSelectorRequirement> Requirements_(const Requirements* rs) {
  std::vector<NodeSelectorRequirement> out;
  if (rs == nullptr) return out;
  out.reserve(rs->size());
  for (const api::NodeSelectorRequirement* r : *rs) out.push_back(Requirement(r));
  return out;
}

std::optional<NodeSelector> RequiredNodeAffinity(const api::PodSpec& spec) {
  if (spec.affinity() == nullptr || spec.affinity()->node_affinity() == nullptr) return std::nullopt;
  const api::NodeSelector* required =
      spec.affinity()->node_affinity()->required_during_scheduling_ignored_during_execution();
  if (required == nullptr) return std::nullopt;
  return NodeSelectorFromApi(*required);
}

// spec.volumes as the volume plugins compare them.
std::vector<PodVolume> Volumes(const api::PodSpec& spec, const std::string& pod_name) {
  std::vector<PodVolume> out;
  if (spec.volumes() == nullptr) return out;
  out.reserve(spec.volumes()->size());
  for (const api::Volume* v : *spec.volumes()) {
    PodVolume pv;
    pv.name = Str(v->name());
    if (const auto* gce = v->gce_persistent_disk(); gce != nullptr) {
      pv.kind = VolumeSourceKind::kGcePersistentDisk;
      pv.id = Str(gce->pd_name());
      pv.read_only = gce->read_only();
    } else if (const auto* ebs = v->aws_elastic_block_store(); ebs != nullptr) {
      pv.kind = VolumeSourceKind::kAwsElasticBlockStore;
      pv.id = Str(ebs->volume_id());
      pv.read_only = ebs->read_only();
    } else if (const auto* rbd = v->rbd(); rbd != nullptr) {
      pv.kind = VolumeSourceKind::kRbd;
      pv.id = Str(rbd->image());
      pv.rbd_pool = Str(rbd->pool());
      if (rbd->monitors() != nullptr) {
        for (const flatbuffers::String* m : *rbd->monitors()) pv.rbd_monitors.push_back(m->str());
      }
      pv.read_only = rbd->read_only();
    } else if (const auto* iscsi = v->iscsi(); iscsi != nullptr) {
      pv.kind = VolumeSourceKind::kIscsi;
      pv.id = Str(iscsi->iqn());
      pv.read_only = iscsi->read_only();
    } else if (const auto* azure = v->azure_disk(); azure != nullptr) {
      pv.kind = VolumeSourceKind::kAzureDisk;
      pv.id = Str(azure->disk_name());
      pv.read_only = azure->read_only().value_or(false);
    } else if (const auto* cinder = v->cinder(); cinder != nullptr) {
      pv.kind = VolumeSourceKind::kCinder;
      pv.id = Str(cinder->volume_id());
      pv.read_only = cinder->read_only();
    } else if (const auto* claim = v->persistent_volume_claim(); claim != nullptr) {
      pv.kind = VolumeSourceKind::kPersistentVolumeClaim;
      pv.claim_name = Str(claim->claim_name());
      pv.read_only = claim->read_only();
    } else if (v->ephemeral() != nullptr) {
      pv.kind = VolumeSourceKind::kEphemeral;
      pv.claim_name = pod_name + "-" + pv.name;
    }
    out.push_back(std::move(pv));
  }
  return out;
}

}  // namespace

NodeSelector NodeSelectorFromApi(const api::NodeSelector& selector) {
  NodeSelector out;
  if (selector.node_selector_terms() != nullptr) {
    for (const api::NodeSelectorTerm* t : *selector.node_selector_terms()) {
      out.terms.push_back(NodeSelectorTerm{Requirements_(t->match_expressions()),
                                           Requirements_(t->match_fields())});
    }
  }
  return out;
}

namespace {

void PreferredNodeAffinity(const api::PodSpec& spec, std::vector<PreferredSchedulingTerm>& out) {
  if (spec.affinity() == nullptr || spec.affinity()->node_affinity() == nullptr) return;
  const auto* terms =
      spec.affinity()->node_affinity()->preferred_during_scheduling_ignored_during_execution();
  if (terms == nullptr) return;
  for (const api::PreferredSchedulingTerm* t : *terms) {
    if (t->weight() == 0) continue;
    PreferredSchedulingTerm term;
    term.weight = t->weight();
    if (const api::NodeSelectorTerm* p = t->preference(); p != nullptr) {
      term.preference = NodeSelectorTerm{Requirements_(p->match_expressions()),
                                         Requirements_(p->match_fields())};
    }
    out.push_back(std::move(term));
  }
}

// Adds the containers' images; counts them; false when one names a cpu or
// memory request or limit above 0. Invalid names a limit that does not parse.
Result<bool> ImagesAndQos(const Containers* containers, std::string_view field, PodInfo& info) {
  bool best_effort = true;
  if (containers == nullptr) return best_effort;
  for (flatbuffers::uoffset_t i = 0; i < containers->size(); ++i) {
    const api::Container* c = containers->Get(i);
    ++info.num_containers;
    if (c->image() != nullptr && c->image()->size() > 0) {
      info.images.push_back(NormalizedImageName(c->image()->string_view()));
    }
    if (c->resources() == nullptr) continue;
    for (const auto& [list, name] : {std::pair{c->resources()->requests(), "requests"},
                                     std::pair{c->resources()->limits(), "limits"}}) {
      auto parsed = ResourcesFromList(list);
      if (!parsed.ok()) {
        return Status::Invalid("spec." + std::string(field) + "[" + std::to_string(i) + "].resources." +
                               name + ": " + parsed.status().message());
      }
      if (parsed->milli_cpu > 0 || parsed->memory > 0) best_effort = false;
    }
  }
  return best_effort;
}

}  // namespace

std::string NormalizedImageName(std::string_view image) {
  if (image.empty()) return std::string();
  std::string out;
  const size_t slash = image.find('/');
  std::string_view first = slash == std::string_view::npos ? std::string_view() : image.substr(0, slash);
  // The first component is a registry host when it has a dot or a port, or
  // is localhost (the docker reference rules).
  const bool has_host = slash != std::string_view::npos &&
                        (first.find('.') != std::string_view::npos ||
                         first.find(':') != std::string_view::npos || first == "localhost");
  std::string_view rest = image;
  if (has_host) {
    rest = image.substr(slash + 1);
    out = first == "index.docker.io" ? "docker.io" : std::string(first);
  } else {
    out = "docker.io";
  }
  out += '/';
  if (out == "docker.io/" && rest.find('/') == std::string_view::npos) out += "library/";
  out += rest;
  // A tag is a ':' after the last '/'; a digest is '@'.
  const size_t last_slash = out.rfind('/');
  const size_t colon = out.rfind(':');
  const bool tagged = colon != std::string::npos && colon > last_slash;
  if (!tagged && out.find('@') == std::string::npos) out += ":latest";
  return out;
}

Result<PodInfo> PodInfoFromPod(const api::Pod& pod) {
  PodInfo info;
  if (const api::ObjectMeta* m = pod.metadata(); m != nullptr) {
    info.namespace_ = Str(m->namespace_());
    info.name = Str(m->name());
    info.uid = Str(m->uid());
    info.labels = LabelsFromEntries(m->labels());
    if (m->owner_references() != nullptr) {
      for (const api::OwnerReference* o : *m->owner_references()) {
        if (!o->controller().value_or(false)) continue;
        info.controller_kind = Str(o->kind());
        info.controller_uid = Str(o->uid());
        break;
      }
    }
    info.deleting = m->deletion_timestamp() != nullptr && m->deletion_timestamp()->size() > 0;
  }
  if (const api::PodStatus* status = pod.status(); status != nullptr) {
    info.nominated_node_name = Str(status->nominated_node_name());
    info.start_time = Str(status->start_time());
  }
  const api::PodSpec* spec = pod.spec();
  if (spec == nullptr) return info;

  info.node_name = Str(spec->node_name());
  info.scheduler_name = Str(spec->scheduler_name());
  info.priority = spec->priority().value_or(0);
  info.preemption_policy = spec->preemption_policy();
  info.node_selector = LabelsFromEntries(spec->node_selector());
  info.required_node_affinity = RequiredNodeAffinity(*spec);
  PreferredNodeAffinity(*spec, info.preferred_node_affinity);
  {
    auto init_be = ImagesAndQos(spec->init_containers(), "initContainers", info);
    if (!init_be.ok()) return init_be.status();
    auto be = ImagesAndQos(spec->containers(), "containers", info);
    if (!be.ok()) return be.status();
    info.best_effort = *init_be && *be;
  }
  info.volumes = Volumes(*spec, info.name);
  auto spread = TopologySpreadConstraintsFromApi(spec->topology_spread_constraints(), info.labels);
  if (!spread.ok()) return spread.status();
  info.topology_spread_constraints = std::move(spread).value();
  auto pod_affinity = PodAffinityTermsFromApi(spec->affinity(), info.namespace_, info.labels);
  if (!pod_affinity.ok()) return pod_affinity.status();
  info.pod_affinity = std::move(pod_affinity).value();

  info.tolerations = model::TolerationsOf(spec);
  // The host ports of the containers that run together: the app containers
  // and the sidecars (a plain init container has stopped before they start).
  auto add_host_ports = [&info](const api::Container& c) {
    if (c.ports() == nullptr) return;
    for (const api::ContainerPort* p : *c.ports()) {
      if (p->host_port() <= 0) continue;
      HostPort hp;
      hp.protocol = p->protocol() == api::Protocol::Unset ? api::Protocol::TCP : p->protocol();
      if (p->host_ip() != nullptr && p->host_ip()->size() > 0) hp.host_ip = p->host_ip()->str();
      hp.port = p->host_port();
      info.host_ports.push_back(std::move(hp));
    }
  };
  if (spec->init_containers() != nullptr) {
    for (const api::Container* c : *spec->init_containers()) {
      if (model::IsRestartableInitContainer(*c)) add_host_ports(*c);
    }
  }
  if (spec->containers() != nullptr) {
    for (const api::Container* c : *spec->containers()) add_host_ports(*c);
  }

  std::vector<ContainerRequests> containers, init_containers;
  PODFLOW_RETURN_IF_ERROR(ParseContainers(spec->containers(), false, "containers", containers));
  PODFLOW_RETURN_IF_ERROR(
      ParseContainers(spec->init_containers(), true, "initContainers", init_containers));
  auto overhead = ResourcesFromList(spec->overhead());
  if (!overhead.ok()) return Status::Invalid("spec.overhead: " + overhead.status().message());

  info.requests = Aggregate(containers, init_containers, /*non_zero=*/false);
  info.requests.Add(*overhead);
  Resources non_zero = Aggregate(containers, init_containers, /*non_zero=*/true);
  non_zero.Add(*overhead);
  info.non_zero_milli_cpu = non_zero.milli_cpu;
  info.non_zero_memory = non_zero.memory;
  return info;
}

}  // namespace podflow::scheduler

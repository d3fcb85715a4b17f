#include "stages/proxy/proxy_stage.h"

#include <chrono>
#include <filesystem>
#include <random>
#include <variant>

#include "base/clock.h"
#include "base/logging.h"
#include "client/client.h"
#include "model/objects.h"
#include "netns/pod_network.h"
#include "stages/proxy/dns/from_objects.h"
#include "stages/proxy/endpoint_slices.h"
#include "stages/proxy/endpoints.h"
#include "stages/proxy/node_proxies.h"
#include "stages/proxy/rules/from_objects.h"
#include "stages/proxy/rules/host_ports.h"

namespace podflow::proxy {
namespace {

// "/registry/<kind>/<ns>/<name>" -> "<ns>".
std::string NamespaceOf(const std::string& key) {
  size_t start = key.find('/', std::string("/registry/").size());
  if (start == std::string::npos) return "";
  size_t end = key.find('/', start + 1);
  return key.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1);
}

std::string NameOf(const std::string& key) { return key.substr(key.rfind('/') + 1); }

std::string Label(const flatbuffers::Vector<flatbuffers::Offset<api::StringEntry>>* labels, const char* key) {
  const api::StringEntry* e = labels ? labels->LookupByKey(key) : nullptr;
  return e && e->value() ? e->value()->str() : "";
}

// "ns/name" -> {"ns", "name"}.
std::pair<std::string, std::string> Split(const std::string& service) {
  const size_t slash = service.find('/');
  return {service.substr(0, slash), service.substr(slash + 1)};
}

// What the stage knows of the cluster (from its informers) and what it has
// written, and one round of keeping Endpoints, EndpointSlices and DNS
// records in step with it. The loop's thread only.
class Reconciler {
 public:
  Reconciler(client::ApiClient& client, std::mutex& records_mu, dns::ClusterRecords& records, rules::Ruleset& ruleset)
      : client_(client), records_mu_(records_mu), records_(records), ruleset_(ruleset), rng_(std::random_device{}()) {}

  // Whether the ruleset changed since the last call.
  bool TakeRulesChanged() { return std::exchange(rules_changed_, false); }

  // The CNI portmap plugin's rules for the hostPorts of the pods on `node`.
  rules::Fragment HostPortRules(const std::string& node) const {
    std::vector<rules::PodHostPorts> pods;
    for (const auto& [key, placed] : host_ports_) {
      if (placed.first == node) pods.push_back(placed.second);
    }
    auto cidr = pod_cidrs_.find(node);
    return rules::RenderHostPorts(pods, cidr == pod_cidrs_.end() ? "" : cidr->second);
  }

  // The nodes that exist.
  std::set<std::string> Nodes() const {
    std::set<std::string> nodes;
    for (const auto& [name, zone] : zones_) nodes.insert(name);
    return nodes;
  }

  client::Informer::Handlers PodHandlers() {
    return {[this](const KeyValue& kv) {
              if (!model::VerifyObject(model::Kind("Pod"), kv.value).ok()) {
                log_->warn("{}: not a valid Pod; ignored", kv.key);
                return;
              }
              pods_[kv.key] = kv.value;
              Touch(NamespaceOf(kv.key));
              NoteHostPorts(kv.key, flatbuffers::GetRoot<api::Pod>(kv.value.data()));
            },
            [this](const std::string& key) {
              if (pods_.erase(key)) Touch(NamespaceOf(key));
              NoteHostPorts(key, nullptr);
            }};
  }

  client::Informer::Handlers ServiceHandlers() {
    return {[this](const KeyValue& kv) {
              if (!model::VerifyObject(model::Kind("Service"), kv.value).ok()) {
                log_->warn("{}: not a valid Service; ignored", kv.key);
                return;
              }
              const std::string ns = NamespaceOf(kv.key);
              if (services_.insert_or_assign(kv.key, kv.value).second) ++services_per_ns_[ns];
              gone_.erase(ns + "/" + NameOf(kv.key));
              dirty_.insert(ns);
              dns_dirty_.insert(ns + "/" + NameOf(kv.key));
            },
            [this](const std::string& key) {
              if (!services_.erase(key)) return;
              const std::string ns = NamespaceOf(key);
              if (--services_per_ns_[ns] == 0) services_per_ns_.erase(ns);
              gone_.insert(ns + "/" + NameOf(key));
              dns_dirty_.insert(ns + "/" + NameOf(key));
            }};
  }

  // The slices the controller manages, by their service: what a sync
  // compares with (a restart finds them in the log). The echo of an older
  // write than the last one this stage made is stale and ignored; any
  // other change (a user's edit or delete) makes the service's namespace
  // sync again, as the controller requeues the service.
  client::Informer::Handlers SliceHandlers() {
    return {[this](const KeyValue& kv) { OnSlice(kv); }, [this](const std::string& key) { ForgetSlice(key); }};
  }

  // Nodes: a pod on a node that does not exist is left out of the slices;
  // zones name the endpoints' zone. Either change syncs every namespace.
  client::Informer::Handlers NodeHandlers() {
    return {[this](const KeyValue& kv) {
              if (!model::VerifyObject(model::Kind("Node"), kv.value).ok()) return;
              const api::Node* node = flatbuffers::GetRoot<api::Node>(kv.value.data());
              const std::string zone =
                  node->metadata() ? Label(node->metadata()->labels(), "topology.kubernetes.io/zone") : "";
              auto [it, added] = zones_.try_emplace(NameOf(kv.key), zone);
              if (added || it->second != zone) {
                it->second = zone;
                TouchAll();
              }
              const std::string cidr = node->spec() && node->spec()->pod_cidr() ? node->spec()->pod_cidr()->str() : "";
              if (std::exchange(pod_cidrs_[NameOf(kv.key)], cidr) != cidr) rules_changed_ = true;
            },
            [this](const std::string& key) {
              if (zones_.erase(NameOf(key))) TouchAll();
              pod_cidrs_.erase(NameOf(key));
            }};
  }

  client::Informer::Handlers NamespaceHandlers() {
    return {[this](const KeyValue& kv) {
              std::lock_guard<std::mutex> lock(records_mu_);
              records_.SetNamespace(NameOf(kv.key), true);
            },
            [this](const std::string& key) {
              std::lock_guard<std::mutex> lock(records_mu_);
              records_.SetNamespace(NameOf(key), false);
            }};
  }

  // One round: deleted services' objects go, then the namespaces that
  // changed are synced, then the DNS records of what changed.
  void Round() {
    if (retry_armed_ && std::chrono::steady_clock::now() >= retry_after_) {
      retry_armed_ = false;
      dirty_.merge(retry_);
      gone_.merge(gone_retry_);
      retry_.clear();
      gone_retry_.clear();
    }
    RemoveGone();
    const std::string now = FormatRfc3339(WallClockNow());
    std::set<std::string> dirty = std::move(dirty_);
    dirty_.clear();
    for (const std::string& ns : dirty) SyncNamespace(ns, now);
    RefreshServing();
  }

  // Once both the services and the slices have been listed: managed slices
  // and Endpoints whose Service is gone (deleted while the stage was down)
  // are deleted, as the controllers do at start. An Endpoints object is
  // deleted only if its Service is still missing when asked again (the
  // list of Endpoints may be newer than the services seen) and it has not
  // changed since it was listed. False when it could not be done (tried
  // again next round).
  bool CollectLeftovers() {
    for (const auto& [service, named] : slices_) {
      if (!services_.contains(model::ObjectKey(model::Kind("Service"), Split(service).first, Split(service).second))) {
        gone_.insert(service);
      }
    }
    Result<RangeResult> endpoints = client_.List(model::KindPrefix(model::Kind("Endpoints")));
    if (!endpoints.ok()) {
      log_->warn("listing Endpoints for those left behind: {}", endpoints.status().ToString());
      return false;
    }
    for (const KeyValue& kv : endpoints->kvs) {
      const std::string ns = NamespaceOf(kv.key), name = NameOf(kv.key);
      const std::string service_key = model::ObjectKey(model::Kind("Service"), ns, name);
      if (services_.contains(service_key)) continue;
      Result<std::optional<KeyValue>> service = client_.Get(service_key);
      if (!service.ok()) return false;
      if (*service) continue;
      if (Write(DeleteOp{kv.key, kv.mod_revision}, "deleting " + kv.key + " (its Service is gone)")) {
        written_.erase(kv.key);
      }
    }
    return true;
  }

 private:
  void OnSlice(const KeyValue& kv) {
    if (!model::VerifyObject(model::Kind("EndpointSlice"), kv.value).ok()) return;
    if (auto known = slice_revisions_.find(kv.key);
        known != slice_revisions_.end() && kv.mod_revision < known->second) {
      return;
    }
    const api::EndpointSlice* slice = flatbuffers::GetRoot<api::EndpointSlice>(kv.value.data());
    const bool managed = slice->metadata() && Label(slice->metadata()->labels(), kManagedByLabel) == kManagedBy;
    const std::string ns = NamespaceOf(kv.key);
    const std::string service =
        managed ? ns + "/" + Label(slice->metadata()->labels(), kServiceNameLabel) : std::string();
    // No longer managed, or now another service's: off its old service.
    if (auto owner = slice_owner_.find(kv.key); owner != slice_owner_.end() && owner->second != service) {
      ForgetSlice(kv.key);
    }
    if (!managed) return;
    auto& stored = slices_[service][NameOf(kv.key)];
    const bool changed = stored != kv.value;
    stored = kv.value;
    slice_owner_[kv.key] = service;
    slice_revisions_[kv.key] = kv.mod_revision;
    if (changed) {
      Touch(ns);
      dns_dirty_.insert(service);
    }
  }

  void ForgetSlice(const std::string& key) {
    slice_revisions_.erase(key);
    auto owner = slice_owner_.find(key);
    if (owner == slice_owner_.end()) return;
    dns_dirty_.insert(owner->second);
    auto it = slices_.find(owner->second);
    if (it != slices_.end() && (it->second.erase(NameOf(key)), it->second.empty())) slices_.erase(it);
    slice_owner_.erase(owner);
    Touch(NamespaceOf(key));
  }

  // A namespace whose write failed is synced again after a second, not at
  // once: a refusal that lasts is not retried ten times a second.
  void RetryLater(const std::string& ns) {
    ArmRetry();
    retry_.insert(ns);
  }

  void ArmRetry() {
    if (retry_armed_) return;
    retry_armed_ = true;
    retry_after_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  }

  void Touch(const std::string& ns) {
    // Only namespaces with Services have endpoints to keep.
    if (services_per_ns_.contains(ns)) dirty_.insert(ns);
  }
  void TouchAll() {
    for (const auto& [ns, count] : services_per_ns_) dirty_.insert(ns);
  }

  // One write; a guarded one that finds the key changed takes what is
  // there now as stored (so that the next round starts from it).
  bool Write(const TxnOp& op, const std::string& what, Revision* revision = nullptr) {
    Result<client::WriteResult> result = client_.Write({op});
    if (result.ok() && result->succeeded) {
      if (revision) *revision = result->revision;
      return true;
    }
    if (result.ok() && std::holds_alternative<PutOp>(op) && std::get<PutOp>(op).guard &&
        std::get<PutOp>(op).key.starts_with(model::KindPrefix(model::Kind("EndpointSlice")))) {
      const std::string& key = std::get<PutOp>(op).key;
      slice_revisions_.erase(key);  // what is there now is newer than what was seen
      if (result->current) {
        OnSlice(*result->current);
      } else {
        ForgetSlice(key);
      }
      log_->info("{}: changed meanwhile; synced again", what);
      return false;
    }
    log_->warn("{}: {}", what, result.ok() ? "not applied" : result.status().ToString());
    return false;
  }

  // A deleted service's Endpoints and slices (their owner is gone: the
  // garbage collector's part); one that failed is tried again a second
  // later, unless the service is back.
  void RemoveGone() {
    std::set<std::string>& failed = gone_retry_;
    for (const std::string& service : gone_) {
      const auto [ns, name] = Split(service);
      if (services_.contains(model::ObjectKey(model::Kind("Service"), ns, name))) continue;
      const std::string key = model::ObjectKey(model::Kind("Endpoints"), ns, name);
      if (!Write(DeleteOp{key}, "deleting " + key)) failed.insert(service);
      written_.erase(key);
      auto it = slices_.find(service);
      if (it == slices_.end()) continue;
      for (auto slice = it->second.begin(); slice != it->second.end();) {
        const std::string slice_key = model::ObjectKey(model::Kind("EndpointSlice"), ns, slice->first);
        if (Write(DeleteOp{slice_key}, "deleting " + slice_key)) {
          slice_owner_.erase(slice_key);
          slice = it->second.erase(slice);
        } else {
          failed.insert(service);
          ++slice;
        }
      }
      if (it->second.empty()) slices_.erase(it);
    }
    gone_.clear();
    if (!failed.empty()) ArmRetry();
  }

  void SyncNamespace(const std::string& ns, const std::string& now) {
    const std::string pods_prefix = model::KindPrefix(model::Kind("Pod")) + ns + "/";
    std::vector<const api::Pod*> candidates;
    for (auto it = pods_.lower_bound(pods_prefix); it != pods_.end() && it->first.starts_with(pods_prefix); ++it) {
      candidates.push_back(flatbuffers::GetRoot<api::Pod>(it->second.data()));
    }
    const std::string services_prefix = model::KindPrefix(model::Kind("Service")) + ns + "/";
    for (auto it = services_.lower_bound(services_prefix);
         it != services_.end() && it->first.starts_with(services_prefix); ++it) {
      const api::Service* service = flatbuffers::GetRoot<api::Service>(it->second.data());
      if (!service->metadata() || !service->metadata()->name()) continue;
      DeleteForeignSlices(*service, ns);
      if (!service->spec() || !service->spec()->selector()) continue;  // its endpoints are the user's
      SyncService(*service, ns, candidates, now);
    }
  }

  // Managed slices labelled with the service's name but owned by another
  // uid (a service of that name deleted and created again) are the old
  // one's: deleted, as the garbage collector would.
  void DeleteForeignSlices(const api::Service& service, const std::string& ns) {
    const std::string owner = ns + "/" + service.metadata()->name()->str();
    const std::string uid = service.metadata()->uid() ? service.metadata()->uid()->str() : "";
    auto it = slices_.find(owner);
    if (it == slices_.end()) return;
    std::vector<std::string> foreign;
    for (const auto& [slice_name, bytes] : it->second) {
      const api::EndpointSlice* slice = flatbuffers::GetRoot<api::EndpointSlice>(bytes.data());
      const auto* refs = slice->metadata() ? slice->metadata()->owner_references() : nullptr;
      if (refs == nullptr) continue;
      for (const api::OwnerReference* ref : *refs) {
        if (ref->controller() && ref->uid() && ref->uid()->str() != uid) foreign.push_back(slice_name);
      }
    }
    for (const std::string& slice_name : foreign) DeleteSlice(ns, owner, slice_name);
  }

  bool DeleteSlice(const std::string& ns, const std::string& owner, const std::string& slice_name) {
    const std::string slice_key = model::ObjectKey(model::Kind("EndpointSlice"), ns, slice_name);
    if (!Write(DeleteOp{slice_key}, "deleting " + slice_key)) {
      RetryLater(ns);
      return false;
    }
    slice_owner_.erase(slice_key);
    slice_revisions_.erase(slice_key);
    if (auto it = slices_.find(owner); it != slices_.end() && (it->second.erase(slice_name), it->second.empty())) {
      slices_.erase(it);
    }
    dns_dirty_.insert(owner);
    return true;
  }

  void SyncService(const api::Service& service, const std::string& ns, const std::vector<const api::Pod*>& pods,
                   const std::string& now) {
    const std::string name = service.metadata()->name()->str();
    std::string bytes = model::Pack(ComputeEndpoints(service, pods));
    const std::string key = model::ObjectKey(model::Kind("Endpoints"), ns, name);
    auto known = written_.find(key);
    if (known == written_.end() || known->second != bytes) {
      if (Write(PutOp{key, bytes}, "writing " + key)) {
        written_[key] = std::move(bytes);
      } else {
        RetryLater(ns);
      }
    }
    // The slices: a stored one is written again only when it changed,
    // guarded by the revision this stage last saw of it; a new one must
    // not exist yet (a name generated twice is tried again later). What
    // is written is kept as stored at once: a round before the watch
    // brings it back must not make the same slice again. (The stored map
    // is looked up afresh after each write: a refused one changes it.)
    const std::string owner = ns + "/" + name;
    const ZoneOf zone_of = [this](const std::string& node) -> std::optional<std::string> {
      auto it = zones_.find(node);
      if (it == zones_.end()) return std::nullopt;
      return it->second;
    };
    const std::map<std::string, std::string> none;
    auto stored = slices_.find(owner);
    SliceChanges changes = ReconcileSlices(DesiredSlices(service, pods, zone_of),
                                           stored == slices_.end() ? none : stored->second, now, rng_);
    for (const api::EndpointSliceT& slice : changes.put) {
      const std::string slice_key = model::ObjectKey(model::Kind("EndpointSlice"), ns, slice.metadata->name);
      auto seen = slice_revisions_.find(slice_key);
      const Revision guard = slice_owner_.contains(slice_key) && seen != slice_revisions_.end() ? seen->second
                                                                                               : Revision(0);
      std::string slice_bytes = model::Pack(slice);
      Revision revision;
      if (Write(PutOp{slice_key, slice_bytes, guard}, "writing " + slice_key, &revision)) {
        slices_[owner][slice.metadata->name] = std::move(slice_bytes);
        slice_owner_[slice_key] = owner;
        slice_revisions_[slice_key] = revision;
        dns_dirty_.insert(owner);
      } else {
        RetryLater(ns);
      }
    }
    for (const std::string& slice_name : changes.deleted) DeleteSlice(ns, owner, slice_name);
  }

  // A pod's hostPorts on its node, as the CNI portmap plugin maps them
  // (`pod` null: it is gone). Only a change of them changes the rules.
  void NoteHostPorts(const std::string& key, const api::Pod* pod) {
    rules::PodHostPorts ports = pod ? rules::HostPortsOf(*pod) : rules::PodHostPorts{};
    const std::string node = pod && pod->spec() && pod->spec()->node_name() ? pod->spec()->node_name()->str() : "";
    auto it = host_ports_.find(key);
    if (ports.ports.empty() || node.empty()) {
      if (it != host_ports_.end()) {
        host_ports_.erase(it);
        rules_changed_ = true;
      }
      return;
    }
    if (it != host_ports_.end() && it->second.first == node && it->second.second == ports) return;
    host_ports_[key] = {node, std::move(ports)};
    rules_changed_ = true;
  }

  // The DNS records and kube-proxy's rules of the services that changed,
  // from what is stored now.
  void RefreshServing() {
    if (dns_dirty_.empty()) return;
    std::lock_guard<std::mutex> lock(records_mu_);
    for (const std::string& service : dns_dirty_) {
      const auto [ns, name] = Split(service);
      ruleset_.RemoveService(ns, name);
      rules_changed_ = true;
      auto stored = services_.find(model::ObjectKey(model::Kind("Service"), ns, name));
      if (stored == services_.end()) {
        records_.RemoveService(ns, name);
        continue;
      }
      std::vector<const api::EndpointSlice*> owned;
      if (auto it = slices_.find(service); it != slices_.end()) {
        for (const auto& [slice_name, bytes] : it->second) {
          owned.push_back(flatbuffers::GetRoot<api::EndpointSlice>(bytes.data()));
        }
      }
      const api::Service& object = *flatbuffers::GetRoot<api::Service>(stored->second.data());
      records_.SetService(dns::DnsServiceOf(object, owned));
      for (rules::ServicePort& port : rules::ServicePortsOf(object, owned)) ruleset_.Set(std::move(port));
    }
    records_.SetSerial(static_cast<uint32_t>(ToUnixMillis(WallClockNow()) / 1000));
    dns_dirty_.clear();
  }

  client::ApiClient& client_;
  std::mutex& records_mu_;
  dns::ClusterRecords& records_;
  rules::Ruleset& ruleset_;
  bool rules_changed_ = false;
  std::mt19937_64 rng_;
  std::shared_ptr<spdlog::logger> log_ = Logger("stage.proxy");

  // Stored bytes, verified once on arrival.
  std::map<std::string, std::string> pods_, services_;
  std::map<std::string, size_t> services_per_ns_;
  std::map<std::string, std::string> zones_;  // node -> topology.kubernetes.io/zone
  std::map<std::string, std::string> pod_cidrs_;  // node -> its podCIDR
  std::map<std::string, std::pair<std::string, rules::PodHostPorts>> host_ports_;  // pod key -> its node, its hostPorts
  std::map<std::string, std::map<std::string, std::string>> slices_;  // "ns/service" -> slice name -> bytes
  std::map<std::string, std::string> slice_owner_;                    // slice key -> "ns/service"
  std::map<std::string, Revision> slice_revisions_;                   // slice key -> last revision seen or written
  std::map<std::string, std::string> written_;                        // Endpoints key -> bytes written
  std::set<std::string> dirty_;                                       // namespaces to sync
  std::set<std::string> retry_;                                       // ... once retry_after_ has come
  std::chrono::steady_clock::time_point retry_after_;
  bool retry_armed_ = false;
  std::set<std::string> gone_;       // "ns/name" of deleted services whose objects are to delete
  std::set<std::string> gone_retry_;  // ... whose deletes failed: again once retry_after_ has come
  std::set<std::string> dns_dirty_;  // "ns/name" of services whose records and rules changed
};

}  // namespace

Result<std::unique_ptr<ProxyStage>> ProxyStage::Create(pipeline::StageContext& context) {
  Result<ProxyConfig> config = LoadProxyConfig(context.config.Section("proxy"), context.config.Section("runtime"));
  if (!config.ok()) return config.status();
  return std::unique_ptr<ProxyStage>(new ProxyStage(context, std::move(*config)));
}

dns::Lookup ProxyStage::RecordsLookup() {
  return [this](std::string_view name, dns::RrType type) {
    std::lock_guard<std::mutex> lock(records_mu_);
    return records_.Resolve(name, type);
  };
}

Status ProxyStage::Start() {
  if (config_.dns && !config_.dns_forward.empty()) {
    // Started here, so its threads (and the sockets they make) are in this
    // machine's network namespace, whichever server hands it a query.
    // Never to the DNS's own address: its queries would come back round.
    Result<std::unique_ptr<dns::Forwarder>> forwarder =
        dns::Forwarder::Start(config_.dns_forward, dns::Forwarder::Options{}, config_.OwnDnsAddresses());
    if (forwarder.ok()) {
      forwarder_ = std::move(*forwarder);
      std::string to;
      for (const std::string& upstream : forwarder_->upstreams()) to += (to.empty() ? "" : ", ") + upstream;
      Logger("stage.proxy")->info("cluster DNS forwards other names to {}", to);
    } else if (config_.dns_forward_default) {
      Logger("stage.proxy")->warn("cluster DNS forwards no other names (REFUSED): {}", forwarder.status().message());
    } else {
      return Status(forwarder.status().code(), "proxy." + forwarder.status().message());
    }
  }
  if (config_.dns) {
    // Without its address (taken, not allowed) the cluster has no DNS; the
    // rest of the stage goes on.
    Result<std::unique_ptr<dns::DnsServer>> server =
        dns::DnsServer::Start(config_.dns_host, config_.dns_port, RecordsLookup(), forwarder_.get());
    if (server.ok()) {
      dns_server_ = std::move(*server);
      Logger("stage.proxy")->info("cluster DNS ({}) answers on {}:{} (udp, tcp)", config_.cluster_domain,
                                  config_.dns_host, dns_server_->port());
    } else {
      Logger("stage.proxy")->warn("no cluster DNS: {}", server.status().ToString());
    }
  }
  loop_.Start([this](const std::atomic<bool>& stopping) { Loop(stopping); });
  return Status::Ok();
}

void ProxyStage::Stop() {
  loop_.Stop();
  dns_server_.reset();
  forwarder_.reset();
}

void ProxyStage::Loop(const std::atomic<bool>& stopping) {
  auto informer = [&](const char* kind) {
    return client::Informer(context_.bus, context_.Endpoint("api"), context_.Endpoint("watch"),
                            model::KindPrefix(model::Kind(kind)));
  };
  client::Informer pods = informer("Pod"), services = informer("Service"), slices = informer("EndpointSlice"),
                   nodes = informer("Node"), namespaces = informer("Namespace");
  client::ApiClient client(context_.bus, context_.Endpoint("api"), "proxy");
  // Without br_netfilter a node's bridge would carry a reply from a pod on
  // the same node past conntrack, un-DNATed: every Service's traffic is
  // masqueraded then (kube-proxy's --masquerade-all), so that replies come
  // back through the node.
  const bool bridged = std::filesystem::exists("/proc/sys/net/bridge/bridge-nf-call-iptables");
  rules::Ruleset ruleset({"", config_.cluster_cidr, !bridged});
  Reconciler reconciler(client, records_mu_, records_, ruleset);
  // kube-proxy and the DNS on the nodes of the pod network, if there is one.
  NodeProxies node_proxies(netns::PrefixFor(context_.config.data_dir), config_.dns ? config_.cluster_dns : "",
                           RecordsLookup(), forwarder_.get());
  const auto known_nodes = [&] { return reconciler.Nodes(); };
  if (!bridged) {
    node_proxies.NoteOnce("no br_netfilter in this kernel: on the pod network every Service's traffic is masqueraded");
  }
  const client::Informer::Handlers pod_handlers = reconciler.PodHandlers(),
                                   service_handlers = reconciler.ServiceHandlers(),
                                   slice_handlers = reconciler.SliceHandlers(),
                                   node_handlers = reconciler.NodeHandlers(),
                                   namespace_handlers = reconciler.NamespaceHandlers();
  bool leftovers_collected = false;
  while (!stopping) {
    Status polled = namespaces.Poll(std::chrono::milliseconds(0), namespace_handlers);
    if (polled.ok()) polled = nodes.Poll(std::chrono::milliseconds(0), node_handlers);
    if (polled.ok()) polled = slices.Poll(std::chrono::milliseconds(0), slice_handlers);
    if (polled.ok()) polled = services.Poll(std::chrono::milliseconds(0), service_handlers);
    if (polled.ok()) polled = pods.Poll(std::chrono::milliseconds(100), pod_handlers);
    if (!polled.ok()) {
      Logger("stage.proxy")->warn("following the log: {}", polled.ToString());
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    if (!leftovers_collected) leftovers_collected = reconciler.CollectLeftovers();
    reconciler.Round();
    if (reconciler.TakeRulesChanged()) node_proxies.RulesChanged();
    node_proxies.Round(known_nodes, [&](const std::string& node) {
      const rules::Fragment host_ports = reconciler.HostPortRules(node);
      return ruleset.RenderOwned(node, &host_ports);
    });
  }
}

}  // namespace podflow::proxy

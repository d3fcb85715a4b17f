#include "stages/admission/admission_stage.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <thread>
#include <random>
#include <set>
#include <string_view>
#include <vector>

#include "base/logging.h"
#include "client/update.h"
#include "model/kind_types.h"
#include "model/objects.h"
#include "pipeline/credentials.h"
#include "policy_generated.h"
#include "service_generated.h"
#include "stages/admission/quota.h"

namespace podflow::admission {
namespace {

constexpr int kWorkers = 8;

// The cluster IPs of every stored Service.
// Every stored PriorityClass. One that fails verification is logged and
// left out: pods naming it are refused as if it did not exist.
Result<std::vector<PriorityClassInfo>> StoredPriorityClasses(client::ApiClient& client) {
  static auto log = Logger("stage.admission");
  Result<RangeResult> stored = client.List(model::KindPrefix(model::Kind("PriorityClass")));
  if (!stored.ok()) return stored.status();
  std::vector<PriorityClassInfo> classes;
  for (const KeyValue& kv : stored->kvs) {
    Result<PriorityClassInfo> pc = ReadStoredPriorityClass(kv.value);
    if (!pc.ok()) {
      log->warn("ignoring {}: {}", kv.key, pc.status().ToString());
      continue;
    }
    classes.push_back(std::move(*pc));
  }
  return classes;
}

// A stored Namespace as the plugins read it; Corruption when the value is
// not one.
Result<std::optional<NamespaceInfo>> InfoOf(const std::string& key, std::string_view bytes) {
  if (!model::VerifyObject(model::Kind("Namespace"), bytes).ok()) {
    return Status::Corruption("the value stored at " + key + " is not a valid Namespace");
  }
  return std::optional<NamespaceInfo>(ReadNamespace(bytes));
}

// The value at `key`: the store's, or the log's when the store has not
// seen it (the watch may lag an object created a moment ago).
Result<std::optional<std::string>> StoredValue(const client::Store& store, client::ApiClient& client,
                                               const std::string& key) {
  if (std::optional<std::string> cached = store.Get(key)) return cached;
  Result<std::optional<KeyValue>> stored = client.Get(key);
  if (!stored.ok()) return stored.status();
  if (!stored->has_value()) return std::optional<std::string>();
  return std::optional<std::string>(std::move((*stored)->value));
}

// The objects a store of `Table`'s kind holds in `ns`, unpacked. One that
// fails verification is logged and left out.
template <typename Table>
std::vector<typename Table::NativeTableType> StoredIn(client::Store& store, const std::string& ns) {
  static auto log = Logger("stage.admission");
  const model::KindInfo& kind = model::Kind(model::KindNameOf<Table>::value);
  std::vector<typename Table::NativeTableType> out;
  for (const KeyValue& kv : store.List(model::KindPrefix(kind, ns))) {
    if (!model::VerifyObject(kind, kv.value).ok()) {
      log->warn("ignoring {}: not a valid {}", kv.key, kind.kind);
      continue;
    }
    out.push_back(std::move(*model::Unpack<Table>(kv.value)));
  }
  return out;
}

// Waits (up to kStoreWait, or until `stopping`) until `store` holds a
// value at `key` other than `before`: the write that replaced it, or a
// later one.
void AwaitReplaced(const client::Store& store, const std::string& key, const std::string& before,
                   const std::atomic<bool>& stopping) {
  constexpr std::chrono::seconds kStoreWait{5};
  const auto deadline = std::chrono::steady_clock::now() + kStoreWait;
  while (!stopping && std::chrono::steady_clock::now() < deadline) {
    std::optional<std::string> now = store.Get(key);
    if (now && *now != before) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// The namespaces kube-apiserver makes at its start, and the object it
// runs its own creations as.
constexpr std::string_view kBootstrapNamespaces[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
const UserInfo kApiServer{"system:apiserver", "", {"system:masters"}};

std::string NamespaceManifest(std::string_view name) {
  return "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + std::string(name) + "}\n";
}

// What every namespace admitted in `outcomes` is given, as Kubernetes'
// controllers give it: its `default` ServiceAccount (the service account
// controller) and, with the cluster's CA certificate `root_ca` (PEM), the
// kube-root-ca.crt ConfigMap (the root CA certificate publisher).
// The kube-root-ca.crt ConfigMap of namespace `ns`, holding `root_ca`.
std::string RootCaConfigMap(const std::string& ns, const std::string& root_ca) {
  model::Value meta = model::Value::Object();
  meta.Set("name", model::Value::String(std::string(kRootCaConfigMap)));
  meta.Set("namespace", model::Value::String(ns));
  model::Value annotations = model::Value::Object();
  annotations.Set("kubernetes.io/description",
                  model::Value::String("Contains a CA bundle that can be used to verify the kube-apiserver when "
                                       "using internal endpoints such as the internal service IP or "
                                       "kubernetes.default.svc. No other usage is guaranteed across distributions "
                                       "of Kubernetes clusters."));
  meta.Set("annotations", std::move(annotations));
  model::Value data = model::Value::Object();
  data.Set("ca.crt", model::Value::String(root_ca));
  model::Value config_map = model::Value::Object();
  config_map.Set("apiVersion", model::Value::String("v1"));
  config_map.Set("kind", model::Value::String("ConfigMap"));
  config_map.Set("metadata", std::move(meta));
  config_map.Set("data", std::move(data));
  return "---\n" + model::ToJson(config_map) + "\n";
}

std::string NamespaceDefaults(const std::vector<AdmissionOutcome>& outcomes, const std::string& root_ca) {
  std::string manifest;
  for (const AdmissionOutcome& o : outcomes) {
    if (!o.admitted() || o.kind == nullptr || o.kind->kind != "Namespace") continue;
    manifest += "---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, namespace: " + o.name + "}\n";
    if (!root_ca.empty()) manifest += RootCaConfigMap(o.name, root_ca);
  }
  return manifest;
}

flatbuffers::Offset<msg::SubmitReply> FailureReply(flatbuffers::FlatBufferBuilder& fbb,
                                                   const ApiStatusInfo& status) {
  auto written = WriteApiStatus(fbb, status);
  return msg::CreateSubmitReply(fbb, 0, written);
}

// etcd's default --max-txn-ops, and a byte budget under the log's limit.
constexpr size_t kMaxOpsPerTxn = 128;
constexpr size_t kMaxBytesPerTxn = 1 << 20;

// Creates the admitted documents of one request with "must not exist",
// several per transaction so that they share one durable commit. Each
// document still succeeds or fails on its own, as kubectl create -f gives
// them one by one: a failed guard names the document that exists, which
// gets AlreadyExists, and the rest of its transaction is tried again. The
// same object twice in one request: the second copy is tried after the
// first, and fails AlreadyExists as kubectl would report it.
// Sets `revisions[i]` for each document created.
void CreateAll(client::ApiClient& client, std::vector<AdmissionOutcome>& outcomes, std::vector<int64_t>& revisions) {
  static auto log = Logger("stage.admission");
  std::vector<size_t> admitted;
  std::vector<client::UpdateItem> items;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (!outcomes[i].admitted()) continue;
    AdmissionOutcome& o = outcomes[i];
    client::UpdateItem item;
    item.key = o.key;
    item.known = KeyValue{o.key, "", {}, Revision(0)};  // believed absent
    item.mutate = [&o, &client](const KeyValue* current, bool) -> client::Mutation {
      if (current != nullptr) {
        o.status = AlreadyExistsStatus(*o.kind, o.name);
        return client::Mutation::Skip();
      }
      // Charged to its quotas as they are now, in the same write: a quota
      // another create charged meanwhile fails the guard, and this one is
      // decided again on it.
      std::vector<TxnOp> charges;
      if (std::optional<ApiStatusInfo> refused =
              ChargeStoredQuotas(client, o.quota_keys, *o.kind, o.name, o.quota_usage, charges)) {
        o.status = std::move(*refused);
        return client::Mutation::Skip();
      }
      return client::Mutation::Put(o.bytes, std::move(charges));
    };
    items.push_back(std::move(item));
    admitted.push_back(i);
  }
  client::UpdatePolicy policy;
  // A lost guard on the object means it exists (decided once more, as
  // AlreadyExists); on a quota, that another create charged it first:
  // decided again, as often as creates in a namespace may race.
  policy.max_attempts = 32;
  policy.max_ops_per_txn = kMaxOpsPerTxn;
  policy.max_bytes_per_txn = kMaxBytesPerTxn;
  std::vector<client::UpdateOutcome> written = client::UpdateBatch(client, std::move(items), policy);
  for (size_t n = 0; n < written.size(); ++n) {
    const size_t i = admitted[n];
    if (written[n].written) {
      revisions[i] = written[n].revision.value();
    } else if (written[n].status.code() == Code::kConflict) {
      // Its quotas kept changing under it.
      const std::string& quota = outcomes[i].quota_keys.empty() ? outcomes[i].key : outcomes[i].quota_keys[0];
      outcomes[i].status = model::ConflictStatus(model::Kind("ResourceQuota"), quota.substr(quota.rfind('/') + 1));
    } else if (!written[n].status.ok()) {
      log->warn("creating {}: {}", outcomes[i].key, written[n].status.ToString());
      outcomes[i].status = InternalErrorStatus(written[n].status.ToString());
    }
  }
}

}  // namespace

Status AdmissionStage::ReadTakenServiceAddresses(client::ApiClient& client, ClusterView& view, std::string_view except) {
  Result<RangeResult> services = client.List(model::KindPrefix(model::Kind("Service")));
  if (!services.ok()) return services.status();
  view.taken_cluster_ips.clear();
  view.taken_node_ports.clear();
  for (const KeyValue& kv : services->kvs) {
    if (kv.key == except || !model::VerifyObject(model::Kind("Service"), kv.value).ok()) continue;
    const api::ServiceSpec* spec = flatbuffers::GetRoot<api::Service>(kv.value.data())->spec();
    if (spec == nullptr) continue;
    if (spec->cluster_ip()) view.taken_cluster_ips.insert(spec->cluster_ip()->str());
    if (spec->cluster_ips()) {
      for (const auto* ip : *spec->cluster_ips()) view.taken_cluster_ips.insert(ip->str());
    }
    if (spec->ports()) {
      for (const api::ServicePort* p : *spec->ports()) {
        if (p->node_port() != 0) view.taken_node_ports.insert(p->node_port());
      }
    }
    if (spec->health_check_node_port() != 0) view.taken_node_ports.insert(spec->health_check_node_port());
  }
  view.taken_cluster_ips.erase("None");
  view.taken_cluster_ips.erase("");
  return Status::Ok();
}

std::optional<ApiStatusInfo> ChargeStoredQuotas(client::ApiClient& client, const std::vector<std::string>& keys,
                                               const model::KindInfo& kind, const std::string& name,
                                               const std::map<std::string, model::Quantity>& usage,
                                               std::vector<TxnOp>& charges) {
  for (const std::string& key : keys) {
    Result<std::optional<KeyValue>> stored = client.Get(key);
    if (!stored.ok()) return InternalErrorStatus(stored.status().ToString());
    if (!stored->has_value() || !model::VerifyObject(model::Kind("ResourceQuota"), (*stored)->value).ok()) {
      continue;  // deleted since: nothing to charge
    }
    std::unique_ptr<api::ResourceQuotaT> quota = model::Unpack<api::ResourceQuota>((*stored)->value);
    bool charged = false;
    if (std::optional<std::string> why = ChargeQuota(*quota, kind, usage, &charged)) {
      return AdmissionForbiddenStatus(kind, name, *why);
    }
    if (charged) charges.push_back(PutOp{key, model::Pack(*quota), (*stored)->mod_revision});
  }
  return std::nullopt;
}

Result<std::optional<NamespaceInfo>> AdmissionStage::LookupNamespace(client::ApiClient& client,
                                                                   const std::string& name) {
  const std::string key = model::ObjectKey(model::Kind("Namespace"), "", name);
  Result<std::optional<std::string>> stored = StoredValue(*namespaces_, client, key);
  if (!stored.ok()) return stored.status();
  if (!stored->has_value()) return std::optional<NamespaceInfo>();
  return InfoOf(key, **stored);
}

Result<std::optional<ServiceAccountInfo>> AdmissionStage::LookupServiceAccount(client::ApiClient& client,
                                                                               const std::string& ns,
                                                                               const std::string& name) {
  const std::string key = model::ObjectKey(model::Kind("ServiceAccount"), ns, name);
  Result<std::optional<std::string>> stored = StoredValue(*service_accounts_, client, key);
  if (!stored.ok()) return stored.status();
  if (!stored->has_value()) return std::optional<ServiceAccountInfo>();
  if (!model::VerifyObject(model::Kind("ServiceAccount"), **stored).ok()) {
    return Status::Corruption("the value stored at " + key + " is not a valid ServiceAccount");
  }
  return std::optional<ServiceAccountInfo>(ReadServiceAccount(**stored));
}

Result<std::vector<api::ResourceQuotaT>> AdmissionStage::QuotasIn(const std::string& ns) {
  return StoredIn<api::ResourceQuota>(*quotas_, ns);
}

ClusterView AdmissionStage::View(Worker& worker, std::optional<Result<std::vector<PriorityClassInfo>>>& classes) {
  ClusterView view;
  view.namespaces = [this, &worker](const std::string& name) { return LookupNamespace(worker.client, name); };
  view.limit_ranges = [this](const std::string& ns) { return LimitRangesIn(ns); };
  view.quotas = [this](const std::string& ns) { return QuotasIn(ns); };
  view.service_accounts = [this, &worker](const std::string& ns, const std::string& name) {
    return LookupServiceAccount(worker.client, ns, name);
  };
  // PriorityClasses are read only if a document needs them (a Pod, a
  // PriorityClass), and once per request.
  view.priority_classes = [&worker, &classes]() -> Result<std::vector<PriorityClassInfo>> {
    if (!classes) classes = StoredPriorityClasses(worker.client);
    return *classes;
  };
  return view;
}

Result<std::vector<api::LimitRangeT>> AdmissionStage::LimitRangesIn(const std::string& ns) {
  return StoredIn<api::LimitRange>(*limit_ranges_, ns);
}

void AdmissionStage::Bootstrap() {
  static auto log = Logger("stage.admission");
  std::string manifest;
  for (std::string_view ns : kBootstrapNamespaces) manifest += "---\n" + NamespaceManifest(ns);
  // And the default roles, as kube-apiserver's RBAC bootstrap makes them.
  manifest += BootstrapRbacManifest();
  std::unique_ptr<Worker> worker = Borrow();
  while (!stopping_) {
    AdmitReply namespaces = worker->admission.AdmitAs(kApiServer, manifest);
    ClusterView made;
    made.namespaces = [](const std::string&) -> Result<std::optional<NamespaceInfo>> {
      return std::optional<NamespaceInfo>(NamespaceInfo{});
    };
    AdmitReply accounts = worker->admission.AdmitAs(kApiServer, NamespaceDefaults(namespaces.results, root_ca_), made);
    std::vector<AdmissionOutcome> all = std::move(namespaces.results);
    for (AdmissionOutcome& o : accounts.results) all.push_back(std::move(o));
    std::vector<int64_t> revisions(all.size(), 0);
    CreateAll(worker->client, all, revisions);
    const bool done = std::all_of(all.begin(), all.end(), [](const AdmissionOutcome& o) {
      return o.admitted() || o.status.reason == "AlreadyExists";
    });
    if (done) break;
    for (const AdmissionOutcome& o : all) {
      if (!o.admitted() && o.status.reason != "AlreadyExists") log->debug("bootstrap {}: {}", o.name, o.status.message);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  {
    std::lock_guard<std::mutex> lock(bootstrap_mu_);
    bootstrapped_ = true;
  }
  bootstrap_cv_.notify_all();
  // Requests need not wait for this.
  if (!stopping_) PublishRootCa(*worker);
  Return(std::move(worker));
}

void AdmissionStage::PublishRootCa(Worker& worker) {
  static auto log = Logger("stage.admission");
  if (root_ca_.empty()) return;
  Result<RangeResult> namespaces = worker.client.List(model::KindPrefix(model::Kind("Namespace")));
  if (!namespaces.ok()) {
    log->warn("publishing the root CA: listing namespaces: {}", namespaces.status().ToString());
    return;
  }
  std::string manifest;
  for (const KeyValue& kv : namespaces->kvs) {
    if (!model::VerifyObject(model::Kind("Namespace"), kv.value).ok()) continue;
    if (ReadNamespace(kv.value).phase == api::NamespacePhase::Terminating) continue;
    manifest += RootCaConfigMap(kv.key.substr(kv.key.rfind('/') + 1), root_ca_);
  }
  if (manifest.empty()) return;
  std::optional<Result<std::vector<PriorityClassInfo>>> classes;
  AdmitReply made = worker.admission.AdmitAs(kApiServer, manifest, View(worker, classes));
  std::vector<int64_t> revisions(made.results.size(), 0);
  CreateAll(worker.client, made.results, revisions);
  for (const AdmissionOutcome& o : made.results) {
    if (!o.admitted() && o.status.reason != "AlreadyExists") {
      log->warn("publishing the root CA in {}: {}", o.namespace_, o.status.message);
    }
  }
}

bool AdmissionStage::Idle(std::chrono::milliseconds period) {
  std::unique_lock<std::mutex> lock(bootstrap_mu_);
  return !bootstrap_cv_.wait_for(lock, period, [this] { return stopping_.load(); });
}

bool AdmissionStage::AwaitBootstrap() {
  std::unique_lock<std::mutex> lock(bootstrap_mu_);
  return bootstrap_cv_.wait_for(lock, kBootstrapWait, [this] { return bootstrapped_ || stopping_; });
}

Result<std::unique_ptr<AdmissionStage>> AdmissionStage::Create(pipeline::StageContext& context) {
  std::string base_dir;
  if (context.config.source.find('<') != 0) {
    base_dir = std::filesystem::path(context.config.source).parent_path().string();
  }
  // The data dir's admin token (made with its credentials) is user "admin"
  // of system:masters, as a cluster's admin credentials are.
  std::vector<TokenEntry> generated;
  Result<std::string> admin_token = pipeline::ReadAdminToken(context.config.data_dir);
  if (admin_token.ok()) {
    generated.push_back({*admin_token, UserInfo{"admin", "1", {"system:masters"}}});
  } else if (admin_token.status().code() != Code::kNotFound) {
    return admin_token.status();
  }
  // The cluster's CA certificate, which every namespace's kube-root-ca.crt
  // holds (none before the data dir has its credentials).
  std::string root_ca;
  if (Result<std::string> ca = pipeline::ReadRootCa(context.config.data_dir); ca.ok()) {
    root_ca = std::move(*ca);
  } else if (ca.status().code() != Code::kNotFound) {
    return ca.status();
  }
  // The registry catalog, for ImagePolicy (the runtime checks the section).
  const YAML::Node runtime = context.config.Section("runtime");
  const YAML::Node registry = runtime.IsMap() ? runtime["registry"] : YAML::Node();
  Result<AdmissionConfig> config =
      ParseAdmissionConfig(context.config.Section("admission"), base_dir, std::move(generated), registry);
  if (!config.ok()) return config.status();
  // A controller's bus identity, which its CURVE key proves, is its service
  // account, as kube-controller-manager's controllers present their own
  // credentials.
  for (std::string_view controller : pipeline::kControllerIdentities) {
    config->authenticator.TrustPeer(std::string(controller),
                                    UserInfo{"system:serviceaccount:kube-system:" + std::string(controller), "",
                                             {"system:serviceaccounts", "system:serviceaccounts:kube-system"}});
  }
  auto rbac = std::make_shared<RbacStores>();
  if (config->authorization_mode == "RBAC") {
    config->authorizer = Authorizer::Rbac([rbac] { return rbac->Current(); });
  }
  return std::unique_ptr<AdmissionStage>(
      new AdmissionStage(context, std::move(*config), std::move(rbac), std::move(root_ca)));
}

Status AdmissionStage::Start() {
  namespaces_ = std::make_unique<client::Store>(context_.bus, context_.Endpoint("api"), context_.Endpoint("watch"),
                                                model::KindPrefix(model::Kind("Namespace")));
  namespaces_->Start();
  limit_ranges_ = std::make_unique<client::Store>(context_.bus, context_.Endpoint("api"), context_.Endpoint("watch"),
                                                  model::KindPrefix(model::Kind("LimitRange")));
  limit_ranges_->Start();
  quotas_ = std::make_unique<client::Store>(context_.bus, context_.Endpoint("api"), context_.Endpoint("watch"),
                                            model::KindPrefix(model::Kind("ResourceQuota")));
  quotas_->Start();
  service_accounts_ = std::make_unique<client::Store>(context_.bus, context_.Endpoint("api"),
                                                      context_.Endpoint("watch"),
                                                      model::KindPrefix(model::Kind("ServiceAccount")));
  service_accounts_->Start();
  rbac_->Start(context_.bus, context_.Endpoint("api"), context_.Endpoint("watch"));
  stopping_ = false;
  bootstrap_ = std::thread([this] { Bootstrap(); });
  namespace_finalizer_ = std::thread([this] { FinalizeNamespaces(); });
  quota_controller_ = std::thread([this] { RecountQuotas(); });
  server_ = std::make_unique<bus::RpcServer>(
      context_.bus, context_.Endpoint("submit"), kWorkers,
      [this](const msg::Envelope& request, std::string_view peer, flatbuffers::FlatBufferBuilder& fbb) {
        return Handle(request, peer, fbb);
      });
  watch_server_ = std::make_unique<bus::StreamServer>(
      context_.bus, context_.Endpoint("apiwatch"), [this](const msg::Envelope& open) { return OpenWatch(open); });
  Status started = server_->Start();
  if (started.ok()) started = watch_server_->Start();
  // The runner stops only what started: a failed start stops its threads.
  if (!started.ok()) Stop();
  return started;
}

void AdmissionStage::Stop() {
  // Bootstrap first, so that no request waits for it while the server stops.
  stopping_ = true;
  bootstrap_cv_.notify_all();
  // Every follower is told at once, so that their reads in flight end
  // together rather than one after the other.
  if (namespaces_) namespaces_->RequestStop();
  if (limit_ranges_) limit_ranges_->RequestStop();
  if (quotas_) quotas_->RequestStop();
  if (service_accounts_) service_accounts_->RequestStop();
  rbac_->RequestStop();
  if (bootstrap_.joinable()) bootstrap_.join();
  if (namespace_finalizer_.joinable()) namespace_finalizer_.join();
  if (quota_controller_.joinable()) quota_controller_.join();
  if (watch_server_) watch_server_->Stop();
  if (server_) server_->Stop();
  if (namespaces_) namespaces_->Stop();
  if (limit_ranges_) limit_ranges_->Stop();
  if (quotas_) quotas_->Stop();
  if (service_accounts_) service_accounts_->Stop();
  rbac_->Stop();
  std::lock_guard<std::mutex> lock(pool_mu_);
  pool_.clear();
}

std::unique_ptr<AdmissionStage::Worker> AdmissionStage::Borrow() {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!pool_.empty()) {
      std::unique_ptr<Worker> worker = std::move(pool_.back());
      pool_.pop_back();
      return worker;
    }
  }
  // Uids must differ across restarts and processes: a random seed.
  std::random_device entropy;
  std::mt19937_64 rng((static_cast<uint64_t>(entropy()) << 32) ^ entropy());
  return std::unique_ptr<Worker>(new Worker{
      Admission(config_, [] { return std::chrono::system_clock::now(); }, rng),
      client::ApiClient(context_.bus, context_.Endpoint("api"), std::string(kName)),
      bus::RpcClient(context_.bus, context_.Endpoint("kubelet"), std::string(kName))});
}

void AdmissionStage::Return(std::unique_ptr<Worker> worker) {
  std::lock_guard<std::mutex> lock(pool_mu_);
  pool_.push_back(std::move(worker));
}

AdmissionStage::Created AdmissionStage::CreateObjects(Worker& worker, const UserInfo& user, std::string_view text,
                                                     bool dry_run) {
  Created created;
  std::optional<Result<std::vector<PriorityClassInfo>>> classes;
  ClusterView view = View(worker, classes);
  // Services need the cluster IPs in use, read under a lock so that two
  // requests never hand out one address. Most requests hold no Service: they
  // are admitted without it, and only if one turns out to hold a Service
  // is it admitted again (nothing was written yet) with the lock taken.
  std::unique_lock<std::mutex> ip_lock(cluster_ip_mu_, std::defer_lock);
  AdmitReply admitted = worker.admission.AdmitAs(user, text, view);
  const bool has_service = std::any_of(admitted.results.begin(), admitted.results.end(), [](const auto& o) {
    return o.admitted() && o.kind != nullptr && o.kind->kind == "Service";
  });
  if (has_service) {
    ip_lock.lock();
    if (Status read = ReadTakenServiceAddresses(worker.client, view); !read.ok()) {
      created.failure = InternalErrorStatus(read.ToString());
      return created;
    }
    admitted = worker.admission.AdmitAs(user, text, view);
  }
  if (admitted.failure) {
    created.failure = std::move(admitted.failure);
    return created;
  }
  created.revisions.assign(admitted.results.size(), 0);
  if (!dry_run) {
    CreateAll(worker.client, admitted.results, created.revisions);
    if (ip_lock.owns_lock()) ip_lock.unlock();  // the Services are written
    // A new quota is counted at once, as the quota controller would, and
    // the reply waits until admission reads it counted: whatever is created
    // after the client hears of the quota is checked against it.
    for (size_t i = 0; i < admitted.results.size(); ++i) {
      const AdmissionOutcome& o = admitted.results[i];
      if (created.revisions[i] == 0 || o.kind == nullptr || o.kind->kind != "ResourceQuota") continue;
      Result<std::string> counted = CountStoredQuota(worker.client, o.key);
      if (counted.ok() && !counted->empty()) AwaitReplaced(*quotas_, o.key, o.bytes, stopping_);
    }
    // Every new namespace gets its `default` ServiceAccount and the
    // cluster's CA, as Kubernetes' controllers make them.
    const std::string accounts = NamespaceDefaults(admitted.results, root_ca_);
    if (!accounts.empty()) {
      AdmitReply made = worker.admission.AdmitAs(kApiServer, accounts, view);
      std::vector<int64_t> made_revisions(made.results.size(), 0);
      CreateAll(worker.client, made.results, made_revisions);
    }
  }
  created.results = std::move(admitted.results);
  return created;
}

bus::ReplyBody AdmissionStage::Handle(const msg::Envelope& envelope, std::string_view peer,
                                      flatbuffers::FlatBufferBuilder& fbb) {
  if (const msg::ApiRequest* api = envelope.body_as_ApiRequest()) {
    AwaitBootstrap();
    std::unique_ptr<Worker> worker = Borrow();
    bus::ReplyBody reply = HandleApi(*worker, *api, peer, fbb);
    Return(std::move(worker));
    return reply;
  }
  const msg::SubmitRequest* request = envelope.body_as_SubmitRequest();
  if (request == nullptr) {
    return {msg::Body::SubmitReply,
            FailureReply(fbb, BadRequestStatus("the submit channel takes SubmitRequest and ApiRequest messages")).Union()};
  }
  std::string_view token = request->token() ? request->token()->string_view() : std::string_view();
  Result<UserInfo> user = config_.authenticator.Authenticate(token, peer);
  if (!user.ok()) return {msg::Body::SubmitReply, FailureReply(fbb, UnauthorizedStatus()).Union()};
  std::string_view text;
  if (request->manifest()) {
    text = std::string_view(reinterpret_cast<const char*>(request->manifest()->data()), request->manifest()->size());
  }

  // Requests wait (boundedly) for the bootstrap namespaces, as clients wait
  // for kube-apiserver to become ready.
  AwaitBootstrap();
  std::unique_ptr<Worker> worker = Borrow();
  Created created = CreateObjects(*worker, *user, text, request->dry_run());
  Return(std::move(worker));
  if (created.failure) return {msg::Body::SubmitReply, FailureReply(fbb, *created.failure).Union()};

  std::vector<flatbuffers::Offset<msg::SubmitResult>> results;
  for (size_t i = 0; i < created.results.size(); ++i) {
    const AdmissionOutcome& outcome = created.results[i];
    std::string kind = outcome.kind ? std::string(outcome.kind->kind) : std::string();
    auto status = WriteApiStatus(fbb, outcome.status);
    results.push_back(msg::CreateSubmitResult(fbb, fbb.CreateString(kind), fbb.CreateString(outcome.namespace_),
                                              fbb.CreateString(outcome.name), status, created.revisions[i],
                                              outcome.warnings.empty() ? 0 : fbb.CreateVectorOfStrings(outcome.warnings)));
  }
  auto reply = msg::CreateSubmitReply(fbb, fbb.CreateVector(results));
  return {msg::Body::SubmitReply, reply.Union()};
}

}  // namespace podflow::admission

// The admission stage as a pipeline node: serves the submit channel
// (request/reply). A SubmitRequest's manifest is run through Admission
// (authn, authz, defaults, validation) and every admitted document is
// created in the log with "must not exist" semantics; the reply carries one
// Kubernetes-style status per document. An ApiRequest is one verb on one
// resource (get, list, create, update, patch, delete, deletecollection),
// as kube-apiserver serves it; a watch is a stream on the apiwatch channel.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <thread>
#include <mutex>
#include <vector>

#include "bus/bus.h"
#include "pipeline/stage.h"
#include "stages/admission/admission.h"
#include "stages/admission/rbac_stores.h"
#include "client/client.h"
#include "client/store.h"
#include "client/update.h"

namespace podflow::admission {

// The write a decided change makes of its stored key: none when it was
// refused, changes nothing, or is a dry run.
client::Mutation MutationOf(const ChangeOutcome& decided, bool dry_run = false);

// Charges `usage` (what the object `name` of `kind` counts for, or an
// update adds) to the stored quotas `keys` as they are now: a guarded put
// of each quota it adds to is appended to `charges`, for the transaction
// that writes the object. Why not (a quota with no room left, or a read
// that failed), in kube-apiserver's words.
std::optional<ApiStatusInfo> ChargeStoredQuotas(client::ApiClient& client, const std::vector<std::string>& keys,
                                               const model::KindInfo& kind, const std::string& name,
                                               const std::map<std::string, model::Quantity>& usage,
                                               std::vector<TxnOp>& charges);

class AdmissionStage {
 public:
  static constexpr std::string_view kName = "admission";
  // Parses the `admission:` section; Invalid names the bad key.
  static Result<std::unique_ptr<AdmissionStage>> Create(pipeline::StageContext& context);
  ~AdmissionStage() { Stop(); }

  Status Start();
  void Stop();

 private:
  // What one request needs for itself: Admission owns an RNG and the client
  // a socket, so each concurrent request borrows one worker.
  struct Worker {
    Admission admission;
    client::ApiClient client;
    bus::RpcClient kubelet;  // the runtime's kubelet channel (pods/log, pods/exec)
  };

  AdmissionStage(pipeline::StageContext& context, AdmissionConfig config, std::shared_ptr<RbacStores> rbac,
                 std::string root_ca)
      : context_(context), config_(std::move(config)), rbac_(std::move(rbac)), root_ca_(std::move(root_ca)) {}
  // `peer`: the bus identity that sent the request.
  bus::ReplyBody Handle(const msg::Envelope& request, std::string_view peer, flatbuffers::FlatBufferBuilder& fbb);

  // What creating a manifest's documents came to.
  struct Created {
    std::optional<ApiStatusInfo> failure;  // the whole request failed
    std::vector<AdmissionOutcome> results;  // one per document
    std::vector<int64_t> revisions;         // of each document's create (0: not written)
  };
  // Admits as `user` and (unless `dry_run`) creates every document of `text`.
  Created CreateObjects(Worker& worker, const UserInfo& user, std::string_view text, bool dry_run);
  // An ApiRequest: the verbs on one resource (api_requests.cc).
  bus::ReplyBody HandleApi(Worker& worker, const msg::ApiRequest& request, std::string_view peer,
                           flatbuffers::FlatBufferBuilder& fbb);
  // get pods/log (pod_kubelet.cc): the pod and the container checked as
  // kube-apiserver checks them, then the log asked of the kubelet.
  bus::ReplyBody HandlePodLog(Worker& worker, const msg::ApiRequest& request, const std::string& ns,
                              const std::string& name, flatbuffers::FlatBufferBuilder& fbb);
  // create pods/exec (pod_kubelet.cc): a command started in the container
  // (checked as for the log), or a turn of the session `user` started.
  bus::ReplyBody HandlePodExec(Worker& worker, const msg::ApiRequest& request, const UserInfo& user,
                               const std::string& ns, const std::string& name, flatbuffers::FlatBufferBuilder& fbb);
  // A watch a client opened on the apiwatch channel (api_watch.cc): the
  // stream's source, or one that says why it was refused.
  std::unique_ptr<bus::StreamSource> OpenWatch(const msg::Envelope& open);
  // NamespaceLifecycle's question: the store's answer, or the log's when
  // the store has not seen the namespace.
  Result<std::optional<NamespaceInfo>> LookupNamespace(client::ApiClient& client, const std::string& name);
  // LimitRanger's question: the LimitRanges the store holds for `ns`.
  Result<std::vector<api::LimitRangeT>> LimitRangesIn(const std::string& ns);
  // The ServiceAccount plugin's: `ns`/`name` as stored (the store's
  // answer, or the log's when the store has not seen it).
  Result<std::optional<ServiceAccountInfo>> LookupServiceAccount(client::ApiClient& client, const std::string& ns,
                                                                 const std::string& name);
  // The ResourceQuota plugin's: the quotas the store holds for `ns`.
  Result<std::vector<api::ResourceQuotaT>> QuotasIn(const std::string& ns);
  // The cluster IPs and node ports the stored Services hold, into `view`;
  // `except` (a Service's key) is left out: its update may keep them.
  static Status ReadTakenServiceAddresses(client::ApiClient& client, ClusterView& view, std::string_view except = {});
  // What admission reads from the cluster, for one request of `worker`.
  ClusterView View(Worker& worker, std::optional<Result<std::vector<PriorityClassInfo>>>& classes);
  // The resource quota controller's work, until the controllers stage
  // takes it (quota_controller.cc): every kQuotaResync each stored quota's
  // status is counted again from the objects of its namespace (what was
  // deleted or has ended is given back), written guarded by the quota's
  // revision so that no charge made meanwhile is lost.
  void RecountQuotas();
  // Counts `quota`'s status from what its namespace holds now (quota.h,
  // RecountQuota).
  static Status CountQuota(client::ApiClient& client, api::ResourceQuotaT& quota);
  // Counts the quota stored at `key` and writes its status, guarded by the
  // revision it was counted on (a create charged meanwhile fails the guard,
  // and it is counted again): the quota's bytes as they now are.
  static Result<std::string> CountStoredQuota(client::ApiClient& client, const std::string& key);
  // Creates the namespaces kube-apiserver makes at its start (default,
  // kube-system, kube-public, kube-node-lease) and their default
  // ServiceAccounts, retrying until the log takes them.
  void Bootstrap();
  // The root CA certificate publisher's part: every namespace that is not
  // Terminating gets its kube-root-ca.crt if it has none (the data dirs of
  // earlier versions, namespaces made before the CA).
  void PublishRootCa(Worker& worker);
  // The namespace controller's deletion, until the controllers stage
  // takes it (namespace_deletion.cc): every kNamespaceScan, each
  // Terminating namespace has its objects deleted and, once empty, its
  // `kubernetes` finalizer removed and then itself.
  void FinalizeNamespaces();
  // Deletes what `ns` holds; whether it held nothing.
  bool EmptyNamespace(Worker& worker, const std::string& ns);
  // Waits `period` unless the stage stops first; whether it goes on.
  bool Idle(std::chrono::milliseconds period);
  // Waits up to kBootstrapWait for Bootstrap; whether it finished.
  bool AwaitBootstrap();
  std::unique_ptr<Worker> Borrow();
  void Return(std::unique_ptr<Worker> worker);

  pipeline::StageContext& context_;
  const AdmissionConfig config_;
  const std::shared_ptr<RbacStores> rbac_;  // what the RBAC authorizer reads
  const std::string root_ca_;  // the cluster's CA certificate (PEM), "" when the data dir has none
  std::unique_ptr<bus::RpcServer> server_;
  std::unique_ptr<bus::StreamServer> watch_server_;  // the apiwatch channel

  std::mutex pool_mu_;
  std::vector<std::unique_ptr<Worker>> pool_;  // GUARDED_BY(pool_mu_)
  // Held while a request that may create or update Services runs, so
  // that two requests never hand out the same cluster IP or node port.
  std::mutex cluster_ip_mu_;

  std::unique_ptr<client::Store> namespaces_;    // every stored Namespace
  std::unique_ptr<client::Store> limit_ranges_;  // every stored LimitRange
  std::unique_ptr<client::Store> quotas_;        // every stored ResourceQuota
  std::unique_ptr<client::Store> service_accounts_;  // every stored ServiceAccount
  static constexpr std::chrono::milliseconds kQuotaResync{500};
  std::thread quota_controller_;
  static constexpr std::chrono::seconds kBootstrapWait{10};
  std::atomic<bool> stopping_{false};
  std::thread bootstrap_;
  static constexpr std::chrono::milliseconds kNamespaceScan{500};
  std::thread namespace_finalizer_;
  std::mutex bootstrap_mu_;
  std::condition_variable bootstrap_cv_;
  bool bootstrapped_ = false;  // GUARDED_BY(bootstrap_mu_)
};
static_assert(pipeline::Stage<AdmissionStage>);

}  // namespace podflow::admission

#include "stages/admission/rbac_stores.h"

#include "base/logging.h"
#include "model/objects.h"

namespace podflow::admission {
namespace {

// The objects of `kind` a store holds; one that does not verify is logged
// and left out (it grants nothing).
template <typename Table>
void Collect(const client::Store& store, const model::KindInfo& kind,
             std::vector<std::unique_ptr<typename Table::NativeTableType>>& out) {
  static auto log = Logger("stage.admission");
  for (const KeyValue& kv : store.List(model::KindPrefix(kind))) {
    if (!model::VerifyObject(kind, kv.value).ok()) {
      log->warn("ignoring {}: not a valid {}", kv.key, kind.kind);
      continue;
    }
    out.push_back(model::Unpack<Table>(kv.value));
  }
}

}  // namespace

void RbacStores::Start(bus::Context& context, const std::string& api_endpoint, const std::string& watch_endpoint) {
  std::lock_guard<std::mutex> lock(mu_);
  namespaced_ = std::make_unique<client::Store>(context, api_endpoint, watch_endpoint, "/registry/role");
  cluster_ = std::make_unique<client::Store>(context, api_endpoint, watch_endpoint, "/registry/clusterrole");
  namespaced_->Start();
  cluster_->Start();
  cached_.reset();
}

void RbacStores::RequestStop() {
  std::lock_guard<std::mutex> lock(mu_);
  if (namespaced_) namespaced_->RequestStop();
  if (cluster_) cluster_->RequestStop();
}

void RbacStores::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  if (namespaced_) namespaced_->Stop();
  if (cluster_) cluster_->Stop();
}

std::shared_ptr<const RbacPolicy> RbacStores::Current() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!namespaced_ || !cluster_) return std::make_shared<const RbacPolicy>();
  const uint64_t namespaced = namespaced_->version();
  const uint64_t cluster = cluster_->version();
  if (cached_ && namespaced == namespaced_version_ && cluster == cluster_version_) return cached_;
  auto policy = std::make_shared<RbacPolicy>();
  Collect<api::Role>(*namespaced_, model::Kind("Role"), policy->roles);
  Collect<api::RoleBinding>(*namespaced_, model::Kind("RoleBinding"), policy->role_bindings);
  Collect<api::ClusterRole>(*cluster_, model::Kind("ClusterRole"), policy->cluster_roles);
  Collect<api::ClusterRoleBinding>(*cluster_, model::Kind("ClusterRoleBinding"), policy->cluster_role_bindings);
  namespaced_version_ = namespaced;
  cluster_version_ = cluster;
  cached_ = std::move(policy);
  return cached_;
}

}  // namespace podflow::admission

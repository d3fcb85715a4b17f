// The RBAC objects the admission stage authorizes with: Roles,
// ClusterRoles and their bindings, each kept by a client::Store, unpacked
// into one RbacPolicy per change of them (shared by the requests that come
// until the next change).
#pragma once

#include <memory>
#include <mutex>

#include "bus/bus.h"
#include "client/store.h"
#include "stages/admission/rbac.h"

namespace podflow::admission {

class RbacStores {
 public:
  void Start(bus::Context& context, const std::string& api_endpoint, const std::string& watch_endpoint);
  void RequestStop();
  void Stop();
  // The policy as the stores hold it now; empty before Start.
  std::shared_ptr<const RbacPolicy> Current();

 private:
  std::mutex mu_;
  // "/registry/role" holds roles and rolebindings; "/registry/clusterrole"
  // clusterroles and clusterrolebindings.
  std::unique_ptr<client::Store> namespaced_;  // GUARDED_BY(mu_)
  std::unique_ptr<client::Store> cluster_;     // GUARDED_BY(mu_)
  uint64_t namespaced_version_ = 0;            // GUARDED_BY(mu_)
  uint64_t cluster_version_ = 0;               // GUARDED_BY(mu_)
  std::shared_ptr<const RbacPolicy> cached_;   // GUARDED_BY(mu_)
};

}  // namespace podflow::admission

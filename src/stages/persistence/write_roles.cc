#include "stages/persistence/write_roles.h"

#include <string>

namespace podflow::persistence {
namespace {

enum Verb : unsigned { kCreate = 1, kUpdate = 2, kDelete = 4 };
constexpr unsigned kWrite = kCreate | kUpdate;
constexpr unsigned kAll = kCreate | kUpdate | kDelete;

struct Grant {
  std::string_view prefix;  // of the keys the grant covers
  unsigned verbs;
};

struct Role {
  std::string_view identity;
  std::vector<Grant> grants;
};

const std::vector<Role>& Roles() {
  static const std::vector<Role> roles = {
      {"admission", {{"/registry/", kAll}}},
      {"binding",
       {{"/registry/pods/", kUpdate},
        {"/registry/events/", kAll},
        {"/registry/scheduling.podflow.io/decisions/", kAll}}},
      // Removes a deleted pod once its containers have stopped (kubelet's
      // final delete).
      {"status", {{"/registry/pods/", kUpdate | kDelete}, {"/registry/events/", kAll}}},
      {"scheduling",
       {{"/registry/pods/", kUpdate | kDelete},
        {"/registry/events/", kAll},
        {"/registry/scheduling.podflow.io/", kAll}}},
      // Its nodes and their leases (kubelet's heartbeat).
      {"runtime", {{"/registry/nodes/", kWrite}, {"/registry/leases/kube-node-lease/", kAll}}},
      {"proxy", {{"/registry/endpoints/", kAll}, {"/registry/endpointslices/", kAll}}},
  };
  return roles;
}

// A put with a TTL also deletes (the log removes the key when it expires).
unsigned VerbsOf(const TxnOp& op) {
  if (const PutOp* put = std::get_if<PutOp>(&op)) {
    unsigned verbs = !put->guard ? kWrite : put->guard->value() == 0 ? kCreate : kUpdate;
    if (put->ttl_seconds > 0) verbs |= kDelete;
    return verbs;
  }
  return kDelete;
}

std::string VerbName(unsigned verbs) {
  switch (verbs) {
    case kCreate: return "create";
    case kUpdate: return "update";
    case kDelete: return "delete";
    case kWrite: return "write";  // an unguarded put: create or update
    default: return "write with a TTL";
  }
}

}  // namespace

Status AuthorizeWrite(std::string_view identity, const std::vector<TxnOp>& ops) {
  const Role* role = nullptr;
  for (const Role& r : Roles()) {
    if (r.identity == identity) role = &r;
  }
  for (const TxnOp& op : ops) {
    const std::string& key = std::visit([](const auto& o) -> const std::string& { return o.key; }, op);
    const unsigned needed = VerbsOf(op);
    bool allowed = false;
    if (role != nullptr) {
      for (const Grant& grant : role->grants) {
        if (key.starts_with(grant.prefix) && (grant.verbs & needed) == needed) allowed = true;
      }
    }
    if (!allowed) {
      return Status::Forbidden((identity.empty() ? std::string("an anonymous peer")
                                                 : "identity \"" + std::string(identity) + "\"") +
                               " may not " + VerbName(needed) + " " + key + " in the event log");
    }
  }
  return Status::Ok();
}

}  // namespace podflow::persistence

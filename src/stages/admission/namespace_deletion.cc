// The namespace controller's deletion work, run beside the API until the
// controllers stage takes it: a Terminating namespace has every object in
// it deleted (pods gracefully, as any delete), and once none is left its
// `kubernetes` finalizer is removed and the namespace goes.
#include "base/logging.h"
#include "client/update.h"
#include "model/objects.h"
#include "policy_generated.h"
#include "stages/admission/admission_stage.h"

namespace podflow::admission {

bool AdmissionStage::EmptyNamespace(Worker& worker, const std::string& ns) {
  static auto log = Logger("stage.admission");
  bool empty = true;
  for (const model::KindInfo& kind : model::Kinds()) {
    if (!kind.namespaced) continue;
    Result<RangeResult> objects = worker.client.List(model::KindPrefix(kind, ns));
    if (!objects.ok()) return false;
    for (const KeyValue& kv : objects->kvs) {
      if (stopping_) return false;
      empty = false;
      client::UpdateItem item;
      item.key = kv.key;
      item.known = kv;
      item.mutate = [&](const KeyValue* current, bool) -> client::Mutation {
        if (current == nullptr) return client::Mutation::Skip();
        if (!model::VerifyObject(kind, current->value).ok()) return client::Mutation::Delete();
        return MutationOf(
            worker.admission.Delete(kind, {current->key, current->value, current->mod_revision.value()}, {}));
      };
      client::UpdateOutcome outcome = client::Update(worker.client, std::move(item));
      if (!outcome.status.ok()) log->warn("deleting {} of namespace {}: {}", kv.key, ns, outcome.status.ToString());
    }
  }
  return empty;
}

void AdmissionStage::FinalizeNamespaces() {
  static auto log = Logger("stage.admission");
  while (Idle(kNamespaceScan)) {
    std::vector<std::pair<std::string, std::string>> terminating;  // name, uid
    for (const KeyValue& kv : namespaces_->List(model::KindPrefix(model::Kind("Namespace")))) {
      if (!model::VerifyObject(model::Kind("Namespace"), kv.value).ok()) continue;
      const api::Namespace* ns = flatbuffers::GetRoot<api::Namespace>(kv.value.data());
      // Deleted, as the namespace controller tells it: by its
      // deletionTimestamp, which only a delete sets.
      if (ns->metadata() && ns->metadata()->name() && ns->metadata()->deletion_timestamp() &&
          ns->metadata()->deletion_timestamp()->size() > 0) {
        terminating.push_back({ns->metadata()->name()->str(), ns->metadata()->uid() ? ns->metadata()->uid()->str() : ""});
      }
    }
    if (terminating.empty()) continue;
    std::unique_ptr<Worker> worker = Borrow();
    for (const auto& [name, uid] : terminating) {
      if (stopping_ || !EmptyNamespace(*worker, name)) continue;
      // Empty: its finalizer goes, and with no other the namespace. The
      // copy the scan saw may lag: the namespace as stored decides.
      client::UpdateItem item;
      item.key = model::ObjectKey(model::Kind("Namespace"), "", name);
      item.mutate = [&uid](const KeyValue* current, bool) -> client::Mutation {
        if (current == nullptr || !model::VerifyObject(model::Kind("Namespace"), current->value).ok()) {
          return client::Mutation::Skip();
        }
        std::unique_ptr<api::NamespaceT> ns = model::Unpack<api::Namespace>(current->value);
        if (!ns->metadata || ns->metadata->uid != uid || ns->metadata->deletion_timestamp.empty()) {
          return client::Mutation::Skip();  // another namespace by now, or not deleted
        }
        const size_t had = ns->spec ? ns->spec->finalizers.size() : 0;
        if (ns->spec) std::erase(ns->spec->finalizers, std::string("kubernetes"));
        const bool held = (ns->spec && !ns->spec->finalizers.empty()) || (ns->metadata && !ns->metadata->finalizers.empty());
        if (!held) return client::Mutation::Delete();
        // Held by other finalizers: written once, when ours goes.
        return ns->spec && ns->spec->finalizers.size() < had ? client::Mutation::Put(model::Pack(*ns))
                                                              : client::Mutation::Skip();
      };
      client::UpdateOutcome outcome = client::Update(worker->client, std::move(item));
      if (outcome.written) log->info("namespace {} finalized", name);
    }
    Return(std::move(worker));
  }
}

}  // namespace podflow::admission

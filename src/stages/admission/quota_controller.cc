// The resource quota controller's work, run beside the API until the
// controllers stage takes it: each quota's status follows its spec's hard
// limits, and its usage is counted again from its namespace's objects, so
// that what was deleted or has ended is given back.
#include "base/logging.h"
#include "client/update.h"
#include "model/objects.h"
#include "policy_generated.h"
#include "stages/admission/admission_stage.h"
#include "stages/admission/quota.h"
#include "storage_generated.h"

namespace podflow::admission {

Status AdmissionStage::CountQuota(client::ApiClient& client, api::ResourceQuotaT& quota) {
  const std::string ns = quota.metadata ? quota.metadata->namespace_ : std::string();
  const auto now = std::chrono::system_clock::now();
  // The objects, unpacked where a quota reads more than their number.
  std::vector<std::unique_ptr<api::PodT>> pods;
  std::vector<std::unique_ptr<api::ServiceT>> services;
  std::vector<std::unique_ptr<api::PersistentVolumeClaimT>> claims;
  std::vector<QuotaObject> objects;
  for (const model::KindInfo* kind : KindsCounted(quota)) {
    Result<RangeResult> listed = client.List(model::KindPrefix(*kind, ns));
    if (!listed.ok()) return listed.status();
    for (const KeyValue& kv : listed->kvs) {
      if (!model::VerifyObject(*kind, kv.value).ok()) continue;
      QuotaObject object{*kind};
      object.now = now;
      if (kind->kind == "Pod") object.pod = pods.emplace_back(model::Unpack<api::Pod>(kv.value)).get();
      if (kind->kind == "Service") object.service = services.emplace_back(model::Unpack<api::Service>(kv.value)).get();
      if (kind->kind == "PersistentVolumeClaim") {
        object.claim = claims.emplace_back(model::Unpack<api::PersistentVolumeClaim>(kv.value)).get();
      }
      objects.push_back(object);
    }
  }
  RecountQuota(quota, objects);
  return Status::Ok();
}

Result<std::string> AdmissionStage::CountStoredQuota(client::ApiClient& client, const std::string& key) {
  std::string counted;
  client::UpdateItem item;
  item.key = key;
  item.mutate = [&](const KeyValue* current, bool) -> client::Mutation {
    counted.clear();
    if (current == nullptr || !model::VerifyObject(model::Kind("ResourceQuota"), current->value).ok()) {
      return client::Mutation::Skip();
    }
    std::unique_ptr<api::ResourceQuotaT> quota = model::Unpack<api::ResourceQuota>(current->value);
    if (Status status = CountQuota(client, *quota); !status.ok()) return client::Mutation::Skip(status);
    counted = model::Pack(*quota);
    if (counted == current->value) return client::Mutation::Skip();
    return client::Mutation::Put(counted);
  };
  client::UpdateOutcome outcome = client::Update(client, std::move(item));
  if (!outcome.status.ok()) return outcome.status;
  return counted;
}

void AdmissionStage::RecountQuotas() {
  static auto log = Logger("stage.admission");
  while (Idle(kQuotaResync)) {
    const std::vector<KeyValue> quotas = quotas_->List(model::KindPrefix(model::Kind("ResourceQuota")));
    if (quotas.empty()) continue;
    std::unique_ptr<Worker> worker = Borrow();
    for (const KeyValue& kv : quotas) {
      if (stopping_) break;
      Result<std::string> counted = CountStoredQuota(worker->client, kv.key);
      if (!counted.ok()) log->warn("counting {}: {}", kv.key, counted.status().ToString());
    }
    Return(std::move(worker));
  }
}

}  // namespace podflow::admission

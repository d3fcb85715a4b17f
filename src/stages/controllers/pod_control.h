// How the workload controllers make and remove their pods through the API
// (kube-controller-manager's PodControl): a pod from the owner's template,
// creations in slow-start rounds of one request each, the expectations
// that keep a slow watch from doubling them, and the Events kubectl shows
// (SuccessfulCreate, FailedCreate, SuccessfulDelete, FailedDelete).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "model/events.h"
#include "model/labels.h"
#include "model/value.h"
#include "stages/controllers/controller_api.h"
#include "stages/controllers/expectations.h"
#include "stages/controllers/pod_record.h"

namespace podflow::controllers {

// The object of `kind` made from the template `tmpl` (a pod template, a
// CronJob's job template, as model::ToValue lays it out; null: an empty
// one): the template's metadata fields `copied` and its spec, with `name`
// as its `name_field` ("name", "generateName"), in `namespace_`, with
// `owner_ref` (a controller reference) as its only owner.
model::Value ObjectFromTemplate(std::string_view api_version, std::string_view kind,
                                const model::Value* tmpl,
                                std::initializer_list<std::string_view> copied,
                                std::string_view name_field, const std::string& name,
                                const std::string& namespace_, model::Value owner_ref);
// The pod made from the pod template `tmpl` (as model::ToValue lays it
// out; null: an empty one): its labels, annotations, finalizers and spec,
// named by `generate_name`, in `namespace_`, with `owner_ref` (a
// controller reference) as its only owner.
model::Value PodFromTemplate(const model::Value* tmpl, const std::string& generate_name,
                             const std::string& namespace_, model::Value owner_ref);

// Sets `key` of the object `obj` to `v`, replacing what it held.
void PutMember(model::Value& obj, const std::string& key, model::Value v);
// The member `key` of the object `obj`, set to `empty` first when it has none.
model::Value& MemberOf(model::Value& obj, const std::string& key, model::Value empty);

class PodControl {
 public:
  PodControl(ControllerApi& api, Expectations& expectations)
      : api_(api), expectations_(expectations) {}

  // Creates the pods `bodies` (JSON) in slow-start rounds (1, 2, 4, ...),
  // each round one request; each pod made is expected under `owner_key`
  // and recorded about `owner`. A round that gets no answer is expected as
  // unnamed creations and ends the creations; one with a refusal ends them
  // after it. "" or the first failure's message.
  std::string Create(const std::string& owner_key, const model::ObjectRef& owner,
                     const std::vector<std::string>& bodies, SimTime now);
  // The pods of `candidates` the owner `owner` controls once it has
  // claimed them (PodControllerRefManager.ClaimPods): its own it still
  // selects, and the orphans it selects (not being deleted), adopted; its own it no longer
  // selects are released. `selector` null: it selects none (an invalid
  // selector). An owner being deleted adopts and releases nothing.
  // `claimed` false when an adoption or release failed (the sync then
  // changes nothing and is tried again).
  std::vector<const PodRecord*> Claim(const model::ObjectRef& owner,
                                      const model::LabelSelector* selector, bool owner_deleting,
                                      const std::vector<PodRecord*>& candidates, bool& claimed);
  // Deletes `pods`, each expected under `owner_key` and recorded about
  // `owner` (one already gone is not an error); an API that does not answer
  // ends the deletions. "" or the first failure's message.
  std::string Delete(const std::string& owner_key, const model::ObjectRef& owner,
                     const std::vector<const PodRecord*>& pods, SimTime now);

 private:
  ControllerApi& api_;
  Expectations& expectations_;
};

}  // namespace podflow::controllers

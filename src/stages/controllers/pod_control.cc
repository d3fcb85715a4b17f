#include "stages/controllers/pod_control.h"

#include "model/codec.h"
#include "model/objects.h"
#include "stages/controllers/owner_refs.h"

namespace podflow::controllers {
namespace {

std::string PathOf(const model::ObjectRef& owner) {
  return owner.kind + " " + owner.namespace_ + "/" + owner.name;
}

}  // namespace

void PutMember(model::Value& obj, const std::string& key, model::Value v) {
  if (model::Value* at = obj.Find(key)) {
    *at = std::move(v);
  } else {
    obj.Set(key, std::move(v));
  }
}

model::Value& MemberOf(model::Value& obj, const std::string& key, model::Value empty) {
  if (obj.Find(key) == nullptr) obj.Set(key, std::move(empty));
  return *obj.Find(key);
}

model::Value ObjectFromTemplate(std::string_view api_version, std::string_view kind,
                                const model::Value* tmpl,
                                std::initializer_list<std::string_view> copied,
                                std::string_view name_field, const std::string& name,
                                const std::string& namespace_, model::Value owner_ref) {
  using model::Value;
  const Value* tmpl_meta = tmpl != nullptr ? tmpl->Find("metadata") : nullptr;
  Value meta = Value::Object();
  meta.Set(std::string(name_field), Value::String(name));
  meta.Set("namespace", Value::String(namespace_));
  for (std::string_view field : copied) {
    if (const Value* v = tmpl_meta != nullptr ? tmpl_meta->Find(field) : nullptr)
      meta.Set(std::string(field), *v);
  }
  Value refs = Value::Array();
  refs.Append(std::move(owner_ref));
  meta.Set("ownerReferences", std::move(refs));
  Value object = Value::Object();
  object.Set("apiVersion", Value::String(std::string(api_version)));
  object.Set("kind", Value::String(std::string(kind)));
  object.Set("metadata", std::move(meta));
  const Value* spec = tmpl != nullptr ? tmpl->Find("spec") : nullptr;
  object.Set("spec", spec != nullptr ? *spec : Value::Object());
  return object;
}

model::Value PodFromTemplate(const model::Value* tmpl, const std::string& generate_name,
                             const std::string& namespace_, model::Value owner_ref) {
  return ObjectFromTemplate("v1", "Pod", tmpl, {"labels", "annotations", "finalizers"},
                            "generateName", generate_name, namespace_, std::move(owner_ref));
}

std::string PodControl::Create(const std::string& owner_key, const model::ObjectRef& owner,
                               const std::vector<std::string>& bodies, SimTime now) {
  std::string failure;
  size_t next = 0;
  for (int batch : SlowStartBatches(static_cast<int>(bodies.size()))) {
    std::string manifest;
    for (int i = 0; i < batch; ++i)
      manifest += "---\n" + bodies[next + static_cast<size_t>(i)] + "\n";
    next += static_cast<size_t>(batch);
    Result<std::vector<client::ApiCaller::Submitted>> made = api_.Submit(manifest);
    if (!made.ok()) {
      // No answer: the pods may be made all the same, so they are waited
      // for (by watch, or until the expectations lapse), and nothing more
      // is asked of an API that does not answer.
      for (int i = 0; i < batch; ++i) expectations_.ExpectUnnamedCreate(owner_key, now);
      api_.log().warn("{}: creating pods: {}", PathOf(owner), made.status().ToString());
      return made.status().ToString();
    }
    for (size_t i = 0; i < static_cast<size_t>(batch); ++i) {
      const client::ApiCaller::Submitted* s = i < made->size() ? &(*made)[i] : nullptr;
      if (s != nullptr && s->status.success() && !s->name.empty()) {
        expectations_.ExpectCreate(
            owner_key, model::ObjectKey(model::Kind("Pod"), owner.namespace_, s->name), now);
        api_.Defer(owner, "Normal", "SuccessfulCreate", "Created pod: " + s->name, now);
        continue;
      }
      const std::string message =
          s == nullptr ? std::string("the server returned no outcome") : s->status.message;
      api_.log().info("{}: creating a pod: {}", PathOf(owner), message);
      api_.Defer(owner, "Warning", "FailedCreate", "Error creating: " + message, now);
      if (failure.empty()) failure = message;
    }
    if (!failure.empty()) break;  // the rest wait for the next sync
  }
  return failure;
}

std::vector<const PodRecord*> PodControl::Claim(const model::ObjectRef& owner,
                                                const model::LabelSelector* selector,
                                                bool owner_deleting,
                                                const std::vector<PodRecord*>& candidates,
                                                bool& claimed) {
  std::vector<const PodRecord*> owned;
  claimed = true;
  for (PodRecord* pod : candidates) {
    const bool selected = selector != nullptr && selector->Matches(pod->labels);
    if (pod->controller_uid == owner.uid) {
      if (selected) {
        owned.push_back(pod);
      } else if (!owner_deleting) {
        const ControllerApi::Updated released =
            api_.PatchOwners(model::Kind("Pod"), pod->namespace_, pod->name,
                             ReleasePatch(owner.uid, pod->uid), "releasing");
        if (released == ControllerApi::Updated::kWritten) pod->controller_uid.clear();
        claimed &= released != ControllerApi::Updated::kFailed;
      }
    } else if (pod->controller_uid.empty() && selected && !owner_deleting && !pod->deleting) {
      const ControllerApi::Updated adopted = api_.PatchOwners(
          model::Kind("Pod"), pod->namespace_, pod->name,
          AdoptPatch(ControllerRef(owner.api_version, owner.kind, owner.name, owner.uid), pod->uid),
          "adopting");
      if (adopted == ControllerApi::Updated::kWritten) {
        pod->controller_uid = owner.uid;
        owned.push_back(pod);
      }
      claimed &= adopted != ControllerApi::Updated::kFailed;
    }
  }
  return owned;
}

std::string PodControl::Delete(const std::string& owner_key, const model::ObjectRef& owner,
                               const std::vector<const PodRecord*>& pods, SimTime now) {
  std::string failure;
  for (const PodRecord* pod : pods) {
    expectations_.ExpectDelete(owner_key, pod->key, now);
    Result<client::ApiResponse> deleted = api_.Call(
        {.verb = "delete", .resource = "pods", .namespace_ = pod->namespace_, .name = pod->name});
    if (deleted.ok() && deleted->status.success()) {
      api_.Defer(owner, "Normal", "SuccessfulDelete", "Deleted pod: " + pod->name, now);
      continue;
    }
    expectations_.Drop(pod->key);
    if (deleted.ok() && deleted->status.code == 404) continue;  // gone already
    if (!deleted.ok()) {
      api_.log().warn("{}: deleting pod {}: {}", PathOf(owner), pod->name,
                      deleted.status().ToString());
      return deleted.status().ToString();  // no more asked of an API that does not answer
    }
    const std::string message = deleted->status.message;
    api_.log().info("{}: deleting pod {}: {}", PathOf(owner), pod->name, message);
    api_.Defer(owner, "Warning", "FailedDelete", "Error deleting: " + message, now);
    if (failure.empty()) failure = message;
  }
  return failure;
}

}  // namespace podflow::controllers

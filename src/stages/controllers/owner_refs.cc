#include "stages/controllers/owner_refs.h"

namespace podflow::controllers {
namespace {

std::string OwnerRefsPatchImpl(model::Value refs, const std::string& object_uid) {
  using model::Value;
  Value meta = Value::Object();
  meta.Set("ownerReferences", std::move(refs));
  meta.Set("uid", Value::String(object_uid));
  Value patch = Value::Object();
  patch.Set("metadata", std::move(meta));
  return model::ToJson(patch);
}

}  // namespace

model::Value ControllerRef(std::string_view api_version, std::string_view kind, const std::string& name,
                           const std::string& uid) {
  using model::Value;
  Value ref = Value::Object();
  ref.Set("apiVersion", Value::String(std::string(api_version)));
  ref.Set("kind", Value::String(std::string(kind)));
  ref.Set("name", Value::String(name));
  ref.Set("uid", Value::String(uid));
  ref.Set("controller", Value::Bool(true));
  ref.Set("blockOwnerDeletion", Value::Bool(true));
  return ref;
}

std::string OwnerRefsPatch(model::Value refs, const std::string& object_uid) {
  return OwnerRefsPatchImpl(std::move(refs), object_uid);
}

std::string AdoptPatch(model::Value ref, const std::string& object_uid) {
  model::Value refs = model::Value::Array();
  refs.Append(std::move(ref));
  return OwnerRefsPatchImpl(std::move(refs), object_uid);
}

std::string ReleasePatch(const std::vector<std::string>& owner_uids, const std::string& object_uid) {
  model::Value refs = model::Value::Array();
  for (const std::string& uid : owner_uids) {
    model::Value ref = model::Value::Object();
    ref.Set("$patch", model::Value::String("delete"));
    ref.Set("uid", model::Value::String(uid));
    refs.Append(std::move(ref));
  }
  return OwnerRefsPatchImpl(std::move(refs), object_uid);
}

}  // namespace podflow::controllers

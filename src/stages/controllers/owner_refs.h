// ownerReferences as the controllers write them: a controller's reference
// to the object it owns, and the patches that adopt an orphan or release
// an object its owner no longer selects.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/value.h"

namespace podflow::controllers {

// {apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true}
model::Value ControllerRef(std::string_view api_version, std::string_view kind, const std::string& name,
                           const std::string& uid);

// Strategic merge patches of an object's ownerReferences (merged by uid),
// on the condition that it is still the object of uid `object_uid`: one
// that adds `ref`, one that removes the owners of uids `owner_uids`.
std::string AdoptPatch(model::Value ref, const std::string& object_uid);
// The same with `refs` (an array of references, merged by uid) as they are.
std::string OwnerRefsPatch(model::Value refs, const std::string& object_uid);
std::string ReleasePatch(const std::vector<std::string>& owner_uids, const std::string& object_uid);
inline std::string ReleasePatch(const std::string& owner_uid, const std::string& object_uid) {
  return ReleasePatch(std::vector<std::string>{owner_uid}, object_uid);
}

}  // namespace podflow::controllers

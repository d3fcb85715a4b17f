// Patches, as kube-apiserver applies them to an object: JSON merge patch
// (RFC 7386), JSON patch (RFC 6902) and strategic merge patch, whose lists
// merge element by element where the schema marks a merge key
// (`merge_key`, `merge_set`; schemas/README.md). And the patch `kubectl
// apply` sends: the three-way strategic merge of the last applied
// configuration, the new manifest and the live object.
//
// All of it works on Value trees (the object as ToValue renders it); the
// caller decodes the result again, so that a patch can never produce what a
// manifest could not. Thread safety: pure functions.
#pragma once

#include <string_view>

#include "base/result.h"
#include "model/codec.h"
#include "model/value.h"

namespace podflow::model {

enum class PatchType { kJson, kMerge, kStrategic };

// The patch type named as `kubectl patch --type` names it ("json", "merge",
// "strategic") or by its media type ("application/json-patch+json",
// "application/merge-patch+json", "application/strategic-merge-patch+json").
// Invalid otherwise.
Result<PatchType> ParsePatchType(std::string_view name);
// The media type of a patch type.
std::string_view PatchMediaType(PatchType type);

// Applies `patch` to `target`, an object of `kind`. Invalid when the patch
// cannot be applied (a JSON patch operation whose path is missing, a failed
// "test", a strategic directive that is not known), in the words of the
// libraries kube-apiserver uses; BadRequest-worthy when the patch is not of
// the type's shape (Invalid too: the caller decides the code).
Result<Value> ApplyPatch(PatchType type, const KindInfo& kind, const Value& target, const Value& patch);

// The most operations a JSON patch may hold, as kube-apiserver allows.
inline constexpr size_t kMaxJsonPatchOperations = 10000;

// The strategic merge patch `kubectl apply` computes: what `modified` (the
// new manifest) changes or adds relative to `current` (the live object),
// plus the deletion of what `original` (the last applied manifest) had and
// `modified` no longer has. Fields only `current` has (set by someone else)
// are kept. An empty object when there is nothing to change.
Value ThreeWayMergePatch(const KindInfo& kind, const Value& original, const Value& modified, const Value& current);

}  // namespace podflow::model

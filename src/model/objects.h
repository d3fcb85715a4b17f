// Helpers over stored objects: log keys and the FlatBuffers object API.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <flatbuffers/flatbuffers.h>

#include "model/codec.h"

namespace podflow::model {

// The log key of an object, as kube-apiserver lays out etcd:
// /registry/<resource>/<namespace>/<name>, or /registry/<resource>/<name> for
// cluster-scoped kinds. An empty namespace of a namespaced kind is "default".
std::string ObjectKey(const KindInfo& kind, std::string_view namespace_, std::string_view name);
// The namespace and name of a namespaced object's key
// ("/registry/<resource>/<namespace>/<name>"); false for any other key.
bool SplitNamespacedKey(std::string_view key, std::string_view* namespace_, std::string_view* name);
// The prefix of every object of a kind (in one namespace, when given):
// "/registry/pods/", "/registry/pods/default/".
std::string KindPrefix(const KindInfo& kind, std::string_view namespace_ = {});

// The garbage collector's finalizers: a delete with propagationPolicy Orphan
// or Foreground leaves them on the object until its dependents are
// released or gone.
inline constexpr std::string_view kOrphanFinalizer = "orphan";
inline constexpr std::string_view kForegroundFinalizer = "foregroundDeletion";

// The most one write may carry (keys and values of one transaction): etcd's
// default --max-request-bytes, and the event log's default limit. An object
// must fit in it together with what is written beside it (its events).
constexpr size_t kMaxWriteBytes = 1'572'864;

// The kinds by name, for code that needs one: Kind("Pod").
// REQUIRES: `kind` is one of Kinds().
const KindInfo& Kind(std::string_view kind);

// A stored object unpacked into its mutable native form (api::PodT, ...).
// REQUIRES: `bytes` verified for T (VerifyObject).
template <typename T>
std::unique_ptr<typename T::NativeTableType> Unpack(std::string_view bytes) {
  return std::unique_ptr<typename T::NativeTableType>(
      flatbuffers::GetRoot<T>(bytes.data())->UnPack());
}

// A native object packed into the bytes the log stores.
template <typename NativeT>
std::string Pack(const NativeT& object) {
  // Room for a pod with its status at once: growing the builder copies it.
  flatbuffers::FlatBufferBuilder fbb(4096);
  fbb.Finish(NativeT::TableType::Pack(fbb, &object));
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

}  // namespace podflow::model

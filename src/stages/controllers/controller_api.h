// What every controller of the stage does with the API: calls under its own
// identity, one way to tell a failed call (logged: a conflict or a refusal
// is left to the watch to bring back), and its Events.
#pragma once

#include <chrono>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/logger.h>

#include "base/clock.h"
#include "client/api_calls.h"
#include "client/client.h"
#include "model/events.h"
#include "pipeline/stage.h"

namespace podflow::controllers {

class ControllerApi {
 public:
  static constexpr std::chrono::milliseconds kTimeout{5000};

  // Speaks as the controller `identity` (one of kControllerIdentities);
  // `namer_instance` keeps its Events' names apart from other writers'.
  ControllerApi(pipeline::StageContext& context, std::string_view identity, uint32_t namer_instance);
  ControllerApi(const ControllerApi&) = delete;
  ControllerApi& operator=(const ControllerApi&) = delete;

  // The server's answer; a Status only when it could not be asked.
  Result<client::ApiResponse> Call(const client::ApiCall& call) { return caller_.Call(call, kTimeout); }
  // Creates every document of `manifest` in one request (client::ApiCaller::Submit).
  Result<std::vector<client::ApiCaller::Submitted>> Submit(const std::string& manifest) {
    return caller_.Submit(manifest, kTimeout);
  }
  // Updates the object `packed` (of `kind`, guarded by the resourceVersion
  // it carries) or its `subresource`. kConflict: the object changed
  // meanwhile (the watch brings it back to be decided again); kFailed: any
  // other refusal or no answer, logged.
  enum class Updated { kWritten, kConflict, kFailed };
  Updated Update(const model::KindInfo& kind, const std::string& namespace_, const std::string& name,
                 const std::string& subresource, const std::string& packed);
  // A patch of one object (`type`: "strategic", "merge"; `what` names it
  // in the log) guarded by a precondition it carries (a uid, a
  // resourceVersion). kConflict: the object is gone or changed (the
  // precondition failed); kFailed: any other refusal or no answer.
  Updated Patch(const model::KindInfo& kind, const std::string& namespace_, const std::string& name,
                std::string patch, std::string_view type, std::string_view what);
  // A strategic merge patch of one object's ownerReferences (owner_refs.h's
  // adopt / release).
  Updated PatchOwners(const model::KindInfo& kind, const std::string& namespace_, const std::string& name,
                      std::string patch, std::string_view what) {
    return Patch(kind, namespace_, name, std::move(patch), "strategic", what);
  }
  // Whether `reply` is a success; otherwise logs `what` with the reason.
  bool Succeeded(const Result<client::ApiResponse>& reply, const std::string& what) const;

  // Records an Event about `about` from this controller (RecordAs: from
  // another component that runs with its credentials).
  void Record(const model::ObjectRef& about, std::string_view type, std::string_view reason, std::string message,
              SimTime now) {
    RecordAs(identity_, about, type, reason, std::move(message), now);
  }
  void RecordAs(std::string_view component, const model::ObjectRef& about, std::string_view type,
                std::string_view reason, std::string message, SimTime now);
  // The same, kept until FlushEvents writes every one kept in one request
  // (a sync that makes many pods records as many Events).
  void Defer(const model::ObjectRef& about, std::string_view type, std::string_view reason, std::string message,
             SimTime now);
  void FlushEvents();

  spdlog::logger& log() const { return *log_; }

 private:
  const std::string identity_;
  std::shared_ptr<spdlog::logger> log_;
  client::ApiCaller caller_;
  model::EventNamer namer_;
  std::string deferred_;  // Event documents kept for FlushEvents
  size_t deferred_count_ = 0;
};

// An informer opened only while something needs it, so that what a
// controller has nothing to do with costs it no traffic (the pods, while
// there is no ReplicaSet): opening lists and delivers everything before it
// watches. One thread.
class OnDemandInformer {
 public:
  OnDemandInformer(pipeline::StageContext& context, std::string prefix)
      : context_(context), prefix_(std::move(prefix)) {}

  // Opens or closes it as `needed` says; true when it was opened or
  // closed now (closed: the caller drops what it held). An error: the
  // first list failed (it stays open; Poll lists again).
  Result<bool> Follow(bool needed, const client::Informer::Handlers& handlers);
  bool open() const { return informer_ != nullptr; }
  // Everything up to this revision was delivered (nothing while closed).
  Revision revision() const { return informer_ ? informer_->revision() : Revision(); }
  // Delivers what the watch has (nothing while closed).
  Status Poll(std::chrono::milliseconds wait, const client::Informer::Handlers& handlers) {
    return informer_ ? informer_->Poll(wait, handlers) : Status::Ok();
  }

 private:
  pipeline::StageContext& context_;
  const std::string prefix_;
  std::unique_ptr<client::Informer> informer_;
};

// An informer opened on demand and what receives its changes.
struct Follower {
  OnDemandInformer& informer;
  const client::Informer::Handlers& handlers;
};

// One poll of a controller that follows its own kind and, on demand, other
// kinds (`followers`: the pods, the nodes): its kind first (not waiting
// while a follower is open), then `follow` (which opens or closes the
// followers as the controller needs them), then each open follower, the
// last waiting at most `wait`.
Status PollKindAndFollowers(client::Informer& kind, const client::Informer::Handlers& kind_handlers,
                            std::initializer_list<Follower> followers, std::chrono::milliseconds wait,
                            const std::function<Status()>& follow);
inline Status PollKindAndPods(client::Informer& kind, const client::Informer::Handlers& kind_handlers,
                              OnDemandInformer& pods, const client::Informer::Handlers& pod_handlers,
                              std::chrono::milliseconds wait, const std::function<Status()>& follow) {
  return PollKindAndFollowers(kind, kind_handlers, {{pods, pod_handlers}}, wait, follow);
}

}  // namespace podflow::controllers

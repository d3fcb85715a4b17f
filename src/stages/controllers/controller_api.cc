#include "stages/controllers/controller_api.h"

#include <algorithm>

#include "base/logging.h"
#include "model/codec.h"
#include "model/objects.h"

namespace podflow::controllers {

ControllerApi::ControllerApi(pipeline::StageContext& context, std::string_view identity, uint32_t namer_instance)
    : identity_(identity),
      log_(Logger("stage.controllers")),
      caller_(context.bus, context.Endpoint("submit"), "", std::string(identity)),
      namer_(namer_instance) {}

ControllerApi::Updated ControllerApi::Update(const model::KindInfo& kind, const std::string& namespace_,
                                             const std::string& name, const std::string& subresource,
                                             const std::string& packed) {
  Result<client::ApiResponse> updated = Call({.verb = "update",
                                              .resource = client::ResourceArg(kind),
                                              .namespace_ = namespace_,
                                              .name = name,
                                              .subresource = subresource,
                                              .body = model::ToJson(kind, packed, 0)});
  const std::string path = (namespace_.empty() ? "" : namespace_ + "/") + name + (subresource.empty() ? "" : "/" + subresource);
  if (updated.ok() && updated->status.code == 409 && updated->status.reason == "Conflict") {
    log_->info("updating {} {}: {}", kind.kind, path, updated->status.message);
    return Updated::kConflict;
  }
  return Succeeded(updated, "updating " + std::string(kind.kind) + " " + path) ? Updated::kWritten : Updated::kFailed;
}

ControllerApi::Updated ControllerApi::Patch(const model::KindInfo& kind, const std::string& namespace_,
                                            const std::string& name, std::string patch, std::string_view type,
                                            std::string_view what) {
  Result<client::ApiResponse> patched = Call({.verb = "patch",
                                              .resource = client::ResourceArg(kind),
                                              .namespace_ = namespace_,
                                              .name = name,
                                              .body = std::move(patch),
                                              .patch_type = std::string(type)});
  const std::string about = std::string(what) + " " + std::string(kind.kind) + " " + namespace_ + "/" + name;
  if (patched.ok() && (patched->status.code == 404 || patched->status.code == 409)) {
    log_->info("{}: {}", about, patched->status.message);
    return Updated::kConflict;
  }
  return Succeeded(patched, about) ? Updated::kWritten : Updated::kFailed;
}

bool ControllerApi::Succeeded(const Result<client::ApiResponse>& reply, const std::string& what) const {
  if (!reply.ok()) {
    log_->warn("{}: {}", what, reply.status().ToString());
    return false;
  }
  if (!reply->status.success()) {
    // A conflict means the object changed meanwhile: it comes back by watch.
    log_->info("{}: {}", what, reply->status.message);
    return false;
  }
  return true;
}

void ControllerApi::RecordAs(std::string_view component, const model::ObjectRef& about, std::string_view type,
                             std::string_view reason, std::string message, SimTime now) {
  const api::EventT event = model::ControllerEvent(about, component, type, reason, std::move(message), now, namer_);
  Result<client::ApiResponse> created = Call({.verb = "create",
                                              .resource = "events",
                                              .namespace_ = event.metadata->namespace_,
                                              .body = model::ToJson(model::Kind("Event"), model::Pack(event), 0)});
  (void)Succeeded(created, "recording " + std::string(reason) + " for " + about.name);
}

void ControllerApi::Defer(const model::ObjectRef& about, std::string_view type, std::string_view reason,
                          std::string message, SimTime now) {
  const api::EventT event = model::ControllerEvent(about, identity_, type, reason, std::move(message), now, namer_);
  deferred_ += "---\n" + model::ToJson(model::Kind("Event"), model::Pack(event), 0) + "\n";
  ++deferred_count_;
}

void ControllerApi::FlushEvents() {
  if (deferred_count_ == 0) return;
  Result<std::vector<client::ApiCaller::Submitted>> made = Submit(deferred_);
  if (!made.ok()) {
    log_->warn("recording {} event(s): {}", deferred_count_, made.status().ToString());
  } else {
    for (const client::ApiCaller::Submitted& s : *made) {
      if (!s.status.success()) log_->info("recording an event: {}", s.status.message);
    }
  }
  deferred_.clear();
  deferred_count_ = 0;
}

Result<bool> OnDemandInformer::Follow(bool needed, const client::Informer::Handlers& handlers) {
  if (needed == open()) return false;
  if (!needed) {
    informer_.reset();
    return true;
  }
  // Kept even when its first list fails: its next Poll lists again and,
  // knowing what it delivered, removes what went meanwhile.
  informer_ = std::make_unique<client::Informer>(context_.bus, context_.Endpoint("api"), context_.Endpoint("watch"),
                                                 prefix_);
  PODFLOW_RETURN_IF_ERROR(informer_->Sync(handlers));
  return true;
}

Status PollKindAndFollowers(client::Informer& kind, const client::Informer::Handlers& kind_handlers,
                            std::initializer_list<Follower> followers, std::chrono::milliseconds wait,
                            const std::function<Status()>& follow) {
  const bool any_open = std::ranges::any_of(followers, [](const Follower& f) { return f.informer.open(); });
  PODFLOW_RETURN_IF_ERROR(kind.Poll(any_open ? std::chrono::milliseconds(0) : wait, kind_handlers));
  PODFLOW_RETURN_IF_ERROR(follow());
  const Follower* last_open = nullptr;
  for (const Follower& f : followers) {
    if (f.informer.open()) last_open = &f;
  }
  for (const Follower& f : followers) {
    if (!f.informer.open()) continue;
    PODFLOW_RETURN_IF_ERROR(f.informer.Poll(&f == last_open ? wait : std::chrono::milliseconds(0), f.handlers));
  }
  return Status::Ok();
}

}  // namespace podflow::controllers

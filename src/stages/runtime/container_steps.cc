// PodRunner: one container's transitions — image, create, start, exit — and
// the image pull back-off (kubelet: 10s initial, doubling, 300s cap).
#include <algorithm>

#include "base/hex_id.h"
#include "stages/runtime/kubelet_text.h"
#include "stages/runtime/pod_runner.h"

namespace podflow::runtime {
namespace {

namespace text = kubelet_text;

// The policy admission would have defaulted: Always for :latest (or no tag).
api::PullPolicy EffectivePolicy(const api::ContainerT& c) {
  if (c.image_pull_policy != api::PullPolicy::Unset) return c.image_pull_policy;
  const ImageReference ref = NormalizeImageReference(c.image);
  return ref.digest.empty() && ref.tag == "latest" ? api::PullPolicy::Always
                                                   : api::PullPolicy::IfNotPresent;
}

}  // namespace

void PodRunner::SetWaiting(Box& box, std::string reason, std::string message) {
  auto& state = box.status->state = std::make_unique<api::ContainerStateT>();
  state->waiting = std::make_unique<api::ContainerStateWaitingT>();
  state->waiting->reason = std::move(reason);
  state->waiting->message = std::move(message);
}

void PodRunner::EnsureImage(Box& box, SimTime t) {
  const std::string& image_ref = box.spec->image;
  const std::optional<ResolvedImage> image = node_->catalog().Resolve(image_ref);
  const bool present = image && node_->HasImage(image->canonical, t);
  const api::PullPolicy policy = EffectivePolicy(*box.spec);
  if (present && policy != api::PullPolicy::Always) {
    Event(t, "Normal", text::kPulled, text::AlreadyPresent(image_ref), box.field_path);
    Create(box, t);
    return;
  }
  if (policy == api::PullPolicy::Never) {
    Event(t, "Warning", text::kErrImageNeverPull, text::NeverPull(image_ref), box.field_path);
    Event(t, "Warning", text::kFailed, text::Error(text::kErrImageNeverPull), box.field_path);
    SetWaiting(box, text::kErrImageNeverPull, text::NeverPull(image_ref));
    box.stage = Stage::kIdle;
    if (!box.init) AdvanceCursor(box, t);
    return;
  }
  Event(t, "Normal", text::kPulling, text::PullingImage(image_ref), box.field_path);
  if (!image) {
    box.stage = Stage::kPullFailed;
    box.due = t + node_->timing().failed_pull;
    return;
  }
  const PullTicket ticket = node_->RequestPull(*image, t);
  box.pull_asked = t;
  box.pull_done = ticket.done;
  box.pulling = ticket.pulling;
  box.stage = Stage::kPullDone;
  box.due = ticket.done;
}

void PodRunner::PullFailed(Box& box, SimTime t) {
  const RuntimeTiming& timing = node_->timing();
  const std::string& image_ref = box.spec->image;
  box.pull_error = text::PullNotFound(NormalizeImageReference(image_ref).Canonical());
  Event(t, "Warning", text::kFailed, text::FailedToPull(image_ref, box.pull_error), box.field_path);
  Event(t, "Warning", text::kFailed, text::Error(text::kErrImagePull), box.field_path);
  SetWaiting(box, text::kErrImagePull, box.pull_error);
  box.backoff = box.backoff.count() == 0 ? timing.backoff_initial
                                         : std::min(box.backoff * 2, timing.backoff_max);
  box.retry_at = t + box.backoff;
  if (timing.backoff_notice < box.backoff) {
    box.stage = Stage::kShowBackOff;
    box.due = t + timing.backoff_notice;
  } else {
    box.stage = Stage::kEnsureImage;
    box.due = box.retry_at;
  }
  // An app container in back-off does not hold up the next one; an init
  // container does (the pod cannot initialize past it).
  if (!box.init) AdvanceCursor(box, t);
}

void PodRunner::ShowBackOff(Box& box, SimTime t) {
  const std::string& image_ref = box.spec->image;
  Event(t, "Normal", text::kBackOff, text::BackOffPulling(image_ref), box.field_path);
  Event(t, "Warning", text::kFailed, text::Error(text::kImagePullBackOff), box.field_path);
  SetWaiting(box, text::kImagePullBackOff,
             text::BackOffPulling(image_ref) + ": " + text::kErrImagePull + ": " + box.pull_error);
  box.stage = Stage::kEnsureImage;
  box.due = box.retry_at;
}

void PodRunner::Create(Box& box, SimTime t) {
  const ResolvedImage image = *node_->catalog().Resolve(box.spec->image);
  box.status->image = image.canonical;
  box.status->image_id = image.image_id;
  box.status->container_id =
      "podflow-sim://" + DeterministicHex(assignment_.pod->metadata->uid + "/" + box.spec->name +
                                          "/" + std::to_string(box.status->restart_count));
  SetWaiting(box, text::kContainerCreating);
  Event(t, "Normal", text::kCreated, text::CreatedContainer(box.spec->name), box.field_path);
  const SimDuration start = node_->timing().container_start;
  if (start.count() == 0) {
    Start(box, t);
  } else {
    box.stage = Stage::kStart;
    box.due = t + start;
  }
}

void PodRunner::Start(Box& box, SimTime t) {
  Event(t, "Normal", text::kStarted, text::StartedContainer(box.spec->name), box.field_path);
  auto& state = box.status->state = std::make_unique<api::ContainerStateT>();
  state->running = std::make_unique<api::ContainerStateRunningT>();
  state->running->started_at = FormatRfc3339(t);
  box.status->started = true;
  box.stage = Stage::kIdle;
  if (box.init && !box.sidecar) {
    box.stage = Stage::kExit;
    box.due = t + node_->timing().init_run;
    return;
  }
  const api::ProbeT* probe = box.spec->readiness_probe.get();
  const SimDuration delay(probe ? int64_t{probe->initial_delay_seconds} * 1000 : 0);
  if (delay.count() > 0) {
    box.stage = Stage::kReady;
    box.due = t + delay;
  } else {
    box.status->ready = true;
  }
  AdvanceCursor(box, t);
}

void PodRunner::Exit(Box& box, SimTime t) {
  const std::string started_at = box.status->state->running->started_at;
  auto& state = box.status->state = std::make_unique<api::ContainerStateT>();
  state->terminated = std::make_unique<api::ContainerStateTerminatedT>();
  state->terminated->exit_code = 0;
  state->terminated->reason = text::kCompleted;
  state->terminated->started_at = started_at;
  state->terminated->finished_at = FormatRfc3339(t);
  state->terminated->container_id = box.status->container_id;
  box.status->ready = true;  // a completed init container reports ready
  box.status->started = false;
  box.stage = Stage::kIdle;
  AdvanceCursor(box, t);
}

}  // namespace podflow::runtime

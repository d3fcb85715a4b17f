// PodRunner: one pod's lifecycle on one simulated node, as kubelet drives it,
// on simulated time. Steps: sandbox (pod IP from the node's podCIDR, hostIP),
// then each init container in order (image, Created, Started, exit 0 after
// timing.init_run; a restartable "sidecar" init container only has to start),
// then the app containers one after another (image, Created, Started; ready at
// once, or after a readiness probe's initialDelaySeconds: probes always pass).
// An image the catalog lacks fails with ErrImagePull, then ImagePullBackOff,
// retried after 10s, 20s, 40s ... up to 300s. Each instant at which something
// happens is one step and yields one Report (status snapshot + its events).
//
// Not simulated (yet): app containers exiting, restarts / CrashLoopBackOff,
// probe failures, volumes (mounted instantly), termination on delete.
//
// Thread safety: none. The node must outlive the runner.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "model/report.h"
#include "pod_generated.h"
#include "stages/runtime/node_runtime.h"

namespace podflow::runtime {

// A pod bound to a node, as the runtime saw it in the log.
struct PodAssignment {
  std::string pod_key;                   // "/registry/pods/default/nginx"
  int64_t mod_revision = 0;              // the revision it was read at
  std::shared_ptr<const api::PodT> pod;  // REQUIRES: metadata and spec set
};

class PodRunner {
 public:
  // The pod is admitted at `now`: the first step is due then.
  PodRunner(PodAssignment assignment, NodeRuntime* node, SimTime now);
  ~PodRunner();  // returns the pod IP to the node's pool
  PodRunner(const PodRunner&) = delete;
  PodRunner& operator=(const PodRunner&) = delete;

  // When the next step is due; nullopt when nothing more will happen.
  std::optional<SimTime> due() const;

  // Runs everything due at due(): one instant. REQUIRES: due().has_value().
  model::Report Step();

  // The runtime saw a newer revision of the same pod (e.g. a status write).
  void ObserveRevision(int64_t mod_revision);

  const api::PodStatusT& status() const { return status_; }
  const std::string& pod_key() const { return assignment_.pod_key; }

 private:
  enum class Stage {
    kIdle,         // not reached yet, or nothing scheduled
    kEnsureImage,  // check presence / start a pull
    kPullDone,     // the pull completes
    kPullFailed,   // the registry answers "not found"
    kShowBackOff,  // the pod worker's next sync shows ImagePullBackOff
    kStart,        // Created -> running
    kReady,        // the readiness probe's first success
    kExit,         // an init container exits 0
  };
  struct Box {  // one container and where it is
    const api::ContainerT* spec = nullptr;
    bool init = false;
    bool sidecar = false;
    std::string field_path;
    api::ContainerStatusT* status = nullptr;  // inside status_
    Stage stage = Stage::kIdle;
    std::optional<SimTime> due;
    SimTime pull_asked{};
    SimTime pull_done{};
    SimDuration pulling{0};
    SimDuration backoff{0};
    SimTime retry_at{};
    std::string pull_error;
  };

  void RunSandbox(SimTime t);
  void RunBox(Box& box, SimTime t);
  void EnsureImage(Box& box, SimTime t);
  void PullFailed(Box& box, SimTime t);
  void ShowBackOff(Box& box, SimTime t);
  void Create(Box& box, SimTime t);
  void Start(Box& box, SimTime t);
  void Exit(Box& box, SimTime t);
  void AdvanceCursor(const Box& from, SimTime t);
  void Event(SimTime t, const char* type, const char* reason, std::string message,
             const std::string& field_path);
  static void SetWaiting(Box& box, std::string reason, std::string message = {});

  PodAssignment assignment_;
  const api::PodSpecT& spec_;
  NodeRuntime* node_;
  api::PodStatusT status_;
  std::vector<Box> boxes_;  // init containers, then app containers
  size_t cursor_ = 0;       // the box being brought up
  std::optional<SimTime> sandbox_due_;
  std::optional<Ipv4> pod_ip_;
  std::vector<model::ReportEvent> events_;  // of the step being run
};

}  // namespace podflow::runtime

// Probes as kubelet's prober runs them, for real: an exec probe's command
// runs beside the container (in its mount and UTS namespaces when it has
// them) with the container's env, its output kept (10 KiB at most); a
// tcpSocket probe connects; an httpGet probe sends GET and takes a status
// from 200 to 399 as success. Each within the probe's timeout, failing in
// kubelet's words. ProbeWorkers runs them on threads of their own, so that a
// slow one (up to its timeout) holds nothing else up.
//
// Thread safety: ProbeWorkers' methods may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "stages/runtime/container_host.h"
#include "stages/runtime/process/identity.h"

namespace podflow::runtime::process {

struct ProbeResult {
  bool ok = false;
  std::string output;  // the failure in kubelet's words; an exec probe's output
};

// An exec probe joins the namespaces of the container `container_pidfd`
// names when `join` (and runs on the host otherwise), as the container's
// `identity`. Each probe gives up at once when `cancel` (may be null) turns
// true.
ProbeResult RunExecProbe(const ProbeCheck& check, int container_pidfd, bool join, const ProcessIdentity& identity,
                         const std::atomic<bool>* cancel = nullptr);
ProbeResult RunTcpProbe(const ProbeCheck& check, const std::atomic<bool>* cancel = nullptr);
ProbeResult RunHttpProbe(const ProbeCheck& check, const std::atomic<bool>* cancel = nullptr);

class ProbeWorkers {
 public:
  // Its probes are numbered from `first_id` (two sets of workers keep their
  // numbers apart).
  explicit ProbeWorkers(int threads = 16, uint64_t first_id = 1);
  ~ProbeWorkers();  // drops the queued ones and cuts those under way short
  ProbeWorkers(const ProbeWorkers&) = delete;
  ProbeWorkers& operator=(const ProbeWorkers&) = delete;

  // Queues a probe of the container `container_pidfd` names (owned, closed
  // after it; -1: none), joining its namespaces when `join`, an exec probe
  // run as the container's `identity`. A probe whose
  // container has ended by the time it is done has no result (errored), as
  // one that is `errored` from the start (its container was gone).
  uint64_t Start(std::string pod_key, ProbeCheck check, int container_pidfd, bool join, ProcessIdentity identity,
                 bool errored = false);
  std::vector<ProbeOutcome> Take();

 private:
  struct Job {
    uint64_t id;
    std::string pod_key;
    ProbeCheck check;
    int pidfd;
    bool join;
    ProcessIdentity identity;
  };
  void Work();

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  std::vector<ProbeOutcome> done_;
  uint64_t next_id_ = 1;
  bool stopping_ = false;
  std::atomic<bool> cancel_{false};  // the probes under way give up
  std::vector<std::thread> threads_;
};

}  // namespace podflow::runtime::process

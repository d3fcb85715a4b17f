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

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "stages/runtime/container_host.h"

namespace podflow::runtime::process {

struct ProbeResult {
  bool ok = false;
  std::string output;  // the failure in kubelet's words; an exec probe's output
};

// `container_pidfd` (-1: none) names the container an exec probe joins.
ProbeResult RunExecProbe(const ProbeCheck& check, int container_pidfd);
ProbeResult RunTcpProbe(const ProbeCheck& check);
ProbeResult RunHttpProbe(const ProbeCheck& check);

class ProbeWorkers {
 public:
  explicit ProbeWorkers(int threads = 16);
  ~ProbeWorkers();  // drops the queued ones, waits for those under way (each ends within its timeout)
  ProbeWorkers(const ProbeWorkers&) = delete;
  ProbeWorkers& operator=(const ProbeWorkers&) = delete;

  // Queues a probe; `container_pidfd` (owned, -1: none) is closed after it.
  // `errored`: it cannot run (its container is gone): its outcome says so at once.
  uint64_t Start(std::string pod_key, ProbeCheck check, int container_pidfd, bool errored = false);
  std::vector<ProbeOutcome> Take();

 private:
  struct Job {
    uint64_t id;
    std::string pod_key;
    ProbeCheck check;
    int pidfd;
    bool errored;
  };
  void Work();

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  std::vector<ProbeOutcome> done_;
  uint64_t next_id_ = 1;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace podflow::runtime::process

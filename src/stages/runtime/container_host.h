// ContainerHost: what a node's containers really run on (the process
// runtime, src/stages/runtime/process). The pod runner asks it to start a
// container's process, to signal it and to read its log; the exits come
// back through TakeExits, which the agent set hands to the runners. A node
// without one has simulated containers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "stages/runtime/shell_script.h"

namespace podflow::runtime {

using ProcessId = uint64_t;

// Where a pod's logs live, as kubelet lays them out: "<namespace>_<pod>_<uid>".
inline std::string PodLogDir(std::string_view ns, std::string_view name, std::string_view uid) {
  return std::string(ns.empty() ? "default" : ns) + "_" + std::string(name) + "_" + std::string(uid);
}

// A file a volume's plugin writes (configMap, secret, downwardAPI,
// projected): its path in the volume, its bytes, its mode.
struct VolumeFile {
  std::string path;
  std::string data;
  int32_t mode = 0644;
};

// A volume of a pod, as kubelet's volume plugins set it up on the node,
// with what they read already resolved (the sources' keys, the downward
// API's values).
struct VolumeSource {
  enum class Type { kEmptyDir, kHostPath, kFiles, kClaim };
  std::string name;
  Type type = Type::kEmptyDir;
  bool memory = false;                  // on a tmpfs: emptyDir medium Memory; a secret's, a projected volume's
  std::optional<int64_t> size_limit;    // emptyDir sizeLimit, bytes
  std::string path;                     // hostPath: the node's path
  std::string host_path_type;           // hostPath: its type ("" unchecked)
  std::string claim;                    // persistentVolumeClaim: "<namespace>/<claimName>"
  // The pod's fsGroup, for the kinds whose ownership kubelet manages
  // (emptyDir and the API's data): the volume's files are given that group.
  std::optional<int64_t> fs_group;
  std::vector<VolumeFile> files;        // kFiles
  // kubelet mounts the API's data (kFiles) read-only, whatever the mount says.
  bool read_only = false;
};

// One resource limit a container's processes get (setrlimit), as a CRI
// runtime's default ulimits set it (Kubernetes has no per-container ones).
struct ResourceLimit {
  int resource = 0;                    // RLIMIT_*
  uint64_t soft = 0, hard = 0;         // RLIM_INFINITY: none
};

// Who a container runs as and with what privileges: its pod's and its own
// securityContext, as kubelet hands them to the container runtime
// (security_context.h makes it).
struct ContainerSecurity {
  std::optional<int64_t> run_as_user;   // unset: the image's user (root on a process node)
  std::optional<int64_t> run_as_group;  // unset: the user's primary group
  // Groups the process gets beside its own: the pod's supplementalGroups,
  // then its fsGroup.
  std::vector<int64_t> supplemental_groups;
  // supplementalGroupsPolicy Merge (the default): the groups /etc/group
  // gives the user in the container are added too; Strict: only the above.
  bool merge_user_groups = true;
  // capabilities.add and .drop as written ("ALL" for every one; names
  // without "CAP_", as Kubernetes asks).
  std::vector<std::string> add_capabilities, drop_capabilities;
  bool privileged = false;
  bool no_new_privileges = false;  // allowPrivilegeEscalation: false
  bool read_only_root = false;     // readOnlyRootFilesystem
};

// One of a container's volumeMounts: the volume's place on the node
// (SetUpVolume's), the part of it mounted (subPath, or subPathExpr
// expanded; made a directory when missing, as kubelet does), and where.
struct ContainerMount {
  std::string source;
  std::string sub_path;
  std::string target;
  bool read_only = false;
};

// One container run, as the runtime is asked to start it.
struct ContainerLaunch {
  std::string pod_key;  // the exit is routed back by it
  // Where its log goes, as kubelet lays pods' logs out:
  // "<namespace>_<pod>_<uid>/<container>", with one file per run.
  std::string log_dir;
  int32_t restart_count = 0;
  std::vector<std::string> argv;  // argv[0] is looked up in the env's PATH
  EnvList env;
  std::string working_dir;  // empty: "/"
  std::string hostname;     // the pod's (its UTS namespace's, when it has one)
  // The network namespace it joins (the pod's, or its node's for a
  // hostNetwork pod; AddPodNetwork's and NodeNetwork's names); empty: this
  // machine's.
  std::string network;
  // Its resources: limits.memory, limits.cpu and requests.cpu (millicores).
  std::optional<int64_t> memory_limit_bytes;
  std::optional<int64_t> cpu_limit_milli;
  std::optional<int64_t> cpu_request_milli;
  // Its volumes, in the order of its volumeMounts.
  std::vector<ContainerMount> mounts;
  // Who it runs as and with what privileges.
  ContainerSecurity security;
};

struct ContainerExit {
  ProcessId id = 0;
  std::string pod_key;
  int32_t exit_code = 0;  // 128 + the signal for one killed by a signal
  bool oom_killed = false;
  SimTime at{};
};

// One line a container printed.
struct ContainerLogLine {
  SimTime at{};
  std::string text;
};

// One probe of a container, as kubelet's prober runs it for real: a command
// in the container (exec), a TCP connect, or an HTTP GET.
struct ProbeCheck {
  enum class Type { kExec, kTcp, kHttp };
  Type type = Type::kExec;
  ProcessId container = 0;            // exec: runs beside it, in its namespaces
  std::vector<std::string> command;   // exec ($(VAR) expanded)
  EnvList env;                        // exec: the container's
  std::string working_dir;            // exec: the container's
  std::string host;                   // tcp, http
  // tcp, http: the network namespace it connects from (the node's, where
  // kubelet's prober is); empty: this machine's.
  std::string network;
  int32_t port = 0;                   // tcp, http
  std::string path = "/";             // http
  std::vector<std::pair<std::string, std::string>> headers;  // http
  SimDuration timeout{1000};
  // A lifecycle hook's command (exec): run by workers of their own, so that
  // a long hook holds no probe up.
  bool hook = false;
};

// What a probe found: success, or kubelet's words for the failure (the
// command's output; "dial tcp ...: connect: connection refused"; "HTTP probe
// failed with statuscode: 500"; a timeout).
struct ProbeOutcome {
  uint64_t probe = 0;
  std::string pod_key;
  bool ok = false;
  std::string output;
  SimTime at{};
  // It could not be run (its container had ended): kubelet discards such a
  // result, neither success nor failure.
  bool errored = false;
};

class ContainerHost {
 public:
  virtual ~ContainerHost() = default;
  // Starts the process. The error is the runtime's words for a container
  // that cannot start (`exec: "x": executable file not found in $PATH`).
  virtual Result<ProcessId> Launch(const ContainerLaunch& launch) = 0;
  // Sends `signal` to the container's main process (SIGKILL: to all of it).
  // A process that has exited is left alone.
  virtual void Signal(ProcessId id, int signal) = 0;
  // The exits seen since the last call, in the order they happened.
  virtual std::vector<ContainerExit> TakeExits() = 0;
  // The lines of one run's log (`restart_count` of `log_dir`), oldest first;
  // empty when it printed nothing or has no log.
  virtual std::vector<ContainerLogLine> ReadLog(const std::string& log_dir, int32_t restart_count) const = 0;
  // Sets up one volume of the pod "<namespace>_<pod>_<uid>" on the node and
  // returns where it is (a directory, or for a hostPath what its path names),
  // or kubelet's words for why it cannot (after `MountVolume.SetUp failed for
  // volume "NAME" : `). Setting it up again brings its files up to date.
  virtual Result<std::string> SetUpVolume(const std::string& pod_dir, const VolumeSource& volume) = 0;
  // What a pod that is gone left on the node: its logs and its volumes
  // (a hostPath's and a claim's data stay, as on a node).
  virtual void RemovePodFiles(const std::string& pod_dir) = 0;
  // Runs one probe in the background; its outcome comes from
  // TakeProbeOutcomes under the returned number.
  virtual uint64_t StartProbe(const std::string& pod_key, const ProbeCheck& check) = 0;
  virtual std::vector<ProbeOutcome> TakeProbeOutcomes() = 0;
  // The node's /etc/hosts and /etc/resolv.conf as they are now: what a pod
  // on the node's network starts from (pod_dns.h). Empty where there are
  // none.
  virtual std::string NodeHosts() const { return ""; }
  virtual std::string NodeResolvConf() const { return ""; }

  // The pod network, as a CNI bridge plugin with host-local addresses and
  // host-gateway routes makes it. Without one (the default, or where it
  // cannot be made) every pod is on this machine's network, as a
  // hostNetwork pod is.
  virtual bool HasPodNetwork() const { return false; }
  // Puts a node on it: `address` its InternalIP with the node network's
  // prefix ("192.168.0.2/16"), `pod_cidr` its podCIDR ("10.244.1.0/24"),
  // `gateway` its pods' gateway on the node's bridge ("10.244.1.1/24").
  virtual Status AddNodeNetwork(const std::string& /*node*/, const std::string& /*address*/,
                                const std::string& /*pod_cidr*/, const std::string& /*gateway*/) {
    return Status::Unavailable("no pod network");
  }
  virtual void RemoveNodeNetwork(const std::string& /*node*/) {}
  // The node's network namespace (its hostNetwork pods', its prober's).
  virtual std::string NodeNetwork(const std::string& /*node*/) const { return ""; }
  // A pod's sandbox network on its node: its own namespace, `address` (with
  // the podCIDR's prefix) on a veth on the node's bridge. Returns the
  // namespace's name, or the plugin's words for why not.
  virtual Result<std::string> AddPodNetwork(const std::string& /*node*/, const std::string& /*pod*/,
                                            const std::string& /*address*/) {
    return Status::Unavailable("no pod network");
  }
  virtual void RemovePodNetwork(const std::string& /*pod*/) {}

  // This machine's own ports, as the pods on its network take them: every
  // process node without a pod network is this machine, so the scheduler's
  // per-node check cannot see two such pods asking for one port. `pod`
  // (its "namespace/name") takes `ports` ("8080/TCP"), all or none; the
  // error names the port and the pod that has it. The runtime's loop only.
  Status ClaimPorts(const std::string& pod, const std::vector<std::string>& ports) {
    for (const std::string& port : ports) {
      auto it = port_owners_.find(port);
      if (it != port_owners_.end() && it->second != pod) {
        return Status::AlreadyExists("port " + port + " of this machine is taken by pod " + it->second +
                                     " (the pods of process nodes without a pod network share this machine's network)");
      }
    }
    for (const std::string& port : ports) port_owners_[port] = pod;
    return Status::Ok();
  }
  void ReleasePorts(const std::string& pod) {
    std::erase_if(port_owners_, [&](const auto& owned) { return owned.second == pod; });
  }

 private:
  std::map<std::string, std::string> port_owners_;  // "8080/TCP" -> "namespace/name"
};

}  // namespace podflow::runtime

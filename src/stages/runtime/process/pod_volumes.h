// PodVolumes: a process node's volumes, as kubelet's volume plugins make
// them on a node. Each pod's live under "<root>/pods/<namespace>_<pod>_<uid>/<volume>":
//  - emptyDir: a directory (mode 0777); medium Memory a tmpfs of its own
//    (size: its sizeLimit), mounted in this machine's mount namespace under
//    the root only, and unmounted when the pod goes or the runtime stops (a
//    crashed run's are unmounted by the next start with the same root);
//  - configMap, secret, downwardAPI, projected: their files (a secret's and
//    a projected volume's on a tmpfs of their own, as kubelet keeps them
//    off the disk), written as
//    kubelet's atomic writer lays them out — a "..2006_01_02_15_04_05.NNNN"
//    directory holding them, "..data" linked to it, and each top-level name
//    linked to "..data/<name>" — so that an update swaps them at once;
//  - hostPath: the machine's own path, checked against its type (Directory,
//    File, Socket, CharDevice, BlockDevice; DirectoryOrCreate and
//    FileOrCreate make it) in kubelet's words;
//  - persistentVolumeClaim: a directory per claim, "<root>/claims/<namespace>/<claim>",
//    which outlives its pods (a local volume of this node).
// With the pod's fsGroup, an emptyDir (when made) and the API's data (each
// time written) are given that group as kubelet's SetVolumeOwnership gives
// it: every file and directory in the group, with group read and write
// (read only for the API's data) added, directories also group search and
// setgid, so that what is made in them stays in the group.
//
// Thread safety: not synchronized (the runtime's loop owns it).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "stages/runtime/container_host.h"

namespace podflow::runtime::process {

// kubelet's ownership of a volume for the pod's fsGroup (above), on `dir`
// and everything beneath it (links not followed).
void SetOwnership(const std::string& dir, int64_t fs_group, bool read_only);

class PodVolumes {
 public:
  // Unmounts what a crashed run left mounted under `root`.
  explicit PodVolumes(std::string root);
  // Unmounts the Memory volumes (their pods' data goes with them).
  ~PodVolumes();
  PodVolumes(const PodVolumes&) = delete;
  PodVolumes& operator=(const PodVolumes&) = delete;

  // Where the volume is on this machine (see ContainerHost::SetUpVolume).
  Result<std::string> SetUp(const std::string& pod_dir, const VolumeSource& volume);
  // Removes the pod's volumes (a hostPath's and a claim's data stay).
  void RemovePod(const std::string& pod_dir);

 private:
  // A tmpfs (of `size`) over `dir`, once.
  Status MountMemory(const std::string& dir, std::optional<int64_t> size, const char* mode);

  std::string root_;
  std::set<std::string> mounted_;  // Memory volumes' directories
};

// This process's mount points (/proc/self/mountinfo's, unescaped), a mount
// after the one it is on.
std::vector<std::string> MountPoints();

// Writes `files` into `dir` as kubelet's atomic writer does (see above); a
// set that is already there is left as it is. Paths are relative, without
// "..": others are refused.
Status WriteAtomically(const std::string& dir, const std::vector<VolumeFile>& files);

}  // namespace podflow::runtime::process

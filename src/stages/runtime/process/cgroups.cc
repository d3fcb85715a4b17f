#include "stages/runtime/process/cgroups.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

namespace podflow::runtime::process {
namespace fs = std::filesystem;

namespace {

bool WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The value of `key` in a flat "key value" file (memory.events, memory.oom_control).
int64_t KeyedValue(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string k; in >> k;) {
    int64_t v = 0;
    if (!(in >> v)) break;
    if (k == key) return v;
  }
  return 0;
}

// Kills every process of `group` and of its children, then removes them,
// deepest first.
void KillAndRemove(const fs::path& group) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(group, ec)) {
    if (entry.is_directory(ec)) KillAndRemove(entry.path());
  }
  // cgroup v2 kills the whole group at once, with no pid read in between.
  if (fs::exists(group / "cgroup.kill", ec)) WriteFile(group / "cgroup.kill", "1");
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::istringstream procs(ReadFile(group / "cgroup.procs"));
    bool any = false;
    for (pid_t pid; procs >> pid;) {
      ::kill(pid, SIGKILL);
      any = true;
    }
    if (::rmdir(group.c_str()) == 0 || errno == ENOENT) return;
    if (!any && errno != EBUSY) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // the killed are still exiting
  }
}

// Makes "podflow/<owner>" in `hierarchy` (a crashed run's removed first).
// Under cgroup v2, each of `controllers` ("memory", "cpu") is enabled down
// to it on its own; those that cannot be are taken out of the list, with
// why in `missing`.
Result<fs::path> Prepare(const fs::path& hierarchy, const std::string& owner, std::vector<std::string>* controllers,
                         std::map<std::string, std::string>* missing) {
  const fs::path podflow = hierarchy / "podflow";
  std::error_code ec;
  fs::create_directories(podflow, ec);
  if (ec) return Status::Unavailable("cannot make the cgroup " + podflow.string() + ": " + ec.message());
  const fs::path root = podflow / owner;
  if (fs::exists(root, ec)) KillAndRemove(root);  // a crashed run's
  fs::create_directories(root, ec);
  if (ec) return Status::Unavailable("cannot make the cgroup " + root.string() + ": " + ec.message());
  // Children of a v2 group get a controller's files only when every parent enables it.
  std::erase_if(*controllers, [&](const std::string& c) {
    for (const fs::path& parent : {hierarchy, podflow, root}) {
      if (!WriteFile(parent / "cgroup.subtree_control", "+" + c)) {
        (*missing)[c] = "cannot enable the " + c + " controller under " + parent.string();
        return true;
      }
    }
    return false;
  });
  return root;
}

}  // namespace

namespace {
// A million cores: far past any machine, and far from overflow below.
int64_t Bounded(int64_t milli) { return std::clamp<int64_t>(milli, 0, 1'000'000'000); }
}  // namespace

int64_t CpuQuotaMicros(int64_t milli) {
  if (milli <= 0) return 0;  // no quota
  return std::max<int64_t>(Bounded(milli) * kCpuPeriodMicros / 1000, 1000);  // the kernel's floor: 1 ms
}

int64_t CpuShares(int64_t milli) { return std::clamp<int64_t>(Bounded(milli) * 1024 / 1000, 2, 262'144); }

int64_t CpuWeight(int64_t shares) { return 1 + ((std::clamp<int64_t>(shares, 2, 262'144) - 2) * 9999) / 262'142; }

Result<ContainerCgroups> ContainerCgroups::Open(const std::string& mount_root, const std::string& owner,
                                                std::map<std::string, std::string>* missing) {
  const fs::path base(mount_root);
  std::error_code ec;
  std::string memory_root, cpu_root;
  bool v2 = false;
  if (fs::exists(base / "cgroup.controllers", ec)) {
    v2 = true;
    std::istringstream listed(ReadFile(base / "cgroup.controllers"));
    const std::vector<std::string> available{std::istream_iterator<std::string>(listed),
                                             std::istream_iterator<std::string>()};
    std::vector<std::string> controllers;
    for (const char* c : {"memory", "cpu"}) {
      if (std::find(available.begin(), available.end(), c) != available.end()) {
        controllers.emplace_back(c);
      } else {
        (*missing)[c] = "the cgroup v2 hierarchy at " + mount_root + " has no " + c + " controller";
      }
    }
    if (controllers.empty()) return Status::Unavailable(missing->begin()->second);
    Result<fs::path> root = Prepare(base, owner, &controllers, missing);
    if (!root.ok()) return root.status();
    const auto enabled = [&](const char* c) {
      return std::find(controllers.begin(), controllers.end(), c) != controllers.end();
    };
    if (enabled("memory")) memory_root = root->string();
    if (enabled("cpu")) cpu_root = root->string();
  } else {
    const auto v1 = [&](const char* controller, const char* file, std::string* out) {
      const fs::path hierarchy = base / controller;
      if (!fs::exists(hierarchy / file, ec)) {
        (*missing)[controller] = "no " + std::string(controller) + " cgroup at " + mount_root +
                                 " (neither cgroup v2 nor the v1 " + controller + " controller)";
        return;
      }
      std::vector<std::string> none;  // v1: each controller is its own hierarchy
      Result<fs::path> root = Prepare(hierarchy, owner, &none, missing);
      if (root.ok()) {
        *out = root->string();
      } else {
        (*missing)[controller] = root.status().message();
      }
    };
    v1("memory", "memory.limit_in_bytes", &memory_root);
    v1("cpu", "cpu.cfs_quota_us", &cpu_root);
  }
  if (memory_root.empty() && cpu_root.empty()) return Status::Unavailable(missing->begin()->second);
  return ContainerCgroups(std::move(memory_root), std::move(cpu_root), v2);
}

Result<CgroupSet> ContainerCgroups::Create(const std::string& name, const CgroupLimits& limits) {
  CgroupSet set;
  std::error_code ec;
  const auto group = [&](const std::string& root) -> Result<fs::path> {
    const fs::path dir = fs::path(root) / name;
    if (std::find(set.dirs.begin(), set.dirs.end(), dir.string()) != set.dirs.end()) return dir;
    fs::create_directories(dir, ec);
    if (ec) return Status::Unavailable("cgroup " + dir.string() + ": " + ec.message());
    set.dirs.push_back(dir.string());
    return dir;
  };
  const auto fail = [&](const std::string& what, const fs::path& dir) {
    Remove(set);
    return Status::Unavailable("cannot set the " + what + " of cgroup " + dir.string());
  };
  if (limits.memory_bytes && limits_memory()) {
    Result<fs::path> dir = group(memory_root_);
    if (!dir.ok()) return fail("memory limit", fs::path(memory_root_) / name);
    const std::string limit = std::to_string(*limits.memory_bytes);
    if (v2_) {
      if (!WriteFile(*dir / "memory.max", limit)) return fail("memory limit", *dir);
      if (fs::exists(*dir / "memory.swap.max", ec)) WriteFile(*dir / "memory.swap.max", "0");
    } else {
      if (!WriteFile(*dir / "memory.limit_in_bytes", limit)) return fail("memory limit", *dir);
      // memsw counts memory and swap: the same limit means no swap.
      if (fs::exists(*dir / "memory.memsw.limit_in_bytes", ec)) WriteFile(*dir / "memory.memsw.limit_in_bytes", limit);
    }
    set.memory = dir->string();
  }
  if (limits_cpu()) {
    Result<fs::path> dir = group(cpu_root_);
    if (!dir.ok()) return fail("CPU limit", fs::path(cpu_root_) / name);
    // A value the kernel refuses (under cgroup v1 a quota above an
    // ancestor's, when this machine is itself CPU-limited) leaves the
    // container without it rather than unable to start.
    if (limits.cpu_limit_milli && CpuQuotaMicros(*limits.cpu_limit_milli) > 0) {
      const std::string quota = std::to_string(CpuQuotaMicros(*limits.cpu_limit_milli));
      if (v2_) {
        WriteFile(*dir / "cpu.max", quota + " " + std::to_string(kCpuPeriodMicros));
      } else if (WriteFile(*dir / "cpu.cfs_period_us", std::to_string(kCpuPeriodMicros))) {
        WriteFile(*dir / "cpu.cfs_quota_us", quota);
      }
    }
    // Without a request (BestEffort) the least weight, as kubelet gives it.
    const int64_t shares = CpuShares(limits.cpu_request_milli.value_or(0));
    if (v2_) {
      WriteFile(*dir / "cpu.weight", std::to_string(CpuWeight(shares)));
    } else {
      WriteFile(*dir / "cpu.shares", std::to_string(shares));
    }
  }
  return set;
}

Status ContainerCgroups::Add(const std::vector<std::string>& dirs, pid_t pid) {
  for (const std::string& group : dirs) {
    if (!WriteFile(fs::path(group) / "cgroup.procs", std::to_string(pid))) {
      return Status::Unavailable("cannot move process " + std::to_string(pid) + " into cgroup " + group);
    }
  }
  return Status::Ok();
}

int64_t ContainerCgroups::OomKills(const CgroupSet& set) const {
  if (set.memory.empty()) return 0;
  return KeyedValue(ReadFile(fs::path(set.memory) / (v2_ ? "memory.events" : "memory.oom_control")), "oom_kill");
}

void ContainerCgroups::Remove(const CgroupSet& set) {
  for (const std::string& dir : set.dirs) KillAndRemove(dir);
}

bool ContainerCgroups::BoundsSwap() const {
  std::error_code ec;
  if (!memory_root_.empty() &&
      fs::exists(fs::path(memory_root_) / (v2_ ? "memory.swap.max" : "memory.memsw.limit_in_bytes"), ec)) {
    return true;
  }
  // /proc/swaps lists a header line, then one line per swap area.
  std::istringstream swaps(ReadFile("/proc/swaps"));
  std::string line;
  int lines = 0;
  while (std::getline(swaps, line)) lines += !line.empty();
  return lines <= 1;
}

void ContainerCgroups::RemoveAll() {
  if (!memory_root_.empty()) KillAndRemove(memory_root_);
  if (!cpu_root_.empty() && cpu_root_ != memory_root_) KillAndRemove(cpu_root_);
}

}  // namespace podflow::runtime::process

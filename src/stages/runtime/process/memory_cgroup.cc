#include "stages/runtime/process/memory_cgroup.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
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

}  // namespace

Result<MemoryCgroups> MemoryCgroups::Open(const std::string& mount_root, const std::string& owner) {
  const fs::path base(mount_root);
  std::error_code ec;
  fs::path hierarchy;
  bool v2 = false;
  if (fs::exists(base / "cgroup.controllers", ec)) {
    if (ReadFile(base / "cgroup.controllers").find("memory") == std::string::npos) {
      return Status::Unavailable("the cgroup v2 hierarchy at " + mount_root + " has no memory controller");
    }
    hierarchy = base;
    v2 = true;
  } else if (fs::exists(base / "memory" / "memory.limit_in_bytes", ec)) {
    hierarchy = base / "memory";
  } else {
    return Status::Unavailable("no memory cgroup at " + mount_root + " (neither cgroup v2 nor the v1 memory controller)");
  }
  const fs::path podflow = hierarchy / "podflow";
  fs::create_directories(podflow, ec);
  if (ec) return Status::Unavailable("cannot make the cgroup " + podflow.string() + ": " + ec.message());
  if (v2) {
    // Children of a v2 group get the memory files only when the parents enable it.
    if (!WriteFile(hierarchy / "cgroup.subtree_control", "+memory") ||
        !WriteFile(podflow / "cgroup.subtree_control", "+memory")) {
      return Status::Unavailable("cannot enable the memory controller under " + podflow.string());
    }
  }
  const fs::path root = podflow / owner;
  if (fs::exists(root, ec)) KillAndRemove(root);  // a crashed run's
  fs::create_directories(root, ec);
  if (ec) return Status::Unavailable("cannot make the cgroup " + root.string() + ": " + ec.message());
  if (v2 && !WriteFile(root / "cgroup.subtree_control", "+memory")) {
    return Status::Unavailable("cannot enable the memory controller under " + root.string());
  }
  return MemoryCgroups(root.string(), v2);
}

Result<std::string> MemoryCgroups::Create(const std::string& name, int64_t limit_bytes) {
  const fs::path group = fs::path(root_) / name;
  std::error_code ec;
  fs::create_directories(group, ec);
  if (ec) return Status::Unavailable("cgroup " + group.string() + ": " + ec.message());
  const std::string limit = std::to_string(limit_bytes);
  bool ok = false;
  if (v2_) {
    ok = WriteFile(group / "memory.max", limit);
    if (fs::exists(group / "memory.swap.max", ec)) WriteFile(group / "memory.swap.max", "0");
  } else {
    ok = WriteFile(group / "memory.limit_in_bytes", limit);
    // memsw counts memory and swap: the same limit means no swap.
    if (fs::exists(group / "memory.memsw.limit_in_bytes", ec)) WriteFile(group / "memory.memsw.limit_in_bytes", limit);
  }
  if (!ok) {
    Remove(group.string());
    return Status::Unavailable("cannot set the memory limit of cgroup " + group.string());
  }
  return group.string();
}

Status MemoryCgroups::Add(const std::string& group, pid_t pid) {
  if (!WriteFile(fs::path(group) / "cgroup.procs", std::to_string(pid))) {
    return Status::Unavailable("cannot move process " + std::to_string(pid) + " into cgroup " + group);
  }
  return Status::Ok();
}

int64_t MemoryCgroups::OomKills(const std::string& group) const {
  return KeyedValue(ReadFile(fs::path(group) / (v2_ ? "memory.events" : "memory.oom_control")), "oom_kill");
}

void MemoryCgroups::Remove(const std::string& group) { KillAndRemove(group); }

bool MemoryCgroups::BoundsSwap() const {
  std::error_code ec;
  if (fs::exists(fs::path(root_) / (v2_ ? "memory.swap.max" : "memory.memsw.limit_in_bytes"), ec)) return true;
  // /proc/swaps lists a header line, then one line per swap area.
  std::istringstream swaps(ReadFile("/proc/swaps"));
  std::string line;
  int lines = 0;
  while (std::getline(swaps, line)) lines += !line.empty();
  return lines <= 1;
}

void MemoryCgroups::RemoveAll() { KillAndRemove(root_); }

}  // namespace podflow::runtime::process

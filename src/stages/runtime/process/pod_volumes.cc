#include "stages/runtime/process/pod_volumes.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "stages/runtime/process/spawn.h"

namespace podflow::runtime::process {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kData = "..data";

// A single path component of ours: not empty, no '/', not "." or "..".
bool PlainName(std::string_view name) {
  return !name.empty() && name.find('/') == std::string_view::npos && name != "." && name != "..";
}

// A file path inside a volume: relative, no ".." component, not starting with "..".
bool InsideVolume(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.starts_with("..")) return false;
  for (size_t start = 0; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (path.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return true;
}

std::string TopLevel(const std::string& path) { return path.substr(0, path.find('/')); }

// kubelet's type check of a hostPath (DirectoryOrCreate and FileOrCreate
// make what is missing first).
Status CheckHostPath(const std::string& path, const std::string& type) {
  if (type.empty()) {
    // Unchecked: the container runtime makes a missing one a directory.
    std::error_code ec;
    if (!fs::exists(path, ec)) fs::create_directories(path, ec);
    if (ec) return Status::Invalid("mkdir " + path + ": " + ec.message());
    return Status::Ok();
  }
  std::string_view expected;
  std::string_view description;
  if (type == "DirectoryOrCreate" || type == "Directory") {
    if (type == "DirectoryOrCreate" && ::access(path.c_str(), F_OK) != 0) {
      std::error_code ec;
      fs::create_directories(path, ec);
      if (ec) return Status::Invalid("mkdir " + path + ": " + ec.message());
      ::chmod(path.c_str(), 0755);
    }
    expected = "Directory", description = "directory";
  } else if (type == "FileOrCreate" || type == "File") {
    if (type == "FileOrCreate") {
      const int fd = ::open(path.c_str(), O_CREAT | O_RDONLY | O_CLOEXEC, 0644);
      if (fd < 0 && errno != EEXIST && errno != EISDIR) return Status::Invalid("open " + path + ": " + ErrnoText(errno));
      if (fd >= 0) ::close(fd);
    }
    expected = "File", description = "file";
  } else if (type == "Socket") {
    expected = "Socket", description = "socket file";
  } else if (type == "CharDevice") {
    expected = "CharDevice", description = "character device";
  } else if (type == "BlockDevice") {
    expected = "BlockDevice", description = "block device";
  } else {
    return Status::Invalid(type + " is an invalid volume type");
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::Invalid("hostPath " + path + " doesn't exist");
  std::string_view actual;
  switch (st.st_mode & S_IFMT) {
    case S_IFDIR: actual = "Directory"; break;
    case S_IFREG: actual = "File"; break;
    case S_IFSOCK: actual = "Socket"; break;
    case S_IFCHR: actual = "CharDevice"; break;
    case S_IFBLK: actual = "BlockDevice"; break;
    default:
      return Status::Invalid("hostPath type check failed, " + path + " is not a " + std::string(description) +
                             ", unable to determine its type: only recognise file, directory, socket, block device "
                             "and character device");
  }
  if (actual != expected) {
    return Status::Invalid("hostPath type check failed: " + path + " is not a " + std::string(description) +
                           ", it's a " + std::string(actual));
  }
  return Status::Ok();
}

// What "..data" holds now: path -> (bytes, mode); nullopt when unreadable.
std::map<std::string, std::pair<std::string, int32_t>> Current(const fs::path& data) {
  std::map<std::string, std::pair<std::string, int32_t>> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(data, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    struct stat st {};
    ::stat(it->path().c_str(), &st);
    out[fs::relative(it->path(), data, ec).string()] = {bytes.str(), static_cast<int32_t>(st.st_mode & 07777)};
  }
  return out;
}

}  // namespace

std::vector<std::string> MountPoints() {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, mount_root, point;
    if (!(fields >> id >> parent >> device >> mount_root >> point)) continue;
    // The kernel writes space, tab, newline and backslash as octal escapes.
    std::string unescaped;
    for (size_t i = 0; i < point.size(); ++i) {
      const bool octal = point[i] == '\\' && i + 3 < point.size() && point[i + 1] >= '0' && point[i + 1] <= '3';
      if (octal) {
        unescaped += static_cast<char>((point[i + 1] - '0') * 64 + (point[i + 2] - '0') * 8 + (point[i + 3] - '0'));
        i += 3;
      } else {
        unescaped += point[i];
      }
    }
    out.push_back(std::move(unescaped));
  }
  return out;
}

Status WriteAtomically(const std::string& dir, const std::vector<VolumeFile>& files) {
  std::map<std::string, std::pair<std::string, int32_t>> wanted;
  for (const VolumeFile& f : files) {
    if (!InsideVolume(f.path)) return Status::Invalid("invalid path " + f.path + " in the volume");
    wanted[f.path] = {f.data, f.mode & 07777};
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::Invalid("mkdir " + dir + ": " + ec.message());
  const fs::path data = fs::path(dir) / kData;
  if (fs::is_symlink(data, ec) && Current(data) == wanted) return Status::Ok();

  // The new set, in a directory named by the time, as kubelet names it.
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char stamp[64];
  std::strftime(stamp, sizeof stamp, "..%Y_%m_%d_%H_%M_%S.", &utc);
  std::string made = (fs::path(dir) / (std::string(stamp) + "XXXXXX")).string();
  if (::mkdtemp(made.data()) == nullptr) return Status::Invalid("mkdir " + dir + ": " + ErrnoText(errno));
  ::chmod(made.c_str(), 0755);
  for (const auto& [path, content] : wanted) {
    const fs::path file = fs::path(made) / path;
    fs::create_directories(file.parent_path(), ec);
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << content.first;
    out.close();
    if (!out || ::chmod(file.c_str(), static_cast<mode_t>(content.second)) != 0) {
      fs::remove_all(made, ec);
      return Status::Invalid("write " + path + ": " + ErrnoText(errno));
    }
  }
  // "..data" swapped to it in one rename, then the names linked through it.
  const fs::path old = fs::is_symlink(data, ec) ? fs::path(dir) / fs::read_symlink(data, ec) : fs::path();
  const fs::path swap = fs::path(dir) / "..data_tmp";
  fs::remove(swap, ec);
  fs::create_symlink(fs::path(made).filename(), swap, ec);
  if (!ec) fs::rename(swap, data, ec);
  if (ec) {
    fs::remove_all(made, ec);
    return Status::Invalid("linking " + data.string() + ": " + ec.message());
  }
  std::set<std::string> names;
  for (const auto& [path, content] : wanted) names.insert(TopLevel(path));
  for (const std::string& name : names) {
    const fs::path link = fs::path(dir) / name;
    if (!fs::is_symlink(link, ec)) fs::create_symlink(fs::path(kData) / name, link, ec);
  }
  // What the old set had and the new one has not.
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with("..") && !names.contains(name) && it->is_symlink()) fs::remove(it->path(), ec);
  }
  // Only a set of ours: a name of this directory's starting with "..".
  const std::string old_name = old.empty() ? "" : fs::relative(old, dir, ec).string();
  if (old_name.starts_with("..") && old_name.find('/') == std::string::npos && old_name != ".." &&
      old_name != fs::path(made).filename().string()) {
    fs::remove_all(fs::path(dir) / old_name, ec);
  }
  return Status::Ok();
}

PodVolumes::PodVolumes(std::string root) : root_(std::move(root)) {
  // Deepest last in mountinfo's order: unmounted from the end.
  std::vector<std::string> mounts = MountPoints();
  for (auto it = mounts.rbegin(); it != mounts.rend(); ++it) {
    if (it->starts_with(root_ + "/")) ::umount2(it->c_str(), MNT_DETACH);
  }
}

PodVolumes::~PodVolumes() {
  for (const std::string& dir : mounted_) ::umount2(dir.c_str(), MNT_DETACH);
}

Result<std::string> PodVolumes::SetUp(const std::string& pod_dir, const VolumeSource& volume) {
  if (!PlainName(pod_dir) || !PlainName(volume.name)) {
    return Status::Invalid("invalid volume name " + volume.name);
  }
  const std::string dir = (fs::path(root_) / "pods" / pod_dir / volume.name).string();
  std::error_code ec;
  switch (volume.type) {
    case VolumeSource::Type::kHostPath: {
      if (!volume.path.starts_with("/")) return Status::Invalid("hostPath " + volume.path + " is not an absolute path");
      Status checked = CheckHostPath(volume.path, volume.host_path_type);
      if (!checked.ok()) return checked;
      return volume.path;
    }
    case VolumeSource::Type::kClaim: {
      const size_t slash = volume.claim.find('/');
      const std::string ns = volume.claim.substr(0, slash);
      const std::string claim = slash == std::string::npos ? "" : volume.claim.substr(slash + 1);
      if (!PlainName(ns) || !PlainName(claim)) return Status::Invalid("invalid claim " + volume.claim);
      const std::string claimed = (fs::path(root_) / "claims" / ns / claim).string();
      fs::create_directories(claimed, ec);
      if (ec) return Status::Invalid("mkdir " + claimed + ": " + ec.message());
      ::chmod(claimed.c_str(), 0777);
      return claimed;
    }
    case VolumeSource::Type::kFiles: {
      // A secret's files never reach the disk: a tmpfs of their own, as kubelet's.
      if (volume.memory) {
        fs::create_directories(dir, ec);
        if (ec) return Status::Invalid("mkdir " + dir + ": " + ec.message());
        if (Status mounted = MountMemory(dir, volume.size_limit, "0755"); !mounted.ok()) return mounted;
      }
      Status written = WriteAtomically(dir, volume.files);
      if (!written.ok()) return written;
      if (volume.fs_group) SetOwnership(dir, *volume.fs_group, /*read_only=*/true);
      return dir;
    }
    case VolumeSource::Type::kEmptyDir:
      break;
  }
  // Made once for its pod, as kubelet mounts it once: what its containers
  // change of it later (its mode) is theirs.
  if (fs::exists(dir, ec) && (!volume.memory || mounted_.contains(dir))) return dir;
  fs::create_directories(dir, ec);
  if (ec) return Status::Invalid("mkdir " + dir + ": " + ec.message());
  ::chmod(dir.c_str(), 0777);
  if (volume.memory) {
    if (Status mounted = MountMemory(dir, volume.size_limit, "0777"); !mounted.ok()) return mounted;
  }
  if (volume.fs_group) SetOwnership(dir, *volume.fs_group, /*read_only=*/false);
  return dir;
}

void SetOwnership(const std::string& dir, int64_t fs_group, bool read_only) {
  const gid_t gid = static_cast<gid_t>(fs_group);
  const auto own = [&](const fs::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || ::lchown(path.c_str(), static_cast<uid_t>(-1), gid) != 0) return;
    if (S_ISLNK(st.st_mode)) return;  // a link has no mode of its own
    mode_t add = read_only ? 0440 : 0660;
    if (S_ISDIR(st.st_mode)) add |= S_ISGID | 0110;
    ::chmod(path.c_str(), (st.st_mode & 07777) | add);
  };
  own(dir);
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) own(it->path());
}

Status PodVolumes::MountMemory(const std::string& dir, std::optional<int64_t> size, const char* mode) {
  if (mounted_.contains(dir)) return Status::Ok();
  std::string options = std::string("mode=") + mode;
  if (size) options += ",size=" + std::to_string(*size);
  if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0) {
    mounted_.insert(dir);
  } else if (errno != EPERM) {
    // Not root: a directory on disk serves (the runtime says at its start
    // that it cannot mount here).
    return Status::Invalid("mount failed: tmpfs on " + dir + ": " + ErrnoText(errno));
  }
  return Status::Ok();
}

void PodVolumes::RemovePod(const std::string& pod_dir) {
  if (!PlainName(pod_dir)) return;
  const std::string dir = (fs::path(root_) / "pods" / pod_dir).string();
  for (auto it = mounted_.begin(); it != mounted_.end();) {
    if (it->starts_with(dir + "/")) {
      ::umount2(it->c_str(), MNT_DETACH);
      it = mounted_.erase(it);
    } else {
      ++it;
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace podflow::runtime::process

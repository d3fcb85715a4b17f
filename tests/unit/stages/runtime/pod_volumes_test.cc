// A process node's volumes on disk: kubelet's atomic writer layout, the
// hostPath type checks, emptyDir (a tmpfs for medium Memory, as root),
// claims that outlive their pods.
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "temp_dir.h"
#include "stages/runtime/process/pod_volumes.h"

namespace podflow::runtime::process {
namespace {
namespace fs = std::filesystem;

// A scratch directory of the test's.
struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("podflow-volumes") {}
};

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

unsigned Mode(const fs::path& p) {
  struct stat st {};
  ::stat(p.c_str(), &st);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("volume files: written as kubelet's atomic writer lays them out, swapped at once on a change") {
  TempDir dir;
  const fs::path v = dir.dir() / "config";
  REQUIRE(WriteAtomically(v.string(), {{"game.properties", "lives=3", 0644}, {"bin/run.sh", "#!/bin/sh", 0755}}).ok());
  REQUIRE(fs::is_symlink(v / "..data"));
  const fs::path first = fs::read_symlink(v / "..data");
  CHECK(first.string().starts_with(".."));
  CHECK(first.string().size() == std::string("..2006_01_02_15_04_05.").size() + 6);
  CHECK(fs::read_symlink(v / "game.properties") == "..data/game.properties");
  CHECK(fs::read_symlink(v / "bin") == "..data/bin");
  CHECK(Read(v / "game.properties") == "lives=3");
  CHECK(Mode(v / "bin" / "run.sh") == 0755);
  CHECK(Mode(v / "game.properties") == 0644);

  // The same set again: nothing changes.
  REQUIRE(WriteAtomically(v.string(), {{"game.properties", "lives=3", 0644}, {"bin/run.sh", "#!/bin/sh", 0755}}).ok());
  CHECK(fs::read_symlink(v / "..data") == first);

  // A change: a new directory, the old one and the dropped name gone.
  REQUIRE(WriteAtomically(v.string(), {{"game.properties", "lives=4", 0600}}).ok());
  CHECK(fs::read_symlink(v / "..data") != first);
  CHECK_FALSE(fs::exists(v / first));
  CHECK_FALSE(fs::exists(fs::symlink_status(v / "bin")));
  CHECK(Read(v / "game.properties") == "lives=4");
  CHECK(Mode(v / "game.properties") == 0600);

  // A path out of the volume is refused, and changes nothing.
  Status refused = WriteAtomically(v.string(), {{"../escape", "x", 0644}});
  CHECK(refused.message() == "invalid path ../escape in the volume");
  CHECK(Read(v / "game.properties") == "lives=4");
  CHECK_FALSE(WriteAtomically(v.string(), {{"/etc/passwd", "x", 0644}}).ok());
  CHECK_FALSE(WriteAtomically(v.string(), {{"a/../../b", "x", 0644}}).ok());

  // A "..data" pointing out of the volume (someone swapped it) is replaced,
  // and what it pointed at is left alone.
  const fs::path elsewhere = dir.dir() / "elsewhere";
  fs::create_directories(elsewhere);
  std::ofstream(elsewhere / "keep") << "kept";
  fs::remove(v / "..data");
  fs::create_symlink(elsewhere, v / "..data");
  REQUIRE(WriteAtomically(v.string(), {{"game.properties", "lives=5", 0644}}).ok());
  CHECK(Read(v / "game.properties") == "lives=5");
  CHECK(Read(elsewhere / "keep") == "kept");
}

TEST_CASE("volumes on a process node: hostPath types in kubelet's words, emptyDir, claims that outlive their pods") {
  TempDir dir;
  PodVolumes volumes((dir.dir() / "state").string());
  const fs::path host = dir.dir() / "host";
  fs::create_directories(host / "dir");
  std::ofstream(host / "file") << "x";
  const auto host_path = [&](const std::string& path, const std::string& type) {
    VolumeSource v;
    v.name = "h";
    v.type = VolumeSource::Type::kHostPath;
    v.path = path;
    v.host_path_type = type;
    return volumes.SetUp("default_p_uid", v);
  };
  const std::string file = (host / "file").string(), d = (host / "dir").string();
  CHECK(*host_path(d, "Directory") == d);
  CHECK(host_path(file, "Directory").status().message() ==
        "hostPath type check failed: " + file + " is not a directory, it's a File");
  CHECK(host_path(d, "File").status().message() ==
        "hostPath type check failed: " + d + " is not a file, it's a Directory");
  CHECK(host_path(d + "/missing", "Directory").status().message() == "hostPath " + d + "/missing doesn't exist");
  CHECK(host_path(file, "Socket").status().message() ==
        "hostPath type check failed: " + file + " is not a socket file, it's a File");
  CHECK(host_path("/dev/null", "CharDevice").ok());
  CHECK(host_path(file, "BlockDevice").status().message() ==
        "hostPath type check failed: " + file + " is not a block device, it's a File");
  CHECK(host_path(file, "Weird").status().message() == "Weird is an invalid volume type");
  CHECK(host_path(d + "/made/deep", "DirectoryOrCreate").ok());
  CHECK(fs::is_directory(d + "/made/deep"));
  CHECK(Mode(d + "/made/deep") == 0755);
  CHECK(host_path(d + "/new.txt", "FileOrCreate").ok());
  CHECK(fs::is_regular_file(d + "/new.txt"));
  CHECK_FALSE(host_path(d + "/no-parent/new.txt", "FileOrCreate").ok());  // its directory is not made
  CHECK(host_path(d + "/unchecked", "").ok());  // the runtime makes it a directory
  CHECK(fs::is_directory(d + "/unchecked"));
  CHECK(host_path(d, "Directory").ok());

  VolumeSource cache;
  cache.name = "cache";
  Result<std::string> at = volumes.SetUp("default_p_uid", cache);
  REQUIRE(at.ok());
  CHECK(*at == (dir.dir() / "state" / "pods" / "default_p_uid" / "cache").string());
  CHECK(Mode(*at) == 0777);

  VolumeSource claim;
  claim.name = "data";
  claim.type = VolumeSource::Type::kClaim;
  claim.claim = "default/task-pv-claim";
  Result<std::string> claimed = volumes.SetUp("default_p_uid", claim);
  REQUIRE(claimed.ok());
  std::ofstream(fs::path(*claimed) / "index.html") << "kept";

  VolumeSource bad = cache;
  bad.name = "../x";
  CHECK_FALSE(volumes.SetUp("default_p_uid", bad).ok());
  CHECK_FALSE(volumes.SetUp("..", cache).ok());

  volumes.RemovePod("default_p_uid");
  CHECK_FALSE(fs::exists(*at));
  CHECK(Read(fs::path(*claimed) / "index.html") == "kept");  // a claim's data outlives its pod
  CHECK(fs::exists(file));  // a hostPath's too
}

TEST_CASE("volumes on a process node: an emptyDir of medium Memory is a tmpfs of its size, unmounted with its pod and "
          "after a crash") {
  TempDir dir;
  const std::string root = (dir.dir() / "state").string();
  std::string shm;
  {
    PodVolumes volumes(root);
    VolumeSource memory;
    memory.name = "shm";
    memory.memory = true;
    memory.size_limit = 8 * 1024 * 1024;
    Result<std::string> at = volumes.SetUp("default_p_uid", memory);
    REQUIRE(at.ok());
    shm = *at;
    struct statfs fs_info {};
    REQUIRE(::statfs(shm.c_str(), &fs_info) == 0);
    if (fs_info.f_type != 0x01021994) {  // TMPFS_MAGIC
      WARN("skipped: no tmpfs may be mounted here (not root)");
      return;
    }
    CHECK(static_cast<int64_t>(fs_info.f_blocks * fs_info.f_bsize) == 8 * 1024 * 1024);
    volumes.RemovePod("default_p_uid");
    CHECK_FALSE(fs::exists(shm));
    // Mounted again, then the runtime "crashes": its mount stays ...
    REQUIRE(volumes.SetUp("default_p_uid", memory).ok());
    fs::create_directories(root + "/pods/default_p_uid/leftover");
    REQUIRE(::mount("tmpfs", (root + "/pods/default_p_uid/leftover").c_str(), "tmpfs", 0, "size=1m") == 0);
  }
  // ... the destructor unmounted its own; the next start unmounts the rest.
  struct statfs fs_info {};
  REQUIRE(::statfs(shm.c_str(), &fs_info) == 0);
  CHECK(fs_info.f_type != 0x01021994);
  REQUIRE(::statfs((root + "/pods/default_p_uid/leftover").c_str(), &fs_info) == 0);
  CHECK(fs_info.f_type == 0x01021994);
  PodVolumes restarted(root);
  REQUIRE(::statfs((root + "/pods/default_p_uid/leftover").c_str(), &fs_info) == 0);
  CHECK(fs_info.f_type != 0x01021994);
}


TEST_CASE("volumes on a process node: the pod's fsGroup owns an emptyDir (setgid, group rw) and the API's data "
          "(group read), as kubelet's SetVolumeOwnership makes them") {
  if (::geteuid() != 0) {
    WARN("skipped: not root, a volume cannot be given another group");
    return;
  }
  TempDir dir;
  PodVolumes volumes((dir.dir() / "state").string());
  VolumeSource scratch;
  scratch.name = "scratch";
  scratch.fs_group = 2000;
  Result<std::string> made = volumes.SetUp("default_p_uid", scratch);
  REQUIRE(made.ok());
  struct stat st {};
  REQUIRE(::stat(made->c_str(), &st) == 0);
  CHECK(st.st_gid == 2000);
  CHECK((st.st_mode & 07777) == 02777);  // drwxrwsrwx, as the docs' ls shows it
  // Made once: what its containers change later is theirs.
  ::chmod(made->c_str(), 0700);
  REQUIRE(volumes.SetUp("default_p_uid", scratch).ok());
  REQUIRE(::stat(made->c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);

  VolumeSource files;
  files.name = "config";
  files.type = VolumeSource::Type::kFiles;
  files.read_only = true;
  files.fs_group = 2000;
  files.files = {{"app/settings", "x", 0600}};
  Result<std::string> written = volumes.SetUp("default_p_uid", files);
  REQUIRE(written.ok());
  const fs::path data = fs::path(*written) / "..data";
  REQUIRE(::stat((data / "app" / "settings").c_str(), &st) == 0);
  CHECK(st.st_gid == 2000);
  CHECK((st.st_mode & 07777) == 0640);
  REQUIRE(::stat((data / "app").c_str(), &st) == 0);
  CHECK(st.st_gid == 2000);
  CHECK((st.st_mode & 02000) != 0);
  // The link's own group too (lchown), and the target is not changed through it.
  REQUIRE(::lstat((fs::path(*written) / "app").c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  CHECK(st.st_gid == 2000);

  // Without one, nothing is changed.
  VolumeSource plain;
  plain.name = "plain";
  Result<std::string> plain_dir = volumes.SetUp("default_p_uid", plain);
  REQUIRE(plain_dir.ok());
  REQUIRE(::stat(plain_dir->c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0777);
}

}  // namespace podflow::runtime::process

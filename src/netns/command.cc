#include "netns/command.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "base/quiet_write.h"

extern char** environ;

namespace podflow::netns {
namespace {

constexpr const char* kSearchPath[] = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"};

std::string Find(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0 ? program : "";
  for (const char* dir : kSearchPath) {
    std::string path = std::string(dir) + "/" + program;
    if (::access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int& f : fd) {
      if (f >= 0) ::close(f);
    }
  }
  void Close(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

}  // namespace

bool HasProgram(const std::string& program) { return !Find(program).empty(); }

Result<CommandResult> RunCommand(const std::vector<std::string>& argv, std::string_view input) {
  if (argv.empty()) return Status::Invalid("no command");
  const std::string path = Find(argv[0]);
  if (path.empty()) return Status::NotFound(argv[0] + ": not found (looked in PATH, /usr/sbin and /sbin)");
  Pipe in, out, err;
  if (::pipe2(in.fd, O_CLOEXEC) != 0 || ::pipe2(out.fd, O_CLOEXEC) != 0 || ::pipe2(err.fd, O_CLOEXEC) != 0) {
    return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, path.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return Status::Internal(argv[0] + ": " + std::strerror(spawned));
  in.Close(0);
  out.Close(1);
  err.Close(1);
  if (input.empty()) in.Close(1);
  // Feed stdin while draining stdout and stderr, so that neither side
  // blocks on a full pipe.
  CommandResult result;
  size_t written = 0;
  std::array<char, 16384> buffer;
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    std::array<pollfd, 3> fds = {pollfd{out.fd[0], POLLIN, 0}, pollfd{err.fd[0], POLLIN, 0},
                                 pollfd{in.fd[1], POLLOUT, 0}};
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[2].revents & (POLLOUT | POLLERR | POLLHUP)) {
      const ssize_t n = WriteQuietly(in.fd[1], input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 || written == input.size()) in.Close(1);
    }
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLERR | POLLHUP))) continue;
      Pipe& from = i == 0 ? out : err;
      const ssize_t n = ::read(from.fd[0], buffer.data(), buffer.size());
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buffer.data(), static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        from.Close(0);
      }
    }
  }
  in.Close(1);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

Status RunChecked(const std::vector<std::string>& argv, std::string_view input) {
  Result<CommandResult> run = RunCommand(argv, input);
  if (!run.ok()) return run.status();
  if (run->exit_code == 0) return Status::Ok();
  std::string line;
  for (const std::string& a : argv) line += (line.empty() ? "" : " ") + a;
  std::string why = run->err.empty() ? run->out : run->err;
  while (!why.empty() && why.back() == '\n') why.pop_back();
  return Status::Internal("`" + line + "` exited " + std::to_string(run->exit_code) + (why.empty() ? "" : ": " + why));
}

}  // namespace podflow::netns

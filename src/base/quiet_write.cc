#include "base/quiet_write.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

namespace podflow {

ssize_t WriteQuietly(int fd, const char* data, size_t n) {
  sigset_t pipe_only, old;
  ::sigemptyset(&pipe_only);
  ::sigaddset(&pipe_only, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  const ssize_t written = ::write(fd, data, n);
  const int err = errno;
  if (written < 0 && err == EPIPE) {
    const timespec none{};
    ::sigtimedwait(&pipe_only, nullptr, &none);
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = err;
  return written;
}

}  // namespace podflow

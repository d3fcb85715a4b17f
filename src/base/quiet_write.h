// write(2) to a pipe whose reader may be gone, without this process
// getting SIGPIPE: the signal is held back in the calling thread and taken
// away; the write fails with EPIPE instead.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace podflow {

ssize_t WriteQuietly(int fd, const char* data, size_t n);

}  // namespace podflow

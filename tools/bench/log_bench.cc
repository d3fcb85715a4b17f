// podflow-bench log: the event log's durable write throughput and commit
// latency (1 KiB values; 1, 8 and 64 concurrent writers), watch delivery
// latency from commit to a watcher, and raw RocksDB synced WriteBatches on
// the same disk as the baseline. Data goes to a temporary directory under
// the current directory (the same disk the log would use), removed at exit.
#include <stdlib.h>
#include <sys/resource.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "bench.h"
#include "log/log.h"
#include "watch/watch.h"

namespace podflow::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPhase = std::chrono::seconds(3);
constexpr size_t kValueBytes = 1024;

class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::current_path() / "podflow-bench-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      tmpl = (std::filesystem::temp_directory_path() / "podflow-bench-XXXXXX").string();
      if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    }
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string Value(uint64_t seed) {
  std::string v(kValueBytes, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    v[i] = static_cast<char>('a' + (seed >> 59));
  }
  return v;
}

std::unique_ptr<EventLog> Open(const std::string& dir) {
  LogOptions options;
  options.dir = dir;
  options.sync = true;
  auto log = OpenLog(options);
  if (!log.ok()) {
    std::fprintf(stderr, "open %s: %s\n", dir.c_str(), log.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(log).value();
}

// Runs `writers` threads putting 1 KiB values for kPhase; returns writes/s.
double LogWriters(const ScratchDir& scratch, int writers) {
  auto log = Open(scratch.Sub("log-" + std::to_string(writers)));
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<double> latencies;
  std::vector<std::thread> threads;
  const Clock::time_point start = Clock::now();
  for (int t = 0; t < writers; ++t) {
    threads.emplace_back([&, t] {
      std::vector<double> mine;
      const std::string value = Value(t);
      const std::string prefix = "/bench/w" + std::to_string(t) + "/";
      for (uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        const Clock::time_point t0 = Clock::now();
        auto r = log->Put(prefix + std::to_string(i % 128), value);
        if (!r.ok()) {
          std::fprintf(stderr, "put: %s\n", r.status().ToString().c_str());
          std::exit(1);
        }
        mine.push_back(MicrosSince(t0));
      }
      std::lock_guard<std::mutex> lock(mu);
      latencies.insert(latencies.end(), mine.begin(), mine.end());
    });
  }
  std::this_thread::sleep_for(kPhase);
  stop = true;
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double rate = static_cast<double>(latencies.size()) / seconds;
  const std::string key = "log_writers_" + std::to_string(writers);
  Emit(key + "_writes_per_s", rate);
  Emit(key + "_p50_us", Percentile(&latencies, 50));
  Emit(key + "_p99_us", Percentile(&latencies, 99));
  return rate;
}

// One watcher on the prefix 8 writers write to; latency from the moment the
// committer published a revision to the moment Next() returned it.
void WatchLatency(const ScratchDir& scratch) {
  auto log = Open(scratch.Sub("log-watch"));
  WatchOptions wo;
  wo.key = "/bench/";
  wo.prefix = true;
  auto watcher = std::move(Watcher::Open(log.get(), wo)).value();
  std::atomic<bool> stop{false};
  std::vector<double> latencies;
  std::thread reader([&] {
    while (!stop.load()) {
      WatchBatch b = watcher->Next(std::chrono::milliseconds(50));
      if (b.kind != WatchBatch::Kind::kEvents) continue;
      if (b.committed_at == Clock::time_point()) continue;  // from storage
      latencies.push_back(MicrosSince(b.committed_at));
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t) {
    writers.emplace_back([&, t] {
      const std::string value = Value(t);
      for (uint64_t i = 0; !stop.load(); ++i) {
        if (!log->Put("/bench/" + std::to_string(t) + "/" + std::to_string(i % 64), value).ok()) {
          std::exit(1);
        }
      }
    });
  }
  std::this_thread::sleep_for(kPhase);
  stop = true;
  for (auto& t : writers) t.join();
  reader.join();
  Emit("log_watch_delivery_p50_us", Percentile(&latencies, 50));
  Emit("log_watch_delivery_p99_us", Percentile(&latencies, 99));
}

// Raw RocksDB: synced WriteBatches of `batch` 1 KiB puts, one writer.
double RawBatches(const ScratchDir& scratch, int batch) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.IncreaseParallelism(2);
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, scratch.Sub("raw-" + std::to_string(batch)), &raw);
  if (!s.ok()) {
    std::fprintf(stderr, "raw open: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  const std::string value = Value(7);
  uint64_t writes = 0;
  const Clock::time_point start = Clock::now();
  while (Clock::now() - start < kPhase) {
    rocksdb::WriteBatch wb;
    for (int i = 0; i < batch; ++i) {
      wb.Put("/raw/" + std::to_string((writes + i) % 8192), value);
    }
    if (!db->Write(wo, &wb).ok()) std::exit(1);
    writes += batch;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double rate = static_cast<double>(writes) / seconds;
  Emit("raw_rocksdb_batch_" + std::to_string(batch) + "_writes_per_s", rate);
  return rate;
}

}  // namespace

int RunLogBench(const std::vector<std::string>& /*args*/) {
  ScratchDir scratch;
  std::fprintf(stderr, "podflow-bench log: data in %s\n", scratch.path().c_str());
  LogWriters(scratch, 1);
  LogWriters(scratch, 8);
  const double log64 = LogWriters(scratch, 64);
  WatchLatency(scratch);
  const double raw64 = RawBatches(scratch, 64);
  const double raw512 = RawBatches(scratch, 512);
  Emit("ratio_vs_raw_rocksdb", raw64 > 0 ? log64 / raw64 : 0);
  Emit("ratio_vs_raw_rocksdb_batch_512", raw512 > 0 ? log64 / raw512 : 0);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  Emit("peak_rss_mib", static_cast<double>(usage.ru_maxrss) / 1024.0);
  return 0;
}

}  // namespace podflow::bench

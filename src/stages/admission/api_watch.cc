// The API's watches, as kube-apiserver streams them: a watch on one
// resource is authorized like any verb, then follows the event log from the
// revision it names (or from the current objects, sent first as ADDED) and
// turns each change into ADDED, MODIFIED or DELETED as the watch's
// selectors see it: an object that stops being selected is DELETED, one
// that starts is ADDED. BOOKMARK events mark the revision while nothing
// changes; a revision the log has compacted away ends the watch with
// 410 Expired, which tells the client to list again.
#include <deque>
#include <functional>
#include <future>
#include <limits>

#include "base/logging.h"
#include "client/wire.h"
#include "model/objects.h"
#include "stages/admission/admission_stage.h"
#include "stages/admission/api_common.h"

namespace podflow::admission {
namespace {

// Events per frame when the current objects are sent at the start.
constexpr size_t kInitialPerFrame = 100;
// How often the log watch reports progress while idle: the bookmark
// period (podflow's clients take bookmarks as the stream's heartbeat), and
// how soon a lost log stream is noticed.
constexpr std::chrono::milliseconds kProgress{1000};
// The longest timeoutSeconds taken as asked (a year); longer ones are cut.
constexpr int64_t kMaxTimeout = 365LL * 24 * 3600;

struct ApiEvent {
  std::string_view type;  // ADDED MODIFIED DELETED BOOKMARK
  KeyValue object;
};

bus::ReplyBody Frame(flatbuffers::FlatBufferBuilder& fbb, const std::vector<ApiEvent>& events,
                     const std::optional<ApiStatusInfo>& error = std::nullopt, bool end = false) {
  std::vector<flatbuffers::Offset<msg::ApiWatchEvent>> out;
  for (const ApiEvent& e : events) {
    out.push_back(msg::CreateApiWatchEvent(fbb, fbb.CreateString(e.type), client::ToMsg(fbb, e.object)));
  }
  if (error) {
    auto status = WriteApiStatus(fbb, *error);
    out.push_back(msg::CreateApiWatchEvent(fbb, fbb.CreateString("ERROR"), 0, status));
  }
  return {msg::Body::ApiWatchFrame, msg::CreateApiWatchFrame(fbb, fbb.CreateVector(out), end || error).Union()};
}

// A watch refused when it was opened: one ERROR, then the end.
class RefusedWatch final : public bus::StreamSource {
 public:
  explicit RefusedWatch(ApiStatusInfo why) : why_(std::move(why)) {}
  Next Produce(flatbuffers::FlatBufferBuilder& fbb) override { return {Frame(fbb, {}, why_), true}; }
  bool Behind() const override { return true; }

 private:
  const ApiStatusInfo why_;
};

// Opens the log watch from a revision.
using WatchOpener = std::function<Result<std::unique_ptr<client::RemoteWatcher>>(Revision start)>;

// What a watch needs decided before it starts: whether it may (RBAC, once
// the stage's bootstrap has made the default roles) and, from "0", the
// current objects.
struct Prepared {
  std::optional<ApiStatusInfo> refused;
  std::optional<RangeResult> listed;
};

class ApiWatch final : public bus::StreamSource {
 public:
  // Runs `prepare` on a thread of its own (so that the server's other
  // streams go on meanwhile), then watches from `from` + 1 or, when it
  // listed, first sends what it listed as ADDED and watches from the list's
  // revision + 1.
  ApiWatch(const model::KindInfo& kind, Selection selection, WatchOpener open, int64_t from,
           std::function<Prepared()> prepare, bool bookmarks,
           std::optional<std::chrono::steady_clock::time_point> deadline)
      : kind_(kind), selection_(std::move(selection)), open_(std::move(open)), from_(from), bookmarks_(bookmarks),
        deadline_(deadline), prepared_(std::async(std::launch::async, std::move(prepare))) {}

  Next Produce(flatbuffers::FlatBufferBuilder& fbb) override {
    more_ = false;
    if (!watcher_) {
      if (std::optional<Next> failed = Start(fbb)) return std::move(*failed);
      if (!watcher_) return {};  // the list is still on its way
    }
    if (!pending_.empty()) {
      std::vector<ApiEvent> events;
      while (!pending_.empty() && events.size() < kInitialPerFrame) {
        events.push_back(std::move(pending_.front()));
        pending_.pop_front();
      }
      more_ = !pending_.empty();
      return {Frame(fbb, events)};
    }
    if (deadline_ && std::chrono::steady_clock::now() >= *deadline_) return {Frame(fbb, {}, std::nullopt, true), true};
    WatchBatch batch = watcher_->Next(std::chrono::milliseconds(0));
    switch (batch.kind) {
      case WatchBatch::Kind::kTimedOut:
        return {};
      case WatchBatch::Kind::kProgress:
        more_ = true;
        return Bookmark(fbb, batch.revision);
      case WatchBatch::Kind::kEvents: {
        more_ = true;
        std::vector<ApiEvent> events = Convert(batch);
        // Changes the selection does not see still move the watch on: a
        // bookmark now and then, so that its client hears from it.
        if (events.empty()) {
          if (std::chrono::steady_clock::now() - last_frame_ < kProgress) return {};
          return Bookmark(fbb, batch.revision);
        }
        last_frame_ = std::chrono::steady_clock::now();
        return {Frame(fbb, events)};
      }
      case WatchBatch::Kind::kCompacted:
        // kube-apiserver's words: the revision asked for, and the newest
        // one the log can no longer start after.
        return {Frame(fbb, {},
                      ApiStatusInfo{"Failure", 410, "Expired",
                                    "too old resource version: " + std::to_string(from_) + " (" +
                                        std::to_string(batch.revision.value() - 1) + ")",
                                    {}}),
                true};
      case WatchBatch::Kind::kClosed:
      case WatchBatch::Kind::kError:
        return {Frame(fbb, {},
                      InternalErrorStatus("the watch on the event log ended (" + batch.status.ToString() +
                                          "); list and watch again")),
                true};
    }
    return {};
  }

  bool Behind() const override { return more_; }

 private:
  // Takes what was prepared when it is ready, then opens the log watch: the
  // stream's last frame when the watch was refused or could not start,
  // nullopt otherwise.
  std::optional<Next> Start(flatbuffers::FlatBufferBuilder& fbb) {
    if (prepared_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return std::nullopt;
    Prepared prepared = prepared_.get();
    if (prepared.refused) return Next{Frame(fbb, {}, *prepared.refused), true};
    int64_t after = from_;
    if (prepared.listed) {
      for (KeyValue& kv : prepared.listed->kvs) {
        if (selection_.Selects(kind_, kv)) pending_.push_back({"ADDED", std::move(kv)});
      }
      after = prepared.listed->revision.value();
    }
    Result<std::unique_ptr<client::RemoteWatcher>> watcher = open_(Revision(after + 1));
    if (!watcher.ok()) return Next{Frame(fbb, {}, InternalErrorStatus(watcher.status().ToString())), true};
    watcher_ = std::move(*watcher);
    more_ = true;
    return std::nullopt;
  }

  Next Bookmark(flatbuffers::FlatBufferBuilder& fbb, Revision revision) {
    if (!bookmarks_) return {};
    last_frame_ = std::chrono::steady_clock::now();
    return {Frame(fbb, {{"BOOKMARK", KeyValue{"", "", Revision(0), revision, 0}}})};
  }

  // One revision's changes as the watch's selection sees them.
  std::vector<ApiEvent> Convert(const WatchBatch& batch) const {
    std::vector<ApiEvent> events;
    for (const WatchEvent& e : batch.events) {
      const bool was = e.prev_kv.has_value() && selection_.Selects(kind_, *e.prev_kv);
      const bool is = e.type == ChangeType::kPut && selection_.Selects(kind_, e.kv);
      if (is) {
        events.push_back({was ? "MODIFIED" : "ADDED", e.kv});
      } else if (was) {
        // As it last was, at the revision it went.
        KeyValue gone = *e.prev_kv;
        gone.mod_revision = e.kv.mod_revision;
        events.push_back({"DELETED", std::move(gone)});
      }
    }
    return events;
  }

  const model::KindInfo& kind_;
  const Selection selection_;
  const WatchOpener open_;
  std::future<Prepared> prepared_;
  std::unique_ptr<client::RemoteWatcher> watcher_;  // once prepared
  std::deque<ApiEvent> pending_;  // listed objects not sent yet
  const int64_t from_;            // the resourceVersion the watch named
  const bool bookmarks_;
  const std::optional<std::chrono::steady_clock::time_point> deadline_;
  bool more_ = false;  // the last Produce found something: there may be more at once
  std::chrono::steady_clock::time_point last_frame_{};  // when the client last got a frame
};

// A resourceVersion as kube-apiserver parses it: "" and "0" are 0. One the
// log can never reach (watched from the revision after it) is refused too.
Result<int64_t> ParseResourceVersion(const std::string& text) {
  if (text.empty()) return 0;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || value > (std::numeric_limits<int64_t>::max() - 1 - (c - '0')) / 10) {
      return Status::Invalid("resourceVersion: Invalid value: \"" + text + "\": strconv.ParseUint: parsing \"" + text +
                             "\": invalid syntax");
    }
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace

std::unique_ptr<bus::StreamSource> AdmissionStage::OpenWatch(const msg::Envelope& open) {
  const msg::ApiRequest* request = open.body_as_ApiRequest();
  if (request == nullptr || Text(request->verb()) != "watch") {
    return std::make_unique<RefusedWatch>(
        BadRequestStatus("the apiwatch channel takes ApiRequest messages whose verb is watch"));
  }
  Result<UserInfo> user = config_.authenticator.Authenticate(Text(request->token()));
  if (!user.ok()) return std::make_unique<RefusedWatch>(UnauthorizedStatus());
  const model::KindInfo* kind = model::FindResource(Text(request->resource()));
  if (kind == nullptr || !Text(request->subresource()).empty()) {
    return std::make_unique<RefusedWatch>(model::NoSuchResourceStatus());
  }
  const std::string ns = kind->namespaced ? Text(request->namespace_()) : "";
  const std::string name = Text(request->name());
  // A watch of one object is authorized as asked by its name, as
  // kube-apiserver does for a metadata.name field selector (a Namespace's
  // at the cluster scope: the URL names no namespace).
  RequestAttributes asked{"watch", std::string(model::ApiGroup(*kind)), std::string(kind->resource), "", ns, name};
  Result<Selection> selection = ParseSelection(*kind, *request);
  if (!selection.ok()) return std::make_unique<RefusedWatch>(BadRequestStatus(selection.status().message()));
  Result<int64_t> from = ParseResourceVersion(Text(request->resource_version()));
  if (!from.ok()) return std::make_unique<RefusedWatch>(BadRequestStatus(from.status().message()));

  const std::string key = name.empty() ? model::KindPrefix(*kind, ns) : model::ObjectKey(*kind, ns, name);
  // Authorized once the default roles are there (as the other verbs wait
  // for the bootstrap); from "0", the current objects first, then what
  // changes after them. The server is woken when it is done.
  auto prepare = [this, key, one = !name.empty(), list = *from == 0, user = std::move(*user),
                  asked = std::move(asked), kind]() -> Prepared {
    Prepared out;
    AwaitBootstrap();
    if (!config_.authorizer.Allows(user, asked)) {
      out.refused = ForbiddenStatus(user.name, "watch", *kind, asked.namespace_, asked.name, "");
    } else if (list) {
      std::unique_ptr<Worker> worker = Borrow();
      RangeRequest exact;
      exact.key = key;
      Result<RangeResult> listed = one ? worker->client.Read(exact) : worker->client.List(key);
      Return(std::move(worker));
      if (listed.ok()) {
        out.listed = std::move(*listed);
      } else {
        out.refused = InternalErrorStatus(listed.status().ToString());
      }
    }
    watch_server_->Wake();
    return out;
  };
  WatchOpener open_watch = [this, key, prefix = name.empty()](Revision start) {
    client::RemoteWatchOptions options;
    options.key = key;
    options.prefix = prefix;
    options.start_revision = start;
    options.prev_kv = true;
    options.progress_interval = kProgress;
    return client::RemoteWatcher::Open(context_.bus, context_.Endpoint("watch"), options);
  };
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (request->timeout_seconds() > 0) {
    // Bounded, so that no timeout overflows the clock.
    deadline = std::chrono::steady_clock::now() + std::chrono::seconds(std::min(request->timeout_seconds(), kMaxTimeout));
  }
  return std::make_unique<ApiWatch>(*kind, std::move(*selection), std::move(open_watch), *from, std::move(prepare),
                                    request->allow_watch_bookmarks(), deadline);
}

}  // namespace podflow::admission

#include "cli/describe_util.h"

#include <algorithm>

#include "cli/describe.h"
#include "model/objects.h"

namespace podflow::cli {
namespace {

std::string TrimSpace(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<const api::StringEntryT*> Sorted(const Entries& entries) {
  std::vector<const api::StringEntryT*> out;
  for (const auto& e : entries) out.push_back(e.get());
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->key < b->key; });
  return out;
}

}  // namespace

void PrintLabelsMultiline(DescribeWriter& w, std::string_view title, const Entries& labels) {
  w.Write(0, std::string(title) + ":\t");
  if (labels.empty()) {
    w.Write(0, "<none>\n");
    return;
  }
  bool first = true;
  for (const api::StringEntryT* e : Sorted(labels)) {
    if (!first) w.Write(0, "\t");
    first = false;
    w.Write(0, e->key + "=" + e->value + "\n");
  }
}

void PrintAnnotationsMultiline(DescribeWriter& w, std::string_view title,
                               const Entries& annotations) {
  constexpr size_t kMaxAnnotationLen = 140;
  w.Write(0, std::string(title) + ":\t");
  std::vector<const api::StringEntryT*> keys;
  for (const api::StringEntryT* e : Sorted(annotations)) {
    if (e->key != "kubectl.kubernetes.io/last-applied-configuration") keys.push_back(e);
  }
  if (keys.empty()) {
    w.Write(0, "<none>\n");
    return;
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i != 0) w.Write(0, "\t");
    std::string value = keys[i]->value;
    if (!value.empty() && value.back() == '\n') value.pop_back();
    if (value.size() + keys[i]->key.size() + 2 > kMaxAnnotationLen ||
        value.find('\n') != std::string::npos) {
      w.Write(0, keys[i]->key + ":\n");
      size_t start = 0;
      while (true) {
        size_t nl = value.find('\n', start);
        std::string line = value.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        if (line.size() > kMaxAnnotationLen - 2) line = line.substr(0, kMaxAnnotationLen - 2) + "...";
        w.Write(0, "\t  " + line + "\n");
        if (nl == std::string::npos) break;
        start = nl + 1;
      }
    } else {
      w.Write(0, keys[i]->key + ": " + value + "\n");
    }
  }
}

void PrintTolerationsMultiline(DescribeWriter& w, std::string_view title,
                               const std::vector<std::unique_ptr<api::TolerationT>>& tolerations) {
  w.Write(0, std::string(title) + ":\t");
  if (tolerations.empty()) {
    w.Write(0, "<none>\n");
    return;
  }
  std::vector<const api::TolerationT*> sorted;
  for (const auto& t : tolerations) sorted.push_back(t.get());
  std::stable_sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->key < b->key; });
  for (size_t i = 0; i < sorted.size(); ++i) {
    const api::TolerationT& t = *sorted[i];
    if (i != 0) w.Write(0, "\t");
    std::string line = t.key;
    if (!t.value.empty()) line += "=" + t.value;
    if (t.effect != api::TaintEffect::Unset) line += std::string(":") + api::EnumNameTaintEffect(t.effect);
    // A bare `operator: Exists` tolerates everything.
    if (t.operator_ == api::TolerationOperator::Exists && t.value.empty()) {
      line += !t.key.empty() || t.effect != api::TaintEffect::Unset ? " op=Exists" : "op=Exists";
    }
    if (t.toleration_seconds.has_value()) {
      line += " for " + std::to_string(*t.toleration_seconds) + "s";
    }
    w.Write(0, line + "\n");
  }
}

void PrintTaintsMultiline(DescribeWriter& w, std::string_view title,
                          const std::vector<std::unique_ptr<api::TaintT>>& taints) {
  w.Write(0, std::string(title) + ":\t");
  if (taints.empty()) {
    w.Write(0, "<none>\n");
    return;
  }
  auto effect = [](const api::TaintT* t) {
    return t->effect == api::TaintEffect::Unset ? std::string()
                                                : std::string(api::EnumNameTaintEffect(t->effect));
  };
  std::vector<const api::TaintT*> sorted;
  for (const auto& t : taints) sorted.push_back(t.get());
  std::stable_sort(sorted.begin(), sorted.end(), [&](auto* a, auto* b) {
    return effect(a) + "," + a->key < effect(b) + "," + b->key;
  });
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i != 0) w.Write(0, "\t");
    const api::TaintT& t = *sorted[i];
    std::string s = t.value.empty() ? t.key + ":" + effect(&t) : t.key + "=" + t.value + ":" + effect(&t);
    w.Write(0, s + "\n");
  }
}

void DescribeEvents(DescribeWriter& w, std::span<const std::string> events, TimePoint now) {
  if (events.empty()) {
    w.Write(0, "Events:\t<none>\n");
    return;
  }
  w.Flush();
  std::vector<std::unique_ptr<api::EventT>> list;
  for (const std::string& bytes : events) list.push_back(model::Unpack<api::Event>(bytes));
  // By time, as kubectl sorts them, but at whole seconds: kubelet's
  // lastTimestamp has no finer precision while the scheduler's eventTime
  // has microseconds, so finer comparison would put a Scheduled event after
  // the Pulling that followed it. Ties keep the log's order, which is the
  // order events were made in (their names grow with time).
  auto seconds = [](const api::EventT& e) {
    return std::chrono::floor<std::chrono::seconds>(ParseRfc3339(EventLastTime(e)).value_or(TimePoint()));
  };
  std::stable_sort(list.begin(), list.end(),
                   [&](const auto& a, const auto& b) { return seconds(*a) < seconds(*b); });
  w.Write(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n");
  w.Write(1, "----\t------\t----\t----\t-------\n");
  for (const auto& e : list) {
    std::string first = e->event_time.empty() ? TimestampSince(e->first_timestamp, now)
                                              : TimestampSince(e->event_time, now);
    std::string interval;
    if (e->series) {
      interval = TimestampSince(e->series->last_observed_time, now) + " (x" +
                 std::to_string(e->series->count) + " over " + first + ")";
    } else if (e->count > 1) {
      interval = TimestampSince(e->last_timestamp, now) + " (x" + std::to_string(e->count) +
                 " over " + first + ")";
    } else {
      interval = first;
    }
    std::string source = e->source && !e->source->component.empty() ? e->source->component
                                                                    : e->reporting_component;
    w.Write(1, e->type + "\t" + e->reason + "\t" + interval + "\t" + source + "\t" +
                   TrimSpace(e->message) + "\n");
  }
}

std::vector<std::string> EventsFor(std::span<const std::string> events, std::string_view kind,
                                   std::string_view namespace_, std::string_view name,
                                   std::string_view uid) {
  std::vector<std::string> out;
  for (const std::string& bytes : events) {
    const api::Event* e = flatbuffers::GetRoot<api::Event>(bytes.data());
    const api::ObjectReference* ref = e->involved_object();
    if (ref == nullptr) continue;
    auto str = [](const flatbuffers::String* s) {
      return s ? std::string_view(s->c_str(), s->size()) : std::string_view();
    };
    if (str(ref->name()) != name) continue;
    if (!kind.empty() && !str(ref->kind()).empty() && str(ref->kind()) != kind) continue;
    if (!namespace_.empty() && str(ref->namespace_()) != namespace_) continue;
    if (!uid.empty() && !str(ref->uid()).empty() && str(ref->uid()) != uid) continue;
    out.push_back(bytes);
  }
  return out;
}

}  // namespace podflow::cli

#include "model/report.h"

#include <algorithm>
#include <unordered_map>

#include <memory>

#include "messages_generated.h"

namespace podflow::model {

namespace {

flatbuffers::Offset<msg::Report> PackReport(flatbuffers::FlatBufferBuilder& fbb, const Report& report) {
  std::vector<flatbuffers::Offset<msg::ReportEvent>> events;
  events.reserve(report.events.size());
  for (const ReportEvent& e : report.events) {
    events.push_back(msg::CreateReportEventDirect(
        fbb, e.type.c_str(), e.reason.c_str(), e.message.c_str(), e.time.c_str(),
        e.field_path.empty() ? nullptr : e.field_path.c_str()));
  }
  auto status = api::PodStatus::Pack(fbb, &report.status);
  return msg::CreateReportDirect(fbb, report.node_name.c_str(), report.pod_key.c_str(), report.pod_uid.c_str(),
                                 report.observed_mod_revision, status, &events);
}

Report UnpackReport(const msg::Report& r) {
  const auto str = [](const flatbuffers::String* s) { return s ? s->str() : std::string(); };
  Report out;
  out.node_name = str(r.node_name());
  out.pod_key = str(r.pod_key());
  out.pod_uid = str(r.pod_uid());
  out.observed_mod_revision = r.observed_mod_revision();
  if (r.status() != nullptr) r.status()->UnPackTo(&out.status);
  if (r.events() != nullptr) {
    for (const msg::ReportEvent* e : *r.events()) {
      out.events.push_back(ReportEvent{str(e->type()), str(e->reason()), str(e->message()),
                                       str(e->time()), str(e->field_path())});
    }
  }
  return out;
}

}  // namespace

std::string EncodeReports(std::span<const Report> reports, uint64_t envelope_id) {
  std::vector<const Report*> pointers;
  pointers.reserve(reports.size());
  for (const Report& r : reports) pointers.push_back(&r);
  return EncodeReports(pointers, envelope_id);
}

std::string EncodeReports(std::span<const Report* const> reports, uint64_t envelope_id) {
  flatbuffers::FlatBufferBuilder fbb(1024 * std::max<size_t>(reports.size(), 1));
  std::vector<flatbuffers::Offset<msg::Report>> packed;
  packed.reserve(reports.size());
  for (const Report* r : reports) packed.push_back(PackReport(fbb, *r));
  auto body = msg::CreateReportBatchDirect(fbb, &packed);
  fbb.Finish(msg::CreateEnvelope(fbb, msg::Body::ReportBatch, body.Union(), envelope_id));
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

Result<std::vector<Report>> DecodeReports(std::string_view frame) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(frame.data()), frame.size());
  if (!msg::VerifyEnvelopeBuffer(verifier)) {
    return Status::Corruption("report frame failed verification");
  }
  const msg::Envelope* envelope = msg::GetEnvelope(frame.data());
  std::vector<Report> out;
  if (const msg::Report* one = envelope->body_as_Report()) {
    out.push_back(UnpackReport(*one));
  } else if (const msg::ReportBatch* batch = envelope->body_as_ReportBatch()) {
    if (batch->reports() != nullptr) {
      out.reserve(batch->reports()->size());
      for (const msg::Report* r : *batch->reports()) out.push_back(UnpackReport(*r));
    }
  } else {
    return Status::Invalid("frame does not hold reports");
  }
  return out;
}

void CoalesceReports(std::vector<Report>& reports) {
  std::unordered_map<std::string, size_t> first;  // pod key -> index in `out`
  std::vector<Report> out;
  out.reserve(reports.size());
  for (Report& r : reports) {
    auto [it, inserted] = first.try_emplace(r.pod_key, out.size());
    if (inserted) {
      out.push_back(std::move(r));
      continue;
    }
    Report& merged = out[it->second];
    if (merged.pod_uid != r.pod_uid) {  // a different pod under the same name: keep both, the newer last
      it->second = out.size();
      out.push_back(std::move(r));
      continue;
    }
    merged.node_name = std::move(r.node_name);
    merged.observed_mod_revision = std::max(merged.observed_mod_revision, r.observed_mod_revision);
    merged.status = std::move(r.status);
    for (ReportEvent& e : r.events) merged.events.push_back(std::move(e));
  }
  reports = std::move(out);
}

}  // namespace podflow::model

// PodRunner: the probes of a running container, as kubelet's prober
// workers run them: a probe every periodSeconds from initialDelaySeconds
// after the start; a result counts once it came successThreshold (or
// failureThreshold) times in a row. Startup holds liveness and readiness
// back until it succeeds; a failed startup or liveness result kills the
// container for a restart; readiness sets `ready`.
//
// Probes whose outcome cannot change are not stepped: a probe that passes
// and will pass until its next failing span is due again at the first
// probe time inside that span.
#include <algorithm>

#include "stages/runtime/kubelet_text.h"
#include "stages/runtime/pod_runner.h"

namespace podflow::runtime {
namespace {

namespace text = kubelet_text;

SimDuration Seconds(int32_t s, int32_t fallback) {
  return SimDuration(int64_t{s > 0 ? s : fallback} * 1000);
}
SimDuration Period(const api::ProbeT& p) { return ProbePeriod(p); }

// The first probe time at or after `at` on the grid base + k * period.
SimTime GridAtOrAfter(SimTime base, SimDuration period, SimTime at) {
  if (at <= base) return base;
  const int64_t k = ((at - base).count() + period.count() - 1) / period.count();
  return base + period * k;
}

// The failing span containing `since`, or nullptr.
const FailSpan* SpanAt(const std::vector<FailSpan>& spans, SimDuration since) {
  for (const FailSpan& s : spans) {
    if (s.from <= since && since < s.to) return &s;
  }
  return nullptr;
}

// The start of the first failing span that is not over at `since`.
std::optional<SimDuration> NextFailure(const std::vector<FailSpan>& spans, SimDuration since) {
  std::optional<SimDuration> out;
  for (const FailSpan& s : spans) {
    if (s.to > since && (!out || s.from < *out)) out = std::max(s.from, since);
  }
  return out;
}

}  // namespace

SimDuration ProbePeriod(const api::ProbeT& probe) { return Seconds(probe.period_seconds, 10); }

void PodRunner::StartProbes(Box& box, SimTime t) {
  box.probes.clear();
  const auto add = [&](const api::ProbeT* spec, ProbeKind kind) {
    if (spec == nullptr) return;
    ProbeRun& p = box.probes.emplace_back();
    p.spec = spec;
    p.kind = kind;
    p.fails = FailSpans(box.plan, kind, *spec);
    if (box.process) {
      p.check = RealProbeCheck(*spec, *box.spec, status_.pod_ip, box.env);
      if (p.check) p.check->network = node_->network();  // kubelet's prober is on the node
    }
    // kubelet's initial results: liveness Success, readiness Failure, startup Unknown.
    p.ok = kind == ProbeKind::kLiveness;
    p.known = kind != ProbeKind::kStartup;
  };
  add(box.spec->startup_probe.get(), ProbeKind::kStartup);
  add(box.spec->liveness_probe.get(), ProbeKind::kLiveness);
  add(box.spec->readiness_probe.get(), ProbeKind::kReadiness);
  const bool has_startup = box.spec->startup_probe != nullptr;
  for (ProbeRun& p : box.probes) {
    if (p.kind == ProbeKind::kStartup) {
      p.next = std::max(t, box.started_at + Seconds(p.spec->initial_delay_seconds, 0));  // from its start
    }
  }
  if (!has_startup) BecameStarted(box, t);
}

void PodRunner::BecameStarted(Box& box, SimTime t) {
  box.status->started = true;
  bool has_readiness = false;
  for (ProbeRun& p : box.probes) {
    if (p.kind == ProbeKind::kStartup) {
      p.next.reset();  // its work is done
      continue;
    }
    has_readiness |= p.kind == ProbeKind::kReadiness;
    const SimTime first = GridAtOrAfter(box.started_at + Seconds(p.spec->initial_delay_seconds, 0),
                                        Period(*p.spec), t);
    if (p.kind == ProbeKind::kLiveness && !p.check) {
      // Passing from the start: due only where it may fail.
      const std::optional<SimDuration> fail = NextFailure(p.fails, first - box.started_at);
      p.next = fail ? std::optional<SimTime>(
                          GridAtOrAfter(first, Period(*p.spec), box.started_at + *fail))
                    : std::nullopt;
      if (fail && *fail == model::kNever) p.next.reset();
    } else {
      p.next = first;
    }
  }
  if (!has_readiness) box.status->ready = true;
  if (box.sidecar) AdvanceCursor(box, t);
}

void PodRunner::KillForProbe(Box& box, const ProbeRun& probe, SimTime t) {
  const bool restart = PolicyOf(box) != api::RestartPolicy::Never;
  const char* kind = probe.kind == ProbeKind::kStartup ? "startup" : "liveness";
  Event(t, "Normal", text::kKilling,
        text::FailedProbe(box.spec->name, kind, box.sidecar, restart && !box.sidecar),
        box.field_path);
  Kill(box, t, restart, probe.spec);
}

void PodRunner::Probe(Box& box, ProbeRun& probe, SimTime t) {
  const SimDuration since = t - box.started_at;
  // A real probe's outcome, or the plan's span.
  const FailSpan* failing = probe.outcome ? nullptr : SpanAt(probe.fails, since);
  const bool ok = probe.outcome ? probe.outcome->ok : failing == nullptr;
  const std::string failure = ok ? std::string()
                              : probe.outcome ? probe.outcome->output
                                              : ProbeFailureOutput(*probe.spec, *box.spec, *failing, status_.pod_ip);
  // kubelet's prober ticks every period whatever a probe took: the next one
  // is a period after this one started (at once if that has passed).
  const SimTime tick = probe.outcome ? probe.launched : t;
  probe.outcome.reset();
  if (probe.run > 0 && probe.last_ok == ok) {
    ++probe.run;
  } else {
    probe.last_ok = ok;
    probe.run = 1;
  }
  if (!ok) {
    Event(t, "Warning", text::kUnhealthy, std::string(ProbeName(probe.kind)) + " probe failed: " + failure,
          box.field_path);
  }
  const int32_t threshold =
      ok ? std::max(probe.spec->success_threshold, 1)
         : (probe.spec->failure_threshold > 0 ? probe.spec->failure_threshold : 3);
  const SimDuration period = Period(*probe.spec);
  if (probe.run >= threshold && (!probe.known || probe.ok != ok)) {
    probe.ok = ok;
    probe.known = true;
    switch (probe.kind) {
      case ProbeKind::kReadiness:
        box.status->ready = ok;
        break;
      case ProbeKind::kStartup:
        if (ok) {
          BecameStarted(box, t);
          return;
        }
        KillForProbe(box, probe, t);
        return;
      case ProbeKind::kLiveness:
        if (!ok) {
          KillForProbe(box, probe, t);
          return;
        }
        break;
    }
  }
  // Settled on success: nothing to do until the next failing span (a real
  // probe cannot know: it runs every period).
  if (ok && probe.ok && probe.kind != ProbeKind::kStartup && !probe.check) {
    const std::optional<SimDuration> fail = NextFailure(probe.fails, since + SimDuration(1));
    if (!fail || *fail == model::kNever) {
      probe.next.reset();
      return;
    }
    probe.next = GridAtOrAfter(t + period, period, box.started_at + *fail);
    return;
  }
  probe.next = std::max(tick + period, t);
}

}  // namespace podflow::runtime

// Shared fixtures for the admission tests (unit and regression): a fixed
// clock, a seeded RNG and two users (an admin in system:masters, and alice).
#pragma once

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "api_generated.h"
#include "model/objects.h"
#include "stages/admission/admission.h"

namespace podflow::admission::testing {

constexpr std::string_view kAdminToken = "admin-token";
constexpr std::string_view kAliceToken = "alice-token";

// 2026-11-21T14:00:00Z.
inline std::chrono::system_clock::time_point FixedNow() {
  return std::chrono::system_clock::time_point(std::chrono::seconds(1795269600));
}

inline AdmissionConfig TestConfig() {
  AdmissionConfig config;
  auto authn = TokenAuthenticator::Create({
      {std::string(kAdminToken), {"admin", "1", {"system:masters"}}},
      {std::string(kAliceToken), {"alice", "2", {"dev"}}},
  });
  REQUIRE(authn.ok());
  config.authenticator = std::move(*authn);
  return config;
}

inline Admission TestAdmission(AdmissionConfig config = TestConfig()) {
  return Admission(
      std::move(config), [] { return FixedNow(); }, std::mt19937_64(42));
}

// A lookup where every namespace exists, Active, with `labels`.
inline NamespaceLookup Labelled(std::map<std::string, std::string> labels) {
  return [labels = std::move(labels)](const std::string&) -> Result<std::optional<NamespaceInfo>> {
    return std::optional<NamespaceInfo>(NamespaceInfo{api::NamespacePhase::Active, labels});
  };
}

// Admits `manifest` as admin and requires exactly one document.
inline AdmissionOutcome AdmitOne(std::string_view manifest, const std::set<std::string>& taken = {},
                                 const PriorityClassLister& priority_classes = {}) {
  Admission admission = TestAdmission();
  AdmitReply reply = admission.Admit(kAdminToken, manifest, {.taken_cluster_ips = taken, .priority_classes = priority_classes});
  INFO((reply.failure ? reply.failure->message : ""));
  REQUIRE_FALSE(reply.failure.has_value());
  REQUIRE(reply.results.size() == 1);
  return std::move(reply.results[0]);
}

// The message of a rejected single-document manifest.
inline std::string RejectOne(std::string_view manifest) {
  AdmissionOutcome out = AdmitOne(manifest);
  REQUIRE_FALSE(out.admitted());
  return out.status.message;
}

template <typename Table>
std::unique_ptr<typename Table::NativeTableType> AdmittedObject(const AdmissionOutcome& out) {
  INFO(out.status.message);
  REQUIRE(out.admitted());
  return model::Unpack<Table>(out.bytes);
}

inline std::string ReadManifest(const std::string& name) {
  std::ifstream in(std::string(PODFLOW_SOURCE_DIR) + "/config/manifests/" + name);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A lister of PriorityClasses as the stage reads them from the log: each
// manifest admitted, and its bytes read back through the Verifier.
inline PriorityClassLister StoredPriorityClasses(const std::vector<std::string>& manifests) {
  std::vector<PriorityClassInfo> classes;
  for (const std::string& manifest : manifests) {
    AdmissionOutcome out = AdmitOne(manifest);
    INFO(out.status.message);
    REQUIRE(out.admitted());
    Result<PriorityClassInfo> pc = ReadStoredPriorityClass(out.bytes);
    REQUIRE(pc.ok());
    classes.push_back(std::move(*pc));
  }
  return [classes]() -> Result<std::vector<PriorityClassInfo>> { return classes; };
}

}  // namespace podflow::admission::testing

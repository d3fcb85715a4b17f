// The creations and deletions of pods a controller asked for and has not
// yet seen by watch (kube-controller-manager's ControllerExpectations).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"

namespace podflow::controllers {

// The creations and deletions a controller has asked for and not yet seen
// by watch, per owner: until they are seen (or kExpectationsTimeout has
// passed since the oldest was asked for), the owner's pods are not counted
// again, so the same pods are not created twice.
class Expectations {
 public:
  static constexpr SimDuration kTimeout{5 * 60 * 1000};

  void ExpectCreate(const std::string& owner, const std::string& pod_key, SimTime now);
  void ExpectDelete(const std::string& owner, const std::string& pod_key, SimTime now);
  // The pod was seen: present (a creation done), or deleting or gone (a
  // deletion done). Returns the owner it was expected for, if any.
  std::optional<std::string> Observe(const std::string& pod_key, bool present);
  // A creation that got no answer: it may have been made, under a name not
  // known. Met by the next pod of the owner seen new (ObserveNew).
  void ExpectUnnamedCreate(const std::string& owner, SimTime now);
  // A pod of `owner` seen for the first time; whether it met an unnamed
  // creation.
  bool ObserveNew(const std::string& owner);
  // A creation or deletion asked for that failed: not to be waited for.
  void Drop(const std::string& pod_key);
  bool Satisfied(const std::string& owner, SimTime now) const;
  // When the owner's oldest pending expectation lapses; nullopt when none.
  std::optional<SimTime> Lapses(const std::string& owner) const;
  void Forget(const std::string& owner);
  // A pod seen by watch at `pod_key` (`deleting`: with a deletionTimestamp;
  // `first_seen`: not known before, controlled by the owner at
  // `owner_key`, if known): the owners whose expectations it met.
  std::vector<std::string> ObservePod(const std::string& pod_key, bool deleting, bool first_seen,
                                      const std::string* owner_key);
  size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    std::string owner;
    bool create;
    SimTime since;
  };
  std::map<std::string, Pending> pending_;                 // by pod key
  std::map<std::string, std::map<std::string, SimTime>> by_owner_;  // owner -> pod key -> since
  uint64_t unnamed_ = 0;  // the names given to unnamed creations ("?1", "?2", ...)
};

}  // namespace podflow::controllers

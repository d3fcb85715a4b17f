// PodSecurity: the Pod Security Standards, chosen per namespace by its
// labels (pod-security.kubernetes.io/enforce, warn, with -version). A pod
// that breaks the enforce level is refused (`violates PodSecurity
// "restricted:latest": ...`); a pod or a workload's pod template that
// breaks the warn level is admitted with a warning (`would violate
// PodSecurity ...`). Each check says what it forbids in the words of
// kube-apiserver's pod-security admission, in the order it reports them.
#include <algorithm>
#include <set>

#include "model/objects.h"
#include "stages/admission/plugins/plugin.h"
#include "stages/admission/validation.h"

namespace podflow::admission {
namespace {

enum class Level { kPrivileged, kBaseline, kRestricted };

constexpr std::string_view kLabelPrefix = "pod-security.kubernetes.io/";

// One check a pod failed: why, and what in it.
struct Violation {
  std::string reason;
  std::string detail;
};

std::string Pluralize(std::string_view one, std::string_view many, size_t n) {
  return std::string(n == 1 ? one : many);
}

// The checks name containers in the pod's order and values in sorted order
// (each a set), as kube's pod-security admission does.
template <typename Items>
std::string JoinQuote(const Items& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ", ") + GoQuote(i);
  return out;
}

// `container "a"`, `containers "a", "b"`.
std::string Containers(const std::vector<std::string>& names) {
  return Pluralize("container", "containers", names.size()) + " " + JoinQuote(names);
}

// `pod`, `container "a"`, `pod and containers "a", "b"`: who set a field.
std::string Setters(bool pod, const std::vector<std::string>& containers) {
  std::vector<std::string> who;
  if (pod) who.push_back("pod");
  if (!containers.empty()) who.push_back(Containers(containers));
  return Join(who, " and ");
}

// One container of any list, as the checks read it.
struct ContainerView {
  const std::string& name;
  const api::SecurityContextT* sc;
  const std::vector<std::unique_ptr<api::ContainerPortT>>* ports;
};

std::vector<ContainerView> ContainersOf(const api::PodSpecT& spec) {
  std::vector<ContainerView> out;
  for (const auto& c : spec.init_containers) out.push_back({c->name, c->security_context.get(), &c->ports});
  for (const auto& c : spec.containers) out.push_back({c->name, c->security_context.get(), &c->ports});
  for (const auto& c : spec.ephemeral_containers) out.push_back({c->name, c->security_context.get(), &c->ports});
  return out;
}

// The names of the containers `bad` picks, in the pod's order.
template <typename Pred>
std::vector<std::string> Pick(const std::vector<ContainerView>& containers, Pred bad) {
  std::vector<std::string> out;
  for (const ContainerView& c : containers) {
    if (bad(c)) out.push_back(c.name);
  }
  return out;
}

using Check = std::optional<Violation> (*)(const api::ObjectMetaT*, const api::PodSpecT&,
                                           const std::vector<ContainerView>&);

// ---- baseline ----

std::optional<Violation> AppArmor(const api::ObjectMetaT* meta, const api::PodSpecT& spec,
                                  const std::vector<ContainerView>& containers) {
  auto allowed = [](const api::AppArmorProfileT* p) {
    return p == nullptr || p->type == "RuntimeDefault" || p->type == "Localhost";
  };
  std::vector<std::string> setters;
  std::set<std::string> values;
  if (spec.security_context && !allowed(spec.security_context->app_armor_profile.get())) {
    setters.push_back("pod");
    values.insert(spec.security_context->app_armor_profile->type);
  }
  const std::vector<std::string> names = Pick(containers, [&](const ContainerView& c) {
    if (!c.sc || allowed(c.sc->app_armor_profile.get())) return false;
    values.insert(c.sc->app_armor_profile->type);
    return true;
  });
  if (!names.empty()) setters.push_back(Containers(names));
  // The annotations that came before the field.
  constexpr std::string_view kAnnotation = "container.apparmor.security.beta.kubernetes.io/";
  std::set<std::string> annotations;
  if (meta != nullptr) {
    for (const auto& a : meta->annotations) {
      if (!a->key.starts_with(kAnnotation) || a->value.empty() || a->value == "runtime/default" ||
          a->value.starts_with("localhost/")) {
        continue;
      }
      annotations.insert(a->key + "=" + GoQuote(a->value));
    }
  }
  std::vector<std::string> bad(values.begin(), values.end());
  bad.insert(bad.end(), annotations.begin(), annotations.end());
  if (!annotations.empty()) setters.push_back(Pluralize("annotation", "annotations", annotations.size()));
  if (setters.empty()) return std::nullopt;
  return Violation{Pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", bad.size()),
                   Join(setters, " and ") + " must not set AppArmor profile type to " + JoinQuote(bad)};
}

std::optional<Violation> CapabilitiesBaseline(const api::ObjectMetaT*, const api::PodSpecT&,
                                              const std::vector<ContainerView>& containers) {
  static const std::set<std::string> kAllowed = {"AUDIT_WRITE", "CHOWN",          "DAC_OVERRIDE", "FOWNER", "FSETID",
                                                 "KILL",        "MKNOD",          "NET_BIND_SERVICE",
                                                 "SETFCAP",     "SETGID",         "SETPCAP",      "SETUID", "SYS_CHROOT"};
  std::vector<std::string> names;
  std::set<std::string> forbidden;
  for (const ContainerView& c : containers) {
    if (!c.sc || !c.sc->capabilities) continue;
    bool any = false;
    for (const std::string& cap : c.sc->capabilities->add) {
      if (!kAllowed.contains(cap)) {
        forbidden.insert(cap);
        any = true;
      }
    }
    if (any) names.push_back(c.name);
  }
  if (names.empty()) return std::nullopt;
  return Violation{"non-default capabilities",
                   Containers(names) + " must not include " + JoinQuote(forbidden) +
                       " in securityContext.capabilities.add"};
}

std::optional<Violation> HostNamespaces(const api::ObjectMetaT*, const api::PodSpecT& spec,
                                        const std::vector<ContainerView>&) {
  std::vector<std::string> set;
  if (spec.host_network) set.push_back("hostNetwork=true");
  if (spec.host_pid) set.push_back("hostPID=true");
  if (spec.host_ipc) set.push_back("hostIPC=true");
  if (set.empty()) return std::nullopt;
  return Violation{"host namespaces", Join(set, ", ")};
}

std::optional<Violation> HostPathVolumes(const api::ObjectMetaT*, const api::PodSpecT& spec,
                                         const std::vector<ContainerView>&) {
  std::vector<std::string> names;
  for (const auto& v : spec.volumes) {
    if (v->host_path) names.push_back(v->name);
  }
  if (names.empty()) return std::nullopt;
  return Violation{"hostPath volumes", Pluralize("volume", "volumes", names.size()) + " " + JoinQuote(names)};
}

std::optional<Violation> HostPorts(const api::ObjectMetaT*, const api::PodSpecT&,
                                   const std::vector<ContainerView>& containers) {
  std::vector<std::string> names;
  std::set<std::string> ports;
  for (const ContainerView& c : containers) {
    bool any = false;
    for (const auto& p : *c.ports) {
      if (p->host_port == 0) continue;
      any = true;
      ports.insert(std::to_string(p->host_port));
    }
    if (any) names.push_back(c.name);
  }
  if (names.empty()) return std::nullopt;
  return Violation{"hostPort", Containers(names) + " " + Pluralize("uses", "use", names.size()) + " " +
                                   Pluralize("hostPort", "hostPorts", ports.size()) + " " + Join(ports, ", ")};
}

std::optional<Violation> HostProcess(const api::ObjectMetaT*, const api::PodSpecT& spec,
                                     const std::vector<ContainerView>& containers) {
  auto host = [](const api::WindowsSecurityContextOptionsT* w) {
    return w != nullptr && w->host_process.has_value() && *w->host_process;
  };
  const bool pod = spec.security_context && host(spec.security_context->windows_options.get());
  const std::vector<std::string> names =
      Pick(containers, [&](const ContainerView& c) { return c.sc && host(c.sc->windows_options.get()); });
  if (!pod && names.empty()) return std::nullopt;
  return Violation{"hostProcess",
                   Setters(pod, names) + " must not set securityContext.windowsOptions.hostProcess=true"};
}

std::optional<Violation> Privileged(const api::ObjectMetaT*, const api::PodSpecT&,
                                    const std::vector<ContainerView>& containers) {
  const std::vector<std::string> names = Pick(containers, [](const ContainerView& c) {
    return c.sc && c.sc->privileged.has_value() && *c.sc->privileged;
  });
  if (names.empty()) return std::nullopt;
  return Violation{"privileged", Containers(names) + " must not set securityContext.privileged=true"};
}

std::optional<Violation> ProcMount(const api::ObjectMetaT*, const api::PodSpecT&,
                                   const std::vector<ContainerView>& containers) {
  std::vector<std::string> names;
  std::set<std::string> values;
  for (const ContainerView& c : containers) {
    if (!c.sc || c.sc->proc_mount.empty() || c.sc->proc_mount == "Default") continue;
    names.push_back(c.name);
    values.insert(c.sc->proc_mount);
  }
  if (names.empty()) return std::nullopt;
  return Violation{"procMount", Containers(names) + " must not set securityContext.procMount to " + JoinQuote(values)};
}

std::optional<Violation> SeLinuxOptions(const api::ObjectMetaT*, const api::PodSpecT& spec,
                                        const std::vector<ContainerView>& containers) {
  static const std::set<std::string> kTypes = {"", "container_t", "container_init_t", "container_kvm_t",
                                               "container_engine_t"};
  std::set<std::string> types;
  bool user = false;
  bool role = false;
  auto bad = [&](const api::SELinuxOptionsT* o) {
    if (o == nullptr) return false;
    bool found = false;
    if (!kTypes.contains(o->type)) {
      types.insert(o->type);
      found = true;
    }
    if (!o->user.empty()) {
      user = true;
      found = true;
    }
    if (!o->role.empty()) {
      role = true;
      found = true;
    }
    return found;
  };
  const bool pod = spec.security_context && bad(spec.security_context->se_linux_options.get());
  const std::vector<std::string> names =
      Pick(containers, [&](const ContainerView& c) { return c.sc && bad(c.sc->se_linux_options.get()); });
  if (!pod && names.empty()) return std::nullopt;
  std::vector<std::string> what;
  if (!types.empty()) what.push_back(Pluralize("type", "types", types.size()) + " " + JoinQuote(types));
  if (user) what.push_back("user may not be set");
  if (role) what.push_back("role may not be set");
  return Violation{"seLinuxOptions",
                   Setters(pod, names) + " set forbidden securityContext.seLinuxOptions: " + Join(what, "; ")};
}

bool Unconfined(const api::SeccompProfileT* p) { return p != nullptr && p->type == "Unconfined"; }

std::optional<Violation> SeccompBaseline(const api::ObjectMetaT*, const api::PodSpecT& spec,
                                         const std::vector<ContainerView>& containers) {
  const bool pod = spec.security_context && Unconfined(spec.security_context->seccomp_profile.get());
  const std::vector<std::string> names =
      Pick(containers, [](const ContainerView& c) { return c.sc && Unconfined(c.sc->seccomp_profile.get()); });
  if (!pod && names.empty()) return std::nullopt;
  return Violation{"seccompProfile",
                   Setters(pod, names) + " must not set securityContext.seccompProfile.type to \"Unconfined\""};
}

std::optional<Violation> Sysctls(const api::ObjectMetaT*, const api::PodSpecT& spec,
                                 const std::vector<ContainerView>&) {
  static const std::set<std::string> kAllowed = {
      "kernel.shm_rmid_forced",      "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
      "net.ipv4.tcp_syncookies",     "net.ipv4.ping_group_range",    "net.ipv4.ip_local_reserved_ports",
      "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",     "net.ipv4.tcp_keepalive_intvl",
      "net.ipv4.tcp_keepalive_probes"};
  if (!spec.security_context) return std::nullopt;
  std::vector<std::string> names;
  for (const auto& s : spec.security_context->sysctls) {
    if (!kAllowed.contains(s->name)) names.push_back(s->name);
  }
  if (names.empty()) return std::nullopt;
  return Violation{"forbidden sysctls", Join(names, ", ")};
}

// ---- restricted ----

std::optional<Violation> AllowPrivilegeEscalation(const api::ObjectMetaT*, const api::PodSpecT&,
                                                  const std::vector<ContainerView>& containers) {
  const std::vector<std::string> names = Pick(containers, [](const ContainerView& c) {
    return !c.sc || !c.sc->allow_privilege_escalation.has_value() || *c.sc->allow_privilege_escalation;
  });
  if (names.empty()) return std::nullopt;
  return Violation{"allowPrivilegeEscalation != false",
                   Containers(names) + " must set securityContext.allowPrivilegeEscalation=false"};
}

std::optional<Violation> CapabilitiesRestricted(const api::ObjectMetaT*, const api::PodSpecT&,
                                                const std::vector<ContainerView>& containers) {
  std::vector<std::string> not_dropping;
  std::vector<std::string> adding;
  std::set<std::string> added;
  for (const ContainerView& c : containers) {
    const api::CapabilitiesT* caps = c.sc ? c.sc->capabilities.get() : nullptr;
    if (caps == nullptr || std::find(caps->drop.begin(), caps->drop.end(), "ALL") == caps->drop.end()) {
      not_dropping.push_back(c.name);
    }
    if (caps == nullptr) continue;
    bool any = false;
    for (const std::string& cap : caps->add) {
      if (cap != "NET_BIND_SERVICE") {
        added.insert(cap);
        any = true;
      }
    }
    if (any) adding.push_back(c.name);
  }
  std::vector<std::string> details;
  if (!not_dropping.empty()) {
    details.push_back(Containers(not_dropping) + " must set securityContext.capabilities.drop=[\"ALL\"]");
  }
  if (!adding.empty()) {
    details.push_back(Containers(adding) + " must not include " + JoinQuote(added) +
                      " in securityContext.capabilities.add");
  }
  if (details.empty()) return std::nullopt;
  return Violation{"unrestricted capabilities", Join(details, "; ")};
}

std::optional<Violation> RestrictedVolumes(const api::ObjectMetaT*, const api::PodSpecT& spec,
                                           const std::vector<ContainerView>&) {
  std::vector<std::string> names;
  std::set<std::string> types;
  for (const auto& v : spec.volumes) {
    const api::VolumeT& vol = *v;
    // The volume types restricted pods may use.
    if (vol.config_map || vol.csi || vol.downward_api || vol.empty_dir || vol.ephemeral ||
        vol.persistent_volume_claim || vol.projected || vol.secret) {
      continue;
    }
    const std::pair<bool, std::string_view> kinds[] = {
        {vol.host_path != nullptr, "hostPath"},
        {vol.gce_persistent_disk != nullptr, "gcePersistentDisk"},
        {vol.aws_elastic_block_store != nullptr, "awsElasticBlockStore"},
        {vol.git_repo != nullptr, "gitRepo"},
        {vol.nfs != nullptr, "nfs"},
        {vol.iscsi != nullptr, "iscsi"},
        {vol.glusterfs != nullptr, "glusterfs"},
        {vol.rbd != nullptr, "rbd"},
        {vol.flex_volume != nullptr, "flexVolume"},
        {vol.cinder != nullptr, "cinder"},
        {vol.cephfs != nullptr, "cephfs"},
        {vol.flocker != nullptr, "flocker"},
        {vol.fc != nullptr, "fc"},
        {vol.azure_file != nullptr, "azureFile"},
        {vol.vsphere_volume != nullptr, "vsphereVolume"},
        {vol.quobyte != nullptr, "quobyte"},
        {vol.azure_disk != nullptr, "azureDisk"},
        {vol.photon_persistent_disk != nullptr, "photonPersistentDisk"},
        {vol.portworx_volume != nullptr, "portworxVolume"},
        {vol.scale_io != nullptr, "scaleIO"},
        {vol.storageos != nullptr, "storageos"},
        {vol.image != nullptr, "image"},
    };
    std::string type = "unknown";
    for (const auto& [set, name] : kinds) {
      if (set) {
        type = std::string(name);
        break;
      }
    }
    names.push_back(vol.name);
    types.insert(type);
  }
  if (names.empty()) return std::nullopt;
  return Violation{"restricted volume types", Pluralize("volume", "volumes", names.size()) + " " + JoinQuote(names) +
                                                  " " + Pluralize("uses", "use", names.size()) + " " +
                                                  Pluralize("restricted volume type", "restricted volume types",
                                                            types.size()) +
                                                  " " + JoinQuote(types)};
}

std::optional<Violation> RunAsNonRoot(const api::ObjectMetaT*, const api::PodSpecT& spec,
                                      const std::vector<ContainerView>& containers) {
  const auto& psc = spec.security_context;
  const bool pod_false = psc && psc->run_as_non_root.has_value() && !*psc->run_as_non_root;
  const bool pod_true = psc && psc->run_as_non_root.has_value() && *psc->run_as_non_root;
  const std::vector<std::string> explicit_false = Pick(containers, [](const ContainerView& c) {
    return c.sc && c.sc->run_as_non_root.has_value() && !*c.sc->run_as_non_root;
  });
  // What is set to false is said alone.
  if (pod_false || !explicit_false.empty()) {
    return Violation{"runAsNonRoot != true",
                     Setters(pod_false, explicit_false) + " must not set securityContext.runAsNonRoot=false"};
  }
  if (pod_true) return std::nullopt;
  const std::vector<std::string> unset =
      Pick(containers, [](const ContainerView& c) { return !c.sc || !c.sc->run_as_non_root.has_value(); });
  if (unset.empty()) return std::nullopt;
  return Violation{"runAsNonRoot != true",
                   "pod or " + Containers(unset) + " must set securityContext.runAsNonRoot=true"};
}

std::optional<Violation> RunAsUser(const api::ObjectMetaT*, const api::PodSpecT& spec,
                                   const std::vector<ContainerView>& containers) {
  const bool pod = spec.security_context && spec.security_context->run_as_user.has_value() &&
                   *spec.security_context->run_as_user == 0;
  const std::vector<std::string> names = Pick(
      containers, [](const ContainerView& c) { return c.sc && c.sc->run_as_user.has_value() && *c.sc->run_as_user == 0; });
  if (!pod && names.empty()) return std::nullopt;
  return Violation{"runAsUser=0", Setters(pod, names) + " must not set runAsUser=0"};
}

std::optional<Violation> SeccompRestricted(const api::ObjectMetaT*, const api::PodSpecT& spec,
                                           const std::vector<ContainerView>& containers) {
  auto valid = [](const api::SeccompProfileT* p) {
    return p != nullptr && (p->type == "RuntimeDefault" || p->type == "Localhost");
  };
  const api::SeccompProfileT* pod_profile = spec.security_context ? spec.security_context->seccomp_profile.get() : nullptr;
  std::set<std::string> values;
  const bool pod_bad = pod_profile != nullptr && !valid(pod_profile);
  if (pod_bad) values.insert(pod_profile->type);
  const std::vector<std::string> explicit_bad = Pick(containers, [&](const ContainerView& c) {
    const api::SeccompProfileT* own = c.sc ? c.sc->seccomp_profile.get() : nullptr;
    if (own == nullptr || valid(own)) return false;
    values.insert(own->type);
    return true;
  });
  // What is set to a forbidden type is said alone.
  if (pod_bad || !explicit_bad.empty()) {
    return Violation{"seccompProfile", Setters(pod_bad, explicit_bad) +
                                           " must not set securityContext.seccompProfile.type to " + JoinQuote(values)};
  }
  if (valid(pod_profile)) return std::nullopt;
  const std::vector<std::string> unset = Pick(containers, [](const ContainerView& c) {
    return c.sc == nullptr || c.sc->seccomp_profile == nullptr;
  });
  if (unset.empty()) return std::nullopt;
  return Violation{"seccompProfile", "pod or " + Containers(unset) +
                                         " must set securityContext.seccompProfile.type to \"RuntimeDefault\" or "
                                         "\"Localhost\""};
}

// Every check, by its name in kube's pod-security admission, in the order
// it reports them: the baseline ones, then the restricted ones; at the
// restricted level a restricted check replaces the baseline one it
// `overrides`.
struct NamedCheck {
  std::string_view id;
  Level level;
  Check check;
  std::string_view overrides;
};
constexpr NamedCheck kChecks[] = {
    {"appArmorProfile", Level::kBaseline, &AppArmor, ""},
    {"capabilities_baseline", Level::kBaseline, &CapabilitiesBaseline, ""},
    {"hostNamespaces", Level::kBaseline, &HostNamespaces, ""},
    {"hostPathVolumes", Level::kBaseline, &HostPathVolumes, ""},
    {"hostPorts", Level::kBaseline, &HostPorts, ""},
    {"privileged", Level::kBaseline, &Privileged, ""},
    {"procMount", Level::kBaseline, &ProcMount, ""},
    {"seLinuxOptions", Level::kBaseline, &SeLinuxOptions, ""},
    {"seccompProfile_baseline", Level::kBaseline, &SeccompBaseline, ""},
    {"sysctls", Level::kBaseline, &Sysctls, ""},
    {"hostProcess", Level::kBaseline, &HostProcess, ""},
    {"allowPrivilegeEscalation", Level::kRestricted, &AllowPrivilegeEscalation, ""},
    {"capabilities_restricted", Level::kRestricted, &CapabilitiesRestricted, "capabilities_baseline"},
    {"restrictedVolumes", Level::kRestricted, &RestrictedVolumes, "hostPathVolumes"},
    {"runAsNonRoot", Level::kRestricted, &RunAsNonRoot, ""},
    {"runAsUser", Level::kRestricted, &RunAsUser, ""},
    {"seccompProfile_restricted", Level::kRestricted, &SeccompRestricted, "seccompProfile_baseline"},
};

// What the pod breaks at `level`, as one text: `host namespaces
// (hostNetwork=true), privileged (container "x" must not ...)`; empty when
// nothing.
std::string Violations(Level level, const api::ObjectMetaT* meta, const api::PodSpecT& spec) {
  if (level == Level::kPrivileged) return "";
  const std::vector<ContainerView> containers = ContainersOf(spec);
  std::vector<std::string> out;
  for (const NamedCheck& c : kChecks) {
    if (c.level > level) continue;
    const bool overridden = level == Level::kRestricted && std::any_of(std::begin(kChecks), std::end(kChecks), [&](const NamedCheck& o) {
      return o.overrides == c.id;
    });
    if (overridden) continue;
    if (std::optional<Violation> v = c.check(meta, spec, containers)) {
      out.push_back(v->detail.empty() ? v->reason : v->reason + " (" + v->detail + ")");
    }
  }
  return Join(out, ", ");
}

// A namespace's policy for one mode (enforce, warn): its level and version.
struct Policy {
  Level level = Level::kPrivileged;
  std::string text;  // "restricted:latest"
};

// A version label is `latest` or `v1.N`; anything else is read as latest.
bool ValidVersion(std::string_view v) {
  if (v == "latest") return true;
  if (!v.starts_with("v1.") || v.size() == 3) return false;
  const std::string_view n = v.substr(3);
  if (n.size() > 1 && n[0] == '0') return false;
  return std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Policy PolicyOf(const std::map<std::string, std::string>& labels, std::string_view mode) {
  Policy p;
  auto level = labels.find(std::string(kLabelPrefix) + std::string(mode));
  if (level == labels.end()) return p;
  std::string name = level->second;
  if (name == "baseline") {
    p.level = Level::kBaseline;
  } else if (name == "restricted") {
    p.level = Level::kRestricted;
  } else if (name != "privileged" && mode == "enforce") {
    // A value that is not a level: enforce fails closed, warn fails open.
    p.level = Level::kRestricted;
    name = "restricted";
  } else {
    return p;
  }
  auto version = labels.find(std::string(kLabelPrefix) + std::string(mode) + "-version");
  p.text = name + ":" + (version == labels.end() || !ValidVersion(version->second) ? "latest" : version->second);
  return p;
}

// The pod template of a workload kind, or nullptr.
const api::PodTemplateSpecT* TemplateOf(const Attributes& a) {
  if (const auto* d = a.As<api::DeploymentT>()) return d->spec ? d->spec->template_.get() : nullptr;
  if (const auto* r = a.As<api::ReplicaSetT>()) return r->spec ? r->spec->template_.get() : nullptr;
  if (const auto* d = a.As<api::DaemonSetT>()) return d->spec ? d->spec->template_.get() : nullptr;
  if (const auto* s = a.As<api::StatefulSetT>()) return s->spec ? s->spec->template_.get() : nullptr;
  if (const auto* j = a.As<api::JobT>()) return j->spec ? j->spec->template_.get() : nullptr;
  if (const auto* c = a.As<api::CronJobT>()) {
    const api::JobTemplateSpecT* jt = c->spec ? c->spec->job_template.get() : nullptr;
    return jt && jt->spec ? jt->spec->template_.get() : nullptr;
  }
  return nullptr;
}

// Whether a pod update changes what PodSecurity checks, as its
// isSignificantPodUpdate decides: the seccomp annotations, the number of
// containers or init containers, or a container's image. Anything else
// (labels, tolerations, gates, activeDeadlineSeconds) is let through
// unchecked, so that a pod admitted before its namespace tightened can
// still be updated.
bool SignificantPodUpdate(const api::PodT& pod, const api::PodT& old) {
  auto annotation = [](const api::PodT& p, std::string_view key) -> std::string {
    if (!p.metadata) return "";
    for (const auto& a : p.metadata->annotations) {
      if (a && a->key == key) return a->value;
    }
    return "";
  };
  constexpr std::string_view kSeccompPod = "seccomp.security.alpha.kubernetes.io/pod";
  constexpr std::string_view kSeccompContainer = "container.seccomp.security.alpha.kubernetes.io/";
  if (annotation(pod, kSeccompPod) != annotation(old, kSeccompPod)) return true;
  if (!pod.spec || !old.spec) return pod.spec != nullptr || old.spec != nullptr;
  auto containers_differ = [&](const auto& now, const auto& before) {
    if (now.size() != before.size()) return true;
    for (size_t i = 0; i < now.size(); ++i) {
      if (now[i]->image != before[i]->image) return true;
      const std::string key = std::string(kSeccompContainer) + now[i]->name;
      if (annotation(pod, key) != annotation(old, key)) return true;
    }
    return false;
  };
  return containers_differ(pod.spec->containers, old.spec->containers) ||
         containers_differ(pod.spec->init_containers, old.spec->init_containers);
}

class PodSecurity : public Plugin {
 public:
  bool Handles(Operation) const override { return true; }

  std::optional<ApiStatusInfo> Validate(const Attributes& a, RequestState& state) const override {
    const api::PodT* pod = a.As<api::PodT>();
    const api::PodTemplateSpecT* tmpl = pod == nullptr ? TemplateOf(a) : nullptr;
    const api::PodSpecT* spec = pod ? pod->spec.get() : tmpl ? tmpl->spec.get() : nullptr;
    if (spec == nullptr) return std::nullopt;
    if (a.operation() == Operation::kUpdate) {
      // A status write changes nothing checked; an update only when it
      // changes what is (kube's pod and pod-controller rules).
      if (!a.subresource().empty()) return std::nullopt;
      const Attributes old = a.Old();
      if (pod != nullptr && !SignificantPodUpdate(*pod, *old.As<api::PodT>())) return std::nullopt;
      if (tmpl != nullptr) {
        const api::PodTemplateSpecT* before = TemplateOf(old);
        if (before != nullptr && model::Pack(*before) == model::Pack(*tmpl)) return std::nullopt;
      }
    }
    const api::ObjectMetaT* meta = pod ? pod->metadata.get() : tmpl->metadata.get();
    Result<std::map<std::string, std::string>> labels = NamespaceLabels(a.namespace_(), state);
    if (!labels.ok()) return InternalErrorStatus(labels.status().ToString());
    // Enforced on pods; workloads' templates are only warned about.
    const Policy enforce = PolicyOf(*labels, "enforce");
    if (pod != nullptr) {
      if (std::string v = Violations(enforce.level, meta, *spec); !v.empty()) {
        return AdmissionForbiddenStatus(a.kind(), a.name(), "violates PodSecurity \"" + enforce.text + "\": " + v);
      }
    }
    const Policy warn = PolicyOf(*labels, "warn");
    if (std::string v = Violations(warn.level, meta, *spec); !v.empty()) {
      state.document_warnings.push_back("would violate PodSecurity \"" + warn.text + "\": " + v);
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Plugin> NewPodSecurity() { return std::make_unique<PodSecurity>(); }

}  // namespace podflow::admission

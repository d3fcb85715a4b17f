// A data dir's credentials, made at its first start the way a cluster's
// are at its creation, and read by every stage and tool that uses it:
//
//   <dataDir>/pki/server.key, server.pub     the CURVE key pair every socket
//                                            that binds serves with
//   <dataDir>/pki/identities/<name>.key, .pub one pair per identity: each
//                                            stage, each controller of the
//                                            controllers stage, and "admin"
//                                            (the tools)
//   <dataDir>/pki/ca.crt, ca.key             the cluster's root CA (RSA
//                                            2048, CN "kubernetes", ten
//                                            years), as kubeadm makes one;
//                                            every namespace's
//                                            kube-root-ca.crt holds ca.crt
//   <dataDir>/admin.token                    the bearer token of user
//                                            "admin" (group system:masters)
//   <dataDir>/run/                           the ipc:// sockets (0700)
//
// Secret files are 0600 in 0700 directories, and a secret file anyone else
// may read is refused, as ssh refuses such a key. Another host's server
// key will live in pki/hosts/<host>/server.pub beside these.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "bus/bus.h"

namespace podflow::pipeline {

struct ClusterConfig;

// The identity the tools (podflow, podflow-publish) speak as.
inline constexpr std::string_view kAdminIdentity = "admin";

// Makes whatever credentials `data_dir` lacks (the directory itself too).
// Safe when several processes start at once: one makes, the others wait
// (an flock on <dataDir>/pki.lock) and read. IOError names the file.
Status EnsureCredentials(const std::string& data_dir);

// What a process secures its bus context with: the keys of `identities`
// (its own; the first is the default), the server's public key, and when
// `serve`, the server's secret key and every identity's public key (whom
// its sockets admit). NotFound when the data dir has no credentials yet;
// Invalid (naming the file) when one is malformed or too open.
Result<bus::Security> LoadSecurity(const std::string& data_dir, const std::vector<std::string>& identities,
                                   bool serve);

// Secures a tool's context with `data_dir`'s keys: it speaks as "admin"
// (reads; writes go through admission with the admin token).
Status SecureTool(bus::Context& context, const std::string& data_dir);

// The admin bearer token of `data_dir`.
Result<std::string> ReadAdminToken(const std::string& data_dir);

// The root CA certificate of `data_dir` (PEM). NotFound before the
// credentials are made; Invalid when the file holds no certificate.
Result<std::string> ReadRootCa(const std::string& data_dir);

// The directory of the pipeline's ipc:// sockets: only the owner may enter.
std::string RunDir(const std::string& data_dir);

// Invalid (naming the channel) when an ipc:// socket of the pipeline would
// be in a directory others may enter: they could not talk to it (CURVE
// refuses them), but they could remove or replace it. RunDir is made
// private with the credentials.
Status CheckIpcDirs(const ClusterConfig& config);

}  // namespace podflow::pipeline

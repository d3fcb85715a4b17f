// Who may write what to the event log. Every writer is a stage identity
// (authenticated by the bus); each role writes only what its stage writes,
// by resource (the key's /registry/<resource>/ prefix) and verb, the way
// RBAC grants a service account its resources and verbs:
//  - admission creates, updates and deletes objects of every kind (its
//    plugins decide what is allowed; it is the API's front door);
//  - binding updates pods (the binding) and records events and decisions
//    (which expire);
//  - status updates pods (their status) and records events (which expire);
//  - scheduling updates and deletes (preemption) pods, records events,
//    decisions and its runs;
//  - runtime registers and updates nodes;
//  - proxy keeps Endpoints and EndpointSlices.
// Anyone else (the tools' "admin" identity, an anonymous peer) only reads.
#pragma once

#include <string_view>
#include <vector>

#include "base/result.h"
#include "log/log.h"

namespace podflow::persistence {

// Ok when `identity` may apply every op of the transaction; otherwise
// Forbidden naming the identity, the verb and the key of the first op it
// may not. A put guarded by revision 0 creates, one guarded by a revision
// updates, an unguarded one may do either (both verbs needed); a put with
// a TTL deletes too (the key goes when it expires).
Status AuthorizeWrite(std::string_view identity, const std::vector<TxnOp>& ops);

}  // namespace podflow::persistence

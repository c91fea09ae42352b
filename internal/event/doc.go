// Package event carries what happens in agentd from the code that does it to
// the code that watches it. It owns the Envelope (one event: subject, ids,
// time, JSON payload), the Subject and Pattern naming scheme (NATS style:
// dot-separated tokens, '*' for one token, '>' for the rest), the Bus and
// Subscription interfaces, and InProc, the in-process Bus.
//
// The bus delivers to live subscribers only; the run event log in the store
// is the source of truth for replay. A Bus sits behind an interface so that
// a networked one (NATS JetStream) can replace InProc when one process no
// longer suffices.
//
// Invariants InProc keeps:
//   - a publisher is never held up by a slow subscriber, unless that
//     subscriber chose OverflowBlock, and then at most for its timeout;
//   - each subscription has a bounded buffer and an explicit overflow
//     policy; a subscriber that cannot afford unnoticed gaps picks
//     OverflowDetach and learns from Err (ErrDetached) that it fell behind;
//   - envelopes published by one goroutine reach each subscription in
//     publish order;
//   - every subscription's channel is closed exactly once, when it ends (its
//     context, its Close, or the bus Close), and Err then says why;
//   - it starts no goroutines: a subscription watches its context with
//     context.AfterFunc, so 10k idle subscriptions cost only their buffers;
//   - a publish that matches nothing costs a few map lookups and no
//     allocation, however many subscriptions exist (a token-trie index).
//
// Lock order and shutdown are documented on InProc and subscription.
//
// event imports only internal/model, internal/errdefs and the standard
// library; everything else in agentd may import it.
package event

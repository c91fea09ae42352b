package run

import (
	"encoding/json"
	"time"
)

// PushConfig is a push-notification target of a task, with the state of
// its delivery.
type PushConfig struct {
	TaskID string `json:"task_id"`
	ID     string `json:"id"`
	// Config is the protocol-level configuration (URL, token,
	// authentication), opaque to the store.
	Config    json.RawMessage `json:"config"`
	CreatedAt time.Time       `json:"created_at"`
	// Delivered is the seq of the task's last event whose update reached
	// the config's URL (or was given up on): delivery resumes after it. A
	// put sets it (the log's end when the config is created, so that a new
	// config gets the updates from then on).
	Delivered int64 `json:"delivered"`
	// Done says delivery is over (the task ended and its last update was
	// delivered): a done config is never claimed again. A put clears it.
	Done bool `json:"done,omitempty"`
	// ParkedVersion, when not 0, is the task's version when delivery
	// parked (the task waited for input, every update delivered): the
	// config is claimed again only once its task's version differs. A put
	// clears it.
	ParkedVersion int64 `json:"parked_version,omitempty"`
	// Tenant is the task's tenant; set on the configs
	// a store's ClaimPushDeliveries returns (it claims across
	// tenants).
	Tenant string `json:"-"`
	// Claim is the delivery claim a store's ClaimPushDeliveries granted; zero on
	// configs read otherwise.
	Claim PushClaim `json:"-"`
}

// PushClaim is a replica's claim on delivering one push config: like a
// Lease, it expires unless renewed, and its generation fences the writes
// of a previous holder.
type PushClaim struct {
	Owner      string
	Generation int64
	ExpiresAt  time.Time
}

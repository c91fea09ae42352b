package runtime

import (
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store/memstore"
)

// A stream on a run that executes here opens without a store read in the
// run's own tenant, and is not found in another's: the shortcut never
// crosses tenants.
func TestOpenStreamOfARunExecutingHereKeepsTenants(t *testing.T) {
	gate := make(chan struct{})
	r := newTestRuntime(t, &applies{Store: memstore.New()}, testAgent("s", streamer(2, gate)))
	acme := run.WithTenant(ctxT(t), "acme")
	sub, err := r.Send(acme, SendRequest{AgentID: "s", Message: model.NewText(model.RoleUser, "hi")})
	if err != nil {
		t.Fatal(err)
	}
	defer close(gate)
	if _, err := r.OpenStream(run.WithTenant(ctxT(t), "globex"), sub.Task.ID, 0); !errdefs.IsNotFound(err) {
		t.Fatalf("globex opens acme's executing run: %v, want NotFound", err)
	}
	if _, err := r.OpenStream(ctxT(t), sub.Task.ID, 0); !errdefs.IsNotFound(err) {
		t.Fatalf("the default tenant opens acme's executing run: %v, want NotFound", err)
	}
	s, err := r.OpenStream(acme, sub.Task.ID, 0)
	if err != nil {
		t.Fatalf("acme opens its own executing run: %v", err)
	}
	s.Close()
}

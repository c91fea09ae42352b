package tool

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// An HTTP tool sends its arguments with the call's effect key as
// Idempotency-Key, declares its kind, and reconciles with its status URL.
func TestHTTPToolSendsTheKeyAndReconciles(t *testing.T) {
	var gotKey, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost:
			gotKey = r.Header.Get(IdempotencyKeyHeader)
			b, _ := io.ReadAll(r.Body)
			gotBody = string(b)
			_, _ = io.WriteString(w, "charged")
		case r.URL.Path == "/charges/k-1":
			_, _ = io.WriteString(w, "charged earlier")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	tl, err := NewHTTPTool(HTTPToolOptions{Name: "charge", URL: srv.URL + "/charge", StatusURL: srv.URL + "/charges/{key}", Effects: EffectsKeyed, AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	var reg Registry
	if err := reg.Register(tl); err != nil {
		t.Fatal(err)
	}
	res := reg.Execute(context.Background(), Call{ID: "c1", Name: "charge", Arguments: json.RawMessage(`{"amount":3}`), IdempotencyKey: "k-1"})
	if res.IsError || res.Content != "charged" || gotKey != "k-1" || gotBody != `{"amount":3}` {
		t.Fatalf("result %+v; the service saw key %q body %q", res, gotKey, gotBody)
	}
	if tl.Flags().EffectsOf() != EffectsKeyed || !CanReconcile(tl) {
		t.Fatalf("flags %+v, reconciles %v", tl.Flags(), CanReconcile(tl))
	}
	rc := tl.(Reconciler)
	if r, found, err := rc.Reconcile(context.Background(), Call{IdempotencyKey: "k-1"}); err != nil || !found || r.Content != "charged earlier" {
		t.Fatalf("reconcile k-1: %+v %v %v", r, found, err)
	}
	if _, found, err := rc.Reconcile(context.Background(), Call{IdempotencyKey: "k-2"}); err != nil || found {
		t.Fatalf("reconcile k-2: found %v, err %v; want not found", found, err)
	}
}

// Declarations: the defaults by method, and errors naming the field.
func TestHTTPToolDeclarations(t *testing.T) {
	post, _ := NewHTTPTool(HTTPToolOptions{Name: "p", URL: "http://example.com/x"})
	get, _ := NewHTTPTool(HTTPToolOptions{Name: "g", Method: "get", URL: "http://example.com/x"})
	if post.Flags().EffectsOf() != EffectsUnsafe || get.Flags().EffectsOf() != EffectsNone || CanReconcile(post) {
		t.Fatalf("defaults: POST %q, GET %q", post.Flags().EffectsOf(), get.Flags().EffectsOf())
	}
	for _, o := range []HTTPToolOptions{
		{Name: "a", URL: "ftp://x"},
		{Name: "b", URL: "http://x", Method: "TRACE"},
		{Name: "c", URL: "http://x", Effects: "twice"},
		{Name: "d", URL: "http://x", StatusURL: "nope"},
	} {
		if _, err := NewHTTPTool(o); err == nil || !strings.Contains(err.Error(), `tool "`+o.Name+`"`) {
			t.Errorf("%+v: err %v, want one naming the tool", o, err)
		}
	}
	if (Flags{Idempotent: true}).EffectsOf() != EffectsNone || (Flags{}).EffectsOf() != EffectsNone {
		t.Error("EffectsOf of the older flag")
	}
	if DefaultDoubtPolicy(EffectsKeyed, false) != "retry" || DefaultDoubtPolicy(EffectsUnsafe, true) != "reconcile" || DefaultDoubtPolicy(EffectsUnsafe, false) != "ask" {
		t.Error("default doubt policies")
	}
}

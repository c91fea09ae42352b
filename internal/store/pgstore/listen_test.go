package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentd/internal/pgtest"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/pgstore"
)

// waitLimit bounds every wait for a notification.
const waitLimit = 10 * time.Second

type wakeup struct {
	runID   string
	lastSeq int64
}

// listen runs s.Listen until the test ends and returns its wake-ups.
func listen(t *testing.T, s interface {
	Listen(context.Context, func(string, int64)) error
}) <-chan wakeup {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan wakeup, 64)
	done := make(chan error, 1)
	go func() {
		done <- s.Listen(ctx, func(runID string, lastSeq int64) {
			select {
			case got <- wakeup{runID, lastSeq}:
			case <-ctx.Done():
			}
		})
	}()
	// Registered after the store's Close, so it runs first.
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Listen returned %v, want nil after cancel", err)
		}
	})
	return got
}

// listening is a store listening, subscribed, and another store (as on
// another replica) to write with.
func listening(t *testing.T) (writer *pgstore.Store, got <-chan wakeup) {
	t.Helper()
	dsn := pgtest.DSN(t)
	listener, writer := openDSN(t, dsn), openDSN(t, dsn)
	got = listen(t, listener)
	wantWakeup(t, got, wakeup{"", 0}) // subscribed
	return writer, got
}

func next(t *testing.T, got <-chan wakeup, what string) wakeup {
	t.Helper()
	select {
	case w := <-got:
		return w
	case <-time.After(waitLimit):
		t.Fatalf("no wake-up within %v: waiting for %s", waitLimit, what)
		return wakeup{}
	}
}

func wantWakeup(t *testing.T, got <-chan wakeup, want wakeup) {
	t.Helper()
	if w := next(t, got, "a notification"); w != want {
		t.Fatalf("wake-up %+v, want %+v", w, want)
	}
}

// An Apply on one store wakes the listener of another (as on another
// replica): once per Apply, with the run and its last seq, and never for
// an Apply that failed.
func TestListenWakesOnAnotherStoresApply(t *testing.T) {
	writer, got := listening(t)

	ctx := t.Context()
	apply := func(c store.Change) error { return writer.Apply(ctx, c) }
	if err := apply(store.Change{Events: events("r", 1, 3)}); err != nil {
		t.Fatalf("Apply 1..3: %v", err)
	}
	wantWakeup(t, got, wakeup{"r", 3})
	if err := apply(store.Change{Events: events("r", 2, 4)}); err == nil {
		t.Fatalf("Apply 2..4 after 3: got nil, want Conflict")
	}
	if err := apply(store.Change{Events: events("other", 1, 250)}); err != nil {
		t.Fatalf("Apply other 1..250: %v", err)
	}
	// The failed Apply sent nothing: the next wake-up is the next commit.
	wantWakeup(t, got, wakeup{"other", 250})
}

// When the listening connection dies, Listen reconnects, says so with a
// ("", 0) wake-up, and delivers again.
func TestListenReconnects(t *testing.T) {
	dsn := pgtest.DSN(t)
	listener, writer := openDSN(t, dsn), openDSN(t, dsn)
	got := listen(t, listener)
	wantWakeup(t, got, wakeup{"", 0})

	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	var killed int
	err = conn.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN%'`).Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("terminate the listening backend: killed %d, %v; want 1", killed, err)
	}
	wantWakeup(t, got, wakeup{"", 0}) // subscribed again
	if err := writer.Apply(t.Context(), store.Change{Events: events("r", 1, 1)}); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	wantWakeup(t, got, wakeup{"r", 1})
}

// The change that creates a run wakes nobody for it: no reader can wait
// for a run before it exists. Its later appends do.
func TestListenSkipsTheCreatingApply(t *testing.T) {
	writer, got := listening(t)

	ctx := t.Context()
	task := &run.Task{ID: "c", ContextID: "ctx", AgentID: "a", State: run.StateWorking}
	if err := writer.Apply(ctx, store.Change{TaskID: "c", CreateTask: task, Events: events("c", 1, 2)}); err != nil {
		t.Fatalf("Apply create with events 1..2: %v", err)
	}
	if err := writer.Apply(ctx, store.Change{Events: events("other", 1, 1)}); err != nil {
		t.Fatalf("Apply other 1..1: %v", err)
	}
	wantWakeup(t, got, wakeup{"other", 1})
	if err := writer.Apply(ctx, store.Change{Events: events("c", 3, 3)}); err != nil {
		t.Fatalf("Apply c 3..3: %v", err)
	}
	wantWakeup(t, got, wakeup{"c", 3})
}

package engine_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

func TestSnapshotIsIndependentOfLaterMutation(t *testing.T) {
	type inner struct {
		Tags  []string
		Attrs map[string]int
	}
	type outer struct {
		Name  string
		Inner *inner
		List  []inner
	}
	b := engine.NewBoard()
	nested := map[string]any{"a": map[string]any{"b": []any{1, "x"}}}
	st := &outer{Name: "n", Inner: &inner{Tags: []string{"t"}, Attrs: map[string]int{"k": 1}}, List: []inner{{Tags: []string{"l"}}}}
	raw := json.RawMessage(`{"x":1}`)
	b.SetVar("nested", nested)
	b.SetVar("struct", st)
	b.SetVar("raw", raw)
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, "hi"))

	snap := b.Snapshot()

	nested["a"].(map[string]any)["b"].([]any)[1] = "changed"
	st.Inner.Tags[0], st.Inner.Attrs["k"], st.List[0].Tags[0] = "changed", 2, "changed"
	raw[2] = 'y'
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "later"))

	if got := snap.Vars["nested"].(map[string]any)["a"].(map[string]any)["b"].([]any)[1]; got != "x" {
		t.Errorf("nested map leaked into snapshot: %v", got)
	}
	sc := snap.Vars["struct"].(*outer)
	if sc == st || sc.Inner.Tags[0] != "t" || sc.Inner.Attrs["k"] != 1 || sc.List[0].Tags[0] != "l" {
		t.Errorf("struct value leaked into snapshot: %+v %+v", sc.Inner, sc.List)
	}
	if string(snap.Vars["raw"].(json.RawMessage)) != `{"x":1}` {
		t.Errorf("raw JSON leaked into snapshot: %s", snap.Vars["raw"])
	}
	if n := len(snap.Channels[engine.MainChannel]); n != 1 {
		t.Errorf("snapshot channel has %d messages, want 1", n)
	}
}

func TestRestoreIsIndependentOfSnapshot(t *testing.T) {
	snap := &engine.BoardSnapshot{
		Vars:     map[string]any{"m": map[string]any{"k": "v"}},
		Channels: map[string][]model.Message{"c": {model.NewText(model.RoleUser, "x")}},
	}
	b := engine.RestoreBoard(snap)
	snap.Vars["m"].(map[string]any)["k"] = "changed"
	snap.Channels["c"][0].Parts[0].Text = "changed"
	if v, _ := b.GetVar("m"); v.(map[string]any)["k"] != "v" {
		t.Errorf("restored board shares vars with its snapshot: %v", v)
	}
	if got := b.Channel("c")[0].Text(); got != "x" {
		t.Errorf("restored board shares channels with its snapshot: %q", got)
	}
	if got := engine.RestoreBoard(nil).Vars(); len(got) != 0 {
		t.Errorf("RestoreBoard(nil) has vars %v", got)
	}
}

func TestRestoreFromKeepsIdentity(t *testing.T) {
	b := engine.NewBoard()
	b.SetVar("x", 1)
	snap := b.Snapshot()
	b.SetVar("x", 2)
	b.SetVar("y", 3)
	b.RestoreFrom(snap)
	if v, _ := b.GetVar("x"); v != 1 {
		t.Errorf("x = %v after rollback, want 1", v)
	}
	if _, ok := b.GetVar("y"); ok {
		t.Errorf("y survived the rollback")
	}
}

// counter copies itself through Clone; its unexported state would be
// shared by the structural copy.
type counter struct{ n *int }

func (c counter) Clone() any { n := *c.n; return counter{n: &n} }

func TestSnapshotUsesCloneable(t *testing.T) {
	n := 1
	b := engine.NewBoard()
	b.SetVar("c", counter{n: &n})
	b.SetVar("nested", map[string]any{"c": counter{n: &n}})
	snap := b.Snapshot()
	n = 2
	if got := *snap.Vars["c"].(counter).n; got != 1 {
		t.Errorf("Cloneable var not cloned: %d", got)
	}
	if got := *snap.Vars["nested"].(map[string]any)["c"].(counter).n; got != 1 {
		t.Errorf("nested Cloneable not cloned: %d", got)
	}
}

func TestDeepCopyKeepsSharingAndCycles(t *testing.T) {
	type node struct {
		Next *node
		Val  int
	}
	a := &node{Val: 1}
	a.Next = a
	shared := &node{Val: 2}
	pair := []*node{shared, shared}

	ca := engine.DeepCopy(a).(*node)
	if ca == a || ca.Next != ca {
		t.Errorf("cycle not preserved in copy")
	}
	cp := engine.DeepCopy(pair).([]*node)
	if cp[0] == shared || cp[0] != cp[1] {
		t.Errorf("shared pointer not preserved in copy")
	}
}

func TestSliceVars(t *testing.T) {
	b := engine.NewBoard()
	for i := range 3 {
		if err := b.AppendSliceVar("list", i); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := b.GetVar("list")
	b.UpdateSliceVarItem("list", func(v any) bool { return v == 1 }, func(any) any { return "one" })
	after, _ := b.GetVar("list")
	if fmt.Sprint(after) != "[0 one 2]" {
		t.Errorf("after update: %v", after)
	}
	if fmt.Sprint(before) != "[0 1 2]" {
		t.Errorf("update changed a slice handed out earlier: %v", before)
	}
	b.UpdateSliceVarItem("missing", func(any) bool { return true }, func(any) any { return 0 })

	b.SetVar("str", "s")
	if err := b.AppendSliceVar("str", 1); !errdefs.IsValidation(err) {
		t.Errorf("append to a string var: %v, want Validation", err)
	}
	if got := b.GetVarString("str"); got != "s" {
		t.Errorf("failed append changed the var: %q", got)
	}
}

func TestTypedAccess(t *testing.T) {
	b := engine.NewBoard()
	b.SetVar("n", 3)
	if got := b.GetVarString("n"); got != "" {
		t.Errorf("GetVarString on an int = %q", got)
	}
}

func TestChannels(t *testing.T) {
	b := engine.NewBoard()
	if got := b.Channel("none"); got != nil {
		t.Errorf("missing channel = %v, want nil", got)
	}
	in := []model.Message{model.NewText(model.RoleUser, "a")}
	b.SetChannel("c", in)
	in[0] = model.NewText(model.RoleUser, "changed")
	if got := b.Channel("c")[0].Text(); got != "a" {
		t.Errorf("SetChannel kept the caller's slice: %q", got)
	}
	all := b.ChannelsCopy()
	all["c"][0].Parts[0].Text = "changed"
	if got := b.Channel("c")[0].Text(); got != "a" {
		t.Errorf("ChannelsCopy is not deep: %q", got)
	}
}

func TestChannelFromAndLen(t *testing.T) {
	b := engine.NewBoard()
	b.SetChannel("empty", []model.Message{})
	if got := b.ChannelFrom("empty", -1); got != nil {
		t.Errorf("ChannelFrom of an empty channel = %#v, want nil", got)
	}
	for _, name := range []string{engine.MainChannel, "side"} {
		if n := b.ChannelLen(name); n != 0 {
			t.Errorf("%s: ChannelLen of a fresh board = %d", name, n)
		}
		for _, text := range []string{"a", "b", "c"} {
			b.AppendChannelMessage(name, model.NewText(model.RoleUser, text))
		}
		if n := b.ChannelLen(name); n != 3 {
			t.Errorf("%s: ChannelLen = %d, want 3", name, n)
		}
		for from, want := range map[int][]string{-1: {"a", "b", "c"}, 0: {"a", "b", "c"}, 1: {"b", "c"}, 3: nil, 7: nil} {
			var got []string
			for _, m := range b.ChannelFrom(name, from) {
				got = append(got, m.Text())
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || (want == nil) != (b.ChannelFrom(name, from) == nil) {
				t.Errorf("%s: ChannelFrom(%d) = %q, want %q", name, from, got, want)
			}
		}
		tail := b.ChannelFrom(name, 1)
		tail[0] = model.NewText(model.RoleUser, "changed")
		if got := b.Channel(name)[1].Text(); got != "b" {
			t.Errorf("%s: ChannelFrom shares its slice with the board: %q", name, got)
		}
	}
}

// A view keeps the messages it was taken with through every later change
// of the board, and appending to it never writes into the board.
func TestChannelViewStaysAsItWas(t *testing.T) {
	b := engine.NewBoard()
	if got := b.ChannelView(engine.MainChannel); got != nil {
		t.Errorf("ChannelView of a fresh board = %#v, want nil", got)
	}
	texts := func(msgs []model.Message) string {
		var out []string
		for _, m := range msgs {
			out = append(out, m.Text())
		}
		return fmt.Sprint(out)
	}
	for _, name := range []string{engine.MainChannel, "side"} {
		b.SetChannel(name, []model.Message{model.NewText(model.RoleUser, "a")})
		b.AppendChannelMessage(name, model.NewText(model.RoleUser, "b"))
		view := b.ChannelView(name)
		if got := texts(view); got != "[a b]" || cap(view) != len(view) {
			t.Fatalf("%s: ChannelView = %s (cap %d), want [a b] capped", name, got, cap(view))
		}
		_ = append(view, model.NewText(model.RoleUser, "appended to the view"))
		b.AppendChannelMessage(name, model.NewText(model.RoleUser, "c"))
		if got := texts(b.Channel(name)); got != "[a b c]" {
			t.Errorf("%s: board after appending to a view = %s", name, got)
		}
		b.SetChannel(name, []model.Message{model.NewText(model.RoleUser, "x")})
		b.RestoreFrom(&engine.BoardSnapshot{Channels: map[string][]model.Message{name: {model.NewText(model.RoleUser, "y")}}})
		if got := texts(view); got != "[a b]" {
			t.Errorf("%s: view after the board changed = %s, want [a b]", name, got)
		}
	}
}

func TestFreshBoardEncodesLikeBefore(t *testing.T) {
	b := engine.NewBoard()
	if v := b.Vars(); v == nil || len(v) != 0 {
		t.Errorf("Vars of a fresh board = %#v, want an empty map", v)
	}
	for name, board := range map[string]*engine.Board{"new": b, "restored from nil": engine.RestoreBoard(nil),
		"restored from empty": engine.RestoreBoard(&engine.BoardSnapshot{Channels: map[string][]model.Message{"x": {}}})} {
		out, err := json.Marshal(board.Snapshot())
		if err != nil || string(out) != `{"vars":{}}` {
			t.Errorf("%s: snapshot = %s, %v; want {\"vars\":{}}", name, out, err)
		}
	}
}

// Snapshots copy messages as model.Message.Clone does: equal, nil and
// empty parts kept apart, nothing shared.
func TestSnapshotClonesMessagesLikeClone(t *testing.T) {
	msgs := []model.Message{
		model.NewText(model.RoleUser, "hi"),
		{Role: model.RoleAssistant, Parts: []model.Part{}},
		{Role: model.RoleAssistant},
		{Role: model.RoleAssistant, Parts: []model.Part{model.TextPart("partial")}, Metadata: map[string]any{"partial": true, "m": map[string]any{"k": []any{1}}}},
		{Role: model.RoleAssistant, Name: "a", Parts: []model.Part{
			model.TextPart("x"), model.ToolCallPart(model.ToolCall{ID: "c1", Name: "calc", Arguments: json.RawMessage(`{"e":"1"}`)}),
		}},
		{Role: model.RoleTool, Parts: []model.Part{model.ToolResultPart(model.ToolResult{ToolCallID: "c1", Content: "1"})}},
		{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartData, Data: json.RawMessage(`{"a":1}`), Metadata: map[string]any{"k": "v"}}}},
	}
	pristine := make([]model.Message, len(msgs))
	for i, m := range msgs {
		pristine[i] = m.Clone()
	}
	b := engine.NewBoard()
	b.SetChannel(engine.MainChannel, msgs)
	b.SetChannel("side", msgs[2:])
	snap := b.Snapshot()
	for name, src := range map[string][]model.Message{engine.MainChannel: msgs, "side": msgs[2:]} {
		got := snap.Channels[name]
		for i, m := range src {
			if want := m.Clone(); !reflect.DeepEqual(got[i], want) {
				t.Errorf("%s[%d] = %#v, want %#v", name, i, got[i], want)
			}
		}
		for i := range got {
			for j := range got[i].Parts {
				got[i].Parts[j].Text = "changed"
				if tc := got[i].Parts[j].ToolCall; tc != nil {
					tc.Arguments[1] = 'X'
				}
			}
			got[i].Parts = append(got[i].Parts, model.TextPart("appended"))
		}
	}
	for name, src := range map[string][]model.Message{engine.MainChannel: pristine, "side": pristine[2:]} {
		if cur := b.Channel(name); !reflect.DeepEqual(cur, src) {
			t.Errorf("%s: changing the snapshot changed the board:\n%#v", name, cur)
		}
	}
}

// Run with -race: readers, writers and snapshotters on one board.
func TestBoardConcurrentAccess(t *testing.T) {
	b := engine.NewBoard()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				key := fmt.Sprintf("k%d", i%10)
				b.SetVar(key, map[string]any{"w": w, "i": i})
				_ = b.AppendSliceVar("log", i)
				b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, key))
				_, _ = b.GetVar(key)
				_ = b.Channel(engine.MainChannel)
				for _, m := range b.ChannelView(engine.MainChannel) {
					_ = m.Text()
				}
				_ = b.Vars()
				if i%20 == 0 {
					_ = b.Snapshot()
					_ = b.ChannelsCopy()
				}
			}
		})
	}
	wg.Wait()
	if got := len(b.Channel(engine.MainChannel)); got != 800 {
		t.Errorf("main channel has %d messages, want 800", got)
	}
}

func BenchmarkBoardSnapshot(b *testing.B) {
	board := engine.NewBoard()
	for i := range 50 {
		switch i % 5 {
		case 0:
			board.SetVar(fmt.Sprintf("map%d", i), map[string]any{
				"id": i, "name": "x", "tags": []any{"a", "b", "c"},
				"inner": map[string]any{"depth": 2, "vals": []any{1.0, 2.0, map[string]any{"k": "v"}}},
			})
		case 1:
			board.SetVar(fmt.Sprintf("list%d", i), []any{"a", 1.5, true, map[string]any{"x": 1}})
		default:
			board.SetVar(fmt.Sprintf("s%d", i), fmt.Sprintf("value %d", i))
		}
	}
	for c := range 3 {
		for m := range 20 {
			board.AppendChannelMessage(fmt.Sprintf("chan%d", c), model.NewText(model.RoleAssistant, fmt.Sprintf("message %d", m)))
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = board.Snapshot()
	}
}

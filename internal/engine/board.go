package engine

import (
	"maps"
	"slices"
	"sync"

	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// MainChannel is the default message channel. Board keys that start with
// "__" are reserved for engine-managed slots; user-domain code must not
// introduce var or channel names with that prefix.
const MainChannel = "__main_channel"

// Board is the blackboard of one execution: untyped control variables plus
// named, ordered message channels, both behind one RWMutex. It knows nothing
// of agents: what a var or channel means is up to its callers.
//
// Stored values are shared, not copied, by GetVar and Vars: treat a value
// as immutable once stored and replace it with SetVar. Snapshot is the deep
// copy. The zero Board is not usable; call NewBoard or RestoreBoard.
type Board struct {
	mu sync.RWMutex
	// vars is nil until a var is stored.
	vars map[string]any
	// main is MainChannel, which every run uses; channels holds the
	// others and is nil until one is written.
	main     []model.Message
	channels map[string][]model.Message
}

// NewBoard returns an empty board, ready for AppendChannelMessage.
func NewBoard() *Board {
	return &Board{}
}

// RestoreBoard builds a board from snap, deep-copying it so the snapshot
// stays independent. A nil snap yields an empty board, so resume code can
// call it unconditionally.
func RestoreBoard(snap *BoardSnapshot) *Board {
	b := NewBoard()
	b.RestoreFrom(snap)
	return b
}

// Snapshot returns a deep copy of the board's state, safe to retain and
// encode while the board keeps changing. Values implementing Cloneable are
// copied by their Clone method, everything else structurally (see
// DeepCopy).
func (b *Board) Snapshot() *BoardSnapshot {
	b.mu.RLock()
	defer b.mu.RUnlock()
	snap := &BoardSnapshot{Vars: make(map[string]any, len(b.vars))}
	for k, v := range b.vars {
		snap.Vars[k] = DeepCopy(v)
	}
	snap.Channels = b.cloneChannels()
	return snap
}

// RestoreFrom replaces the board's state with a deep copy of snap, keeping
// the Board's identity for holders of its pointer (rollback after a failed
// step). A nil snap empties the board.
func (b *Board) RestoreFrom(snap *BoardSnapshot) {
	var (
		vars     map[string]any
		main     []model.Message
		channels map[string][]model.Message
	)
	if snap != nil {
		if len(snap.Vars) > 0 {
			vars = make(map[string]any, len(snap.Vars))
		}
		for k, v := range snap.Vars {
			vars[k] = DeepCopy(v)
		}
		for name, msgs := range snap.Channels {
			switch {
			case len(msgs) == 0:
			case name == MainChannel:
				main = cloneMessages(msgs)
			default:
				if channels == nil {
					channels = make(map[string][]model.Message, len(snap.Channels))
				}
				channels[name] = cloneMessages(msgs)
			}
		}
	}
	b.mu.Lock()
	b.vars, b.main, b.channels = vars, main, channels
	b.mu.Unlock()
}

// GetVar returns the value stored under key. The value is shared with the
// board: do not mutate it in place.
func (b *Board) GetVar(key string) (any, bool) {
	b.mu.RLock()
	v, ok := b.vars[key]
	b.mu.RUnlock()
	return v, ok
}

// GetVarString returns the var under key when it is a string, "" otherwise.
func (b *Board) GetVarString(key string) string {
	v, _ := b.GetVar(key)
	s, _ := v.(string)
	return s
}

// SetVar stores value under key, replacing any previous value.
func (b *Board) SetVar(key string, value any) {
	b.mu.Lock()
	if b.vars == nil {
		b.vars = make(map[string]any)
	}
	b.vars[key] = value
	b.mu.Unlock()
}

// Vars returns a new map holding the board's variables. The map is the
// caller's; the values are shared with the board as with GetVar.
func (b *Board) Vars() map[string]any {
	b.mu.RLock()
	defer b.mu.RUnlock()
	out := make(map[string]any, len(b.vars))
	maps.Copy(out, b.vars)
	return out
}

// AppendSliceVar appends value to the []any stored under key, creating the
// slice when key is unset. A key holding anything else is a Validation
// error rather than a silent overwrite, so a typo cannot destroy data.
func (b *Board) AppendSliceVar(key string, value any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur, ok := b.vars[key]
	if !ok || cur == nil {
		if b.vars == nil {
			b.vars = make(map[string]any)
		}
		b.vars[key] = []any{value}
		return nil
	}
	s, isSlice := cur.([]any)
	if !isSlice {
		return errdefs.Validationf("board var %q holds %T, not []any: cannot append", key, cur)
	}
	// Appending past len never disturbs slices already handed out, which
	// only see their own length.
	b.vars[key] = append(s, value)
	return nil
}

// UpdateSliceVarItem replaces the first item of the []any under key for
// which match returns true with update(item). A missing key, a non-slice
// value or no match leaves the board unchanged. The slice is copied before
// the write so readers holding the old slice never see it change.
func (b *Board) UpdateSliceVarItem(key string, match func(any) bool, update func(any) any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.vars[key].([]any)
	if !ok {
		return
	}
	i := slices.IndexFunc(s, match)
	if i < 0 {
		return
	}
	s = slices.Clone(s)
	s[i] = update(s[i])
	b.vars[key] = s
}

// AppendChannelMessage appends msg to the named channel, creating it on
// demand.
func (b *Board) AppendChannelMessage(name string, msg model.Message) {
	b.mu.Lock()
	b.setChannel(name, append(b.channel(name), msg))
	b.mu.Unlock()
}

// Channel returns a copy of the named channel's messages; an empty or
// missing channel yields nil so len() == 0 works uniformly. The messages'
// parts are shared: treat them as immutable.
func (b *Board) Channel(name string) []model.Message {
	return b.ChannelFrom(name, 0)
}

// ChannelFrom returns a copy of the named channel's messages from index
// from on, nil when there are none, sharing parts like Channel. With
// ChannelLen it takes the messages appended since a point without copying
// the ones before.
func (b *Board) ChannelFrom(name string, from int) []model.Message {
	b.mu.RLock()
	defer b.mu.RUnlock()
	from = max(from, 0)
	msgs := b.channel(name)
	if len(msgs) <= from {
		return nil
	}
	return slices.Clone(msgs[from:])
}

// ChannelView returns the named channel's messages without copying them,
// nil when there are none. It is for readers that only look — a model
// request, a scan — and must treat the messages as immutable. The view
// stays as it was while the board changes: the board never writes to a
// message already in a channel (it appends past it or replaces the
// channel), and the view's capacity is its length, so appending to it
// copies instead of writing into the board.
func (b *Board) ChannelView(name string) []model.Message {
	b.mu.RLock()
	msgs := b.channel(name)
	b.mu.RUnlock()
	if len(msgs) == 0 {
		return nil
	}
	return msgs[:len(msgs):len(msgs)]
}

// ChannelLen returns how many messages the named channel holds.
func (b *Board) ChannelLen(name string) int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.channel(name))
}

// SetChannel replaces the named channel with a copy of msgs. The copy has
// room for one more message: a channel that is set is usually appended to
// next.
func (b *Board) SetChannel(name string, msgs []model.Message) {
	var cp []model.Message
	if msgs != nil {
		cp = append(make([]model.Message, 0, len(msgs)+1), msgs...)
	}
	b.mu.Lock()
	b.setChannel(name, cp)
	b.mu.Unlock()
}

// ChannelsCopy returns a deep copy of every channel, e.g. to give parallel
// branches independent views that are merged later.
func (b *Board) ChannelsCopy() map[string][]model.Message {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.cloneChannels()
}

// channel returns the named channel; b.mu is held.
func (b *Board) channel(name string) []model.Message {
	if name == MainChannel {
		return b.main
	}
	return b.channels[name]
}

// setChannel stores msgs as the named channel; b.mu is held for writing.
func (b *Board) setChannel(name string, msgs []model.Message) {
	if name == MainChannel {
		b.main = msgs
		return
	}
	if b.channels == nil {
		b.channels = make(map[string][]model.Message)
	}
	b.channels[name] = msgs
}

// cloneChannels deep-copies the non-empty channels; empty ones are omitted
// so a snapshot of a fresh board encodes without noise. b.mu is held.
func (b *Board) cloneChannels() map[string][]model.Message {
	var out map[string][]model.Message
	add := func(name string, msgs []model.Message) {
		if len(msgs) == 0 {
			return
		}
		if out == nil {
			out = make(map[string][]model.Message, len(b.channels)+1)
		}
		out[name] = cloneMessages(msgs)
	}
	add(MainChannel, b.main)
	for name, msgs := range b.channels {
		add(name, msgs)
	}
	return out
}

// cloneMessages deep-copies msgs as model.Message.Clone does, with the
// parts of all of them in one allocation.
func cloneMessages(msgs []model.Message) []model.Message {
	n := 0
	for _, m := range msgs {
		n += len(m.Parts)
	}
	out := make([]model.Message, len(msgs))
	parts := make([]model.Part, n)
	for i, m := range msgs {
		if m.Parts == nil || m.Metadata != nil {
			out[i] = m.Clone()
			continue
		}
		out[i] = m
		out[i].Parts = parts[:len(m.Parts):len(m.Parts)]
		parts = parts[len(m.Parts):]
		for j, p := range m.Parts {
			out[i].Parts[j] = p.Clone()
		}
	}
	return out
}

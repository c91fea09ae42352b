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
	mu       sync.RWMutex
	vars     map[string]any
	channels map[string][]model.Message
}

// NewBoard returns an empty board whose channel map is ready, so
// AppendChannelMessage works at once.
func NewBoard() *Board {
	return &Board{
		vars:     make(map[string]any),
		channels: map[string][]model.Message{MainChannel: nil},
	}
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
	snap.Channels = cloneChannels(b.channels)
	return snap
}

// RestoreFrom replaces the board's state with a deep copy of snap, keeping
// the Board's identity for holders of its pointer (rollback after a failed
// step). A nil snap empties the board.
func (b *Board) RestoreFrom(snap *BoardSnapshot) {
	vars := make(map[string]any)
	channels := map[string][]model.Message{MainChannel: nil}
	if snap != nil {
		for k, v := range snap.Vars {
			vars[k] = DeepCopy(v)
		}
		maps.Copy(channels, cloneChannels(snap.Channels))
	}
	b.mu.Lock()
	b.vars, b.channels = vars, channels
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
	b.vars[key] = value
	b.mu.Unlock()
}

// Vars returns a new map holding the board's variables. The map is the
// caller's; the values are shared with the board as with GetVar.
func (b *Board) Vars() map[string]any {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return maps.Clone(b.vars)
}

// GetTyped returns the var under key when it holds a T. It is a function
// because Go methods cannot take type parameters.
func GetTyped[T any](b *Board, key string) (T, bool) {
	v, ok := b.GetVar(key)
	t, isT := v.(T)
	return t, ok && isT
}

// AppendSliceVar appends value to the []any stored under key, creating the
// slice when key is unset. A key holding anything else is a Validation
// error rather than a silent overwrite, so a typo cannot destroy data.
func (b *Board) AppendSliceVar(key string, value any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur, ok := b.vars[key]
	if !ok || cur == nil {
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
	b.channels[name] = append(b.channels[name], msg)
	b.mu.Unlock()
}

// Channel returns a copy of the named channel's messages; an empty or
// missing channel yields nil so len() == 0 works uniformly. The messages'
// parts are shared: treat them as immutable.
func (b *Board) Channel(name string) []model.Message {
	b.mu.RLock()
	defer b.mu.RUnlock()
	msgs := b.channels[name]
	if len(msgs) == 0 {
		return nil
	}
	return slices.Clone(msgs)
}

// SetChannel replaces the named channel with a copy of msgs.
func (b *Board) SetChannel(name string, msgs []model.Message) {
	b.mu.Lock()
	b.channels[name] = slices.Clone(msgs)
	b.mu.Unlock()
}

// ChannelsCopy returns a deep copy of every channel, e.g. to give parallel
// branches independent views that are merged later.
func (b *Board) ChannelsCopy() map[string][]model.Message {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return cloneChannels(b.channels)
}

// cloneChannels deep-copies non-empty channels; empty ones are omitted so a
// snapshot of a fresh board encodes without noise.
func cloneChannels(in map[string][]model.Message) map[string][]model.Message {
	var out map[string][]model.Message
	for name, msgs := range in {
		if len(msgs) == 0 {
			continue
		}
		if out == nil {
			out = make(map[string][]model.Message, len(in))
		}
		cp := make([]model.Message, len(msgs))
		for i, m := range msgs {
			cp[i] = m.Clone()
		}
		out[name] = cp
	}
	return out
}

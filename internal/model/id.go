package model

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync/atomic"
	"time"
)

// clock is the last (milliseconds << 12 | sequence) handed out: within one
// process, ids are strictly increasing even when minted in the same
// millisecond (RFC 9562 §6.2, method 1). It is the package's only mutable
// state, and an atomic.
var clock atomic.Uint64

// NewID mints a UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, a 12-bit
// sequence, then random bits, so ids sort by creation time (DESIGN §2) —
// strictly within a process, which the runtime relies on to tell earlier
// tasks from later ones. Every layer mints its ids here; model imports only
// the standard library, so engines and the agent layer can too.
func NewID() string {
	now := uint64(time.Now().UnixMilli()) << 12
	var tick uint64
	for {
		last := clock.Load()
		tick = max(now, last+1)
		if clock.CompareAndSwap(last, tick) {
			break
		}
	}
	var u [16]byte
	_, _ = rand.Read(u[8:]) // crypto/rand.Read never fails (Go 1.24+).
	// 48-bit milliseconds, version 7, 12-bit sequence.
	binary.BigEndian.PutUint64(u[:8], tick>>12<<16|0x7000|tick&0xfff)
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant

	var out [36]byte
	hex.Encode(out[0:8], u[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], u[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], u[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], u[8:10])
	out[23] = '-'
	hex.Encode(out[24:], u[10:])
	return string(out[:])
}

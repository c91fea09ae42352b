package model

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// NewID mints a UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then
// random bits, so ids sort by creation time (DESIGN §2). Every layer mints
// its ids here — model imports only the standard library, so engines and
// the agent layer can too.
func NewID() string {
	var u [16]byte
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(time.Now().UnixMilli()))
	copy(u[:6], ms[2:])
	_, _ = rand.Read(u[6:]) // crypto/rand.Read never fails (Go 1.24+).
	u[6] = u[6]&0x0f | 0x70 // version 7
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

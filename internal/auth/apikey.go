package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
)

// APIKey is one configured key: who it is and what it may do. Exactly
// one of Key (the key itself, read from the environment by the caller)
// and SHA256 (its hex digest) is set.
type APIKey struct {
	Name   string
	Tenant string
	Scopes []Scope
	Key    string
	SHA256 string
}

// keySet holds API keys as digests only.
type keySet struct {
	entries []keyEntry
}

type keyEntry struct {
	digest [sha256.Size]byte
	p      Principal
}

// newKeySet digests the configured keys; the plain keys are not kept.
func newKeySet(keys []APIKey) (*keySet, error) {
	ks := &keySet{}
	seen := map[[sha256.Size]byte]string{}
	for i, k := range keys {
		d, err := k.digest()
		if err != nil {
			return nil, fmt.Errorf("api_keys[%d] (%s): %w", i, k.Name, err)
		}
		if prev, dup := seen[d]; dup {
			return nil, fmt.Errorf("api_keys[%d] (%s): the same key as %s", i, k.Name, prev)
		}
		seen[d] = k.Name
		ks.entries = append(ks.entries, keyEntry{digest: d, p: Principal{
			Name: k.Name, Tenant: k.Tenant, Scopes: k.Scopes, Method: "api_key",
		}})
	}
	return ks, nil
}

func (k APIKey) digest() ([sha256.Size]byte, error) {
	var d [sha256.Size]byte
	switch {
	case k.Key != "" && k.SHA256 != "":
		return d, fmt.Errorf("set the key or its digest, not both")
	case k.Key != "":
		if len(k.Key) < 16 {
			return d, fmt.Errorf("the key is %d characters long; use at least 16 (e.g. 32 random bytes, hex)", len(k.Key))
		}
		return sha256.Sum256([]byte(k.Key)), nil
	case k.SHA256 != "":
		b, err := hex.DecodeString(strings.TrimSpace(k.SHA256))
		if err != nil || len(b) != sha256.Size {
			return d, fmt.Errorf("key_sha256 must be 64 hex digits (sha256sum of the key)")
		}
		copy(d[:], b)
		return d, nil
	}
	return d, fmt.Errorf("no key: the environment variable is empty or unset")
}

// lookup returns the principal of key. Every configured digest is compared,
// each in constant time, so the time taken says nothing about which key
// (if any) came close.
func (ks *keySet) lookup(key string) (Principal, bool) {
	d := sha256.Sum256([]byte(key))
	var found Principal
	match := 0
	for i := range ks.entries {
		eq := subtle.ConstantTimeCompare(d[:], ks.entries[i].digest[:])
		if eq == 1 {
			found = ks.entries[i].p
		}
		match |= eq
	}
	return found, match == 1
}

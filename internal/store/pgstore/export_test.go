package pgstore

// ClaimPushSQL is the claim sweep's statement, for plan tests.
const ClaimPushSQL = claimPushSQL

// QueuedApplies is how many Applies wait for a group (group.go).
func QueuedApplies(s *Store) int {
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return len(s.group.queue)
}

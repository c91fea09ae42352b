package config

import (
	"fmt"
	"net/url"
	"time"

	"agentd/internal/runtime"
)

// validateOutage checks the settings of how replicas ride out a database
// outage: the bound must leave a live owner at least a lease period to
// renew once the database is back.
func (s Server) validateOutage() error {
	if s.ReplicaURL != "" {
		u, err := url.Parse(s.ReplicaURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("server.replica_url: %q is not an absolute http(s) URL", s.ReplicaURL)
		}
	}
	if s.OutageBound == 0 {
		return nil
	}
	if lease := s.LeaseTTL.Or(runtime.DefaultLeaseTTL); time.Duration(s.OutageBound) < lease {
		return fmt.Errorf("server.outage_bound: %v is shorter than server.lease_ttl (%v); want at least a lease period", time.Duration(s.OutageBound), lease)
	}
	return nil
}

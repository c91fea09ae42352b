package main

import (
	"log/slog"
	"net/http"

	"agentd/internal/a2a"
	"agentd/internal/auth"
	"agentd/internal/config"
	"agentd/internal/limits"
	"agentd/internal/runtime"
)

// protect wraps the router in the server's edge: authentication (when the
// configuration declares it) and then the limits, which count per tenant
// and so must see the caller's.
func protect(h http.Handler, cfg *config.Config, authn *auth.Authenticator, rt *runtime.Runtime, log *slog.Logger) (http.Handler, error) {
	o := cfg.Limits.Options()
	o.MaxBodyBytes, o.Runs = cfg.Server.MaxBodyBytes, rt
	lim, err := limits.New(o)
	if err != nil {
		return nil, err
	}
	h = lim.Middleware(h)
	if authn == nil {
		log.Info("authentication is off: every caller acts as tenant default with every scope")
		return h, nil
	}
	log.Info("authentication is on", "api_keys", len(cfg.Auth.APIKeys), "jwt", cfg.Auth.JWT != nil)
	return authn.Middleware(h), nil
}

// security is what the cards declare about authentication.
func security(cfg *config.Config) (s a2a.Security) {
	if cfg.Auth != nil {
		s.APIKeys, s.JWT = len(cfg.Auth.APIKeys) > 0, cfg.Auth.JWT != nil
	}
	return s
}

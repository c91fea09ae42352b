package a2a

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/netguard"
	"agentd/internal/run"
)

// webhook is a push config as stored (run.PushConfig.Config): what
// delivery needs, in A2A v1.0's names.
type webhook struct {
	URL   string            `json:"url"`
	Token string            `json:"token,omitempty"`
	Auth  *a2a.PushAuthInfo `json:"authentication,omitempty"`
	// V0 says the config was set through a v0.3 binding: its receiver
	// gets what v0.3 servers send, the Task (push_deliver.go).
	V0 bool `json:"v0,omitempty"`
	// Run says the config is another face's run webhook (the Agent
	// Protocol's): it gets one POST, PushOptions.RunBody's, once the run
	// stopped, and is then done (push_run.go).
	Run bool `json:"run,omitempty"`
}

// resolveTimeout bounds the DNS lookup of a webhook host at config time.
const resolveTimeout = 5 * time.Second

// CreateTaskPushConfig stores a push config for a task of this agent. Its
// URL must be http(s) and, unless the operator allows private targets,
// resolve to public addresses only (re-checked when delivery connects).
// Delivery starts with the task's next update.
func (h *handler) CreateTaskPushConfig(ctx context.Context, req *a2a.PushConfig) (*a2a.PushConfig, error) {
	if req == nil {
		return nil, invalidParams("params: required")
	}
	t, err := h.taskOf(ctx, req.TaskID)
	if err != nil {
		return nil, err
	}
	page, err := h.reads().ReadEvents(ctx, t.ID, 1<<62, 1)
	if err != nil {
		return nil, toA2AError(ctx, err)
	}
	hook, err := h.checkWebhook(ctx, req, "")
	if err != nil {
		return nil, err
	}
	if err := h.roomForConfig(ctx, t.ID, req.ID); err != nil {
		return nil, err
	}
	return h.putPushConfig(ctx, t, req.ID, hook, page.LastSeq)
}

// MaxPushConfigsPerTask bounds a task's webhooks: each one is a delivery
// of its own (a goroutine, a claim, a cursor write per update).
const MaxPushConfigsPerTask = 16

// roomForConfig refuses a new config id for a task that has
// MaxPushConfigsPerTask already; replacing one of them is fine.
func (h *handler) roomForConfig(ctx context.Context, taskID, id string) error {
	cs, err := h.s.configs().ListPushConfigs(ctx, taskID)
	if err != nil {
		return toA2AError(ctx, err)
	}
	if len(cs) < MaxPushConfigsPerTask || slices.ContainsFunc(cs, func(c run.PushConfig) bool { return c.ID == id }) {
		return nil
	}
	return invalidParams("task %s has %d push configs, the most a task may have; delete one first", taskID, len(cs))
}

// putPushConfig stores the checked hook as config id (minted when empty)
// of task t, its delivery starting after seq from.
func (h *handler) putPushConfig(ctx context.Context, t run.Task, id string, hook webhook, from int64) (*a2a.PushConfig, error) {
	hook.V0 = v0Call(ctx)
	raw, err := json.Marshal(hook)
	if err != nil {
		return nil, toA2AError(ctx, err)
	}
	if id == "" {
		id = model.NewID()
	}
	c := run.PushConfig{TaskID: t.ID, ID: id, Config: raw, Delivered: from}
	if err := h.s.configs().PutPushConfig(ctx, c); err != nil {
		return nil, toA2AError(ctx, err)
	}
	h.s.pokePush()
	return toPushConfig(c.TaskID, c.ID, hook), nil
}

// v0Call reports whether the request came through a v0.3 binding: the
// REST routes under a2av0.RESTPathPrefix, or JSON-RPC without A2A-Version
// 1.0 (serveJSONRPC's rule).
func v0Call(ctx context.Context) bool {
	r := callInfoFrom(ctx).req
	switch {
	case r == nil:
		return false
	case strings.HasSuffix(r.URL.Path, "/jsonrpc"):
		v := requestVersion(r)
		return v == "" || strings.HasPrefix(v, "0.")
	}
	return strings.HasPrefix(r.URL.Path, a2av0.RESTPathPrefix+"/")
}

// checkWebhook validates a push config's URL, token and authentication.
func (h *handler) checkWebhook(ctx context.Context, cfg *a2a.PushConfig, field string) (webhook, error) {
	hook := webhook{URL: cfg.URL, Token: cfg.Token, Auth: cfg.Auth}
	u, err := url.Parse(cfg.URL)
	switch {
	case cfg.URL == "":
		return hook, invalidParams("%surl: required", field)
	case err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "":
		return hook, invalidParams("%surl: %q is not an absolute http(s) URL", field, cfg.URL)
	case u.Scheme != "http" && u.Scheme != "https":
		return hook, invalidParams("%surl: scheme %q is not supported (use http or https)", field, u.Scheme)
	case u.User != nil:
		return hook, invalidParams("%surl: credentials in the URL are not accepted (use authentication)", field)
	case strings.ContainsAny(cfg.Token, "\r\n"):
		return hook, invalidParams("%stoken: must not contain line breaks", field)
	}
	if a := cfg.Auth; a != nil {
		switch {
		case a.Scheme == "" && a.Credentials != "":
			return hook, invalidParams("%sauthentication.scheme: required with credentials (e.g. Bearer)", field)
		case strings.ContainsAny(a.Scheme, " \t\r\n"):
			return hook, invalidParams("%sauthentication.scheme: %q must be one word (e.g. Bearer, Basic)", field, a.Scheme)
		case strings.ContainsAny(a.Credentials, "\r\n"):
			return hook, invalidParams("%sauthentication.credentials: must not contain line breaks", field)
		}
	}
	if h.s.opts.Push.AllowPrivate {
		return hook, nil
	}
	return hook, publicHost(ctx, u.Hostname(), field)
}

// publicHost refuses a webhook host that is, or resolves to, a private,
// loopback, link-local (cloud metadata) or otherwise internal address.
func publicHost(ctx context.Context, host, field string) error {
	refuse := func(ip netip.Addr) error {
		what := host
		if a := ip.Unmap().String(); a != host {
			what = host + " resolves to " + a + ", which"
		}
		return invalidParams("%surl: %s is not a public address (private, loopback, link-local, shared or reserved); webhooks there are refused unless the server's configuration sets push.allow_private", field, what)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if netguard.Private(ip) {
			return refuse(ip)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return invalidParams("%surl: host %q does not resolve", field, host)
	}
	for _, ip := range ips {
		if netguard.Private(ip) {
			return refuse(ip)
		}
	}
	return nil
}

// GetTaskPushConfig returns one push config of a task of this agent.
func (h *handler) GetTaskPushConfig(ctx context.Context, req *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	t, err := h.taskOf(ctx, req.TaskID)
	if err != nil {
		return nil, err
	}
	if req.ID == "" {
		return nil, invalidParams("id: required")
	}
	c, err := h.s.configs().GetPushConfig(ctx, t.ID, req.ID)
	if err != nil {
		return nil, pushConfigError(ctx, err, t.ID, req.ID)
	}
	return fromStoredPush(ctx, c)
}

// ListTaskPushConfigs lists a task's push configs, ordered by id, in one
// page (a task has few).
func (h *handler) ListTaskPushConfigs(ctx context.Context, req *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	t, err := h.taskOf(ctx, req.TaskID)
	if err != nil {
		return nil, err
	}
	cs, err := h.s.configs().ListPushConfigs(ctx, t.ID)
	if err != nil {
		return nil, toA2AError(ctx, err)
	}
	out := &a2a.ListTaskPushConfigResponse{Configs: make([]*a2a.PushConfig, 0, len(cs))}
	for _, c := range cs {
		pc, err := fromStoredPush(ctx, c)
		if err != nil {
			return nil, err
		}
		out.Configs = append(out.Configs, pc)
	}
	return out, nil
}

// DeleteTaskPushConfig deletes a push config; its delivery stops.
func (h *handler) DeleteTaskPushConfig(ctx context.Context, req *a2a.DeleteTaskPushConfigRequest) error {
	t, err := h.taskOf(ctx, req.TaskID)
	if err != nil {
		return err
	}
	if req.ID == "" {
		return invalidParams("id: required")
	}
	if err := h.s.configs().DeletePushConfig(ctx, t.ID, req.ID); err != nil {
		return pushConfigError(ctx, err, t.ID, req.ID)
	}
	return nil
}

// pushConfigError answers an unknown config like an unknown task (-32001,
// HTTP 404), naming the config.
func pushConfigError(ctx context.Context, err error, taskID, id string) error {
	if errdefs.IsNotFound(err) {
		return a2a.NewError(a2a.ErrTaskNotFound, "push config "+id+" of task "+taskID+" not found")
	}
	return toA2AError(ctx, err)
}

func fromStoredPush(ctx context.Context, c run.PushConfig) (*a2a.PushConfig, error) {
	var hook webhook
	if err := json.Unmarshal(c.Config, &hook); err != nil {
		return nil, toA2AError(ctx, errdefs.Internalf("push config %s of task %s: stored config is unreadable: %v", c.ID, c.TaskID, err))
	}
	return toPushConfig(c.TaskID, c.ID, hook), nil
}

func toPushConfig(taskID, id string, hook webhook) *a2a.PushConfig {
	return &a2a.PushConfig{TaskID: a2a.TaskID(taskID), ID: id, URL: hook.URL, Token: hook.Token, Auth: hook.Auth}
}

package console

import (
	"crypto/sha256"
	"encoding/base64"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestWrap serves the console at / and /console/… and hands every other
// request to the wrapped handler untouched.
func TestWrap(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Next", "yes")
		w.WriteHeader(http.StatusTeapot)
	})
	h := Wrap(next)
	cases := []struct {
		method, path string
		status       int
		next         bool
		contains     string
	}{
		{"GET", "/", 200, false, `<script type="importmap">`},
		{"HEAD", "/", 200, false, ""},
		{"GET", "/console", 200, false, "agentd console"},
		{"GET", "/console/", 200, false, "agentd console"},
		{"GET", "/console/js/main.js", 200, false, "render("},
		{"GET", "/console/vendor/preact.mjs", 200, false, "createElement"},
		{"GET", "/console/vendor/LICENSE-preact", 200, false, "MIT"},
		{"GET", "/console/js/", 404, false, ""},
		{"GET", "/console/nothing.js", 404, false, ""},
		{"POST", "/", 405, false, ""},
		{"GET", "/v1/runs", 418, true, ""},
		{"POST", "/v1/agents/echo/messages", 418, true, ""},
		{"GET", "/agents/echo/.well-known/agent-card.json", 418, true, ""},
		{"GET", "/openapi.yaml", 418, true, ""},
		{"GET", "/healthz", 418, true, ""},
		{"GET", "/metrics", 418, true, ""},
		{"GET", "/.well-known/agent-card.json", 418, true, ""},
		{"GET", "/v1/contexts", 418, true, ""},
		{"GET", "/consoles", 418, true, ""},
		{"GET", "/index.html", 418, true, ""},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.status || (rec.Header().Get("X-Next") == "yes") != c.next {
			t.Errorf("%s %s: %d (to the API: %v), want %d (%v)", c.method, c.path, rec.Code, rec.Header().Get("X-Next") == "yes", c.status, c.next)
		}
		if !strings.Contains(rec.Body.String(), c.contains) {
			t.Errorf("%s %s: body lacks %q", c.method, c.path, c.contains)
		}
		if !c.next && rec.Code == 200 && !strings.Contains(rec.Header().Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("%s %s: no Content-Security-Policy", c.method, c.path)
		}
	}
}

// TestPolicyAllowsTheImportMap: the policy's hash is the one of
// index.html's import map, so the browser runs it (and nothing else
// inline).
func TestPolicyAllowsTheImportMap(t *testing.T) {
	index, err := fs.ReadFile(static, "static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)<script type="importmap">(.*?)</script>`).FindSubmatch(index)
	if m == nil {
		t.Fatal("index.html has no import map")
	}
	sum := sha256.Sum256(m[1])
	want := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	if p := policy(index); !strings.Contains(p, want) || strings.Contains(p, "unsafe-inline") {
		t.Errorf("policy %q does not allow exactly the import map (%s)", p, want)
	}
}

// TestNoRemoteResources: the console works offline — no file it serves
// loads a script, style or font from elsewhere.
func TestNoRemoteResources(t *testing.T) {
	remote := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|@import|url\(\s*["']?(https?:)?//|from\s+["'](https?:)?//`)
	err := fs.WalkDir(static, "static", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(path, "LICENSE") || strings.HasSuffix(path, ".md") {
			return err
		}
		b, err := fs.ReadFile(static, path)
		if err != nil {
			return err
		}
		if loc := remote.FindIndex(b); loc != nil {
			t.Errorf("%s loads something from elsewhere: %q", path, b[loc[0]:min(loc[1]+40, len(b))])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

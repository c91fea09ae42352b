package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

func TestHTTPGet(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/text", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "hello from the test server")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `"`+strings.Repeat("x", 100)+`"`)
	})
	mux.HandleFunc("/image", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte{0x89, 'P', 'N', 'G'})
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost"+r.Host[strings.LastIndex(r.Host, ":"):]+"/text", http.StatusFound)
	})
	mux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/text", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	host := strings.Split(strings.TrimPrefix(srv.URL, "http://"), ":")[0]

	permissive := tool.HTTPGetOptions{AllowHosts: []string{host}, AllowPrivate: true, MaxBytes: 50}
	tests := []struct {
		label   string
		opts    tool.HTTPGetOptions
		url     string
		want    string // content prefix
		isError bool
		class   errdefs.Class
	}{
		{"text", permissive, srv.URL + "/text", "hello from the test server", false, ""},
		{"same-host redirect", permissive, srv.URL + "/same", "hello from the test server", false, ""},
		{"truncated", permissive, srv.URL + "/big", `"` + strings.Repeat("x", 49) + "\n[truncated at 50 bytes]", false, ""},
		{"binary", permissive, srv.URL + "/image", `http_get: GET ` + srv.URL + `/image: content type "image/png" is not text`, true, errdefs.ClassValidation},
		{"not found", permissive, srv.URL + "/missing", "http_get: GET " + srv.URL + "/missing: 404 Not Found", true, errdefs.ClassNotAvailable},
		{"host not allowed", tool.HTTPGetOptions{AllowHosts: []string{"example.com", "*.example.org"}}, srv.URL + "/text",
			`http_get: host "127.0.0.1" is not allowed (allowed: example.com, *.example.org)`, true, errdefs.ClassForbidden},
		{"redirect to another host", permissive, srv.URL + "/elsewhere", `http_get: Get "http://localhost:`, true, errdefs.ClassForbidden},
		{"loopback refused", tool.HTTPGetOptions{AllowHosts: []string{host}}, srv.URL + "/text", "http_get: Get ", true, errdefs.ClassForbidden},
		{"scheme", permissive, "file:///etc/passwd", `http_get: url "file:///etc/passwd": scheme must be http or https`, true, errdefs.ClassValidation},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			var reg tool.Registry
			if err := tool.RegisterBuiltins(&reg, tool.BuiltinOptions{HTTPGet: &tt.opts}); err != nil {
				t.Fatal(err)
			}
			args, _ := json.Marshal(map[string]string{"url": tt.url})
			res := reg.Execute(context.Background(), tool.Call{Name: tool.HTTPGetName, Arguments: args})
			if res.IsError != tt.isError || !strings.HasPrefix(res.Content, tt.want) {
				t.Fatalf("result = %+v\nwant content starting %q", res, tt.want)
			}
			if errdefs.ClassOf(res.Err) != tt.class {
				t.Errorf("class = %q (%v), want %q", errdefs.ClassOf(res.Err), res.Err, tt.class)
			}
		})
	}
}

func TestHTTPGetWildcardHosts(t *testing.T) {
	get := tool.HTTPGet(tool.HTTPGetOptions{AllowHosts: []string{"*.example.org"}})
	// With a cancelled context an allowed host fails before any connection
	// is made, so only the allow-list decides between the two outcomes.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for u, allowed := range map[string]bool{
		"http://example.org/":         false,
		"http://evil-example.org/":    false,
		"http://example.org.evil.com": false,
		"https://API.Example.org/x":   true,
	} {
		args, _ := json.Marshal(map[string]string{"url": u})
		_, err := get.Execute(ctx, args)
		switch {
		case err == nil:
			t.Errorf("%s: no error", u)
		case allowed && !errdefs.IsAborted(err):
			t.Errorf("%s: %v, want it allowed (and then aborted)", u, err)
		case !allowed && !errdefs.IsForbidden(err):
			t.Errorf("%s: %v, want it forbidden", u, err)
		}
	}
}
